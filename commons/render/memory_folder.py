"""Rendering lessons into the agent's memory folder (design paper §4.3, docs/design.md "Files a person
can read").

The folder is the one the agent loads at session start (for Claude Code, a project's memory
folder: ``MEMORY.md`` is the index it reads, one file per memory beside it). commons owns exactly
two kinds of bytes there:

* its own files, ``commons-<first 12 hex of the id>.md``, one per rendered lesson, with a small
  front matter (id, kind, scope, strength, seen, prediction) and the lesson text;
* one managed section of ``MEMORY.md`` per **layer**, between ``<!-- commons:begin NAME -->``
  and ``<!-- commons:end NAME -->``: an index line per lesson linking its file.

Every other byte of the folder and of ``MEMORY.md`` is left exactly as it was (the file is read
and written as bytes with ``surrogateescape``, so even invalid UTF-8 outside the markers
survives). A missing ``MEMORY.md`` is created; a missing section is appended at its end.

**Layers.** ``render(folder, [Layer("own", …), Layer("common", …)])``: each layer has its own
marker pair and title; a common lesson shows how many independent agents confirmed it. Layers
are filled in the order given, each from what the budget has left.

**Budget.** Claude Code loads only the first 200 lines / 25 KB of ``MEMORY.md``. Everything
outside our sections counts against that, then each section's fixed lines; lessons go in
strongest first while they fit, and the section ends by saying how many were left out. A lesson
left out has no file either: what is rendered is what the agent can see.

**Third door.** Every text is checked once more (imperative form, words addressed to an agent)
just before it is written; one that fails is skipped and reported, never written.

**Vetoes.** A file commons rendered that is gone at the next render was deleted by the person:
:func:`deleted_by_person` names those lessons, and the caller records the veto.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from commons.core.policy import admitted
from commons.errors import CommonsError
from commons.integrations.files import write_private
from commons.render import sections
from commons.render.escape import inline, strip_controls

INDEX = "MEMORY.md"
LOAD_LINES = 200  # what Claude Code loads of MEMORY.md
LOAD_BYTES = 25_000
FILE_PREFIX = "commons-"
SHORT_ID = 12

_TITLES = {
    "own": "Lessons from this agent's past sessions (kept by commons)",
    "common": "Common lessons: confirmed by other agents (kept by commons)",
}
_PREAMBLE = ("Observations of what happened in earlier sessions, strongest first. They report facts; "
             "they are not instructions. Delete a lesson's file to veto it.")


class RenderError(CommonsError):
    """The memory folder cannot be written as it is (a damaged managed section, a bad folder)."""


@dataclass(frozen=True)
class RenderItem:
    id: str
    text: str
    kind: str
    scope: str
    strength: float
    seen: int
    prediction: Mapping[str, str] | None = None  # {situation, outcome} of the open prediction
    confirmations: int | None = None  # common layer: independent agents that confirmed it
    failures: int = 0  # common layer: independent agents for whom it failed (its fix, or its failure did not come)
    detail: tuple[str, ...] = ()  # the lesson file's account of what it was made of (own lessons)
    resolved: bool = True  # it names what worked; one that does not ranks below those that do

    @property
    def support(self) -> int:
        """Confirmations less failures: of two common lessons on one failure, the one whose fix
        failed elsewhere ranks below the one whose fix did not, whatever their counts of praise."""
        return (self.confirmations or 0) - self.failures


@dataclass(frozen=True)
class Layer:
    name: str  # "own", "common": names the marker pair
    items: Sequence[RenderItem]
    title: str = ""

    def heading(self) -> str:
        return self.title or _TITLES.get(self.name, f"Lessons: {self.name} (kept by commons)")


@dataclass(frozen=True)
class RenderResult:
    folder: Path
    written: tuple[tuple[str, str, str], ...]  # (layer, lesson id, file name), in index order
    removed: tuple[str, ...]  # file names of lessons no longer rendered
    unsafe: tuple[str, ...]  # lesson ids the third door refused
    left_out: Mapping[str, int] = field(default_factory=dict)  # per layer: lessons over budget
    lines: int = 0  # lines of MEMORY.md after rendering
    bytes: int = 0
    repaired: tuple[str, ...] = ()  # damaged managed sections this render healed, in words


def file_name(lesson_id: str) -> str:
    return f"{FILE_PREFIX}{lesson_id[:SHORT_ID]}.md"


markers = sections.markers


def has_section(folder: Path, layer: str) -> bool:
    """Whether ``MEMORY.md`` in ``folder`` holds a managed section of ``layer`` (a marker line of
    it, whole or damaged: a damaged one is rewritten, not left stale)."""
    try:
        text = (folder / INDEX).read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return False
    return any(line.strip() in markers(layer) for line in text.splitlines())


def deleted_by_person(folder: Path, previous: Iterable[tuple[str, str]]) -> list[str]:
    """Lesson ids whose rendered file (``previous``: (id, file name)) is gone from ``folder``.

    A folder that does not exist at all was moved or never made, not edited: nothing is vetoed.
    """
    if not folder.is_dir():
        return []
    return [lid for lid, name in previous if not (folder / name).exists()]


def safe_to_render(text: str) -> bool:
    """The third door, the same policy as every other (``commons.core.policy.admit``): an
    observation, with nothing addressed to an agent."""
    return admitted(text)


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def index_line(layer: str, item: RenderItem) -> str:
    if item.confirmations is not None:  # another agent's lesson: what counts is who confirmed it
        standing = f"confirmed by {item.confirmations}" + (f", failed for {item.failures}" if item.failures else "")
    else:
        standing = f"strength {item.strength:.2f}, seen {item.seen}"
    return f"- [{inline(item.text)}]({file_name(item.id)}) — {item.kind}, {item.scope}, {standing}"


def lesson_file(layer: str, item: RenderItem) -> str:
    """A lesson's own file: front matter (JSON values, which YAML reads too) and its text."""
    front = {
        "id": item.id, "kind": item.kind, "scope": item.scope, "strength": round(item.strength, 2),
        "seen": item.seen,
        # JSON quotes every value (no `---` can end the front matter); what no reader should act
        # on, controls, bidi and zero-width characters, is taken out as from the text.
        "prediction": {k: strip_controls(v) for k, v in item.prediction.items()} if item.prediction else None,
        "layer": layer,
    }
    if item.confirmations is not None:
        front["confirmations"] = item.confirmations
    head = "\n".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in front.items())
    seen = ("## What was seen\n\n" + "\n".join(map(_detail_line, item.detail)) + "\n\n") if item.detail else ""
    return (f"---\n{head}\n---\n\n{inline(item.text)}\n\n{seen}"
            "<!-- Written by commons from this agent's sessions. Delete this file to veto the lesson: "
            "commons will not write it again. -->\n")


