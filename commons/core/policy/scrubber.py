"""The one scrubber: secrets and personal details in text become typed placeholders.

Every door where transcript-derived text becomes something else (an episode's derived fields, a
lesson and its prediction, anything rendered, a signed record) passes its text through
:func:`scrub`. The lesson must still read after it, so each secret becomes a placeholder that
says what stood there (``<github-token>``, ``password=<password>``, ``~/src/app.py``) and the
ordinary technical text that makes a lesson useful is kept: git SHAs, digests, UUIDs, versions,
times, dates, ``/tmp`` paths, test names, error class names and words such as *token* or
*password* in prose.

The surface, pure and without I/O:

- :func:`findings` — what is there and where (:class:`Finding`: kind and span); for checks.
- :func:`scrub` — the text with every finding replaced by its placeholder; idempotent, so
  ``scrub(scrub(t)) == scrub(t)`` and a scrubbed text :func:`is_clean`.
- :func:`clip` — scrub first, then cut, never inside a placeholder (a cut made before scrubbing
  can halve a key so that neither half is recognised).
- :func:`require_clean` — the last gate before signing: raises :class:`ScrubbedTextRequired`.

How it stays fast on the ingest path: each rule names the literal keywords (or anchors, patterns
with a literal start) without which it cannot match; ``str.find`` over the lower-cased text
finds them, and the rule's full pattern runs only in a small window around each one. Most of a
tool's output is never seen by any full pattern. Rules live in :mod:`commons.core.policy.rules`;
docs/privacy.md says how to add one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from commons.core.policy.literals import Gate, Gates, Occurrences, gate
from commons.core.policy.memo import short_texts
from commons.core.policy.rule import Kind, Marks, lead, literal, scoped
from commons.core.policy.rules import RULES

__all__ = [
    "Finding", "Kind", "ScrubbedTextRequired", "clip", "cut", "findings", "is_clean", "looks_private",
    "require_clean", "scrub", "scrub_json",
]


@dataclass(frozen=True, order=True)
class Finding:
    """One secret or personal detail: ``text[start:end]`` is to be replaced by ``kind``'s placeholder."""

    start: int
    end: int
    kind: Kind

    @property
    def placeholder(self) -> str:
        return self.kind.value


class ScrubbedTextRequired(ValueError):
    """The caller handed unscrubbed text to a door that only takes scrubbed text (e.g. signing).

    The message names the kinds found and their positions, never the values: an error message is
    itself text that may be logged or shown.
    """

    def __init__(self, what: str, found: tuple[Finding, ...]):
        self.what = what
        self.found = found
        kinds = ", ".join(sorted({f.kind.name.lower() for f in found}))
        spans = ", ".join(f"{f.start}-{f.end}" for f in found[:5])
        super().__init__(
            f"refusing {what}: its text still holds {len(found)} thing(s) the scrubber replaces "
            f"({kinds}; at characters {spans}); pass it through commons.core.policy.scrubber.scrub first"
        )


def _index() -> tuple[Occurrences, Occurrences, list[tuple[re.Pattern[str], tuple[int, ...]]], re.Pattern[str],
                      tuple[int, ...], tuple[int, ...]]:
    by_keyword: dict[str, list[int]] = {}
    by_anchor: dict[re.Pattern[str], list[int]] = {}
    always = []
    for rank, rule in enumerate(RULES):
        for k in rule.keywords:
            by_keyword.setdefault(k, []).append(rank)
        for a in rule.anchors:
            by_anchor.setdefault(a, []).append(rank)
        if not (rule.keywords or rule.anchors):
            always.append(rank)
    anchors = [(a, tuple(ranks)) for a, ranks in by_anchor.items()]
    by_lead: dict[str, list[int]] = {}
    unled = []
    for n, (a, _) in enumerate(anchors):
        lit = lead(a)
        if lit is None:
            unled.append(n)
        else:
            by_lead.setdefault(lit, []).append(n)
    keywords = Occurrences({k: tuple(ranks) for k, ranks in by_keyword.items()})
    leads = Occurrences({lit: tuple(ns) for lit, ns in by_lead.items()})
    # The anchors without a literal start, all at once: a text none of them matches (most lessons'
    # and situations') skips them in one pass of the regex engine.
    any_unled = re.compile("|".join(scoped(anchors[n][0]) for n in unled) or "(?!)")
    return keywords, leads, anchors, any_unled, tuple(unled), tuple(always)


