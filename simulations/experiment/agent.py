"""The scripted agent of the N-agent experiment: it knows its task and the command it is about to
run, never the outcome (issue #17, item 1).

Before each command it reads its memory folder as a person would (``MEMORY.md``, then the notes
it links) and asks the reader (:mod:`simulations.experiment.reader`, which knows nothing of
commons' phrasing) whether a note is about that command and says what worked instead; of two
that are, the nearer its case (seen for its very package, then for any, then for others). It follows
that advice with probability ``compliance`` (an agent does not always act on its memory), filling
placeholders from its own command as a reader would. The world, not the agent, says whether the
advice works. Nothing here knows which pitfall a note is about; a note that names a wrong fix
misleads it, a note that warns against its fix is not followed.

Whatever it did is written as a real Claude Code session (the demo's ``Session`` builder): the
failure, then the fix it tried, then what followed.
"""

from __future__ import annotations

import enum
import json
import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from commons.demo.sessions._build import Session
from simulations.experiment.reader import advice_for, fit, program
from simulations.experiment.world import Pitfall, PitfallKind, Ran, World

START = datetime(2026, 11, 2, tzinfo=timezone.utc)  # day 1 of every run
INDEX = "MEMORY.md"  # what Claude Code loads from a memory folder
_LINK = re.compile(r"\]\(([^()\s/]+\.md)\)")  # the notes MEMORY.md links, in its folder
# What a lesson's file says of when its failure was last met: "first on …, last on 2026-11-03"
# (an own lesson), "its failure last seen on 2026-11-05" (a common one).
_LAST_SEEN = re.compile(r"\blast (?:seen )?on (\d{4}-\d{2}-\d{2})")
PLAIN_TRY_DAYS = 14  # a lesson whose failure nobody has seen for this long is worth a plain try
COMPLIANCE = 0.9  # an agent acts on the advice it finds nine times in ten


class Outcome(enum.Enum):
    MET = "met"  # it ran the command and the error (or the person's correction) followed
    AVOIDED = "avoided"  # a lesson named a fix and the fix worked
    MISLED = "misled"  # a lesson named a fix and the fix failed
    HARMED = "harmed"  # a lesson named a fix and it worked by destroying something
    CLEAN = "clean"  # the command just worked (fixed upstream), no lesson followed


@dataclass(frozen=True)
class ReadLesson:
    """One lesson file as the agent read it."""

    id: str
    layer: str
    text: str
    last_seen: str = ""  # the day its file says the failure was last met (YYYY-MM-DD), if it says

    def age_days(self, day: int) -> int | None:
        """Days from when the lesson's failure was last seen to ``day`` of the run."""
        if not self.last_seen:
            return None
        seen = datetime.fromisoformat(self.last_seen).replace(tzinfo=timezone.utc)
        return (day_time(day) - seen).days

    def advice(self, command: str, touched: tuple[str, ...] = ()) -> str:
        """What this note says to run instead of ``command`` ('' if nothing), for a task that
        changed the files ``touched``."""
        return advice_for(self.text, command, touched)

    @property
    def about(self) -> str:
        """The program and subcommand of the note's first command (for the harness's tables)."""
        spans = re.findall(r"`([^`]+)`", self.text)
        return " ".join(w for w in program(spans[0]) if w) if spans else ""


def read_memory(folder: Path) -> list[ReadLesson]:
    """The notes MEMORY.md links, in its order (what the agent has in mind at session start)."""
    index = folder / INDEX
    if not index.exists():
        return []
    found = []
    for name in dict.fromkeys(_LINK.findall(index.read_text("utf-8"))):
        path = folder / name
        if not path.exists():
            continue
        head, _, body = path.read_text("utf-8").partition("\n---\n")
        front = {}
        for line in head.splitlines()[1:]:
            key, _, value = line.partition(": ")
            try:
                front[key] = json.loads(value)
            except json.JSONDecodeError:
                front[key] = value
        body = body.strip().split("\n\n<!--")[0]
        text, _, seen = body.partition("\n\n## ")
        last = _LAST_SEEN.search(seen)
        found.append(ReadLesson(str(front.get("id", name)), str(front.get("layer", "own")), text.strip(),
                                last.group(1) if last else ""))
    return found


@dataclass(frozen=True)
class Encounter:
    """Ground truth of one meeting of a pitfall: what the agent did and how it went."""

    agent: str
    day: int
    pitfall: str
    kind: PitfallKind
    outcome: Outcome
    lesson: str | None = None  # the lesson it followed, if any
    layer: str | None = None  # own or common
    ran: str = ""  # the command the lesson made it run
    tried: bool = False  # the lesson was old, so the agent ran the command plainly first
    advice: str = ""  # the fix the reader found in the agent's folder, followed or not
    declined: bool = False  # it found advice and went its own way this time (compliance)

    @property
    def error(self) -> bool:
        return self.outcome in (Outcome.MET, Outcome.MISLED)

    @property
    def misled(self) -> bool:
        """A lesson led the agent wrong: its fix failed, or it did harm."""
        return self.outcome in (Outcome.MISLED, Outcome.HARMED)

    def to_json(self) -> dict:
        return {"agent": self.agent, "day": self.day, "pitfall": self.pitfall, "kind": self.kind.value,
                "outcome": self.outcome.value, "lesson": self.lesson, "layer": self.layer, "tried": self.tried,
                "advice": self.advice, "declined": self.declined}


