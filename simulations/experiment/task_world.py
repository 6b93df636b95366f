"""The scripted task world of the two-agent experiment (design paper §7.5).

No model runs here, so the agents are scripted. The world is a seeded set of **pitfalls**:

* an *error* pitfall is a command that fails in one particular way (the tool's real output) until
  a particular workaround is used (``npm ci`` without a lockfile, ``pip install`` into an
  externally managed Python, a push rejected as non-fast-forward…);
* a *convention* pitfall is an action the person corrects when the agent takes it ("no, commit
  messages here start with the component").

A :class:`ScriptedAgent` works through one session a day. When a task meets a pitfall the agent
first reads its memory folder the way Claude Code loads it (``MEMORY.md``, then the
``commons-*.md`` files it links) and looks for a lesson that *covers* the pitfall, under the rules
sleep itself uses to decide that a later session met a lesson's situation and outcome
(``commons.core.predictions``): the lesson concerns the command about to run (its trigger head
named in the text, or its situation line at cosine ≥ 0.5 with the command) and it reports the
surprise that command would meet (cosine ≥ 0.5 with the failure line or the person's words). A
covered pitfall is avoided: the agent goes straight to the workaround. Otherwise the agent meets
it, and the session's transcript (Claude Code's real format, written with the demo's
``Session`` builder) holds the tool error or the person's correction exactly as real ones do.

What the agent did is also returned as :class:`Encounter` records: the experiment's ground truth,
which the harness compares with what commons saw in the store.
"""

from __future__ import annotations

import enum
import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from commons.core.embed import embed
from commons.core.scope import command_head
from commons.demo.sessions._build import (PIP_EXTERNALLY_MANAGED, Session, git_push_ok, git_push_rejected,
                                          npm_ci_no_lockfile, pytest_async_failure)
from commons.ingest.claude_code import failure_line
from commons.render.memory_folder import FILE_PREFIX, INDEX

START = datetime(2026, 11, 2, tzinfo=timezone.utc)  # day 1 of every run
SITUATION_COSINE = 0.5  # SleepParams.situation_cosine: a session line meets a lesson's situation
OUTCOME_COSINE = 0.5  # SleepParams.verify_cosine: a surprise meets a lesson's predicted outcome


class PitfallKind(enum.Enum):
    ERROR = "error"  # a command fails until the workaround is used
    CONVENTION = "convention"  # the person corrects an action


class Outcome(enum.Enum):
    MET = "met"  # the agent fell into it: a tool error or the person's correction is in the transcript
    AVOIDED = "avoided"  # a lesson in the memory folder covered it: the agent went to the workaround


@dataclass(frozen=True)
class Pitfall:
    """One trap of the world. ``{x}`` in the texts is filled per encounter (a package, a branch)."""

    name: str
    kind: PitfallKind
    ask: str  # what the person asks for in a session that meets it
    command: str  # what the agent runs first
    description: str
    output: str  # ERROR: the tool's output when it fails
    correction: str  # CONVENTION: the person's words
    workaround: str  # the command that works
    workaround_output: str
    explain: str  # what the agent says before the workaround, having met the pitfall
    fills: tuple[str, ...] = ("x",)  # values for {x}, one picked per encounter

    def fill(self, text: str, value: str) -> str:
        return text.replace("{x}", value)

    def surprise(self, value: str) -> str:
        """The claim a covering lesson must report: the failure line, or the person's words."""
        if self.kind is PitfallKind.ERROR:
            return failure_line(self.fill(self.output, value))[0]
        return self.fill(self.correction, value)


def _e(name: str, ask: str, command: str, description: str, output: str, workaround: str,
       workaround_output: str, explain: str, fills: tuple[str, ...]) -> Pitfall:
    return Pitfall(name, PitfallKind.ERROR, ask, command, description, output, "", workaround,
                   workaround_output, explain, fills)


