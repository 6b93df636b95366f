"""The literal strings a regular expression cannot match without: a gate read before the pattern.

:func:`gate` reads a compiled pattern's parsed form (``re._parser``) and returns a :class:`Gate`:
alternatives, each a few clauses, each clause a set of lower-case strings. Every match of the
pattern, on an ASCII text, holds every clause of one alternative: for each clause, one of its
strings occurs (lower-cased) in the lower-cased text. When :meth:`Gate.admits` says no, the
pattern cannot match there, so its search may be skipped without changing any answer. A pattern
with no such strings (a leading class, an optional prefix, ``\\d+``) has no gate: None.

Why ASCII only: under IGNORECASE the regex engine matches ``s`` to ``ſ`` and ``k`` to the Kelvin
sign, which ``str.lower`` leaves apart, so a text beyond ASCII is read by the pattern itself.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from itertools import product

import ahocorasick

try:
    import re._parser as _parser  # type: ignore[import-not-found]  # Python 3.11+
    import re._constants as _c  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

__all__ = ["Gate", "Gated", "Gates", "Occurrences", "any_of", "gate"]

_CAP = 64  # the most strings a clause or an exact set holds: beyond it a clause costs more than it saves
_CLASS_CAP = 8  # the most characters of a class (``[,:!]``) spelt out as strings
_CLAUSES = 2  # clauses kept per alternative: the most selective ones
_ARMS = 32  # the most alternatives a gate opens its pattern into

Strings = frozenset[str]
_EMPTY: Strings = frozenset({""})
_NONE: Strings = frozenset()  # what a piece matches on an ASCII text when it matches none (a Cyrillic word)
_SPACE: Strings = frozenset({" "})
_WHITE = ("any", "single", "blanked")
_NOT_FOLDED = re.compile(r"[^\S ]|  |\x00")  # what a folded text never holds
# A gate reads a text with this before it, which a folded text never holds: where a match must
# start at the text's start (``^``), this is a literal of it, so "ai" in "fails" is not ``^ai``.
_START = "\x00"


class Gate:
    """``alternatives``: each a tuple of clauses; each clause a set of lower-case strings. A text
    may match when, for some alternative, each of its clauses has a string in the text."""

    __slots__ = ("alternatives", "strings", "_first", "_alone")

    def __init__(self, alternatives: tuple[tuple[Strings, ...], ...]):
        self.alternatives = alternatives
        self.strings: Strings = frozenset().union(*(c for clauses in alternatives for c in clauses))
        self._first = any_of(frozenset().union(*(clauses[0] for clauses in alternatives))).search
        self._alone: Gates | None = None

    def admits(self, lower: str) -> bool:
        """Whether the pattern may match an ASCII text whose lower case is ``lower`` (False: it cannot).
        A text without any alternative's first clause costs one search."""
        if self._first(_START + lower) is None:
            return False
        if self._alone is None:
            self._alone = Gates((self,))
        return self._alone.admitted(lower) == 1

    def __repr__(self) -> str:
        return f"Gate({[[sorted(c) for c in clauses] for clauses in self.alternatives]!r})"


class Gated:
    """A compiled pattern behind its :func:`gate`: :meth:`search` answers as ``pattern.search``,
    without running the pattern on an ASCII text the gate turns away."""

    __slots__ = ("pattern", "gate")

    def __init__(self, pattern: re.Pattern[str]):
        self.pattern, self.gate = pattern, gate(pattern, "single")

    def search(self, text: str) -> re.Match[str] | None:
        """``pattern.search(text)``. A text that is not folded (other white space than single
        spaces, a NUL) is read by the pattern itself."""
        if (self.gate is not None and text.isascii() and _folded(text)
                and not self.gate.admits(text.lower())):
            return None
        return self.pattern.search(text)


def _folded(text: str) -> bool:
    """Whether an ASCII ``text`` holds none of what a folded text never holds (``_NOT_FOLDED``).
    Every ASCII character that pattern can match alone (NUL, and white space other than a space)
    is a control character, so a printable text without two spaces in a row is answered by two
    calls in C, without running the pattern's alternation at each position."""
    return (text.isprintable() and "  " not in text) or _NOT_FOLDED.search(text) is None


