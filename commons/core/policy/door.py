"""The one door policy: whether a text may be a lesson, decided the same way at every door.

Every door in (local mining, gossip intake, `commons import`, MCP `remember`, `commons lesson add`)
and every door out (each render target, recall on the CLI and over MCP, `commons lessons`, `why`,
the report, export) asks :func:`admit`. docs/trust.md "One policy at every door" lists them.

:func:`admit` normalises first, so the check reads what a model would read:

1. ANSI escapes and invisible characters (zero-width, bidi overrides and isolates, other format
   and control characters) are removed: they hide words from a person and split them for a
   pattern (``Ig\\u200bnore``), and a bidi override makes a file read differently in an editor.
2. Line breaks become spaces: a lesson is one line, and a newline is where structure (a heading,
   a fence, a list) begins. A commons section marker (``<!-- commons:end own -->``) is refused:
   it would forge the bounds of the section a render manages.
3. The instruction check (:mod:`commons.core.policy.instruction`: words addressed to the agent in
   their many forms and languages, read on the NFKC form so fullwidth letters count) and the
   observation check (:func:`commons.core.policy.observation.imperative_sentences`).
4. Secrets and personal details become placeholders (:func:`commons.core.policy.scrubber.scrub`).

A door that may change the text (one a person or the local miner hands in, anything shown) keeps
:attr:`Admitted.text`. A door that may not (a signed record from a peer or a backup: its words are
its id) asks :func:`refusal_as_is`, which refuses a text that would come out of the door changed:
a peer that signed invisible characters or an unscrubbed e-mail address sent what no honest
commons signs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from commons.core.policy.instruction import fold, strongly_addressed, visible, weakly_addressed
from commons.core.policy.observation import imperative_sentences, injection_match
from commons.core.policy.scrubber import findings, scrub

__all__ = ["Admitted", "Refused", "WITHHELD", "admit", "admitted", "one_line", "refusal_as_is", "shown", "shown_json"]


@dataclass(frozen=True)
class Admitted:
    """The text may be a lesson; ``text`` is what the door keeps or shows (one line, visible
    characters only, scrubbed) and ``changed`` whether that differs from what was handed in."""

    text: str
    changed: bool


@dataclass(frozen=True)
class Refused:
    """The text may not be a lesson (the text's fault). ``reason`` says why in words a person can
    act on; ``rule`` names the check that refused it (for tests and counts)."""

    reason: str
    rule: str

    def __bool__(self) -> bool:  # `if admit(t):` reads as "if admitted"
        return False


def one_line(text: str) -> str:
    """``text`` without escapes and invisible characters, its white space runs made one space."""
    return " ".join(visible(text).split())


# A managed section's marker (commons.render): text that carries one forges the section's bounds.
_MARKER = re.compile(r"<!--\s*/?\s*commons\s*:", re.IGNORECASE)


def _addressed(form: str) -> Refused:
    return Refused(f"the text speaks to the AI agent ({form}); a lesson reports what happened, to be read as "
                   "data, never tells the agent what to do", form)


@functools.lru_cache(maxsize=1 << 14)  # pure; every door out asks again about the same few thousand texts
def admit(text: str) -> Admitted | Refused:
    """Whether ``text`` may be a lesson here: :class:`Admitted` with the text to keep, or
    :class:`Refused` with the reason. Pure; the same answer at every door."""
    line = one_line(text)
    if not line:
        return Refused("a lesson needs a text: one or two sentences saying what happened", "empty")
    folded = fold(line)
    if _MARKER.search(folded):
        return Refused("the text holds a commons section marker (`<!-- commons:… -->`); in a memory file it would "
                       "end or open the managed section, so no lesson may carry one", "section marker")
    strong = strongly_addressed(line) or injection_match(folded)
    if strong:
        return _addressed(strong)
    bad = imperative_sentences(folded)
    if bad:
        return Refused(f"the text gives an instruction ({bad[0]!r}); a lesson is an observation of what "
                       "happened, e.g. '`pip install` failed with ...', never 'Always use uv'", "instruction")
    weak = weakly_addressed(line)  # strongly_addressed found nothing: only the other forms are left
    if weak:
        return _addressed(weak)
    clean = scrub(line)
    return Admitted(clean, clean != text)


def admitted(text: str) -> bool:
    return isinstance(admit(text), Admitted)


def refusal_as_is(text: str) -> str | None:
    """Why a text that cannot be changed (a signed record's) may not pass, or None if it may as it is."""
    verdict = admit(text)
    if isinstance(verdict, Refused):
        return verdict.reason
    if one_line(text) != text:
        return "the text holds line breaks, escapes or invisible characters"
    if findings(text):
        return "the text holds a secret or personal detail the scrubber replaces"
    return None


WITHHELD = "(withheld by the door policy: {reason})"
TEXT_KEYS = frozenset({"text"})


def shown(text: str) -> str:
    """What a door out shows for a lesson's text: :attr:`Admitted.text`, or a line saying it was
    withheld and why (the person can still find and veto it by its id)."""
    verdict = admit(text)
    return verdict.text if isinstance(verdict, Admitted) else WITHHELD.format(reason=verdict.reason)


def shown_json(value: object, key: str = "") -> object:
    """A JSON-like answer (a report, an explanation) as a door out shows it: a lesson's words (under
    a key of :data:`TEXT_KEYS`) through :func:`shown`, every other string scrubbed."""
    if isinstance(value, str):
        return shown(value) if key in TEXT_KEYS and value else scrub(value)
    if isinstance(value, dict):
        return {k: shown_json(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown_json(v, key) for v in value]
    return value
