"""Lessons: their local state, their strength over time, and their deterministic text.

A lesson is what sleep keeps of one or more surprises (design paper §3.1, §4.5): one or two
sentences that *report* what happened, never tell the agent what to do (§3.5).

Strength is stored as a value and the moment it refers to (``strength``, ``strength_at``); its
value at any later time is ``strength · 2^(−Δt / half-life)``. Every change (a surprise joining,
a prediction confirmed or failed) first brings the value up to ``now`` and then adds or takes
away, so the decay curve is continuous and a sleep run twice at the same ``now`` changes
nothing. ``touched`` is kept apart: it is when the lesson was last *used* (joined, confirmed,
recalled), which is what recall's recency reads; a failed prediction weakens a lesson without
counting as a use of it.
"""

from __future__ import annotations

import enum
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import blake3
import numpy as np

from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode
from commons.core.learning.generalise import COMMON_WORDS, generalise
from commons.core.learning.failure import program_of, segments, shortened, split_command
from commons.core.learning.evidence import (Evidence, Resolution, changes_something, is_proven, is_stale_text,
                                           outside_sandbox, spelled_alike)
from commons.core.policy import Admitted, Danger, admit, classify_step, strip_injections
from commons.core.policy import cut, scrub
from commons.core.records import SECONDS_PER_DAY, LessonKind, Scope
from commons.core.learning.scope import SHELL_TOOLS, VOCABULARY, classify, command_head, scrubbed_detail

DAY = float(SECONDS_PER_DAY)  # the one length of a day: the records' own, which count days

Surprise = ErrorEpisode | CorrectionEpisode
WriteText = Callable[[Sequence[Surprise]], str]


class LessonStatus(enum.Enum):
    ACTIVE = "active"
    ARCHIVED = "archived"  # strength fell below the floor; kept, but no longer recalled or rendered


@dataclass(frozen=True)
class LessonFix:
    """The fix an error lesson names, and the evidence for it (`commons.core.learning.evidence`).

    ``step`` is the step as the lesson names it (generalised); ``said`` the words the lesson's text
    gives it; ``sessions`` how many sessions proved it; ``confidence`` the surest evidence's;
    ``danger`` what the step destroys or disables when it is a dangerous one
    (`commons.core.policy.danger`), None when it is not."""

    step: str
    evidence: Evidence
    sessions: int
    confidence: float
    said: str
    danger: Danger | None = None

    def to_json(self) -> dict[str, object]:
        # Strings here are the step alone (and the words naming it): what verifies a lesson reads.
        return {"step": self.step, "evidence": self.evidence.value, "sessions": self.sessions,
                "confidence": round(self.confidence, 2), "text": self.said,
                "danger": self.danger.to_json() if self.danger is not None else None}

    @classmethod
    def from_json(cls, body: dict[str, object]) -> LessonFix:
        # The danger found when the fix was chosen, classed on the steps as run (`null`: safe as
        # run, though `rm -rf <path>` as named could be anything). A row stored before dangers were
        # known has no key: its step, as named, is classed by this version's rules; `commons
        # rebuild` classes every fix again from the steps as run.
        step = str(body["step"])
        if "danger" in body:
            stored = body["danger"]
            danger = Danger.from_json(stored) if isinstance(stored, dict) else None  # type: ignore[arg-type]
            if isinstance(stored, dict) and danger is None:  # a kind this version does not know
                danger = classify_step(step)
        else:
            danger = classify_step(step)
        return cls(step, Evidence(str(body["evidence"])), int(body["sessions"]),  # type: ignore[call-overload]
                   float(body["confidence"]), str(body.get("text") or ""), danger)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Lesson:
    id: str  # hex BLAKE3 of kind, normalised first text and first episode uid: stable across runs
    kind: LessonKind
    text: str
    scope: Scope
    topics: tuple[str, ...]
    gist: str  # the founding episode's text: what new surprises are compared with
    triggers: tuple[str, ...]  # command heads of the situation ("pip install"), for predictions
    outcome: str  # the surprise met there (the failure line, or the person's words)
    episodes: tuple[str, ...]  # local episode uids, oldest first
    provenance: tuple[bytes, ...]  # keyed hashes of those episodes (what may be published)
    strength: float  # value at strength_at
    strength_at: float
    touched: float  # last use (recency)
    seen: int
    created: float
    status: LessonStatus = LessonStatus.ACTIVE
    by_model: bool = False  # the text came from the caller's write_text hook
    fix: LessonFix | None = None  # what the sessions proved fixed the failure; None: no fix seen
    fix_refuted: tuple[str, ...] = ()  # steps a session took and then met the same failure again

    def strength_now(self, now: float, half_life_days: float) -> float:
        return decayed(self.strength, self.strength_at, now, half_life_days)


def decay_factor(since: float | np.ndarray, now: float, half_life_days: float) -> float | np.ndarray:
    """2^(-(now - since) / half-life), 1 where ``since`` is not before ``now``: the one decay, for a
    time or an array of times (strength halves every 45 days, recall's recency every 30)."""
    return np.exp2(-np.maximum(now - np.asarray(since, dtype=np.float64), 0.0) / (half_life_days * DAY))