class Gates:
    """Many gates read in one pass over a text: an Aho-Corasick automaton (in C, ``pyahocorasick``)
    reports every occurrence of every one of their strings, overlapping ones too, at a few steps
    a character whatever their number (the regex trie it replaced tried each position in turn:
    ~4x slower on a lesson's line, bench_door). Each clause is a bit, each string the bits of the
    clauses that hold it, so a gate is read in a few integer operations."""

    __slots__ = ("_automaton", "_empty", "_firsts", "_by_first")

    def __init__(self, gates):
        strings = sorted(frozenset().union(*(g.strings for g in gates)))
        clause_bit: dict[Strings, int] = {}
        for g in gates:
            for clauses in g.alternatives:
                for clause in clauses:
                    clause_bit.setdefault(clause, 1 << len(clause_bit))
        holds = {s: 0 for s in strings}
        for clause, bit in clause_bit.items():
            for string in clause:
                holds[string] |= bit
        self._automaton = ahocorasick.Automaton()
        for string in strings:
            if string:  # the empty string is in every text: its clause's bit is always there
                self._automaton.add_word(string, holds[string])
        self._empty = holds.get("", 0)
        if any(strings):
            self._automaton.make_automaton()
        # Each first clause's bit, and the alternatives that start with it (their gate's bit, the
        # bits of all their clauses): a text is read for only the alternatives whose first clause
        # it holds (a lesson's line, a few of hundreds), since one is met only where that one is.
        by_first: dict[int, list[tuple[int, int]]] = {}
        for i, g in enumerate(gates):
            for clauses in g.alternatives:
                by_first.setdefault(clause_bit[clauses[0]], []).append((1 << i, _or(clause_bit[c] for c in clauses)))
        self._by_first = {bit: tuple(dict.fromkeys(alternatives)) for bit, alternatives in by_first.items()}
        self._firsts = _or(self._by_first)

    def admitted(self, lower: str) -> int:
        """Which gates admit the ASCII text whose lower case is ``lower``: bit i for the i-th gate."""
        found = self._empty
        if self._automaton.kind == ahocorasick.AHOCORASICK:
            for _end, bits in self._automaton.iter(_START + lower):
                found |= bits
        out = 0
        hits = found & self._firsts
        while hits:  # each first clause found, lowest bit first
            low = hits & -hits
            hits ^= low
            for bit, needed in self._by_first[low]:
                if found & needed == needed:
                    out |= bit
        return out


def _or(bits) -> int:
    out = 0
    for bit in bits:
        out |= bit
    return out


class Occurrences:
    """Which of many fixed strings occur in a text, found in one pass in C (an Aho-Corasick
    automaton: every occurrence, overlapping ones too), each string with the value it was given."""

    __slots__ = ("_automaton",)

    def __init__(self, values: dict[str, object]) -> None:
        if "" in values:
            raise ValueError("Occurrences: the empty string occurs in every text; leave it out")
        self._automaton = ahocorasick.Automaton()
        for string, value in values.items():
            self._automaton.add_word(string, value)
        if values:
            self._automaton.make_automaton()

    def values(self, text: str) -> list:
        """The value of each string that occurs in ``text``, once per occurrence (in no set order)."""
        if self._automaton.kind != ahocorasick.AHOCORASICK:
            return []
        return [value for _end, value in self._automaton.iter(text)]


def any_of(strings) -> re.Pattern[str]:
    """A pattern that finds whether any of ``strings`` occurs, written as a trie (``a(?:gent|i)|bot``):
    the regex engine tries alternatives one after another at each position, so sharing their
    prefixes makes a search of many words several times faster than their plain alternation. A
    string that holds another at its start is left out: where it occurs, so does the shorter one."""
    tree: dict = {}
    for s in sorted(strings, key=len):
        node = tree
        for ch in s:
            if "" in node:
                break
            node = node.setdefault(ch, {})
        else:
            node.clear()
            node[""] = {}
    return re.compile(_trie(tree) if tree else "(?!)")  # no strings: found nowhere


def _trie(node: dict) -> str:
    branches = [re.escape(ch) + _trie(child) for ch, child in sorted(node.items()) if ch]
    if len(branches) <= 1:
        return "".join(branches)
    return "(?:" + "|".join(branches) + ")"