# Which rules a keyword or an anchor can wake, found in one pass each over a text (Occurrences:
# the keywords in its lower case, the anchors' literal starts in it as it is), so a text with
# nothing in it costs two passes in C; an anchor whose start occurs is then looked for itself.
_KEYWORDS, _LEADS, _ANCHORS, _ANY_UNLED, _UNLED, _ALWAYS = _index()


def _anchor_gates() -> tuple[Gates, tuple[int | None, ...]]:
    """The anchors' gates (``literals.gate``: the strings every match holds), read in one pass
    over an ASCII text, and each anchor's index among them (None: it has no gate). A lead is one
    character for many anchors (`` ``, ``.``, ``(``), found in nearly every text; the gate asks
    for more (`` rue ``, ``.internal``, ``xoxb-``), so on an ASCII text the gates' one pass
    stands for the leads' pass and rules out most anchors without running their pattern."""
    gates, index_of = [], []
    for pattern, _ranks in _ANCHORS:
        found = _without_characters(gate(pattern))  # "any" white space: a text may hold line breaks and tabs
        index_of.append(None if found is None else len(gates))
        if found is not None:
            gates.append(found)
    return Gates(gates), tuple(index_of)


def _without_characters(found: Gate | None) -> Gate | None:
    """``found`` without its clauses of single characters (`` ``, ``.``, ``:``), or None when an
    alternative is left with none: such a clause turns away as few texts as the anchor's lead,
    and each of its occurrences is a step of the one pass (a lesson's line holds a dozen spaces).
    Fewer clauses still hold for every match: the gate only admits more."""
    if found is None:
        return None
    alternatives = []
    for clauses in found.alternatives:
        kept = tuple(c for c in clauses if min(map(len, c)) > 1)
        if not kept:
            return None
        alternatives.append(kept)
    return Gate(tuple(alternatives))


_ANCHOR_GATES, _GATE_OF = _anchor_gates()
_ANCHOR_OF_GATE = tuple(n for n, g in enumerate(_GATE_OF) if g is not None)  # the anchor of each gate
# The anchors without a gate, each with its lead (None: none), read on an ASCII text by a find each.
_UNGATED = tuple((n, lead(a)) for n, (a, _) in enumerate(_ANCHORS) if _GATE_OF[n] is None)


def _live(marks: Marks) -> set[int]:
    """The ranks of the rules that may match: those a keyword of theirs (in the lower case) or an
    anchor of theirs (in the text) wakes, and those with neither."""
    if marks.lower is None:
        return set(range(len(RULES)))
    live = set(_ALWAYS)
    for ranks in set(_KEYWORDS.values(marks.lower)):
        live.update(ranks)
    text = marks.text
    if text.isascii():  # a gate holds for an ASCII text (literals: IGNORECASE beyond it)
        # Each anchor behind its gate (one pass), or its lead where it has no gate: the leads'
        # pass and the lead-less anchors' joined pattern (its alternations tried at every
        # position) are not needed there.
        woken = [n for n, lit in _UNGATED if lit is None or lit in text]
        admitted = _ANCHOR_GATES.admitted(marks.lower)
        while admitted:
            low = admitted & -admitted
            admitted ^= low
            woken.append(_ANCHOR_OF_GATE[low.bit_length() - 1])
    else:
        woken = list({n for ns in _LEADS.values(text) for n in ns})
        if _UNLED and _ANY_UNLED.search(text) is not None:
            woken.extend(_UNLED)
    for n in woken:
        # Whether the anchor occurs at all, by one call in C (a literal's ``in``, or one search):
        # most woken anchors occur nowhere, and their positions (``Marks.anchor``, what a live
        # rule's windows read) are listed only for those that do.
        if _OCCURS[n](text):
            live.update(_ANCHORS[n][1])
    return live