def decayed(strength: float, since: float, now: float, half_life_days: float) -> float:
    """``strength`` halved every ``half_life_days`` from ``since`` to ``now`` (never grows)."""
    if now <= since:
        return strength
    return strength * float(decay_factor(since, now, half_life_days))


def adjust(lesson: Lesson, delta: float, now: float, half_life_days: float, *, touch: bool) -> Lesson:
    """``lesson`` with its strength brought to ``now`` and moved by ``delta`` (floored at 0)."""
    value = max(0.0, lesson.strength_now(now, half_life_days) + delta)
    return replace(lesson, strength=value, strength_at=max(now, lesson.strength_at),
                   touched=max(now, lesson.touched) if touch else lesson.touched)


def normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).lower().split())


def lesson_id(kind: LessonKind, text: str, first_uid: str) -> str:
    body = b"\x00".join([b"commons/lesson-id/v1", kind.value.encode(), normalise(text).encode(),
                         first_uid.encode()])
    return blake3.blake3(body).hexdigest()


# --------------------------------------------------------------------------------------------
# Deterministic text

QUOTE_MAX = 140


def _clean(text: str, limit: int = QUOTE_MAX) -> str:
    """One line of quotable data: injections removed, secrets scrubbed, double quotes made single,
    bounded. Scrubbed before it is cut: a cut first can halve a key so that neither half is seen."""
    text = scrub(strip_injections(unicodedata.normalize("NFC", text)))
    text = " ".join(text.replace('"', "'").replace("“", "'").replace("”", "'").split())
    text = text.replace("`", "'")
    return cut(scrub(text), limit)  # the quotes changed: scrubbed again (a no-op unless they mattered)


# What an error lesson says worked and its counts; the text without them is what names the lesson
# (its id, and the store's "same normalised text" key, which a veto matches), so a lesson seen
# once more, or whose fix shows in a later session, is still the same lesson.
_SEEN_TAIL = re.compile(r"(?:; (?:no fix was seen|it (?:succeeded|passed)|the same (?:command|call)|its output named|"
                        r"only a step that|`)[^\"]*?)?"
                        r"(?: \((?:seen \d+ times|\d+ times in \d+ sessions?|\d+ of \d+ sessions|\d+ sessions?)\))?\.$")
TEXT_MAX = 200  # one index line
# Rules of the agent's own tools: true, but about the tool, not about the work.
_TOOL_RULE = re.compile(r"has not been read yet|exceeds maximum allowed|file content .{0,40}exceeds|"
                        r"must (?:read|use) .{0,30} (?:first|before)|String to replace not found|"
                        r"File has been modified since read|InputValidationError|required parameter",
                        re.IGNORECASE)
_PLACEHOLDERS = re.compile(r"<(?:path|branch|n|port|pid|package|arg)>")
_FILE_TOOLS = frozenset({"read", "edit", "write", "multiedit", "notebookedit", "glob", "grep"})


def _seen(n: int) -> str:
    return f" (seen {n} times)" if n > 1 else ""


def head_of(ep: ErrorEpisode) -> str:
    return command_head(ep.tool, ep.failed)


def is_tool_rule(ep: ErrorEpisode) -> bool:
    """A failure that is a rule of the agent's own tools ("File has not been read yet")."""
    return ep.tool.lower() in _FILE_TOOLS and bool(_TOOL_RULE.search(ep.failure))


def is_resolved(ep: ErrorEpisode) -> bool:
    return is_proven(ep.resolution)


_INSTALLS = frozenset({"pip install", "uv add", "uv pip", "npm install", "npm i", "yarn add", "pnpm add",
                       "cargo add", "gem install", "brew install", "poetry add", "pipx install", "go get"})
_PYTEST_PREFIX = re.compile(r"^(?:FAILED|ERROR) \S+ - ")


def _same_package(command: str, failed: str) -> str:
    """``command`` with what it shares with the failed call as a placeholder, so that one fix met on
    other packages or services is one fix: after a failed install, the package (``uv add httpx``
    after ``pip install httpx`` is ``uv add <package>``; ``pip install psycopg2-binary`` after
    ``pip install psycopg2`` is ``pip install <package>-binary``); after a call retried under its
    program's other spelling, its arguments (``docker-compose up -d minio`` after ``docker compose
    up -d minio`` is ``docker-compose up -d <arg>``)."""
    head, failed_head = command_head("bash", command), command_head("bash", failed)
    if head in _INSTALLS and failed_head in _INSTALLS:
        placeholder = "<package>"
    elif head != failed_head and command_head("bash", spelled_alike(command)) == command_head("bash", spelled_alike(failed)):
        placeholder = "<arg>"
    else:
        return command
    base = lambda word: re.split(r"[=<>~!@\[]", word)[0].lower()
    own = set(failed_head.split()) | set(head.split())
    shared = {base(w) for w in failed.split()[1:] if not w.startswith("-") and w.lower() not in own and "/" not in w}
    words = command.split()
    for i, word in enumerate(words[1:], 1):
        if word.startswith("-") or word.lower() in own:
            continue
        if base(word) in shared:
            words[i] = placeholder
        elif variant := next((p for p in shared if base(word).startswith(p + "-")), None):
            words[i] = placeholder + word[len(variant):]  # the same package in another build
    return " ".join(words)


