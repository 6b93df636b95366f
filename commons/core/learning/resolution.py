"""Resolution mining: what, in the same session, resolved a failed tool call.

Pure functions and one small bounded tracker over the ordered tool calls of a session. For each
failed call the tracker watches the calls that follow until the task moves on (the person speaks,
or `HORIZON` calls pass) and records the first that resolves it, with how it relates:

- ``SAME_HEAD``: the same command head succeeded with changed arguments (``git push`` →
  ``git push --set-upstream origin <branch>``);
- ``HINTED``: the command the error's own output named ("Run 'mix format' to fix") succeeded;
- ``NAMED``: the output named a fix and the session never ran it (kept with a low confidence;
  a later successful call of the same intent replaces it);
- ``RERUN``: the same command succeeded after other actions (what was done in between is the fix:
  ``uv add --dev pytest-asyncio``, an edit of ``pyproject.toml``), or with nothing in between (a
  flaky failure, low confidence);
- ``NEXT_COMMAND``: a different command for the same goal (same program, or the same package or
  file argument) succeeded before the task moved on (``npm ci`` → ``npm install``,
  ``pip install httpx`` → ``uv add httpx``);
- ``REREAD``: a file edit failed and the file was read before the next attempt;
- ``CLAIM``: for corrections, what the person said is true instead.

A resolution is only ever a call the session made or a fix the output named: never invented.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace

from commons.core.learning.failure import program_of, segments
from commons.core.learning.scope import SHELL_TOOLS, command_head
from commons.core.policy import clip

HORIZON = 12  # calls after a failure within which a resolution may still come
MAX_OPEN = 8  # failures awaiting a resolution at once (oldest forgotten first)
MAX_STEPS = 3  # actions kept between a failure and the call that resolved it
STEP_CHARS = 120


class Relation(enum.Enum):
    SAME_HEAD = "same_head"
    HINTED = "hinted"
    NAMED = "named"
    RERUN = "rerun"
    NEXT_COMMAND = "next_command"
    REREAD = "reread"
    CLAIM = "claim"


# How sure each relation is that the call really resolved the failure.
CONFIDENCE = {
    Relation.HINTED: 0.9, Relation.REREAD: 0.9, Relation.SAME_HEAD: 0.8, Relation.CLAIM: 0.8,
    Relation.RERUN: 0.7, Relation.NEXT_COMMAND: 0.6, Relation.NAMED: 0.4,
}  # fmt: skip
FLAKY_CONFIDENCE = 0.3  # the same command passed again with nothing done in between


@dataclass(frozen=True)
class Resolution:
    relation: Relation
    command: str  # the call that succeeded (or the fix named), as "tool target" for non-shell tools
    steps: tuple[str, ...] = ()  # for RERUN: what was done between the failure and the success
    confidence: float = 0.0
    tool: str = ""

    def to_json(self) -> dict[str, object]:
        return {"relation": self.relation.value, "command": self.command, "steps": list(self.steps),
                "confidence": self.confidence, "tool": self.tool}

    @classmethod
    def from_json(cls, body: dict[str, object]) -> Resolution:
        return cls(Relation(str(body["relation"])), str(body["command"]),
                   tuple(str(s) for s in body.get("steps") or ()),  # type: ignore[union-attr]
                   float(body.get("confidence") or 0.0), str(body.get("tool") or ""))  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# The fix an error's output names

_HINTS = (
    # git: "To push the current branch and set the remote as upstream, use\n\n    git push --set-upstream origin x"
    re.compile(r"\buse:?[ \t]*\n(?:[ \t]*\n)?[ \t]+((?:git|npm|pip|uv|mix|cargo|yarn|pnpm)[ \t][^\n]+)", re.IGNORECASE),
    re.compile(r"\b(?:run|try|use|try running|please run)[ \t]+[`'\"]([^`'\"\n]{3,80})[`'\"]", re.IGNORECASE),
    re.compile(r"\bdid you mean\s+[`'\"]?([^`'\"\n?]{3,60})[`'\"]?\?", re.IGNORECASE),
)
_LOOKS_LIKE_COMMAND = re.compile(r"^[a-z][\w.\-]*(?:\s+[\w.\-=/<>:@\"']+)*$")


def named_fix(output: str) -> str:
    """The command a failed tool's output names as its fix, or "" (never guessed)."""
    lower = output.lower()
    if "use" not in lower and "run" not in lower and "try" not in lower and "did you mean" not in lower:
        return ""
    for pattern in _HINTS:
        found = pattern.search(output)
        if found:
            fix = " ".join(found.group(1).split())
            if _LOOKS_LIKE_COMMAND.match(fix) and len(fix.split()) <= 8:
                return fix
    return ""


# --------------------------------------------------------------------------------------------
# How a later call relates to a failure