def gate(pattern: re.Pattern[str], white: str = "any") -> Gate | None:
    """The :class:`Gate` of ``pattern``, or None when some match need hold no literal at all.
    ``white`` says what texts the gate is read on: ``"any"``; ``"single"``, texts whose only white
    space is single spaces (:func:`commons.core.policy.instruction.fold`'s), where ``\\s+`` is
    one space and can be a literal; ``"blanked"``, such a text with some of its characters then
    made spaces (quotes blanked out before the pattern reads it): no string of the gate holds a
    space, so it holds for the text before its blanks."""
    if white not in _WHITE:
        raise ValueError(f"gate reads texts of white space {'/'.join(_WHITE)}, was asked for {white!r}")
    tree = _parser.parse(pattern.pattern, pattern.flags)
    ignore = bool(tree.state.flags & re.IGNORECASE)
    alternatives = []
    for items in _arms(list(tree)):
        part = _Reading(ignore, white).sequence(items)
        if part.exact == _NONE:
            continue  # this alternative never matches an ASCII text
        if not part.clauses:
            return None
        alternatives.append(part.clauses)
    return Gate(_fewest(list(dict.fromkeys(alternatives))))


def _fewest(alternatives: list[tuple[Strings, ...]]) -> tuple[tuple[Strings, ...], ...]:
    """``alternatives`` without those another admits whenever they do (``your`` beside ``you``)."""
    def implies(a: tuple[Strings, ...], b: tuple[Strings, ...]) -> bool:
        return all(any(all(any(t in s for t in cb) for s in ca) for ca in a) for cb in b)

    kept: list[tuple[Strings, ...]] = []
    for i, a in enumerate(alternatives):
        if not any(implies(a, b) and (not implies(b, a) or j < i) for j, b in enumerate(alternatives) if j != i):
            kept.append(a)
    return tuple(kept)