STEP_SHOWN = 70  # characters of a step a lesson shows


def _past_where(command: str, failed: str) -> str:
    """A step too long to show whole that went somewhere first (``cd x && cmd …``), shown by what
    it ran: where it ran is the least of what it says, and its cut would leave little of the rest
    (``cd C:~/app && powershell -Command '& 'C:\\Program…``). Kept whole when running there is all
    that changed (the rest is the failed command itself)."""
    parts = split_command(command)
    if len(command) <= STEP_SHOWN or len(parts) < 2 or parts[0][1] != "&&" or program_of(parts[0][0]) not in {"cd", "pushd"}:
        return command
    rest = " ".join(f"{seg} {sep}" for seg, sep in parts[1:]).strip()
    return command if " ".join(rest.split()) == " ".join(failed.split()) else rest


def _fix_phrase(res: Resolution, names: Sequence[str], failed: str = "", failure: str = "") -> tuple[str, str]:
    """(the step, generalised; what worked, in the past tense) for a proven fix. ``failure``: the
    failure line, which says whether a read before an edit was the fix alone (the tool wanted the
    file read first) or with the edit made again from what it showed (the edit's text was stale)."""
    command, _, params = res.command.partition(" (with ")
    command = _past_where(command, failed)
    step = _clean(generalise(_same_package(command, failed), names), STEP_SHOWN)
    escaped, beside = outside_sandbox(params.removesuffix(")"))
    if escaped:  # out of the sandbox, whichever parameter the harness took for it: one step
        step = f"{_clean(generalise(_same_package(command, failed), names), 48)} (escalated" + \
            (f", with {_clean(beside, 40)})" if beside else ")")
    elif params:  # the call's parameters are the difference: cut the command, never them
        step = f"{_clean(generalise(_same_package(command, failed), names), 48)} (with {_clean(params, 60)}"
    tool, _, rest = res.command.partition(" ")
    if tool.lower() in _FILE_TOOLS and tool.lower() == res.tool.lower():
        # A file tool's target is a path, whatever it holds (spaces, an address): the step is the
        # tool, and what the retry changed (an offset, replace_all).
        path, _, detail = rest.partition(": ")
        shown = generalise(path, names) if path and " " not in path.strip() else "<path>"
        step = _clean(f"{tool} {shown}" + (f": {generalise(detail, names)}" if detail else ""), 70)
    elif res.evidence is Evidence.RETRY_CHANGED and tool.lower() == res.tool.lower() and ": " in rest \
            and tool.lower() not in SHELL_TOOLS | _FILE_TOOLS:
        # An agent or MCP tool retried with other arguments: those are the step, not its prose.
        step = _clean(f"{tool} with {generalise(rest.rpartition(': ')[2], names)}", 70)
    if res.evidence is Evidence.READ_BEFORE and (res.tool.lower() in SHELL_TOOLS or is_stale_text(failure)):
        # The edit's text was stale: the file looked at again (in the shell, `sed -n '1,40p' <path>`,
        # or with Read) is the step, and the fix is the look with the edit made again from it.
        look = step if res.tool.lower() in SHELL_TOOLS else "Read <path>"
        again = _edit_named(res.retry, names)
        # The look shown short: the quoted failure is what the line cuts to fit, and it says more.
        return look, f"it succeeded after the file was re-read (`{_clean(look, 40)}`) and edited again" + \
            (f" (`{again}`)" if again else "")
    if res.evidence is Evidence.READ_BEFORE:  # the tool wanted the file read first: the Read was the fix
        return "Read <path>", "it succeeded after a Read of the file"
    if res.evidence is Evidence.CHANGED_BEFORE:
        return step, f"it passed after `{step}`"
    if res.evidence is Evidence.RERUN:
        return step, "the same call passed when run again unchanged (transient)"
    if res.evidence is Evidence.FOUND_BY_WRAPPER:
        return step, f"`{step}` found the program"
    if escaped:
        # The same command, made again out of the sandbox: what a reader must know is that the
        # sandbox refused it, not the harness's parameter name.
        return step, "it passed when run outside the sandbox (escalated)" + (f", with {_clean(beside, 40)}" if beside else "")
    return step, f"`{step}` succeeded after it"


def _edit_named(step: str, names: Sequence[str]) -> str:
    """An edit as a lesson names it: the tool and the file (``Edit <path>``), "" for none."""
    tool, _, rest = step.partition(" ")
    path = rest.partition(": ")[0].strip()
    if not tool:
        return ""
    return _clean(f"{tool} {generalise(path, names) if path and ' ' not in path else '<path>'}", 40)


def _refuted_key(step: str, failed: str, names: Sequence[str]) -> str:
    """A refuted step as `_fix_phrase` names the same step proven: a Read of the file is "Read
    <path>" whatever it read of it (an offset, a limit), so a Read followed by the same refusal
    refutes the Read another session proved."""
    if step.partition(" ")[0].lower() == "read":
        return "Read <path>"
    return _clean(generalise(_same_package(_past_where(step, failed), failed), names), STEP_SHOWN)


# A fix must be proven in this share of the sessions that met the failure and tried it again.
TRANSIENT_MIN_SESSIONS = 2  # a transient re-run is named only when several sessions show it