def _c(name: str, ask: str, command: str, description: str, correction: str, workaround: str,
       workaround_output: str, fills: tuple[str, ...]) -> Pitfall:
    return Pitfall(name, PitfallKind.CONVENTION, ask, command, description, "", correction, workaround,
                   workaround_output, "Understood.", fills)


# Error pitfalls: tools anyone may meet, so their lessons are `shared` and may be published.
ERRORS: tuple[Pitfall, ...] = (
    _e("pip-externally-managed", "add {x} to the tooling and check it imports", "pip install {x}",
       "Install {x}", PIP_EXTERNALLY_MANAGED, "python3 -m venv .venv && .venv/bin/pip install {x}",
       "Collecting {x}\nInstalling collected packages: {x}\nSuccessfully installed {x}-2.3.1",
       "The system Python is externally managed; installing into a project virtualenv.",
       ("httpx", "rich", "attrs", "tenacity")),
    _e("npm-ci-no-lockfile", "set up the {x} install step and make sure it works locally", "npm ci",
       "Clean install dependencies", npm_ci_no_lockfile("/home/dev"), "npm install",
       "added 212 packages, and audited 213 packages in 4s\n\nfound 0 vulnerabilities",
       "There is no package-lock.json, which `npm ci` requires; `npm install` creates it.",
       ("CI", "docs", "release", "preview")),
    _e("pytest-async-strict", "write tests for the async {x} helper", "python -m pytest -q tests/test_{x}.py",
       "Run the new tests", pytest_async_failure("/home/dev/project", "tests/test_{x}.py", ["test_{x}_retries"], 2),
       "python -m pytest -q -o asyncio_mode=auto tests/test_{x}.py",
       "...                                                                      [100%]\n3 passed in 0.31s",
       "pytest-asyncio runs in strict mode; running with asyncio_mode=auto.", ("fetch", "queue", "cache", "poll")),
    _e("git-push-non-fast-forward", "commit the {x} change and push it", "git push origin main", "Push main",
       git_push_rejected("git@forge.example:team/app.git", "main"),
       "git pull --rebase origin main && git push origin main",
       "Successfully rebased and updated refs/heads/main.\n"
       + git_push_ok("git@forge.example:team/app.git", "main", "19ab3f0", "c7d41e2"),
       "The remote main moved on; rebasing onto it and pushing again.", ("parser", "logging", "retry", "config")),
    _e("docker-compose-plugin", "bring up the {x} service for local testing", "docker compose up -d {x}",
       "Start the {x} service", "docker: 'compose' is not a docker command.\nSee 'docker --help'",
       "docker-compose up -d {x}", "Creating network app_default\nCreating app_{x}_1 ... done",
       "This Docker has no compose plugin; the standalone docker-compose is installed.",
       ("postgres", "redis", "minio", "mailhog")),
    _e("cargo-rustc-too-old", "build the {x} crate in release mode", "cargo build --release",
       "Build in release mode",
       "error: package `tokio-util v0.7.16` cannot be built because it requires rustc 1.70 or newer, while the "
       "currently active rustc version is 1.66.1\nEither upgrade to rustc 1.70 or newer, or use\n"
       "cargo update tokio-util@0.7.16 --precise ver\nwhere `ver` is the latest version of `tokio-util` "
       "supporting rustc 1.66.1", "rustup update stable && cargo build --release",
       "    Finished `release` profile [optimized] target(s) in 41.07s",
       "The active rustc is too old for a dependency; updating the stable toolchain.",
       ("cli", "server", "indexer", "codec")),
    _e("go-mod-tidy", "add a test for the {x} package", "go test ./...", "Run the Go tests",
       "go: updates to go.mod needed; to update it:\n\tgo mod tidy", "go mod tidy && go test ./...",
       "ok  \texample.com/app/{x}\t0.012s", "go.mod is out of date; tidying it first.",
       ("store", "auth", "router", "metrics")),
    _e("tsc-missing-node-types", "type-check the {x} script", "npx tsc --noEmit", "Type-check the project",
       "error TS2688: Cannot find type definition file for 'node'.\n  The file is in the program because:\n"
       "    Entry point of type library 'node' specified in compilerOptions\n\nFound 1 error.",
       "npm install --save-dev @types/node && npx tsc --noEmit", "added 2 packages in 1s",
       "The node type definitions are missing; installing @types/node.", ("build", "seed", "deploy", "lint")),
    _e("terraform-lock-file", "plan the {x} change", "terraform plan", "Plan the infrastructure change",
       "Error: Inconsistent dependency lock file\n\nThe following dependency selections recorded in the lock "
       "file are inconsistent with the current configuration:\n  - provider registry.terraform.io/hashicorp/aws: "
       "required by this configuration but no version is selected\n\nTo make the initial dependency selections "
       "that will initialize the dependency lock file, run:\n  terraform init",
       "terraform init && terraform plan", "Plan: 2 to add, 0 to change, 0 to destroy.",
       "The provider lock file is stale; running terraform init first.", ("bucket", "queue", "dns", "vpc")),
    _e("alembic-multiple-heads", "apply the {x} migration", "alembic upgrade head", "Apply the migrations",
       "ERROR [alembic.util.messaging] Multiple head revisions are present for given argument 'head'; please "
       "specify a specific target revision, '<branchname>@head' to narrow to a specific head, or 'heads' for "
       "all heads\n  FAILED: Multiple head revisions are present for given argument 'head'",
       "alembic merge heads -m merge && alembic upgrade head",
       "INFO  [alembic.runtime.migration] Running upgrade 3f2a -> 9c1d, merge",
       "Two migration branches diverged; merging the heads first.", ("users", "orders", "audit", "tags")),
)

