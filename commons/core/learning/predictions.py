"""Predictions and their verification (design paper §3.4, §4.5; docs/design.md "Predictions and
verification").

A prediction names a **situation** — what a coming session will be doing: a command head such as
``pip install``, or a line like the one the lesson was founded on — and an **outcome**, the
surprise the lesson says is met there. A later episode is judged against it:

* the outcome is met (a later error or correction matching the lesson text + prediction at
  cosine ≥ 0.5, *with the same polarity*) → **confirmed**. Meeting the surprise is itself
  evidence that the situation arose: the failing call is the situation.
* the situation arose (a later session's line matches it at cosine ≥ 0.5, or one of its commands
  has exactly the trigger's head) without the outcome, in a session that ran while the lesson was
  rendered for the agent → **prevented**, which counts as confirmed: the lesson did its job.
* the situation arose without the outcome, and the lesson was *not* rendered → **failed**: the
  command that "always fails" succeeded with no warning in the agent's mind.
* the window (14 days) passes without the situation arising → **expired**: neither.

**A lesson that names a fix** ("`npm install` succeeded after it") is judged by that fix too, since
a lesson that is rendered is followed: an agent runs the command it names. Its verdict is decided
by the earliest of:

* the named fix **ran and failed** → **failed** (cause ``fix-failed``), even when the failure it
  met is the predicted outcome: the lesson told the agent to do something that does not work here
  — but not when the session's own command then failed only otherwise than predicted (the lesson
  was followed where another pitfall of that command was due: no verdict);
* the outcome met → **confirmed**, whatever the session did next: the failure the lesson
  predicts is real here (a verifier that fixed it another way has not tested the named fix, and
  the first agent that follows the lesson and sees the fix fail takes it down where it is);
* the named fix **ran and worked** → **prevented** (cause ``fix-worked``), rendered or not: the fix
  is confirmed, and the failure itself was not seen;
* the lesson's failing command **ran and did not fail**, with the fix not run before it in that
  session → **failed** (cause ``command-succeeded``), *even if the lesson was rendered*: the agent
  did not avoid anything, the lesson was wrong or is stale. Only **the same kind of invocation**
  counts: the command's head and its options (``git commit -m``, not ``git commit -am``) as in a
  command known to fail with the predicted outcome — the situation the lesson was founded on, or
  a failure of this node's that meets the outcome, whenever it was met. A received lesson carries
  only its head (``git commit``), so an ordinary ``git commit -am "…"`` that succeeds says nothing
  of a pre-commit hook that fails ``git commit -m "refactor …"``: a success of the head is not a
  success where the predicted failure was due. Nor does a command that is **the fix another
  lesson names** (``pip install psycopg2-binary``, after a lesson on drivers that need
  ``pg_config``): the agent was following that lesson, and what it shows is that lesson's test;
* the failing command ran without failing *after* the fix ran (the fix is a preparation, such as
  ``git pull --rebase`` before ``git push``) → **prevented** (cause ``fix-worked``).

The last rule refines the paper's "unmatched after 14 days → failed" (§4.5). Under the paper's
rule a lesson about a tool the person simply did not touch for two weeks loses strength for
having been *untested*, and a lesson that worked (the agent read it and avoided the error) loses
strength for its success. Both punish the wrong thing: a prediction can only be wrong about a
situation that happened. So silence expires the prediction and leaves the strength to decay,
which is the mechanism meant for disuse.

**Polarity.** Hashed embeddings cannot tell "the tests pass with pytest-asyncio 0.23" from "the
tests do not pass with pytest-asyncio 0.23": they share every content word. Each side is given a
polarity (does it speak of failure or negation?) and a match needs both the cosine and equal
polarity, so the cosine alone never confirms an opposite.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import blake3
import numpy as np

from commons.core.embedding import embed_many
from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode, SessionEpisode
from commons.core.learning.failure import segments
from commons.core.learning.generalise import fills
from commons.core.learning.lessons import DAY, Lesson, LessonKind
from commons.core.learning.scope import SHELL_TOOLS, command_head, shell_words
from commons.core.policy import scrub


class PredictionStatus(enum.Enum):
    OPEN = "open"
    CONFIRMED = "confirmed"  # the outcome was met
    PREVENTED = "prevented"  # the situation arose, the lesson was rendered, the outcome was not met
    FAILED = "failed"  # the situation arose unwarned and the outcome was not met
    EXPIRED = "expired"  # the situation did not arise within the window


@dataclass(frozen=True)
class Prediction:
    id: str
    lesson_id: str
    situation: str  # a line like the one the lesson was founded on ("Bash pip install requests")
    triggers: tuple[str, ...]  # exact command heads ("pip install")
    outcome: str  # the surprise met there
    made: float
    expires: float

    def describe(self) -> str:
        where = ", ".join(f"`{t}`" for t in self.triggers) or repr(self.situation)
        return f"When a session runs {where}, it will meet: {self.outcome}"


class Cause(enum.Enum):
    """What decided a verdict (the same status can have several causes)."""

    OUTCOME = "outcome"  # the predicted surprise was met
    WARNED = "warned"  # the situation arose while the lesson was rendered, without the outcome
    UNWARNED = "unwarned"  # the situation arose unwarned, without the outcome
    FIX_WORKED = "fix-worked"  # the fix the lesson names ran and worked
    FIX_FAILED = "fix-failed"  # the fix the lesson names ran and failed
    COMMAND_SUCCEEDED = "command-succeeded"  # the failing command ran and did not fail, fix not run
    EXPIRED = "expired"  # nothing within the window


@dataclass(frozen=True)
class Verdict:
    prediction: Prediction
    status: PredictionStatus
    evidence: str | None  # uid of the episode that decided it
    at: float  # when the deciding episode happened (now, for an expiry)
    cause: Cause = Cause.OUTCOME

    @property
    def contradicted(self) -> bool:
        """The lesson was followed or its command ran, and it proved wrong here (not merely unwarned)."""
        return self.cause in (Cause.FIX_FAILED, Cause.COMMAND_SUCCEEDED)


def make_prediction(lesson: Lesson, now: float, window_days: float) -> Prediction:
    situation = situation_line(lesson)
    pid = blake3.blake3(b"commons/prediction/v1\x00" + lesson.id.encode() + b"\x00"
                        + repr(float(now)).encode()).hexdigest()
    # Scrubbed again here: a lesson stored before its text was scrubbed still predicts cleanly.
    return Prediction(id=pid, lesson_id=lesson.id, situation=scrub(situation), triggers=lesson.triggers,
                      outcome=scrub(lesson.outcome), made=now, expires=now + window_days * DAY)


def situation_line(lesson: Lesson) -> str:
    """The line of the founding episode that says what was being done."""
    lines = lesson.gist.splitlines()
    if lesson.kind is LessonKind.CORRECTION:
        # A correction's gist is "said\npreceding": what the agent was doing is the preceding.
        return "\n".join(lines[1:]).strip() or " ".join(lesson.triggers)
    return (lines[0] if lines else "").strip() or " ".join(lesson.triggers)


# --------------------------------------------------------------------------------------------
# Polarity

_OPENERS = re.compile(r"^\W*(?:(?:no|nope|stop|wrong|actually|instead|wait|hmm|ok|okay|please)\b\W*)+",
                      re.IGNORECASE)
_NEGATIVE = re.compile(
    r"\b(?:not|no|never|cannot|can't|can’t|won't|doesn't|don't|isn't|aren't|wasn't|didn't|"
    r"couldn't|shouldn't|fail\w*|\w*error\w*|\w*exception|unable|refus\w*|denied|missing|broken|"
    r"crash\w*|traceback|invalid|forbidden|unsupported|incompatible|abort\w*|timeout|"
    r"timed out|conflict\w*|killed|segmentation)\b|\bn't\b",
    re.IGNORECASE,
)


def negative(text: str) -> bool:
    """Whether ``text`` speaks of a failure or a negation (a correction's opening "no" aside)."""
    return bool(_NEGATIVE.search(_OPENERS.sub("", text.strip())))


def _surprise_claim(ep: ErrorEpisode | CorrectionEpisode) -> str:
    return ep.failure if isinstance(ep, ErrorEpisode) else ep.said


# --------------------------------------------------------------------------------------------
# The fix a lesson's text names

# The phrases an error lesson's text uses for what worked (``commons.core.learning.lessons._fix_phrase``).
_FIX_PHRASE = re.compile(r"`([^`]+)` succeeded after it|it passed after `([^`]+)`")


def named_fix(text: str) -> str:
    """The command a lesson's text names as what worked, or "" (a correction, no fix seen)."""
    found = _FIX_PHRASE.search(text)
    return (found.group(1) or found.group(2)).strip() if found else ""


def runs_fix(fix: str, command: str) -> bool:
    """Whether ``command`` (one sub-command) is ``fix``: the same words, a ``<placeholder>`` of
    the generalised fix standing for any one word or part of one (``uv add <package>`` is ``uv add
    httpx``, ``pip install <package>-binary`` is ``pip install psycopg2-binary``)."""
    want, got = fix.split(), command.split()
    return len(want) == len(got) and all(fills(w, g) for w, g in zip(want, got))


def invocation(command: str) -> tuple[str, frozenset[str]]:
    """A shell command's kind of invocation: its head and the options of the sub-command the head
    is taken from (``git commit -am "x"`` is ``("git commit", {"-am"})``; ``--flag=value`` is
    ``--flag``). Arguments are left out: another package or message is the same kind of call."""
    head = command_head("bash", command)
    part = next((p for p in segments(command) if command_head("bash", p) == head), command)
    words = shell_words(part)
    return head, frozenset(w.split("=", 1)[0] for w in words if len(w) > 1 and w.startswith("-") and w != "--")


def _situation_commands(situation: str) -> list[str]:
    """The commands a prediction's situation names: a "Tool target" line's target, or each of a
    published situation's heads ("pip install / uv add")."""
    words = situation.split(maxsplit=1)
    if len(words) == 2 and words[0].rstrip(":").lower() in SHELL_TOOLS:
        return [words[1]]
    return [part for part in situation.split(" / ") if part.strip()]


def _failing_kinds(pred: Prediction, met: Sequence[ErrorEpisode | CorrectionEpisode]) -> frozenset:
    """The kinds of invocation (:func:`invocation`) known to meet ``pred``'s outcome: the
    situation's, and those of every failure in ``met``."""
    commands = [*_situation_commands(pred.situation), *(e.failed for e in met if isinstance(e, ErrorEpisode))]
    return frozenset(invocation(c) for c in commands)


def _runs_fix(fix: str, target: str) -> bool:
    """``target`` (a whole command line) runs ``fix``: as a whole, or as one of its sub-commands."""
    return runs_fix(fix, target) or any(runs_fix(fix, part) for part in segments(target))


_HOLDER_WORD = re.compile(r"^<[^<>\s]+>$")


def _tells_apart(fix: str) -> bool:
    """Whether running ``fix`` can be told from a plain run of its head: some argument of it is a
    literal word or part of one (``pip install <package>-binary``, ``npm install --save-dev
    @types/node``). A fix that is its head with placeholders alone (``uv add <package>``) is what
    any plain run of that command looks like."""
    head = command_head("bash", fix).split()
    rest = [w for w in fix.split() if w not in head]
    return any(not _HOLDER_WORD.match(w) for w in rest)


def fixes_followed(lessons: Mapping[str, Lesson]) -> dict[str, tuple[str, ...]]:
    """Lesson id → the fixes the *other* lessons name (that a run can be told apart by,
    :func:`_tells_apart`): a session that ran one of them was following that lesson, and its
    success is evidence for that lesson, not a plain run of this one's failing command (``pip
    install psycopg2-binary``, the fix of a lesson on a driver that needs ``pg_config``, says
    nothing of ``pip install httpx`` failing as externally managed)."""
    named = {lid: fix for lid, lesson in lessons.items() if (fix := named_fix(lesson.text)) and _tells_apart(fix)}
    return {lid: tuple(dict.fromkeys(f for other, f in named.items() if other != lid and f != named.get(lid)))
            for lid in lessons}


# --------------------------------------------------------------------------------------------
# Matching lines of later sessions against situations


def _line_heads(line: str) -> set[str]:
    """Command heads a "Tool target" line (or a plain command line) stands for."""
    words = line.split(maxsplit=1)
    if not words:
        return set()
    heads = {command_head("bash", line)}
    if words[0].rstrip(":").lower() in SHELL_TOOLS and len(words) > 1:
        heads.add(command_head("bash", words[1]))
    elif len(words) > 0:
        heads.add(words[0].rstrip(":").lower())
    return heads


class _Lines:
    """Lines of many owners (sessions, texts), embedded once; answers "where did X arise?"."""

    def __init__(self, owned_lines: Sequence[tuple[int, str]]):
        unique: dict[str, int] = {}
        self.owner = np.fromiter((o for o, _ in owned_lines), dtype=np.int64, count=len(owned_lines))
        self.line_unique = np.empty(len(owned_lines), dtype=np.int64)
        for i, (_, line) in enumerate(owned_lines):
            self.line_unique[i] = unique.setdefault(line, len(unique))
        texts = list(unique)
        self.vectors = embed_many(texts) if texts else np.zeros((0, 256), np.float32)
        self.by_head: dict[str, set[int]] = {}
        for u, line in enumerate(texts):
            for head in _line_heads(line):
                self.by_head.setdefault(head, set()).add(u)

    def arisen(self, situations: np.ndarray, triggers: Sequence[Sequence[str]],
               threshold: float) -> list[np.ndarray]:
        """For each situation: the sorted owners in which it arose."""
        if len(self.owner) == 0:
            return [np.zeros(0, np.int64) for _ in triggers]
        hit_unique = (self.vectors @ situations.T) >= threshold  # (unique lines, situations)
        out = []
        for j, heads in enumerate(triggers):
            hits = hit_unique[:, j].copy()
            for head in heads:
                for u in self.by_head.get(head, ()):
                    hits[u] = True
            out.append(np.unique(self.owner[hits[self.line_unique]]))
        return out


def _session_lines(ep: SessionEpisode) -> list[str]:
    return [line for line in ep.text().splitlines() if line.strip()]


def is_too_generic(prediction: Prediction, recent_session_texts: Sequence[str], *,
                   cosine_min: float = 0.5, max_fraction: float = 0.5, min_sample: int = 10) -> bool:
    """Whether the situation would arise in more than ``max_fraction`` of recent sessions.

    Such a prediction ("a session uses the Read tool") is confirmed or failed by chance, so it
    says nothing about the lesson. With fewer than ``min_sample`` sessions there is nothing to
    measure against and the prediction is accepted.
    """
    return too_generic([prediction], recent_session_texts, cosine_min=cosine_min,
                       max_fraction=max_fraction, min_sample=min_sample)[0]


def too_generic(predictions: Sequence[Prediction], recent_session_texts: Sequence[str], *,
                cosine_min: float, max_fraction: float, min_sample: int) -> list[bool]:
    """:func:`is_too_generic` for many predictions at once (one embedding of the sample)."""
    if len(recent_session_texts) < min_sample or not predictions:
        return [False] * len(predictions)
    lines = _Lines([(i, line) for i, text in enumerate(recent_session_texts)
                    for line in text.splitlines() if line.strip()])
    situations = embed_many([p.situation for p in predictions])
    arisen = lines.arisen(situations, [p.triggers for p in predictions], cosine_min)
    n = len(recent_session_texts)
    return [len(owners) / n > max_fraction for owners in arisen]


def _outcome_text(pred: Prediction, lesson: Lesson) -> str:
    return f"{lesson.text}\n{pred.situation}\n{pred.outcome}"


@dataclass(frozen=True)
class RenderedWhere:
    """Where each lesson is rendered, for "prevented" to count only where the agent read it.

    ``places``: lesson id → {project: since when it is rendered in that project's memory}; the
    project ``""`` is a folder every session reads (the plain folder target).
    ``session_project``: session episode uid → the project it ran in.
    """

    places: Mapping[str, Mapping[str, float]]
    session_project: Mapping[str, str]

    def since(self, lesson_id: str, session_uid: str) -> float | None:
        """Since when the session's agent could read the lesson (None: it could not)."""
        places = self.places.get(lesson_id, {})
        found = [t for key in ("", self.session_project.get(session_uid, "")) if (t := places.get(key)) is not None]
        return min(found) if found else None


def verify(predictions: Sequence[Prediction], lessons: Mapping[str, Lesson],
           episodes: Sequence[SessionEpisode | ErrorEpisode | CorrectionEpisode], now: float, *,
           rendered_since: Mapping[str, float] | RenderedWhere, cosine_min: float = 0.5,
           situation_cosine: float = 0.5) -> list[Verdict]:
    """Judge open ``predictions`` against ``episodes``; returns verdicts for the decided ones.

    ``rendered_since[lesson_id]`` is the time since which the lesson has been in the agent's
    memory folder; a session that started at or after it ran with the lesson rendered. Given as a
    :class:`RenderedWhere`, only a session whose own project had the lesson rendered was warned
    (a lesson in project A's memory prevents nothing in project B).
    """
    if not predictions:
        return []
    start = min(p.made for p in predictions)
    ordered = sorted(episodes, key=lambda e: (e.at, e.uid))
    # Every surprise, the earlier too: a failure met before a prediction was made tells which kind
    # of invocation meets its outcome (what a success must be to count against a fix-naming lesson).
    surprises = [e for e in ordered if isinstance(e, ErrorEpisode | CorrectionEpisode)]
    situated = [e for e in ordered if e.at > start and isinstance(e, SessionEpisode)]

    sur_vecs = embed_many([e.text() for e in surprises])
    sur_at = np.array([e.at for e in surprises], dtype=np.float64)
    sur_neg = np.array([negative(_surprise_claim(e)) for e in surprises], dtype=bool)
    preds = [p for p in predictions if p.lesson_id in lessons]
    out_vecs = embed_many([_outcome_text(p, lessons[p.lesson_id]) for p in preds])
    out_neg = np.array([negative(p.outcome or lessons[p.lesson_id].text) for p in preds], dtype=bool)
    met = (sur_vecs @ out_vecs.T >= cosine_min) if surprises else np.zeros((0, len(preds)), bool)

    lines = _Lines([(i, line) for i, e in enumerate(situated) for line in _session_lines(e)])
    sit_at = np.array([e.at for e in situated], dtype=np.float64)
    arisen = lines.arisen(embed_many([p.situation for p in preds]), [p.triggers for p in preds],
                          situation_cosine)

    errors_in: dict[str, list[ErrorEpisode]] = {}
    for e in surprises:
        if isinstance(e, ErrorEpisode):
            errors_in.setdefault(e.session, []).append(e)
    # The sessions that ran each shell command head: a fix-naming lesson looks only at those.
    ran_head: dict[str, list[int]] = {}
    for i, e in enumerate(situated):
        shell = [c.target for c in e.calls if c.tool.lower() in SHELL_TOOLS]
        for head in {command_head("bash", part) for target in shell for part in (target, *segments(target))}:
            ran_head.setdefault(head, []).append(i)
    followed = fixes_followed(lessons)
    verdicts = []
    for j, pred in enumerate(preds):
        window = (sur_at > pred.made) & (sur_at <= pred.expires)
        hits = np.flatnonzero(met[:, j] & window & (sur_neg == out_neg[j]))
        fix = named_fix(lessons[pred.lesson_id].text)
        if fix:
            heads = (*pred.triggers, *(command_head("bash", part) for part in segments(fix)))
            rows = sorted({i for head in heads for i in ran_head.get(head, ())})
            kinds = _failing_kinds(pred, [surprises[i] for i in np.flatnonzero(met[:, j] & (sur_neg == out_neg[j]))])
            verdict = _judge_fix(pred, fix, [surprises[i] for i in hits],
                                 [surprises[i] for i in np.flatnonzero(window)],
                                 [situated[i] for i in rows if pred.made < situated[i].at <= pred.expires], errors_in,
                                 kinds, followed.get(pred.lesson_id, ()))
            if verdict is not None:
                verdicts.append(verdict)
            elif now >= pred.expires:
                verdicts.append(Verdict(pred, PredictionStatus.EXPIRED, None, now, Cause.EXPIRED))
            continue
        if hits.size:
            ep = surprises[hits[0]]
            verdicts.append(Verdict(pred, PredictionStatus.CONFIRMED, ep.uid, ep.at))
            continue
        owners = [o for o in arisen[j] if pred.made < sit_at[o] <= pred.expires]
        if owners:
            def warned_since(o: int) -> float | None:
                if isinstance(rendered_since, RenderedWhere):
                    return rendered_since.since(pred.lesson_id, situated[o].uid)
                return rendered_since.get(pred.lesson_id)

            unwarned = [o for o in owners if (since := warned_since(o)) is None or situated[o].at < since]
            if unwarned:
                ep = situated[unwarned[0]]
                verdicts.append(Verdict(pred, PredictionStatus.FAILED, ep.uid, ep.at, Cause.UNWARNED))
            else:
                ep = situated[owners[0]]
                verdicts.append(Verdict(pred, PredictionStatus.PREVENTED, ep.uid, ep.at, Cause.WARNED))
            continue
        if now >= pred.expires:
            verdicts.append(Verdict(pred, PredictionStatus.EXPIRED, None, now, Cause.EXPIRED))
    return verdicts


def _judge_fix(pred: Prediction, fix: str, met: Sequence[ErrorEpisode | CorrectionEpisode],
               in_window: Sequence[ErrorEpisode | CorrectionEpisode], sessions: Sequence[SessionEpisode],
               errors_in: Mapping[str, Sequence[ErrorEpisode]], kinds: frozenset,
               others: Sequence[str] = ()) -> Verdict | None:
    """The verdict on a lesson that names ``fix`` (see the module docstring), or None: undecided.

    ``met``: the surprises of the window that meet the predicted outcome; ``in_window``: every
    surprise of the window; ``sessions``: the sessions of the window; ``kinds``: the invocations
    known to fail so (:func:`_failing_kinds`); ``others``: the fixes other lessons name
    (:func:`fixes_followed`), whose runs are no plain runs of this lesson's command. A surprise is
    dated when it happened, a session's own verdict when it ended, so the error a session met
    decides before what the session did about it."""
    found: list[tuple[float, int, Verdict]] = []
    meeting = {e.uid for e in met}
    failed_fix = next((e for e in in_window if isinstance(e, ErrorEpisode)
                       and (_runs_fix(fix, e.failed) or _runs_fix(fix, e.target))
                       and not _another_failure(pred, e, errors_in.get(e.session, ()), meeting)), None)
    if failed_fix is not None:
        found.append((failed_fix.at, 0, Verdict(pred, PredictionStatus.FAILED, failed_fix.uid, failed_fix.at,
                                                Cause.FIX_FAILED)))
    confirming = met[0] if met else None
    if confirming is not None:
        found.append((confirming.at, 1, Verdict(pred, PredictionStatus.CONFIRMED, confirming.uid, confirming.at)))
    for session in sessions:
        failed_here = [e for e in errors_in.get(session.session, ()) if e.at >= session.at]
        verdict = _session_verdict(pred, fix, session, failed_here, kinds, others)
        if verdict is not None:
            found.append((session.ended_at, 2, verdict))
            break
    return min(found, key=lambda f: (f[0], f[1]))[2] if found else None


def _another_failure(pred: Prediction, fix_failed: ErrorEpisode, session_errors: Sequence[ErrorEpisode],
                    meeting: set[str]) -> bool:
    """Whether the session in which a lesson's fix ran and failed (``fix_failed``) met, on the
    lesson's own command, only failures other than the one it predicts (none of them in
    ``meeting``, the uids that meet its outcome): the lesson was followed where another pitfall of
    the same command was due (``uv add psycopg2``, from the externally-managed lesson, before a
    ``pip install psycopg2`` that fails for want of ``pg_config``). Its fix failing there says
    nothing of it where its failure is due; the session's own fix teaches the other pitfall."""
    same_command = [e for e in session_errors if e.at >= fix_failed.at and e.failed != fix_failed.failed
                    and command_head(e.tool, e.failed) in pred.triggers]
    return bool(same_command) and not any(e.uid in meeting for e in same_command)


def meeting_outcome(lesson: Lesson, outcome: str, errors: Sequence[ErrorEpisode], cosine_min: float) -> set[str]:
    """The uids of ``errors`` that meet the outcome a lesson predicts, as :func:`verify` matches a
    surprise (its text against the lesson's text, situation and outcome, at ``cosine_min``, with
    the same polarity)."""
    if not errors:
        return set()
    vectors = embed_many([e.text() for e in errors])
    target = embed_many([f"{lesson.text}\n{lesson.gist}\n{outcome}"])[0]
    polarity = negative(outcome or lesson.text)
    return {e.uid for e, v in zip(errors, vectors) if float(v @ target) >= cosine_min and negative(e.failure) == polarity}


def _session_verdict(pred: Prediction, fix: str, session: SessionEpisode,
                     failed: Sequence[ErrorEpisode], kinds: frozenset, others: Sequence[str] = ()) -> Verdict | None:
    """What one session's shell commands say of a lesson naming ``fix``, in the order they ran: a
    success counts against it only on a kind of invocation in ``kinds`` (one known to fail so), and
    not when the command is the fix another lesson names (``others``: the agent followed that one)."""
    def failed_call(command: str) -> bool:
        return any(e.target == command or e.failed == command or e.failed in segments(command) for e in failed)

    for call in session.calls:
        if call.tool.lower() not in SHELL_TOOLS:
            continue
        command = call.target
        if _runs_fix(fix, command):
            if failed_call(command):
                continue  # the fix failed: an error episode of its own says so
            return Verdict(pred, PredictionStatus.PREVENTED, session.uid, session.ended_at, Cause.FIX_WORKED)
        if pred.triggers and command_head("bash", command) in pred.triggers:
            if failed_call(command):
                return None  # the failure was met here: what the session did next is its workaround
            if invocation(command) in kinds and not any(_runs_fix(other, command) for other in others):
                return Verdict(pred, PredictionStatus.FAILED, session.uid, session.ended_at, Cause.COMMAND_SUCCEEDED)
    return None