def choose_fix(errors: Sequence[ErrorEpisode], names: Sequence[str]) -> tuple[LessonFix | None, tuple[str, ...]]:
    """(the fix the episodes prove, steps refuted): the step proven in most sessions, less those
    where it was taken and the same failure came again; ``None`` when none is proven.

    A dangerous step (`classify_step`) never wins over a safe one, whatever the counts: a rejected
    push fixed by ``git pull --rebase`` in one session and by ``git push --force`` in two is fixed
    by ``git pull --rebase``. Only when no safe step is proven is the dangerous one the fix, and
    then it carries its danger (its text does not name it, and no record of it carries it)."""
    proven: dict[str, set[str]] = {}
    said: dict[str, str] = {}
    rank: dict[str, tuple[float, float]] = {}  # step -> (best confidence, minus first time seen)
    kinds: dict[str, Evidence] = {}
    refuted: dict[str, set[str]] = {}
    # Classed on the step as it was run, before placeholders: `<path>` hides whether `rm -rf` met
    # a cache or the project, and the step a lesson names is cut at 70 characters.
    danger: dict[str, Danger | None] = {}
    for e in sorted(errors, key=lambda e: e.at):
        res = e.resolution
        if res is None:
            continue
        for step in res.refuted:
            refuted.setdefault(_refuted_key(step, e.failed, names), set()).add(e.session)
        if not is_proven(res) and res.evidence is not Evidence.RERUN:
            continue
        step, phrase = _fix_phrase(res, names, e.failed, e.failure)
        proven.setdefault(step, set()).add(e.session)
        said.setdefault(step, phrase)
        confidence, first = rank.get(step, (0.0, -e.at))
        rank[step] = (max(confidence, res.confidence), first)
        kinds.setdefault(step, res.evidence)
        if danger.get(step) is None:
            danger[step] = classify_step(res.command, res.tool)
    # Sessions that proved a step, less those in which it was taken and the same failure came
    # again (a session that did both, and then succeeded, proved it).
    net = {step: len(sessions - refuted.get(step, set())) - len(refuted.get(step, set()) - sessions)
           for step, sessions in proven.items()}
    named = [s for s in proven if net[s] > 0 and (kinds[s] is not Evidence.RERUN or net[s] >= TRANSIENT_MIN_SESSIONS)]
    wrong = tuple(sorted(s for s in refuted if s not in named or net.get(s, 0) <= 0))
    if not named:
        return None, wrong
    best = max(named, key=lambda p: (danger[p] is None, net[p], kinds[p] is not Evidence.RERUN, *rank[p], p))
    return (LessonFix(best, kinds[best], net[best], rank[best][0], said[best], danger[best]),
            tuple(s for s in wrong if s != best))


def _sessions_tail(n_sessions: int, k: int | None) -> str:
    if k is not None and n_sessions == 1:
        return " (1 session)"
    if k is not None:
        return f" ({k} of {n_sessions} sessions)"
    return f" ({n_sessions} session{'s' if n_sessions != 1 else ''})" if n_sessions > 1 else ""


def _fit(prefix: str, quote: str, suffix: str, shorten: Callable[[str, int], str] = cut) -> str:
    """``prefix + "quote" + suffix`` within `TEXT_MAX`, shortening the quote (never the rest)."""
    room = TEXT_MAX - len(prefix) - len(suffix) - 2
    if room < 20:
        room = 20
    quote = shorten(quote, room)  # the quote is scrubbed (_clean): the cut keeps placeholders whole
    return f"{prefix}\"{quote}\"{suffix}"


_VARIANT = re.compile(r"<package>[-.\w]")  # the package in another build: `<package>-binary`
VARIANT_PACKAGES_SHOWN = 4


def _variant_packages(errors: Sequence[ErrorEpisode], step: str) -> tuple[str, ...]:
    """The packages a fix that is the failed package in another build (``pip install
    <package>-binary``) was seen for, in the order first met: such a fix is about those packages
    (a driver that builds against a library), not every install, so the lesson says which. A fix
    that is another tool for any package (``uv add <package>``) names none."""
    if not _VARIANT.search(step):
        return ()
    found: dict[str, None] = {}
    for e in sorted(errors, key=lambda e: e.at):
        head, words = command_head("bash", e.failed).split(), e.failed.split()
        if not head or words[:len(head)] != head:
            continue  # the install was part of a longer command: its other words are no packages
        for word in words[len(head):]:
            if re.fullmatch(r"[A-Za-z0-9][\w.-]*", word):
                found[word.lower()] = None
    return tuple(found)[:VARIANT_PACKAGES_SHOWN]


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _error_text(errors: Sequence[ErrorEpisode], names: Sequence[str]) -> str:
    err = errors[0]
    head = _clean(head_of(err), 60) or err.tool
    if head == err.tool.lower():
        head = err.tool
    # pytest's "FAILED <path>::<test> - " prefix names one test; the message after it is the pitfall.
    said = generalise(_PYTEST_PREFIX.sub("", err.failure), names)
    # Cleaned whole and cut once, by `_fit`: a cut that keeps the message an error term carries inside it.
    failure = _clean(said, 2 * len(said) + 1)
    sessions = {e.session for e in errors}
    fix, _ = choose_fix(errors, names)
    if fix is not None and fix.danger is not None:
        # Never advice: the step is not named in the line an agent reads first; what kind of
        # step it was is. The lesson's own file and `commons why` name it with its risk.
        suffix = (f"; only a step that {fix.danger.kind.value} was seen to work, not named here"
                  f"{_sessions_tail(len(sessions), fix.sessions)}.")
    elif fix is not None:
        seen_for = _variant_packages(errors, fix.step)
        for_which = f", for {_and(seen_for)}" if seen_for else ""
        suffix = f"; {fix.said}{for_which}{_sessions_tail(len(sessions), fix.sessions)}."
    else:
        count = f" ({len(errors)} times in {len(sessions)} session{'s' if len(sessions) != 1 else ''})" \
            if len(errors) > 1 else ""
        suffix = f"; no fix was seen{count}."
    if not failure:
        return f"`{head}` failed{suffix}"
    return _fit(f"`{head}` failed with ", failure, suffix, shorten=lambda quote, n: shortened(quote, min(n, QUOTE_MAX)))