# Convention pitfalls, one project's rules: their lessons are `local` and never leave the node.
CONVENTIONS: Mapping[str, tuple[Pitfall, ...]] = {
    "ada": (
        _c("commit-message-component", "commit the {x} fix", 'git commit -am "fix stuff"', "Commit the fix",
           "no, commit messages here start with the component, like '{x}: fix empty input'",
           'git commit -am "{x}: fix empty input"', "[main 4f1c2d9] {x}: fix empty input\n 1 file changed",
           ("parser", "lexer", "printer")),
        _c("format-only-touched", "tidy up the {x} module", "ruff format .", "Format the code",
           "don't format the whole repo, only the files you touched: ruff format src/{x}.py",
           "ruff format src/{x}.py", "1 file reformatted", ("lexer", "parser", "printer")),
    ),
    "bo": (
        _c("branch-naming", "start the {x} feature", "git checkout -b feature/{x}", "Create a feature branch",
           "no, branch names here are the ticket then the slug, like QL-212-export-csv",
           "git checkout -b QL-212-{x}", "Switched to a new branch 'QL-212-{x}'", ("export", "search", "themes")),
        _c("make-tidy-not-clean", "rebuild the {x} assets from scratch", "make clean", "Clean the build",
           "stop, make clean wipes the cached fixtures; use make tidy", "make tidy",
           "removed build/ (kept fixtures/)", ("icons", "fonts", "styles")),
    ),
}

AGENTS = {"ada": "/home/ada/src/orbital", "bo": "/home/bo/src/quillpad"}


# --------------------------------------------------------------------------------------------
# The schedule


@dataclass(frozen=True)
class Plan:
    """Which pitfalls each agent meets on which day (1-based), by seed."""

    days: int
    a_only: tuple[str, ...]  # met by A in the first half, then by B in the second
    b_own: tuple[str, ...]  # met by B only
    sessions: Mapping[tuple[str, int], tuple[tuple[str, str], ...]]  # (agent, day) → ((pitfall, fill), …)

    def pitfall(self, name: str) -> Pitfall:
        return PITFALLS[name]