def _words(command: str) -> set[str]:
    """Arguments that name what a command works on (packages, files), not its flags."""
    out = set()
    for part in segments(command):
        for word in part.split()[1:]:
            word = re.split(r"[=<>~!@\[]", word.strip("'\""))[0]  # "httpx==0.27" names httpx
            if len(word) >= 3 and not word.startswith("-") and not word.isdigit():
                out.add(word.rsplit("/", 1)[-1].lower())
    return out


# Commands that do the same job with another tool: installing a project's dependencies with
# another package manager (`npm ci` in a pnpm project → `pnpm install`) is the same goal.
_SAME_GOAL = (
    ("install js dependencies", ("npm ci", "npm install", "npm i", "pnpm install", "pnpm i", "yarn install",
                                 "yarn", "bun install")),
    ("install python dependencies", ("pip install", "uv sync", "uv pip", "poetry install", "pipenv install")),
)
_GOAL_OF = {head: goal for goal, heads in _SAME_GOAL for head in heads}

_GENERIC_WORDS = frozenset({"install", "add", "run", "test", "build", "push", "commit", "origin", "main",
                            "master", "the", "and", "dev"})


@dataclass(frozen=True)
class OpenFailure:
    """A failure awaiting its resolution, as the tracker keeps it (small and serialisable)."""

    uid: str
    tool: str
    command: str  # the sub-command that failed (shell) or the target (other tools)
    hint: str  # the fix its output named, or ""
    calls_since: int = 0
    steps: tuple[str, ...] = ()

    def to_json(self) -> list[object]:
        return [self.uid, self.tool, self.command, self.hint, self.calls_since, list(self.steps)]

    @classmethod
    def from_json(cls, row: list[object]) -> OpenFailure:
        uid, tool, command, hint, since, steps = row
        return cls(str(uid), str(tool), str(command), str(hint), int(since),  # type: ignore[call-overload]
                   tuple(str(s) for s in steps))  # type: ignore[union-attr]


def _is_shell(tool: str) -> bool:
    return tool.lower() in SHELL_TOOLS


def relate(failure: OpenFailure, tool: str, target: str) -> Resolution | None:
    """How a successful call (``tool``, ``target``) resolves ``failure``, or None if it does not."""
    if not _is_shell(failure.tool):
        if tool.lower() == "read" and failure.tool.lower() in {"edit", "write", "multiedit", "notebookedit"} \
                and target and target == failure.command:
            return Resolution(Relation.REREAD, f"Read {target}", confidence=CONFIDENCE[Relation.REREAD], tool=tool)
        return None
    if not _is_shell(tool):
        return None
    if failure.hint:
        hint_head = command_head("bash", failure.hint)
        if any(part.startswith(failure.hint) or command_head("bash", part) == hint_head and
               _words(failure.hint) <= _words(part) | {"<branch>"} for part in segments(target)):
            return Resolution(Relation.HINTED, _matching_part(target, hint_head),
                              confidence=CONFIDENCE[Relation.HINTED], tool=tool)
    head = command_head("bash", failure.command)
    parts = segments(target)
    for part in parts:
        if command_head("bash", part) != head:
            continue
        if " ".join(part.split()) == " ".join(failure.command.split()):
            confidence = CONFIDENCE[Relation.RERUN] if failure.steps else FLAKY_CONFIDENCE
            return Resolution(Relation.RERUN, part, steps=failure.steps, confidence=confidence, tool=tool)
        return Resolution(Relation.SAME_HEAD, part, confidence=CONFIDENCE[Relation.SAME_HEAD], tool=tool)
    program = _program(failure.command)
    subjects = _words(failure.command) - _GENERIC_WORDS
    goal = _GOAL_OF.get(head)
    for part in parts:
        if goal is not None and _GOAL_OF.get(command_head("bash", part)) == goal:
            return Resolution(Relation.NEXT_COMMAND, part, confidence=CONFIDENCE[Relation.NEXT_COMMAND], tool=tool)
        other = _program(part)
        # Looking around ("git status", "ls") is not doing something else for the same goal.
        if not other or not changes_something(tool, part) or other == "git" and program != "git":
            continue
        if other == program or (subjects and subjects & _words(part)):
            return Resolution(Relation.NEXT_COMMAND, part, confidence=CONFIDENCE[Relation.NEXT_COMMAND], tool=tool)
    return None


def _program(command: str) -> str:
    """The program a shell command runs, past its runner: ``uv run pytest`` runs pytest, and
    ``uv add`` after a failed ``uv run pytest`` is not the same program tried another way."""
    head = command_head("bash", command)
    return head.split()[0] if head and head != "bash" else program_of(command)


def _matching_part(target: str, head: str) -> str:
    for part in segments(target):
        if command_head("bash", part) == head:
            return part
    return target


