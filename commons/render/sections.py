"""Managed sections of a person's file: found so that no text can fool the finder, healed when damaged.

commons owns, in a file that is otherwise the person's (``MEMORY.md``, ``AGENTS.md``, ``GEMINI.md``),
sections between ``<!-- commons:begin NAME -->`` and ``<!-- commons:end NAME -->``. Two rules make
them impossible to forge:

* **A marker is a whole line.** Only a line that is exactly a marker (surrounding blanks aside)
  counts. A lesson is always written on a line that starts with commons' own prefix, and
  :func:`commons.render.escape.inline` leaves no ``<!--`` in it, so no lesson can open or close a
  section, wherever it comes from.
* **What is written parses back.** A render checks that the file it is about to write holds each
  of its sections exactly once, as composed (:func:`check_parses_back`); anything else is our bug
  and nothing is written.

**Healing.** Files written before these rules could be damaged: a lesson holding
``<!-- commons:end common -->`` closed the section early, and each render left another copy of the
rest outside it (with the real end marker), so that sections grew and lines commons wrote stayed
behind, read as the person's. :func:`heal` finds every section that is not exactly one begin line
followed by one end line (duplicated or stray markers, a marker inside a line, a begin without an
end or the reverse) and rewrites its whole extent (from its first marker line to its last) as one
empty section, which the render then fills. Inside that extent, lines commons writes (markers and
lines holding one, headings and preambles of sections, lesson lines linking a ``commons-….md`` file
or naming a ``commons`` id, the "left out" line) are dropped; any other line is the person's and is
kept, byte for byte, just after the section (with the blank lines between two of them). Every byte outside the extent is left as it was. Each
repair is described in words, for the render's result and the log.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Healed", "SectionError", "check_parses_back", "find", "heal", "markers", "separated", "splice", "written_by_commons"]

_ANY_MARKER = re.compile(r"<!--\s*commons:(?:begin|end)\b")
_COMMONS_LINE = re.compile(
    r"\(commons-[0-9a-f]{12}\.md\)"  # MEMORY.md's index line links the lesson's file
    r"|;\s*commons [0-9a-f]{12}\)\s*$"  # AGENTS.md / GEMINI.md's lesson line names its id
    r"|^#{1,6} .*\(kept by commons\)\s*$"  # a section's heading
    r"|^_\d+ (?:more|weaker) lessons? left out\b"  # a section's last line
    r"|^_No lessons yet\._\s*$"
)


class SectionError(Exception):
    """A managed section would be written that does not parse back: our bug, nothing was written."""


def markers(name: str) -> tuple[str, str]:
    return f"<!-- commons:begin {name} -->", f"<!-- commons:end {name} -->"


def written_by_commons(line: str, known: Sequence[str] = ()) -> bool:
    """Whether ``line`` has the shape of a line commons writes in a section (``known``: the
    preambles and other fixed lines of the caller's sections)."""
    bare = line.strip()
    return bool(_ANY_MARKER.search(bare) or _COMMONS_LINE.search(bare) or bare in known)


@dataclass(frozen=True)
class _Lines:
    lines: list[str]  # with their line ends
    begins: list[int]
    ends: list[int]
    inside: list[int]  # lines holding one of the markers, not being one

    @classmethod
    def of(cls, lines: list[str], name: str) -> "_Lines":
        begin, end = markers(name)
        begins, ends, inside = [], [], []
        for i, line in enumerate(lines):
            bare = line.strip()
            if bare == begin:
                begins.append(i)
            elif bare == end:
                ends.append(i)
            elif begin in line or end in line:
                inside.append(i)
        return cls(lines, begins, ends, inside)

    def clean(self) -> bool:
        return (len(self.begins) == len(self.ends) == 1 and self.begins[0] < self.ends[0]
                and not any(self.begins[0] < i < self.ends[0] for i in self.inside))


def find(text: str, name: str) -> tuple[int, int] | None:
    """(start, stop) in ``text`` of ``name``'s section, marker lines included (with their line
    ends), when it is whole: one begin line, then one end line, no marker inside a line between.
    None when there is none or it is damaged (:func:`heal` repairs it)."""
    lines = text.splitlines(keepends=True)
    found = _Lines.of(lines, name)
    if not found.clean():
        return None
    start = sum(len(line) for line in lines[: found.begins[0]])
    stop = start + sum(len(line) for line in lines[found.begins[0]: found.ends[0] + 1])
    return start, stop


@dataclass(frozen=True)
class Healed:
    text: str
    repairs: tuple[str, ...]  # one sentence per repaired section, for the result and the log


def _extent(found: _Lines, known: Sequence[str]) -> tuple[int, int] | None:
    """The first and last line of a damaged section, or None for a whole one or none at all."""
    if found.clean() or not (found.begins or found.ends):
        return None
    marks = found.begins + found.ends
    lo, hi = min(marks), max(marks)
    if not found.ends:  # a begin with no end: the lines commons wrote after it
        while hi + 1 < len(found.lines) and written_by_commons(found.lines[hi + 1], known):
            hi += 1
    if not found.begins:  # an end with no begin: the lines commons wrote before it
        while lo > 0 and written_by_commons(found.lines[lo - 1], known):
            lo -= 1
    return lo, hi


def heal(text: str, names: Sequence[str], *, known: Sequence[str] = (), where: str = "the file") -> Healed:
    """``text`` with every damaged section of ``names`` rewritten as one empty section (see the
    module); sections that are whole, and every byte outside a damaged one, are left as they are."""
    lines = text.splitlines(keepends=True)
    extents: list[tuple[int, int, list[str], bool]] = []  # first line, last line, names, damaged
    for name in names:
        found = _Lines.of(lines, name)
        if found.clean():
            extents.append((found.begins[0], found.ends[0], [name], False))
        elif (span := _extent(found, known)) is not None:
            extents.append((*span, [name], True))
    if not any(damaged for *_, damaged in extents):
        return Healed(text, ())
    extents.sort()
    merged = [extents[0]]
    # Extents that overlap are one repair: a damaged section may hold another (whole or not).
    for lo, hi, group, damaged in extents[1:]:
        last = merged[-1]
        if lo <= last[1]:
            merged[-1] = (last[0], max(hi, last[1]), last[2] + group, True)
        else:
            merged.append((lo, hi, group, damaged))
    merged = [(lo, hi, [n for n in names if n in group]) for lo, hi, group, damaged in merged if damaged]
    repairs: list[str] = []
    for lo, hi, group in reversed(merged):
        region = lines[lo: hi + 1]
        mine = _persons_lines(region, known)
        theirs = [line for i, line in enumerate(region) if i in mine]
        ours = [line for i, line in enumerate(region) if i not in mine]
        counts = {name: _Lines.of(region, name) for name in group}
        what = "; ".join(f"`{name}`: {len(c.begins)} begin and {len(c.ends)} end marker line(s), "
                         f"{len(c.inside)} marker(s) inside a line" for name, c in counts.items())
        repairs.insert(0, f"{where}: damaged managed section{'s' * (len(group) > 1)} repaired ({what}): "
                          f"{len(ours)} line(s) commons had written were replaced by one section"
                          + (f"; {len(theirs)} line(s) of yours found inside were kept just after it"
                             if theirs else ""))
        fresh = [f"{m}\n" for name in group for m in markers(name)]
        if theirs and not theirs[-1].endswith("\n"):
            theirs[-1] += "\n"
        lines[lo: hi + 1] = fresh + theirs
    return Healed("".join(lines), tuple(repairs))


def _persons_lines(region: Sequence[str], known: Sequence[str]) -> set[int]:
    """Indices of the lines of a damaged extent that are the person's: every line commons would not
    have written, and the blank lines between two of those (a paragraph of theirs stays whole)."""
    text = [i for i, line in enumerate(region) if line.strip()]
    theirs = {i for i in text if not written_by_commons(region[i], known)}
    for before, after in zip(text, text[1:]):
        if before in theirs and after in theirs:
            theirs.update(range(before + 1, after))
    return theirs


def check_parses_back(text: str, sections: dict[str, str], where: str) -> None:
    """Raise :class:`SectionError` unless each of ``sections`` (name → the exact text composed for
    it) is found in ``text`` once, whole, and as composed."""
    for name, composed in sections.items():
        span = find(text, name)
        if span is None or text[span[0]: span[1]] != composed:
            raise SectionError(f"the `{name}` section composed for {where} does not parse back as one "
                               "section (our bug; nothing was written): please report it")


def separated(text: str) -> str:
    """``text`` ready for a section appended after the person's lines: set off by one blank line."""
    if not text or text.endswith("\n\n"):
        return text
    return text + ("\n" if text.endswith("\n") else "\n\n")


def splice(text: str, sections: dict[str, str], order: Sequence[str]) -> str:
    """``text`` with each section of ``sections`` put in place of its whole section, or appended
    (in ``order``, set off by a blank line) when it has none."""
    spans = {name: find(text, name) for name in sections}
    for name, span in sorted(((n, s) for n, s in spans.items() if s is not None), key=lambda kv: -kv[1][0]):
        text = text[: span[0]] + sections[name] + text[span[1]:]
    new = [name for name in order if name in sections and spans[name] is None]
    if new:
        text = separated(text) + "".join(sections[name] for name in new)
    return text