PITFALLS: dict[str, Pitfall] = {p.name: p for p in ERRORS} | {
    p.name: p for group in CONVENTIONS.values() for p in group}


def make_plan(seed: int, days: int = 28, a_only: int = 5, b_own: int = 3, b_meets: int = 3) -> Plan:
    """A's pitfalls twice (so that its errors repeat into lessons) before B's half begins; B meets
    each of them ``b_meets`` times in the second half, and its own pitfalls across the run; each
    agent meets its conventions three times."""
    if a_only + b_own > len(ERRORS):
        raise ValueError(f"make_plan(): at most {len(ERRORS)} error pitfalls exist, asked for {a_only + b_own}")
    half = days // 2
    if half - 2 < 2 or days - half < b_meets or days < 6:
        raise ValueError(f"make_plan(): {days} days are too few (A needs two days before day {half - 1}, "
                         f"B {b_meets} after day {half})")
    rng = random.Random(seed)
    errors = [p.name for p in ERRORS]
    rng.shuffle(errors)
    a_names, b_names = tuple(errors[:a_only]), tuple(errors[a_only:a_only + b_own])
    sessions: dict[tuple[str, int], list[tuple[str, str]]] = {}

    def put(agent: str, day: int, name: str) -> None:
        sessions.setdefault((agent, day), []).append((name, rng.choice(PITFALLS[name].fills)))

    for name in a_names:
        for day in rng.sample(range(1, half - 1), 2):
            put("ada", day, name)
        for day in rng.sample(range(half + 1, days + 1), b_meets):
            put("bo", day, name)
    for name in b_names:
        for day in rng.sample(range(1, days + 1), min(b_meets, days)):
            put("bo", day, name)
    for agent, group in CONVENTIONS.items():
        for pitfall in group:
            for day in rng.sample(range(1, days + 1), 3):
                put(agent, day, pitfall.name)
    return Plan(days, a_names, b_names, {k: tuple(v) for k, v in sessions.items()})


# --------------------------------------------------------------------------------------------
# Reading the memory folder as the agent does


@dataclass(frozen=True)
class Memory:
    """The lessons of one memory folder, as loaded at session start."""

    lessons: tuple[dict, ...]  # {id, text, layer, situation}

    @classmethod
    def load(cls, folder: Path) -> "Memory":
        index = folder / INDEX
        if not index.exists():
            return cls(())
        names = re.findall(rf"\]\(({re.escape(FILE_PREFIX)}[0-9a-f]+\.md)\)", index.read_text("utf-8"))
        found = []
        for name in dict.fromkeys(names):
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
            text = body.strip().split("\n\n<!--")[0].strip()
            prediction = front.get("prediction") or {}
            found.append({"id": front.get("id", ""), "text": text, "layer": front.get("layer", "own"),
                          "situation": prediction.get("situation", "") if isinstance(prediction, dict) else ""})
        return cls(tuple(found))

    def covering(self, command: str, surprise: str) -> dict | None:
        """The lesson that warns of ``surprise`` when about to run ``command``, if one is loaded."""
        head = command_head("Bash", command)
        line = embed(f"Bash {command}")
        claim = embed(surprise)
        best, best_score = None, 0.0
        for lesson in self.lessons:
            heads = {command_head("Bash", span) for span in _spans(lesson["text"])}
            situation = lesson["situation"] or ""
            about = head in heads or (situation and float(embed(situation) @ line) >= SITUATION_COSINE)
            if not about:
                continue
            score = float(embed(lesson["text"]) @ claim)
            if score >= OUTCOME_COSINE and score > best_score:
                best, best_score = lesson, score
        return best


def _spans(text: str) -> list[str]:
    """Commands a lesson's text names: code spans, and the quoted "Tool target" of a correction."""
    spans = re.findall(r"`([^`]+)`", text)
    spans += [m.removeprefix("Bash ") for m in re.findall(r'"(Bash [^"]+)"', text)]
    return spans


# --------------------------------------------------------------------------------------------
# The scripted agent