def step_of(tool: str, target: str, detail: str = "") -> str:
    """How an action between a failure and its resolution is remembered ("Edit pyproject.toml:
    asyncio_mode = 'auto'", "uv add --dev pytest-asyncio")."""
    text = target if _is_shell(tool) else f"{tool} {target}".strip()
    if detail:
        text = f"{text}: {detail}"
    return clip(" ".join(text.split()), STEP_CHARS)  # scrubbed, then cut (never a halved key)


# Calls that change nothing: they are not steps toward a fix.
_LOOKING = frozenset({"read", "grep", "glob", "ls", "websearch", "webfetch", "todowrite", "task", "bashoutput"})
_LOOKING_PROGRAMS = frozenset({"ls", "cat", "head", "tail", "grep", "rg", "find", "which", "echo", "pwd",
                               "git status", "git log", "git diff", "git branch", "git remote"})


def changes_something(tool: str, target: str) -> bool:
    if tool.lower() in _LOOKING:
        return False
    if _is_shell(tool):
        head = command_head("bash", target)
        return head not in _LOOKING_PROGRAMS and head.split()[0] not in _LOOKING_PROGRAMS
    return True


# What sets a project up rather than writes its code: adding a dependency, editing a manifest or a
# tool's configuration. A failure fixed that way is a pitfall of the setup, not work in progress.
_SETUP_HEADS = frozenset({"pip install", "uv add", "uv pip", "uv sync", "poetry add", "pipenv install",
                          "npm install", "npm i", "pnpm add", "pnpm install", "yarn add", "bun add",
                          "cargo add", "go get", "mix deps.get", "gem install", "bundle add", "apt-get install",
                          "brew install"})
_CONFIG_FILE = re.compile(r"(?:^|/)(?:pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini|requirements[\w.-]*\.txt|"
                          r"package\.json|tsconfig[\w.-]*\.json|\.[\w.-]*rc(?:\.json|\.ya?ml|\.js|\.cjs)?|"
                          r"[\w.-]*\.config\.(?:js|cjs|mjs|ts)|mix\.exs|Cargo\.toml|go\.mod|Gemfile|"
                          r"[\w.-]+\.(?:toml|ini|cfg|ya?ml))(?::|$)")


def is_setup_step(step: str) -> bool:
    """Whether a step (as `step_of` remembers it) sets the project up: a dependency added, or a
    manifest or configuration file edited (``Edit /x/pyproject.toml: asyncio_mode = 'auto'``)."""
    tool, _, rest = step.partition(" ")
    if tool.lower() in {"edit", "write", "multiedit"}:
        return bool(_CONFIG_FILE.search(rest.split(": ", 1)[0].strip()))
    return any(command_head("bash", part) in _SETUP_HEADS for part in segments(step))


def fixed_by_setup(resolution: Resolution | None) -> bool:
    """Whether what resolved a failure was setting the project up (see `is_setup_step`)."""
    if resolution is None:
        return False
    if resolution.relation is Relation.RERUN:
        return bool(resolution.steps) and is_setup_step(resolution.steps[-1])
    return is_setup_step(resolution.command)


@dataclass(frozen=True)
class Resolved:
    uid: str
    resolution: Resolution


def advance(open_failures: tuple[OpenFailure, ...], tool: str, target: str, ok: bool,
            detail: str = "") -> tuple[tuple[OpenFailure, ...], tuple[Resolved, ...]]:
    """One more call of the session: (the failures still open, those this call resolved).

    A successful call resolves every open failure it relates to; any call counts toward each
    failure's horizon, and a successful call that changes something is remembered as a step.
    """
    still: list[OpenFailure] = []
    resolved: list[Resolved] = []
    for failure in open_failures:
        found = relate(failure, tool, target) if ok else None
        if found is not None:
            resolved.append(Resolved(failure.uid, found))
            continue
        since = failure.calls_since + 1
        if since > HORIZON:
            continue
        steps = failure.steps
        if ok and changes_something(tool, target) and len(steps) < MAX_STEPS:
            steps = steps + (step_of(tool, target, detail),)
        still.append(replace(failure, calls_since=since, steps=steps))
    return tuple(still), tuple(resolved)


def opened(open_failures: tuple[OpenFailure, ...], failure: OpenFailure) -> tuple[OpenFailure, ...]:
    """``open_failures`` with ``failure`` added, the oldest forgotten beyond `MAX_OPEN`. A retry
    that failed again stays open beside the first failure: the call that finally succeeds resolves
    both."""
    return (open_failures + (failure,))[-MAX_OPEN:]


def named(hint: str, tool: str) -> Resolution | None:
    return Resolution(Relation.NAMED, hint, confidence=CONFIDENCE[Relation.NAMED], tool=tool) if hint else None