def day_time(day: int, hour: int = 0, minute: int = 0) -> datetime:
    return START + timedelta(days=day - 1, hours=hour, minutes=minute)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Agent:
    name: str
    cwd: str  # its project's working folder
    transcripts: Path  # where its sessions are written (what its node ingests)
    memory: Path  # where its node renders (what it reads)
    world: World
    seed: int = 0
    encounters: list[Encounter] = field(default_factory=list)
    plain_try_days: int | None = PLAIN_TRY_DAYS  # None: never try an old lesson plainly
    compliance: float = COMPLIANCE  # the chance it acts on advice it found

    def __post_init__(self) -> None:
        self._compliance = random.Random(f"{self.name}/{self.seed}/compliance")

    def work(self, day: int, tasks: list[tuple[Pitfall, str]]) -> Path:
        """Day ``day``'s session over ``tasks`` ((pitfall, value) pairs); returns its transcript."""
        slug = tasks[0][0].name if tasks else "routine"
        s = Session(self.name, 1, slug, self.cwd, "main", 9)
        # The builder seeds its ids by node, day of month and slug; a run spans months.
        s.rng = random.Random(f"{self.name}/{self.seed}/{day}/{slug}")
        s.sid = s._uuid()
        s.now = day_time(day, 9 + (day * 7 + len(self.name)) % 8, 7)
        s.path = self.transcripts / f"day-{day:02d}-{slug}.jsonl"
        s.snapshot()
        s.hook("SessionStart", "~/.claude/hooks/session-start.sh")
        asks = [p.fill(p.ask, v) for p, v in tasks]
        s.user("; then ".join(asks) if asks else ("review the open TODOs and summarise them",
                                                  "update the README's usage section",
                                                  "read the changelog and list what is unreleased")[day % 3])
        s.tool("Read", {"file_path": f"{self.cwd}/README.md"}, "     1→# project\n     2→\n")
        lessons = read_memory(self.memory)
        for pitfall, value in tasks:
            self.encounters.append(self._task(s, day, pitfall, value, lessons))
        s.bash("git status --short", "Check the working tree", " M README.md")
        s.say(("text", "Done: " + ("; ".join(asks) if asks else "the routine check") + "."))
        s.write()
        return s.path

    def _task(self, s: Session, day: int, pitfall: Pitfall, value: str, lessons: list[ReadLesson]) -> Encounter:
        command = pitfall.fill(pitfall.command, value)
        touched = tuple(pitfall.fill(path, value) for path in pitfall.touches)
        offers = [(l, a) for l in lessons if (a := l.advice(command, touched))]
        # The note nearest my case first (seen for my very package, then for any, then for others), else in order.
        lesson, fix = max(offers, key=lambda o: fit(o[0].text, command), default=(None, ""))
        found, declined = fix, False
        if lesson is not None and (self.name in self.world.bad_authors or self._compliance.random() >= self.compliance):
            lesson, fix, declined = None, "", True  # it read the note and went its own way this time
        # A lesson whose failure nobody has seen for plain_try_days may be stale (fixed upstream):
        # the agent tries the command plainly once, and follows the lesson only if it fails.
        age = lesson.age_days(day) if lesson is not None else None
        tried = age is not None and self.plain_try_days is not None and age >= self.plain_try_days
        meet = lambda outcome: Encounter(self.name, day, pitfall.name, pitfall.kind, outcome,
                                         lesson.id if lesson else None, lesson.layer if lesson else None,
                                         tried=tried, advice=found, declined=declined)
        if tried:
            ran = self._run(s, day, pitfall, value, command, pitfall.fill(pitfall.description, value),
                            f"My memory has a note on this, but its failure was last seen {age} days ago; "
                            "trying it plainly first.")
            if ran.ok:
                return meet(Outcome.CLEAN)
        if lesson is not None:
            ran = self._run(s, day, pitfall, value, fix, "Run it the way my memory says works",
                            "My memory notes a known problem with this; going the way that worked.")
            if ran.ok and not ran.done and ran.changes:  # a preparation: now the command itself
                ran = self._run(s, day, pitfall, value, command, pitfall.fill(pitfall.description, value),
                                prepared=True)
            if ran.harm:
                return meet(Outcome.HARMED)
            if ran.ok:
                return meet(Outcome.MET if tried else Outcome.AVOIDED)  # a plain try that failed is an error
            outcome = Outcome.MISLED
        else:
            outcome = Outcome.MET
        if pitfall.kind is PitfallKind.CONVENTION:
            s.reject("Bash", {"command": command, "description": pitfall.fill(pitfall.description, value)},
                     pitfall.fill(pitfall.correction, value))
        elif self._run(s, day, pitfall, value, command, pitfall.fill(pitfall.description, value)).ok:
            return meet(Outcome.CLEAN if outcome is Outcome.MET else outcome)
        if not self.world.shows_fix:
            s.say(("text", "That failed and I could not find a way around it; leaving this step for you."))
            return meet(outcome)
        prepared = False
        for i, step in enumerate(self.world.own_fix(self.name, pitfall, value)):
            ran = self._run(s, day, pitfall, value, step, "Work around it", pitfall.explain if i == 0 else None,
                            prepared=prepared)
            prepared = prepared or (ran.ok and not ran.done and ran.changes)
        return meet(outcome)

    def _run(self, s: Session, day: int, pitfall: Pitfall, value: str, command: str, description: str,
             text: str | None = None, prepared: bool = False) -> Ran:
        ran = self.world.run(self.name, day, pitfall, value, command, prepared)
        s.bash(command, description, ran.output, exit_code=0 if ran.ok else 1, text=text)
        return ran