@dataclass(frozen=True)
class Encounter:
    agent: str
    day: int
    pitfall: str
    kind: PitfallKind
    outcome: Outcome
    lesson: str | None = None  # the covering lesson's id
    layer: str | None = None  # the memory folder layer it came from: own, common


def day_time(day: int, hour: int = 0, minute: int = 0) -> datetime:
    return START + timedelta(days=day - 1, hours=hour, minutes=minute)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ScriptedAgent:
    name: str
    transcripts: Path  # where its sessions are written (what its node ingests)
    memory: Path  # its memory folder (what its node renders)
    cwd: str = ""
    seed: int = 0
    encounters: list[Encounter] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cwd = self.cwd or AGENTS.get(self.name, f"/home/{self.name}/src/project")

    def work(self, day: int, plan: Sequence[tuple[str, str]]) -> Path:
        """Day ``day``'s session over the pitfalls of ``plan``; returns the transcript written."""
        memory = Memory.load(self.memory)
        slug = "routine" if not plan else plan[0][0]
        s = Session(self.name, 1, slug, self.cwd, "main", 9)
        # The builder seeds its ids by node, day of month and slug; a run spans months and meets a
        # pitfall more than once, so the seed takes the run's day and seed instead.
        s.rng = random.Random(f"{self.name}/{self.seed}/{day}/{slug}")
        s.sid = s._uuid()
        s.now = day_time(day, 9 + (day * 7 + len(self.name)) % 8, 7)
        s.path = self.transcripts / f"day-{day:02d}-{slug}.jsonl"
        s.snapshot()
        s.hook("SessionStart", "~/.claude/hooks/session-start.sh")
        asks = [PITFALLS[name].fill(PITFALLS[name].ask, value) for name, value in plan]
        s.user("; then ".join(asks) if asks else _routine_ask(day))
        s.tool("Read", {"file_path": f"{self.cwd}/README.md"}, "     1→# project\n     2→\n")
        for name, value in plan:
            pitfall = PITFALLS[name]
            lesson = memory.covering(pitfall.fill(pitfall.command, value), pitfall.surprise(value))
            if lesson is None:
                self._meet(s, pitfall, value)
            else:
                # The lesson is not quoted: nothing of another agent's memory enters this raw stream.
                s.bash(pitfall.fill(pitfall.workaround, value), "Run it the way that works here",
                       pitfall.fill(pitfall.workaround_output, value),
                       text="My memory notes a known problem with this; going the way that works.")
            self.encounters.append(Encounter(
                self.name, day, name, pitfall.kind, Outcome.MET if lesson is None else Outcome.AVOIDED,
                lesson["id"] if lesson else None, lesson["layer"] if lesson else None))
        s.bash("git status --short", "Check the working tree", " M README.md")
        s.say(("text", "Done: " + ("; ".join(asks) if asks else "the routine check") + "."))
        s.write()
        return s.path

    def _meet(self, s: Session, pitfall: Pitfall, value: str) -> None:
        command = pitfall.fill(pitfall.command, value)
        if pitfall.kind is PitfallKind.ERROR:
            s.bash(command, pitfall.fill(pitfall.description, value), pitfall.fill(pitfall.output, value),
                   exit_code=1)
            s.bash(pitfall.fill(pitfall.workaround, value), "Work around it",
                   pitfall.fill(pitfall.workaround_output, value), text=pitfall.explain)
        else:
            s.reject("Bash", {"command": command, "description": pitfall.fill(pitfall.description, value)},
                     pitfall.fill(pitfall.correction, value))
            s.bash(pitfall.fill(pitfall.workaround, value), "Do it the project's way",
                   pitfall.fill(pitfall.workaround_output, value), text=pitfall.explain)


def _routine_ask(day: int) -> str:
    return ("review the open TODOs and summarise them", "update the README's usage section",
            "read the changelog and list what is unreleased")[day % 3]