_OPENER_WORDS = re.compile(r"^\W*(?:(?:no|nope|nah|wait|hmm+|oh|ok(?:ay)?|well|sorry|actually|stop|hold on)\b[\s,.!:;\-\u2014]*)+",
                           re.IGNORECASE)


def claim_of(said: str) -> str:
    """The person's claim in a correction: their words without the opening "no, wait,"."""
    return _OPENER_WORDS.sub("", said.strip()).strip() or said.strip()


def _correction_text(corr: CorrectionEpisode, n: int, names: Sequence[str]) -> str:
    claim = _clean(generalise(claim_of(corr.said), names), 120) or "a correction"
    # Found by structure, the correction answers what the agent claimed, not its last command.
    command = "" if corr.after_done else _agent_command(corr)
    tail = _seen(n)
    if command:
        return _fit(f"The person corrected the agent's `{_clean(generalise(command, names), 60)}`: ", claim, f"{tail}.")
    preceding = _clean(generalise(corr.preceding, names), 60)
    if preceding:
        return _fit("The person corrected the agent, after it said \"" + preceding + "\": ", claim, f"{tail}.")
    return _fit("The person corrected the agent: ", claim, f"{tail}.")


def corrected_command(corr: CorrectionEpisode) -> str:
    """The agent's call the person corrected ("Bash pip install httpx"): its last call before the
    words, when that call did something, or the call the person rejected. A call that only looked
    (the tail of a log, a Read, a grep) is not what the person was correcting: ""."""
    tool, _, rest = corr.command.partition(" ")
    if not corr.command or corr.via_rejection or changes_something(tool, rest):
        return corr.command
    return ""


def _agent_command(corr: CorrectionEpisode) -> str:
    """The command the agent ran before the correction: a shell call's command, else "Tool target"."""
    tool, _, rest = corrected_command(corr).partition(" ")
    if tool.lower() in SHELL_TOOLS:
        # "cd ../docs && npm ci" is about npm ci: where it ran is particular. In "git add -A &&
        # git status --short | head -5" what the person corrected is what did something: git add.
        command = re.sub(r"^(?:cd\s+\S+\s*(?:&&|;)\s*)+", "", rest.strip())
        parts = segments(command)
        acting = [p for p in parts if changes_something(tool, p)]
        return " && ".join(acting) if acting and len(acting) < len(parts) else command
    return corrected_command(corr).strip()


def deterministic_text(kind: LessonKind, episodes: Sequence[Surprise], project_names: Sequence[str] = ()) -> str:
    """The lesson text built from its episodes alone, without a model; always an observation.

    An error lesson names the failure and what worked after it, with how many of its sessions
    showed that fix, or says that no fix was seen; a correction lesson names the command the
    agent ran and the person's claim. What is particular becomes a placeholder (`generalise`).
    """
    if not episodes:
        raise ValueError("deterministic_text() needs at least one episode (API misuse)")
    n = len(episodes)
    if kind is LessonKind.CORRECTION:
        corr = next((e for e in episodes if isinstance(e, CorrectionEpisode)), None)
        if corr is None:
            raise ValueError("a correction lesson needs a correction episode (API misuse)")
        text = _correction_text(corr, n, project_names)
    else:
        errors = [e for e in episodes if isinstance(e, ErrorEpisode)]
        if not errors:
            raise ValueError("an error lesson needs an error episode (API misuse)")
        text = _error_text(errors, project_names)
    verdict = admit(text)  # the door policy: the same check as every other door in
    if isinstance(verdict, Admitted):
        return verdict.text
    # The shapes above open with "The person" or a code span; kept as a last line so that
    # no input, however odd (a hostile package's error output quoted), yields an instruction.
    return f"The agent met a {kind.value}{_seen(n)}."


def uncounted(text: str) -> str:
    """A lesson's text without its count: what two lessons compare to be one."""
    return normalise(_SEEN_TAIL.sub(".", text.strip(), count=1))


def tool_family(tool: str) -> str:
    """The family of a tool for clustering: the shell, file edits, file reads, or the tool itself."""
    low = tool.lower()
    if low in SHELL_TOOLS or low in {"run_shell_command", "shell_command"}:
        return "shell"
    if low in {"edit", "multiedit", "write", "notebookedit", "replace", "write_file", "str_replace_based_edit_tool"}:
        return "file edit"
    if low in {"read", "read_file", "notebookread", "read_many_files"}:
        return "file read"
    return low