def _arms(items: list, budget: int = _ARMS) -> list[list]:
    """``items`` as the sequences one of which any match follows: its first alternation opened
    (``a(?:b|c)d`` is ``abd`` or ``acd``, each with clauses of its own, where one clause for the
    alternation would hold ``b`` or ``c``), then the alternations after it, while they are few.
    The parser lifts the common start out of an alternation (``\\bx|\\by`` is ``\\b(?:x|y)``),
    which is why the alternation the pattern was written as is often not at its top."""
    for at, (op, av) in enumerate(items):
        if op is _c.SUBPATTERN and not av[1] and not av[2]:  # a group that sets no flags: its items in its place
            return _arms(items[:at] + list(av[3]) + items[at + 1:], budget)
        if op is _c.BRANCH:
            if len(av[1]) > budget:
                return [items]
            out: list[list] = []
            for arm in av[1]:
                out += _arms(items[:at] + list(arm) + items[at + 1:], max(1, budget // len(av[1])))
            return out
    return [items]


@dataclass(frozen=True)
class _Part:
    """What a piece of a pattern says: ``exact``, every string it can match (lower case), when they
    are few; ``clauses``, sets of which every match holds one string each, best first."""

    exact: Strings | None
    clauses: tuple[Strings, ...]


_IMPOSSIBLE = _Part(_NONE, ())


def _score(clause: Strings) -> tuple[int, int]:
    return min(map(len, clause)), -len(clause)


def _best(clauses: list[Strings]) -> tuple[Strings, ...]:
    useful = {_least(c) for c in clauses if c and len(c) <= _CAP and min(map(len, c)) > 0}
    return tuple(sorted(useful, key=_score, reverse=True)[:_CLAUSES])


def _least(clause: Strings) -> Strings:
    """``clause`` without the strings that hold another of it: where "note to" is, "note" is too."""
    return frozenset(s for s in clause if not any(t != s and t in s for t in clause))


class _Reading:
    """One pass over a parsed pattern, knowing whether IGNORECASE is on where it reads."""

    def __init__(self, ignore: bool, white: str):
        self.ignore, self.white = ignore, white

    def sequence(self, items: list) -> _Part:
        clauses: list[Strings] = []
        run: Strings | None = _EMPTY  # the strings the current run of exact pieces can match
        exact: Strings | None = _EMPTY
        for op, av in items:
            part = self.item(op, av)
            if part.exact == _NONE:
                return _IMPOSSIBLE
            clauses.extend(part.clauses)
            if part.exact is None:
                exact = None
                if run is not None:
                    clauses.append(run)
                run = _EMPTY
                continue
            exact = _join(exact, part.exact)
            joined = _join(run, part.exact)
            if joined is None:  # too many: what came before is one clause, this starts the next run
                clauses.append(run)
                run = part.exact
            else:
                run = joined
        clauses.append(run)
        return _Part(exact, _best(clauses))

    def item(self, op, av) -> _Part:
        if op is _c.LITERAL:
            ch = chr(av)
            if ch == " " and self.white == "blanked":
                return _Part(None, ())
            if ch.isascii() or not self.ignore:
                return _Part(frozenset({ch.lower()}), ())
            # "ſ" matches "s" under IGNORECASE, and lower() keeps them apart; "ж" matches no ASCII letter
            return _Part(None, ()) if _meets_ascii(ch) else _IMPOSSIBLE
        if op is _c.IN:
            return _Part(self._class(av), ())
        if op is _c.AT and av in (_c.AT_BEGINNING, _c.AT_BEGINNING_STRING) and self.white == "single":
            return _Part(frozenset({_START}), ())  # a folded text holds no line break: its start
        if op in (_c.AT, _c.ASSERT_NOT, _c.ASSERT):
            return _Part(_EMPTY, ())  # zero width: no text of the match's own
        if op is _c.SUBPATTERN:
            _group, add, remove, items = av
            inner = _Reading((self.ignore or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE, self.white)
            return inner.sequence(list(items))
        if op is getattr(_c, "ATOMIC_GROUP", None):
            return self.sequence(list(av))
        if op is _c.BRANCH:
            parts = [p for p in (self.sequence(list(alt)) for alt in av[1]) if p.exact != _NONE]
            if not parts:
                return _IMPOSSIBLE
            exact = None
            if all(p.exact is not None for p in parts):
                union = frozenset().union(*(p.exact for p in parts))
                exact = union if len(union) <= _CAP else None
            # one clause holds for the branch when every alternative has one: their best, joined
            clause = frozenset().union(*(p.clauses[0] for p in parts)) if all(p.clauses for p in parts) else None
            return _Part(exact, _best([clause]) if clause else ())
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
            low, high, items = av
            inner = self.sequence(list(items))
            if inner.exact == _NONE:
                return _Part(_EMPTY, ()) if low == 0 else _IMPOSSIBLE
            if self.white == "single" and inner.exact == _SPACE:  # a run of white space is one space there
                return _Part(_SPACE | _EMPTY if low == 0 else _SPACE, ())
            if low == 0:
                exact = inner.exact | _EMPTY if high == 1 and inner.exact is not None else None
                return _Part(exact, ())
            exact = None
            if low == high and inner.exact is not None:
                exact = _EMPTY
                for _ in range(low):
                    exact = _join(exact, inner.exact) if exact is not None else None
            return _Part(exact, inner.clauses)
        return _Part(None, ())  # ANY, NOT_LITERAL, a back reference, a conditional: anything may stand there

    def _class(self, av) -> Strings | None:
        chars: set[str] = set()
        for op, value in av:
            if op is _c.LITERAL:
                chars.add(chr(value))
            elif op is _c.CATEGORY and value is _c.CATEGORY_SPACE and self.white == "single":
                chars.add(" ")  # the only white space there
            elif op is _c.RANGE and value[1] - value[0] < _CLASS_CAP:
                chars.update(map(chr, range(value[0], value[1] + 1)))
            else:  # a negation, a category (\d, \s, \w), a wide range
                return None
            if len(chars) > _CLASS_CAP:
                return None
        if " " in chars and self.white == "blanked":
            return None
        if self.ignore:
            if any(_meets_ascii(ch) for ch in chars if not ch.isascii()):
                return None
            chars = {ch for ch in chars if ch.isascii()}
        return frozenset(ch.lower() for ch in chars)


@functools.lru_cache(maxsize=None)
def _meets_ascii(ch: str) -> bool:
    """Whether ``ch`` matches some ASCII character under IGNORECASE (as "K", the Kelvin sign, matches "k")."""
    return any(re.fullmatch(re.escape(ch), chr(i), re.IGNORECASE) for i in range(128))


def _join(left: Strings | None, right: Strings) -> Strings | None:
    if left is None or len(left) * len(right) > _CAP:
        return None
    return frozenset(a + b for a, b in product(left, right))
