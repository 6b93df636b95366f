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
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import blake3

from .episode import CorrectionEpisode, ErrorEpisode
from .safety import SafetyError, check_observation, contains_injection, strip_injections
from .records import SECONDS_PER_DAY, LessonKind, Scope
from .scope import SHELL_TOOLS, VOCABULARY, classify, command_head

DAY = float(SECONDS_PER_DAY)  # the one length of a day: the records' own, which count days

Surprise = ErrorEpisode | CorrectionEpisode
WriteText = Callable[[Sequence[Surprise]], str]


class LessonStatus(enum.Enum):
    ACTIVE = "active"
    ARCHIVED = "archived"  # strength fell below the floor; kept, but no longer recalled or rendered


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

    def strength_now(self, now: float, half_life_days: float) -> float:
        return decayed(self.strength, self.strength_at, now, half_life_days)


def decayed(strength: float, since: float, now: float, half_life_days: float) -> float:
    """``strength`` halved every ``half_life_days`` from ``since`` to ``now`` (never grows)."""
    if now <= since:
        return strength
    return strength * math.pow(2.0, -(now - since) / (half_life_days * DAY))


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
    """One line of quotable data: injections removed, double quotes made single, bounded."""
    text = strip_injections(unicodedata.normalize("NFC", text))
    text = " ".join(text.replace('"', "'").replace("“", "'").replace("”", "'").split())
    text = text.replace("`", "'")
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


_SEEN_TAIL = re.compile(r"(?: \(seen \d+ times\))?\.$")


def _seen(n: int) -> str:
    return f" (seen {n} times)" if n > 1 else ""


def _head_of(ep: ErrorEpisode) -> str:
    return command_head(ep.tool, ep.target)


def deterministic_text(kind: LessonKind, episodes: Sequence[Surprise]) -> str:
    """The lesson text built from its episodes alone, without a model; always an observation."""
    if not episodes:
        raise ValueError("deterministic_text() needs at least one episode (API misuse)")
    n = len(episodes)
    lead = episodes[0]
    if kind is LessonKind.CORRECTION:
        corr = next((e for e in episodes if isinstance(e, CorrectionEpisode)), None)
        if corr is None:
            raise ValueError("a correction lesson needs a correction episode (API misuse)")
        said = _clean(corr.said) or "a correction"
        preceding = _clean(corr.preceding, 100)
        after = f", after the agent's \"{preceding}\"" if preceding else ""
        text = f"The person corrected the agent, saying \"{said}\"{after}{_seen(n)}."
    else:
        err = next((e for e in episodes if isinstance(e, ErrorEpisode)), lead)
        if not isinstance(err, ErrorEpisode):
            raise ValueError("an error lesson needs an error episode (API misuse)")
        head = _clean(_head_of(err), 60) or err.tool
        failure = _clean(err.failure)
        with_what = f" with \"{failure}\"" if failure else ""
        text = f"`{head}` failed{with_what}{_seen(n)}."
    try:
        return check_observation(text)
    except SafetyError:
        # Cannot happen with the shapes above (they open with "The person" or a code span); kept
        # as a last line so that no input, however odd, yields an instruction.
        return f"The agent met a {kind.value}{_seen(n)}."


def lesson_text(kind: LessonKind, episodes: Sequence[Surprise],
                write_text: WriteText | None) -> tuple[str, bool]:
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
            proposed = " ".join(unicodedata.normalize("NFC", proposed).split())
            sentences = [s for s in re.split(r"(?<=[.!?])\s+", proposed) if s]
            try:
                if (proposed and len(proposed) <= 400 and len(sentences) <= 2
                        and not contains_injection(proposed)):
                    return check_observation(proposed), True
            except SafetyError:
                pass
    return deterministic_text(kind, episodes), False


def situation_of(kind: LessonKind, episodes: Sequence[Surprise]) -> tuple[tuple[str, ...], str]:
    """(triggers, outcome) of a lesson: the command heads it concerns and the surprise met there."""
    heads: list[str] = []
    for ep in episodes:
        if isinstance(ep, ErrorEpisode):
            head = _head_of(ep)
            if head not in heads:
                heads.append(head)
    corr = next((e for e in episodes if isinstance(e, CorrectionEpisode)), None)
    if kind is LessonKind.CORRECTION and corr is not None:
        outcome = _clean(corr.said)
        if not heads:
            heads = list(heads_in_prose(corr.preceding))
    else:
        err = next(e for e in episodes if isinstance(e, ErrorEpisode))
        outcome = _clean(err.failure)
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
    text, by_model = lesson_text(kind, episodes, write_text)
    triggers, outcome = situation_of(kind, episodes)
    decision = classify(text, triggers, project_names=project_names)
    return Lesson(
        # The id is taken from the deterministic text without its count, so that a model's
        # wording (which may differ between runs) cannot change which lesson this is.
        id=lesson_id(kind, _SEEN_TAIL.sub(".", deterministic_text(kind, episodes)), episodes[0].uid),
        kind=kind, text=text, scope=decision.scope, topics=decision.topics,
        gist=_founder(kind, episodes).text(), triggers=triggers, outcome=outcome,
        episodes=tuple(e.uid for e in episodes),
        provenance=tuple(hash_episode(e.uid) for e in episodes),
        strength=strength, strength_at=now, touched=now, seen=len(episodes), created=now,
        by_model=by_model,
    )


def absorb(lesson: Lesson, episodes: Sequence[Surprise], now: float, gain_each: float,
           half_life_days: float, hash_episode: Callable[[str], bytes]) -> Lesson:
    """``lesson`` after ``episodes`` joined it: +gain and +1 seen each; deterministic text refreshed."""
    grown = adjust(lesson, gain_each * len(episodes), now, half_life_days, touch=True)
    seen = lesson.seen + len(episodes)
    text = lesson.text
    if not lesson.by_model:
        # Only the "(seen N times)" tail changes; rebuilding from the gist keeps the words stable.
        text = _SEEN_TAIL.sub(f"{_seen(seen)}.", lesson.text, count=1)
    return replace(grown, text=text, seen=seen,
                   episodes=lesson.episodes + tuple(e.uid for e in episodes),
                   provenance=lesson.provenance + tuple(hash_episode(e.uid) for e in episodes))