def surprise_text(ep: Surprise, project_names: Sequence[str] = ()) -> str:
    """The text that stands for a surprise when surprises are compared and clustered: for an error
    the failed sub-command and failure line, generalised, so the same pitfall on two branches or
    in two worktrees is one cluster."""
    if isinstance(ep, ErrorEpisode):
        return generalise(f"{ep.tool} {ep.failed}\n{ep.failure}".strip(), project_names)
    # A correction's second line is its situation (predictions.situation_line): the command the
    # agent ran when it has one, not the agent's prose.
    return generalise(f"{ep.said}\n{corrected_command(ep) or ep.preceding}".strip(), project_names)


# The words every failure line uses: a line made of these and placeholders alone ("<path>: No such
# file or directory", "command not found") says how something failed, not what.
_FAILURE_WORDS = frozenset("""
error errors fatal failed failure fail fails cannot can't could not no such file directory found line bash sh zsh
exit code command permission denied is a an the of to in for or and does exist exists unable open access stop
errno
""".split())
# The program that printed a line, named by its path at the line's head (`/usr/bin/python3: can't open…`).
_PROGRAM_PATH = re.compile(r"(?:^|(?<=\s))/(?:usr/)?(?:local/)?s?bin/\S+?:(?=\s)")


# The subject of a "not there" line: `./run: No such file or directory`, `cannot access 'x'`.
_MISSING = re.compile(r"[^\s:'\"‘’`]+(?=['\"‘’`]?:\s*(?:No such file or directory|not found|Permission denied)\b)"
                      r"|(?<=cannot access )['\"‘`]?[^\s'\"’`]+['\"’`]?|(?<=cannot stat )['\"‘`]?[^\s'\"’`]+['\"’`]?",
                      re.IGNORECASE)


def is_generic_failure(failure: str, command: str = "") -> bool:
    """Whether a failure line, generalised, names nothing of its own: no word that is not a
    placeholder, failure vocabulary, a common word or the name of the program that printed it,
    once what was not found is taken for a path (``/bin/bash: line <n>: ./run_tests: No such file
    or directory``, ``make: *** build: No such file or directory. Stop.``, ``Exit code 1``). Such a
    line is one pitfall only under one program (``command``: the head that met it)."""
    # Placeholders, and what was not found (this session's own path), say nothing of the pitfall.
    failure = _MISSING.sub(" ", _PROGRAM_PATH.sub(" ", re.sub(r"<[\w@.\-]+>", " ", failure)))
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", failure)}
    own = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", command)}
    return not words - _FAILURE_WORDS - COMMON_WORDS - own


def cluster_text(ep: Surprise, project_names: Sequence[str] = ()) -> str:
    """What surprises are clustered by. One pitfall, one lesson: an error by its failure and the
    family of tool that met it, not by the command that happened to carry it (one fault met under
    49 commands is one pitfall); a correction as `surprise_text`. An error whose line names nothing
    of its own is also kept apart by its command (`cluster_block`)."""
    if isinstance(ep, ErrorEpisode):
        return generalise(f"{tool_family(ep.tool)}\n{_PYTEST_PREFIX.sub('', ep.failure)}".strip(), project_names)
    return surprise_text(ep, project_names)


def cluster_block(ep: Surprise, project_names: Sequence[str] = ()) -> str:
    """What a surprise may only cluster within: for an error whose failure line names nothing of
    its own (`is_generic_failure`: a missing file, a bare exit code), the program that met it —
    "<path>: No such file or directory" of two scripts is two pitfalls; "" for every other."""
    if isinstance(ep, ErrorEpisode) and is_generic_failure(generalise(ep.failure, project_names), head_of(ep)):
        return _program(head_of(ep)) if ep.tool.lower() in SHELL_TOOLS else ep.tool.lower()
    return ""


def _program(head: str) -> str:
    return head.split(None, 1)[0] if head.strip() else head


def lesson_cluster_blocks(lesson: Lesson) -> frozenset[str]:
    """The `cluster_block` values of a lesson's surprises (its programs, when its failure line
    names nothing of its own; ``{""}`` for every other lesson)."""
    if lesson.kind is not LessonKind.ERROR or not lesson.gist \
            or not is_generic_failure(lesson.outcome, " ".join(lesson.triggers)):
        return frozenset({""})
    tool = lesson.gist.split(None, 1)[0]
    return frozenset(map(_program, lesson.triggers)) if tool.lower() in SHELL_TOOLS else frozenset({tool.lower()})


def lesson_cluster_text(lesson: Lesson) -> str:
    """`cluster_text` of a lesson's founding surprise, from what the lesson keeps of it."""
    if lesson.kind is not LessonKind.ERROR or not lesson.gist:
        return lesson.gist or lesson.text
    tool = lesson.gist.split(None, 1)[0] if lesson.gist.strip() else ""
    return f"{tool_family(tool)}\n{_PYTEST_PREFIX.sub('', lesson.outcome)}".strip()