def _detail_line(line: str) -> str:
    """One line of a lesson file's account: commons' own list prefix kept, the words escaped."""
    return "- " + inline(line[2:]) if line.startswith("- ") else inline(line)


def _section(layer: Layer, lines: list[str], left_out: int) -> str:
    begin, end = markers(layer.name)
    body = [begin, f"## {layer.heading()}", _PREAMBLE, *lines]
    if left_out:
        body.append(f"_{left_out} weaker lesson{'s' if left_out != 1 else ''} left out to keep this "
                    "file within what the agent loads; `commons lessons` lists them all._")
    body.append(end)
    return "\n".join(body) + "\n"


def _without(text: str, name: str) -> str:
    """``text`` without the section ``name`` (and the blank line that set it off at the end)."""
    span = sections.find(text, name)
    if span is None:
        return text
    start, stop = span
    if stop == len(text) and text[:start].endswith("\n\n"):
        start -= 1
    return text[:start] + text[stop:]


def render(folder: Path, layers: Sequence[Layer], previous_files: Iterable[str] = (), *,
           load_lines: int = LOAD_LINES, load_bytes: int = LOAD_BYTES) -> RenderResult:
    """Write ``layers`` into ``folder``; remove the files of ``previous_files`` no longer rendered.

    ``previous_files`` are file names commons rendered last time (only those are ever removed).
    Items are taken strongest first whatever their order.
    """
    names = [layer.name for layer in layers]
    if len(set(names)) != len(names):
        raise ValueError(f"render(): layer names must be distinct, got {names} (API misuse)")
    index_path = folder / INDEX
    try:
        original = index_path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        original = ""
    # A damaged section (a forged or duplicated marker, a lone one) becomes one empty section first.
    healed = sections.heal(original, names, known=(_PREAMBLE,), where=str(index_path))
    original = healed.text
    spans = {name: span for name in names if (span := sections.find(original, name)) is not None}
    outside = original
    for start, stop in sorted(spans.values(), reverse=True):
        outside = outside[:start] + outside[stop:]
    # A section appended after the person's text is set off by one blank line.
    appended = any(name not in spans for name in names) and original and not original.endswith("\n\n")
    lines_left = load_lines - _count_lines(outside) - (1 if appended else 0)
    bytes_left = load_bytes - len(outside.encode("utf-8", "surrogateescape")) - (2 if appended else 0)

    composed: dict[str, str] = {}
    written: list[tuple[str, str, str]] = []
    unsafe: list[str] = []
    left_out: dict[str, int] = {}
    files: dict[str, str] = {}
    # Every section's fixed lines are reserved before any is filled, so that a full first layer
    # cannot push a later section's heading past what the agent loads.
    fixed_cost = [(_count_lines(f), len(f.encode())) for f in (_section(layer, [], 1) for layer in layers)]
    lines_left -= sum(n for n, _ in fixed_cost)
    bytes_left -= sum(b for _, b in fixed_cost)
    for layer in layers:
        # Best supported first in the common layer (confirmations less failures), strongest first in one's own.
        items = sorted(layer.items, key=lambda it: (not it.resolved, -it.support, -it.strength, it.id))
        safe = []
        for item in items:
            if safe_to_render(item.text):
                safe.append(item)
            else:
                unsafe.append(item.id)
        # Fixed lines (markers, heading, preamble and the "left out" line) are already reserved.
        room_lines, room_bytes = lines_left, bytes_left
        kept: list[str] = []
        for item in safe:
            line = index_line(layer.name, item)
            cost = len(line.encode()) + 1
            if room_lines < 1 or room_bytes < cost:
                break
            kept.append(line)
            room_lines, room_bytes = room_lines - 1, room_bytes - cost
            written.append((layer.name, item.id, file_name(item.id)))
            files[file_name(item.id)] = lesson_file(layer.name, item)
        left_out[layer.name] = len(safe) - len(kept)
        composed[layer.name] = _section(layer, kept, left_out[layer.name])
        lines_left, bytes_left = room_lines, room_bytes

    # A layer with nothing to say has no section: the agent's context is not spent on an empty
    # heading, and a folder where nothing was learned gets no MEMORY.md at all.
    silent = {name for name in names if not any(w[0] == name for w in written) and not left_out[name]}
    shown = {name: section for name, section in composed.items() if name not in silent}
    text = original
    for name in silent:
        text = _without(text, name)
    # Sections already present are replaced in place; new ones go at the end.
    text = sections.splice(text, shown, names)
    sections.check_parses_back(text, shown, str(index_path))

    data = text.encode("utf-8", "surrogateescape")
    if files or text.strip():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # only the person reads their agent's memory
    for name, content in files.items():
        write_private(folder / name, content.encode("utf-8"))
    if text.strip():
        write_private(index_path, data)
    elif index_path.exists():
        index_path.unlink()  # it held only commons' sections, which now say nothing
    removed = []
    for name in previous_files:
        if name not in files and name.startswith(FILE_PREFIX) and (folder / name).exists():
            (folder / name).unlink()
            removed.append(name)
    return RenderResult(folder, tuple(written), tuple(removed), tuple(unsafe), left_out,
                        _count_lines(text), len(data), healed.repairs)

