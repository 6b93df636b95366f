"""The dangerous-steps corpus replayed through the real mining path, and what each door makes of it.

Each case of ``tests/fixtures/danger/corpus.json`` is a failure and the step that made it go away.
:func:`replay` writes it as met in two Claude Code sessions of two projects (the real transcript
format, `tests.transcripts`), reads them with the Claude Code reader, sleeps one night through the
core (as `commons.ingest.lessons_report` does) and asks of the lesson what each door would do:

- **shared**: its scope is shared (what `commons publish` would sign: for a dangerous fix, the
  failure alone);
- **published**: the words `commons.node.publish.published_words` would let leave carry the step:
  as the record's fix, or named in the text as what worked;
- **advice**: what is rendered (the index line and the lesson's own file) names the step as what
  worked without saying its risk;
- **door**: a peer's lesson naming the step as what worked (the words an attacker would sign) is
  refused by the door policy (`commons.node.door.policy`, which the daemon's gossip door and
  `commons import` both ask).

Used by tests/test_danger_corpus.py (the bars) and tests/benchmarks/bench_danger.py
(`make danger-report`, the figures in docs/trust.md).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nacl.signing

from commons.core.learning import ErrorEpisode, command_head, Lesson, SessionEpisode, SleepState, lesson_detail, project_aliases, run_night
from commons.core.policy import classify_step, dangerous_advice, scrub
from commons.core.records import Lesson as LessonRecord
from commons.core.records import LessonKind, Prediction, Scope, sign
from commons.core.learning.generalise import generalise
from commons.ingest.lessons_report import read_all
from commons.node.publish import Skipped, published_words
from commons.node.door import policy as door_policy
from tests.transcripts import session

CORPUS = Path(__file__).parent / "fixtures" / "danger" / "corpus.json"
WRITTEN_AFTER = CORPUS.with_name("written_after.json")  # written after the rules; measured once, then fixed
PROJECTS = ("ledger", "atlas")  # the two projects the two sessions of a case run in


@dataclass(frozen=True)
class Case:
    id: str
    eco: str
    failed: str
    error: str
    fix: str  # a shell command, or "Edit" with ``edit``
    then: str | None  # the failed step tried again (None: the fix is the changed retry)
    danger: str | None  # the rule that must class the fix; None for a safe look-alike
    edit: dict | None = None


def cases(path: Path = CORPUS) -> list[Case]:
    body = json.loads(path.read_text(encoding="utf-8"))
    return [Case(c["id"], c["eco"], c["failed"], c["error"], c["fix"], c["then"], c["danger"], c.get("edit"))
            for c in body["cases"]]


def _fill(text: str, project: str) -> str:
    return text.replace("{p}", project)


def write_sessions(case: Case, folder: Path) -> list[Path]:
    """The case met in two sessions, days apart, in two projects."""
    paths = []
    for n, project in enumerate(PROJECTS):
        s = session(folder, 3 + 4 * n, f"{case.id}-{project}", cwd=f"/home/dev/{project}")
        s.user(f"get {project} working again: {case.failed.split()[0]} is failing")
        s.bash(_fill(case.failed, project), "Run it", _fill(case.error, project), exit_code=1)
        if case.edit is not None:
            edit = {k: _fill(v, project) for k, v in case.edit.items()}
            s.tool("Edit", edit, f"The file {edit['file_path']} has been updated successfully.")
        else:
            s.bash(_fill(case.fix, project), "Fix it", "")
        if case.then is not None:
            s.bash(_fill(case.then, project), "Try again", "done")
        s.write()
        paths.append(s.path)
    return paths


@dataclass(frozen=True)
class Outcome:
    case: Case
    lesson: Lesson | None  # the error lesson the night made (None: none)
    shared: bool
    published: bool
    advice: bool
    door_refused: bool  # a peer's lesson naming the fix (as run) as what worked is refused at intake
    door_refused_generalised: bool  # the same with the fix as a lesson names it (placeholders, cut)
    rendered: tuple[str, ...]  # the index line and the lesson's own file, as rendered

    @property
    def contained(self) -> bool:
        """A dangerous fix never published (no record carries it) nor rendered as advice."""
        return not (self.published or self.advice)

    @property
    def kept(self) -> bool:
        """A safe fix keeps its lesson: named as the fix, classed safe, not refused for danger."""
        lesson = self.lesson
        if lesson is None or lesson.fix is None or lesson.fix.danger is not None:
            return False
        words = published_words(lesson)
        return not (isinstance(words, Skipped) and "dangerous" in words.reason)


_KEY = nacl.signing.SigningKey(bytes(range(32)))  # the corpus's attacker: any key will do


def _fix_as_run(case: Case) -> str:
    if case.edit is None:
        return _fill(case.fix, "app")
    added = [line for line in case.edit["new_string"].splitlines() if line not in case.edit["old_string"].splitlines()]
    return f"Edit {_fill(case.edit['file_path'], 'app')}: {added[0] if added else ''}".strip()


def _peer_lesson(case: Case, step: str) -> LessonRecord:
    """What a peer would sign to spread the fix: the honest shape of an error lesson, naming it."""
    head = command_head("bash", _fill(case.failed, "app"))
    failure = " ".join(_fill(case.error, "app").splitlines()[0].split())[:80].replace('"', "'").replace("`", "'")
    text = scrub(f'`{head}` failed with "{failure}"; `{" ".join(step.split())}` succeeded after it (2 of 2 sessions).')
    return LessonRecord(network=bytes(32), author=bytes(_KEY.verify_key), created=20000, kind=LessonKind.ERROR,
                        text=text, scope=Scope.SHARED, topics=(), prediction=Prediction(scrub(head), scrub(failure)), episodes=())


def _advice(lines: Sequence[str]) -> bool:
    """Whether a rendered line names a dangerous step as what worked without its risk."""
    for line in lines:
        if "a dangerous step (" in line:
            continue
        if dangerous_advice(line) is not None:
            return True
    return False


def replay(case: Case, folder: Path) -> Outcome:
    paths = write_sessions(case, folder)
    episodes = read_all(paths)
    projects = {e.project for e in episodes if isinstance(e, SessionEpisode) and e.project}
    last = max(e.at for e in episodes)
    names = project_aliases(projects)
    night = run_night(SleepState(), episodes, last + 3600, hash_episode=lambda uid: uid.encode(), project_names=names)
    found = [lesson for lesson in night.state.lessons if lesson.kind is LessonKind.ERROR]
    lesson = found[0] if found else None
    by_uid = {e.uid: e for e in episodes if isinstance(e, ErrorEpisode)}
    rendered: tuple[str, ...] = ()
    if lesson is not None:
        rendered = (lesson.text, *lesson_detail([by_uid[u] for u in lesson.episodes if u in by_uid], names))
    shared = lesson is not None and lesson.scope is Scope.SHARED
    words = published_words(lesson) if shared else None
    published = words is not None and not isinstance(words, Skipped) and (
        words.fix is not None or _advice((words.text,)) or " ".join(_fix_as_run(case).split()) in words.text)
    door = door_policy(sign(_peer_lesson(case, _fix_as_run(case)), _KEY)) is not None
    as_named = generalise(_fix_as_run(case), names)[:70].replace('"', "'")
    door_generalised = door_policy(sign(_peer_lesson(case, as_named), _KEY)) is not None
    return Outcome(case, lesson, shared, published, _advice(rendered), door, door_generalised, rendered)


@dataclass(frozen=True)
class Report:
    outcomes: tuple[Outcome, ...]

    @property
    def dangerous(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.case.danger is not None]

    @property
    def safe(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.case.danger is None]

    def as_json(self) -> dict[str, object]:
        dangerous, safe = self.dangerous, self.safe
        return {
            "dangerous": len(dangerous), "safe": len(safe),
            "ecosystems": sorted({o.case.eco for o in self.outcomes}),
            "dangerous_contained": sum(o.contained for o in dangerous),
            "dangerous_shared": sum(o.shared for o in dangerous),
            "dangerous_published": sum(o.published for o in dangerous),
            "dangerous_rendered_as_advice": sum(o.advice for o in dangerous),
            "dangerous_refused_at_the_door": sum(o.door_refused for o in dangerous),
            "dangerous_refused_at_the_door_as_a_lesson_names_it": sum(o.door_refused_generalised for o in dangerous),
            "dangerous_without_a_lesson": sum(o.lesson is None for o in dangerous),
            "safe_kept": sum(o.kept for o in safe),
            "safe_refused_at_the_door": sum(o.door_refused for o in safe),
            "safe_refused_at_the_door_as_a_lesson_names_it": sum(o.door_refused_generalised for o in safe),
            "rule_as_expected": sum(1 for o in dangerous if o.lesson is not None and o.lesson.fix is not None
                                    and o.lesson.fix.danger is not None and o.lesson.fix.danger.rule == o.case.danger),
            "misses": {
                "dangerous_not_contained": [o.case.id for o in dangerous if not o.contained],
                "dangerous_not_refused_at_the_door": [o.case.id for o in dangerous if not o.door_refused],
                "safe_lost": [o.case.id for o in safe if not o.kept],
                "safe_refused_at_the_door": [o.case.id for o in safe if o.door_refused],
                "dangerous_not_refused_as_a_lesson_names_it": [o.case.id for o in dangerous if not o.door_refused_generalised],
                "safe_refused_as_a_lesson_names_it": [o.case.id for o in safe if o.door_refused_generalised],
            },
        }  # fmt: skip


def measure(selected: Sequence[Case] | None = None) -> Report:
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="danger-corpus-") as tmp:
        for case in selected if selected is not None else cases():
            outcomes.append(replay(case, Path(tmp) / case.id))
    return Report(tuple(outcomes))


def expected_rule(case: Case) -> str | None:
    """The rule the classifier gives the case's fix as written (before any mining)."""
    danger = classify_step(case.fix if case.edit is None else f"Edit {case.edit['file_path']}: {case.edit['new_string']}")
    return danger.rule if danger else None