def lesson_text(kind: LessonKind, episodes: Sequence[Surprise],
                write_text: WriteText | None, project_names: Sequence[str] = ()) -> tuple[str, bool]:
    """(text, by_model): the hook's text when it passes every check, else the deterministic one.

    The hook's output must be an observation, free of words addressed to an agent, and one or
    two sentences (≤ 400 characters). A hook that raises is treated as a hook that declined: a
    local model misbehaving must not stop the night's sleep.
    """
    if write_text is not None:
        try:
            proposed = write_text(tuple(episodes))
        except Exception:  # noqa: BLE001 — the hook is caller code; any failure means "no text"
            proposed = None
        if isinstance(proposed, str):
            # A local model quotes what it was shown: its words pass the same scrubber.
            verdict = admit(proposed)
            if isinstance(verdict, Admitted):
                sentences = [s for s in re.split(r"(?<=[.!?])\s+", verdict.text) if s]
                if len(verdict.text) <= 400 and len(sentences) <= 2:
                    return verdict.text, True
    return deterministic_text(kind, episodes, project_names), False


def situation_of(kind: LessonKind, episodes: Sequence[Surprise],
                 project_names: Sequence[str] = ()) -> tuple[tuple[str, ...], str]:
    """(triggers, outcome) of a lesson: the command heads of the shell commands that met the
    surprise, and the surprise (generalised). Other tools give no trigger: "any use of Read" is
    no situation a prediction can be tested against."""
    heads: list[str] = []
    for ep in episodes:
        if isinstance(ep, ErrorEpisode) and ep.tool.lower() in SHELL_TOOLS:
            head = head_of(ep)
            if head not in heads and head not in SHELL_TOOLS:
                heads.append(head)
    corr = next((e for e in episodes if isinstance(e, CorrectionEpisode)), None)
    if kind is LessonKind.CORRECTION and corr is not None:
        outcome = _clean(generalise(claim_of(corr.said), project_names))
        if not heads:
            heads = list(heads_in_prose(corrected_command(corr) or corr.preceding))
    else:
        err = next(e for e in episodes if isinstance(e, ErrorEpisode))
        outcome = _clean(generalise(err.failure, project_names))
    return tuple(heads[:4]), outcome


def heads_in_prose(text: str) -> tuple[str, ...]:
    """Commands mentioned in what the agent said or did ("I'll run `pip install x`" → "pip install";
    a tool call as ingest writes it, "Bash git push origin main" → "git push")."""
    spans = re.findall(r"`([^`]+)`", text) or [text]
    heads = []
    for span in spans:
        span = span.strip().removeprefix("$ ")
        tool, _, rest = span.partition(" ")
        if tool[:1].isupper() and tool.lower() in SHELL_TOOLS:  # "Bash <command>": the tool's name first
            span = rest
        head = command_head("bash", span)
        program = head.split()[0] if head else ""
        if program in VOCABULARY and head not in heads:
            heads.append(head)
    return tuple(heads)


def _founder(kind: LessonKind, episodes: Sequence[Surprise]) -> Surprise:
    """The first episode of the lesson's own kind: what later surprises are compared with."""
    wanted = CorrectionEpisode if kind is LessonKind.CORRECTION else ErrorEpisode
    return next((e for e in episodes if isinstance(e, wanted)), episodes[0])


def new_lesson(kind: LessonKind, episodes: Sequence[Surprise], now: float, *, strength: float,
               hash_episode: Callable[[str], bytes], write_text: WriteText | None = None,
               project_names: Sequence[str] = ()) -> Lesson:
    """A lesson founded by ``episodes`` (oldest first), with text, scope, topics and provenance."""
    episodes = sorted(episodes, key=lambda e: (e.at, e.uid))
    errors = [e for e in episodes if isinstance(e, ErrorEpisode)]
    fix, refuted = choose_fix(errors, project_names) if kind is LessonKind.ERROR else (None, ())
    dangerous = fix is not None and fix.danger is not None
    # A model's words could name a dangerous fix as plain advice: the deterministic text does not.
    text, by_model = lesson_text(kind, episodes, None if dangerous else write_text, project_names)
    triggers, outcome = situation_of(kind, episodes, project_names)
    # generalise's placeholders for what was particular are not private: the lesson is about the
    # tool whatever the path or branch was (<project> and <host> still make it local).
    decision = classify(_PLACEHOLDERS.sub("", text), triggers, project_names=project_names)
    scope = decision.scope
    if scrubbed_detail(outcome):
        # The text's quote may have been cut before the placeholder; the prediction, which is
        # published with it, carries the whole line.
        scope = Scope.LOCAL
    if kind is LessonKind.ERROR and (any(is_tool_rule(e) for e in errors) or not _sure(fix)):
        # A rule of the agent's own tools, or a failure with no fix proven surely: kept for this
        # node, never offered to the commons unless the owner re-scopes it. A dangerous fix keeps
        # the scope its words have: its text does not name the step, and publishing carries the
        # failure alone, never the step (`commons.node.publish`), so other nodes learn the pitfall
        # and their own first meeting of it teaches the safe fix their sessions show.
        scope = Scope.LOCAL
    founder = _founder(kind, episodes)
    return Lesson(
        # The id is taken from the deterministic text without its count, so that a model's
        # wording (which may differ between runs) cannot change which lesson this is.
        id=lesson_id(kind, _SEEN_TAIL.sub(".", deterministic_text(kind, episodes, project_names)), episodes[0].uid),
        kind=kind, text=scrub(text), scope=scope, topics=decision.topics,
        gist=scrub(surprise_text(founder, project_names)), triggers=triggers, outcome=scrub(outcome),
        episodes=tuple(e.uid for e in episodes),
        provenance=tuple(hash_episode(e.uid) for e in episodes),
        strength=strength, strength_at=now, touched=now, seen=len(episodes), created=now,
        by_model=by_model, fix=fix, fix_refuted=refuted,
    )