def _occurs(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """A test of whether ``pattern`` occurs in a text, true exactly where ``Marks.anchor`` finds
    it somewhere: a plain literal by ``in`` (as ``Marks.anchor`` finds it by ``str.find``), any
    other pattern by one ``search``."""
    lit = literal(pattern)
    if lit is not None:
        return lambda text: lit in text
    search = pattern.search
    return lambda text: search(text) is not None


_OCCURS = tuple(_occurs(a) for a, _ in _ANCHORS)


def _candidates(text: str) -> list[tuple[int, int, int, Kind]]:
    marks = Marks(text)
    out: list[tuple[int, int, int, Kind]] = []
    for rank in sorted(_live(marks)):
        for start, end, kind in RULES[rank].spans(marks):
            if start < end:
                out.append((rank, start, end, kind))
    return out


# The same short texts are scrubbed again and again in one process: a lesson's lines each time its
# file is rendered, the failures it quotes each night (a daemon or a process driving many commands
# lives through many). Their findings are kept (commons.core.policy.memo); a long text (a tool's
# output) is scanned each time.
@short_texts
def findings(text: str) -> tuple[Finding, ...]:
    """The secrets and personal details in ``text``, in order, without overlaps.

    Where two rules claim overlapping text, the earlier rule in :data:`RULES` wins: specific
    formats (a PEM block, a ``ghp_`` token) come before generic ones (``key=value``), so the
    placeholder says as much as can be known.
    """
    taken: list[Finding] = []
    for _rank, start, end, kind in sorted(_candidates(text)):
        if any(start < f.end and f.start < end for f in taken):
            continue
        taken.append(Finding(start, end, kind))
    return tuple(sorted(taken))


def _apply(text: str, found: tuple[Finding, ...]) -> str:
    parts, at = [], 0
    for f in found:
        parts.append(text[at:f.start])
        parts.append(f.placeholder)
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def scrub(text: str) -> str:
    """``text`` (NFC-normalised) with every finding replaced by its typed placeholder."""
    text = unicodedata.normalize("NFC", text)
    # A placeholder can complete a pattern that the secret it replaced interrupted (a URL whose
    # password held an '@'); a second pass is cheap and makes the result a fixed point.
    for _ in range(3):
        found = findings(text)
        if not found:
            return text
        text = _apply(text, found)
    return text


def scrub_json(value: object) -> object:
    """Every string in a JSON-like value (dicts, lists, tuples) scrubbed; keys and other values kept.

    The last pass of a door whose result is a whole structure (a report, an explanation): ids,
    hex digests and times are kept by :func:`scrub` as they are.
    """
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: scrub_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_json(v) for v in value]
    return value


def is_clean(text: str) -> bool:
    """Whether :func:`scrub` would leave ``text`` as it is."""
    return not findings(unicodedata.normalize("NFC", text))


def looks_private(text: str) -> bool:
    """Whether ``text`` holds anything :func:`scrub` would replace (the old name, kept)."""
    return not is_clean(text)


def require_clean(text: str, what: str) -> str:
    """Return ``text`` if it is clean; raise :class:`ScrubbedTextRequired` naming ``what`` if not.

    ``what`` says which door refused, e.g. ``"signing lesson record 3f2a…"``.
    """
    found = findings(unicodedata.normalize("NFC", text))
    if found:
        raise ScrubbedTextRequired(what, found)
    return text


PLACEHOLDER = re.compile("|".join(sorted((re.escape(k.value) for k in Kind if k.value.startswith("<")),
                                          key=len, reverse=True)))
ELLIPSIS = "…"


def clip(text: str, n: int) -> str:
    """``text`` scrubbed, then cut to at most ``n`` characters (an ellipsis marks a cut).

    The cut never falls inside a placeholder, and it backs up to a word boundary when one is
    close, so a quote reads as words rather than a fragment.
    """
    return cut(scrub(text), n)


def cut(scrubbed: str, n: int) -> str:
    """:func:`clip` for a text already scrubbed: one scrub can then feed cuts of several lengths.

    Handed unscrubbed text it could halve a secret so that neither half is recognised: a caller
    that has not scrubbed calls :func:`clip`.
    """
    if n < 1:
        raise ValueError(f"clip needs room for at least one character, was given n={n}")
    text = scrubbed
    if len(text) <= n:
        return text
    cut_at = n - len(ELLIPSIS)
    for m in PLACEHOLDER.finditer(text, max(0, cut_at - 32), cut_at + 32):
        if m.start() < cut_at < m.end():
            cut_at = m.start()
            break
    space = text.rfind(" ", max(0, cut_at - 20), cut_at + 1)
    if space > 0:
        cut_at = space
    return text[:cut_at].rstrip() + ELLIPSIS