SHARED_MIN_CONFIDENCE = 0.8  # a fix one session proved less surely than this keeps its lesson local


def _sure(fix: LessonFix | None) -> bool:
    # Rounded as confidences are shown: a step before the retry that the failure pointed to
    # (0.7 + 0.1) is as sure as the retry's own change (0.8), not 0.7999… of it.
    return fix is not None and fix.evidence is not Evidence.RERUN and (
        fix.sessions >= 2 or round(fix.confidence, 2) >= SHARED_MIN_CONFIDENCE)


def absorb(lesson: Lesson, episodes: Sequence[Surprise], now: float, gain_each: float,
           half_life_days: float, hash_episode: Callable[[str], bytes],
           known: Sequence[Surprise] = (), project_names: Sequence[str] = ()) -> Lesson:
    """``lesson`` after ``episodes`` joined it: +gain and +1 seen each; deterministic text refreshed.

    ``known``: the lesson's earlier episodes the caller still holds. With them the text is built
    again from every episode (a fix seen in a later session now counts); without them only the
    count at its end changes.
    """
    grown = adjust(lesson, gain_each * len(episodes), now, half_life_days, touch=True)
    seen = lesson.seen + len(episodes)
    text, fix, refuted = lesson.text, lesson.fix, lesson.fix_refuted
    everything = sorted({e.uid: e for e in (*known, *episodes)}.values(), key=lambda e: (e.at, e.uid))
    wanted = ErrorEpisode if lesson.kind is LessonKind.ERROR else CorrectionEpisode
    rebuilt = bool(known) and any(isinstance(e, wanted) for e in everything)
    if rebuilt and lesson.kind is LessonKind.ERROR:
        fix, refuted = choose_fix([e for e in everything if isinstance(e, ErrorEpisode)], project_names)
    dangerous = fix is not None and fix.danger is not None
    by_model = lesson.by_model and not dangerous  # a model's words may name it as advice: replaced
    if not by_model:
        if rebuilt or lesson.by_model:
            text = deterministic_text(lesson.kind, everything or episodes, project_names)
        else:
            text = _SEEN_TAIL.sub(f"{_seen(seen)}.", lesson.text, count=1)
    return replace(grown, text=scrub(text), seen=seen, fix=fix, fix_refuted=refuted, by_model=by_model,
                   scope=grown.scope,
                   episodes=lesson.episodes + tuple(e.uid for e in episodes),
                   provenance=lesson.provenance + tuple(hash_episode(e.uid) for e in episodes))


def lesson_detail(episodes: Sequence[Surprise], project_names: Sequence[str] = ()) -> tuple[str, ...]:
    """The lines of a lesson's own file that say what it was made of: when and in how many
    sessions it was met, then each failure and fix seen (generalised and scrubbed, as the lesson's
    text is), most frequent first. The index line stays short; this is what an agent reads when it
    opens the file."""
    if not episodes:
        return ()
    days = sorted(time.strftime("%Y-%m-%d", time.gmtime(ep.at)) for ep in episodes)
    sessions = len({ep.session for ep in episodes})
    lines = [f"Met {len(episodes)} time{'s' if len(episodes) != 1 else ''} in {sessions} "
             f"session{'s' if sessions != 1 else ''}, first on {days[0]}, last on {days[-1]}."]
    seen: Counter[str] = Counter()
    for ep in episodes:
        if isinstance(ep, ErrorEpisode):
            line = f"`{_clean(generalise(ep.failed, project_names), 120)}` failed with \"{_clean(generalise(ep.failure, project_names), 160)}\""
            if is_resolved(ep):
                step = _clean(generalise(ep.resolution.command, project_names), 120)
                line += f"; `{step}` worked after it ({ep.resolution.evidence.value})"
                danger = classify_step(ep.resolution.command, ep.resolution.tool)
                if danger is not None:
                    line += f", a dangerous step ({danger.kind.value}, rule {danger.rule}): {danger.risk}"
            else:
                line += "; no fix was seen"
        else:
            line = f"The person said: \"{_clean(generalise(claim_of(ep.said), project_names), 200)}\""
        seen[line] += 1
    lines += [f"- {line} ({n}×)" if n > 1 else f"- {line}" for line, n in seen.most_common(8)]
    return tuple(scrub(line) for line in lines)


def lesson_resolved(episodes: Sequence[Surprise]) -> bool:
    """Whether a lesson names what worked: a correction states what is true, an error lesson only
    when some episode of it was resolved. Unresolved lessons rank below resolved ones."""
    return any(not isinstance(ep, ErrorEpisode) or is_resolved(ep) for ep in episodes)
