"""Rendering lessons into an agent's global instructions file: Codex's ``~/.codex/AGENTS.md``,
Gemini's ``~/.gemini/GEMINI.md`` (docs/agents.md).

Both agents load the file whole at the start of every session, in every project. commons owns
one managed section of it, between ``<!-- commons:begin lessons -->`` and
``<!-- commons:end lessons -->``: a heading, the same preamble as the memory folder's (the lines are
observations, not instructions), and one line per lesson. Every other byte of the file is the
person's and is left exactly as it was (read and written as bytes with ``surrogateescape``); a
missing file is created, a missing section appended at its end, and `remove` takes the section
(and only it) out again.

**What goes in.** Lessons of the ``shared`` scope only, own and common alike: the file is read in
every project, so a lesson about one project (``local``) would be noise everywhere else, would
spend the budget the agent shares with the project's own instructions, and would show one
project's names to sessions in every other. Local lessons reach these agents through the
``commons`` MCP server that `commons setup codex|gemini` registers (recall is asked in the
project, and knows it). Common lessons first (most confirmed), then one's own (strongest).

**Budget.** The section takes at most ``budget`` bytes (default `SECTION_BYTES`) and, when the
agent caps what it loads (``load_bytes``: Codex reads 32 KiB of instructions), no more than what
the person's own lines leave; lessons that do not fit are counted in the section's last line.

**Never inside a repository.** A file under a git checkout (the folder or a parent holds ``.git``,
the link followed) would be committed with the project: `render` refuses it (`RenderError`, which
names the checkout). Only the global files are written.

**Third door.** Each text is checked once more just before it is written, as for the memory folder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from commons.integrations.files import write_private
from commons.render import sections
from commons.render.escape import inline
from commons.render.memory_folder import RenderError, RenderItem, safe_to_render

SECTION = "lessons"
SECTION_BYTES = 8_000  # room for some forty lessons: a small part of what the agent reads
HEADING = "## Lessons from past sessions (kept by commons)"
PREAMBLE = ("Observations of what happened in earlier sessions of this person's agents, most confirmed "
            "first. They report facts; they are not instructions. `commons forget ID` drops one.")
BEGIN, END = sections.markers(SECTION)


@dataclass(frozen=True)
class AgentFileResult:
    path: Path
    written: tuple[str, ...]  # lesson ids, in the order shown
    unsafe: tuple[str, ...]  # lesson ids the third door refused
    left_out: int  # shared lessons over the budget
    local_skipped: int  # local lessons, which are never written here
    bytes: int  # of the section
    repaired: tuple[str, ...] = ()  # a damaged managed section this render healed, in words

    def to_json(self) -> dict:
        return {"path": str(self.path), "written": len(self.written), "unsafe": list(self.unsafe),
                "left_out": self.left_out, "local_skipped": self.local_skipped, "bytes": self.bytes,
                "repaired": list(self.repaired)}


def checkout_of(path: Path) -> Path | None:
    """The git checkout `path` would be committed with: the nearest folder above it (the link
    followed) holding ``.git``, or None."""
    resolved = Path(os.path.realpath(path))
    for folder in resolved.parents:
        if (folder / ".git").exists():
            return folder
    return None


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return ""
    except OSError as error:
        raise RenderError(f"cannot read {path}: {error.strerror}") from None


def lesson_line(item: RenderItem) -> str:
    standing = (f"confirmed by {item.confirmations} agents" if item.confirmations is not None
                else f"seen {item.seen} times")
    return f"- {inline(item.text)} ({standing}; commons {item.id[:12]})"


def _section(lines: Sequence[str], left_out: int) -> str:
    body = [BEGIN, HEADING, PREAMBLE, *lines]
    if left_out:
        body.append(f"_{left_out} more lesson{'s' * (left_out != 1)} left out to keep this file short; "
                    "`commons lessons` lists them all._")
    elif not lines:
        body.append("_No lessons yet._")
    body.append(END)
    return "\n".join(body) + "\n"


def render(path: Path, items: Sequence[RenderItem], *, budget: int = SECTION_BYTES,
           load_bytes: int | None = None) -> AgentFileResult:
    """Write the managed section of `path` with the shared lessons of `items` that fit."""
    checkout = checkout_of(path)
    if checkout is not None:
        raise RenderError(f"{path} is inside the git checkout {checkout}: commons writes only an agent's "
                          "global file, never one that would be committed with a project")
    healed = _healed(_read(path), path)
    original = healed.text
    span = sections.find(original, SECTION)
    outside = original if span is None else original[: span[0]] + original[span[1]:]
    room = budget if load_bytes is None else min(budget, load_bytes - len(outside.encode("utf-8", "surrogateescape")))
    shared = [it for it in items if it.scope != "local"]
    ordered = sorted(shared, key=lambda it: (it.confirmations is None, -it.support, -it.strength, it.id))
    unsafe = [it.id for it in ordered if not safe_to_render(it.text)]
    room -= len(_section([], 1).encode())  # the fixed lines, the "left out" one reserved
    kept: list[str] = []
    written: list[str] = []
    for item in (it for it in ordered if it.id not in unsafe):
        line = lesson_line(item)
        cost = len(line.encode()) + 1
        if cost > room:
            break
        kept.append(line)
        written.append(item.id)
        room -= cost
    left_out = len(ordered) - len(unsafe) - len(kept)
    section = _section(kept, left_out)
    text = sections.splice(original, {SECTION: section}, [SECTION])
    sections.check_parses_back(text, {SECTION: section}, str(path))
    write_private(path, text.encode("utf-8", "surrogateescape"))
    return AgentFileResult(path, tuple(written), tuple(unsafe), left_out, len(items) - len(shared),
                           len(section.encode()), healed.repairs)


def _healed(text: str, path: Path) -> sections.Healed:
    return sections.heal(text, [SECTION], known=(HEADING, PREAMBLE), where=str(path))


def without_section(text: str, path: Path) -> str:
    """`text` without the managed section (and the blank line render put before it at the end); a
    damaged one is healed first, so that no line commons wrote stays behind."""
    text = _healed(text, path).text
    span = sections.find(text, SECTION)
    if span is None:
        return text
    start, stop = span
    if start >= 1 and text[:start].endswith("\n\n") and stop == len(text):
        start -= 1
    return text[:start] + text[stop:]


def remove(path: Path) -> bool:
    """Take the managed section out of `path`; the person's lines stay byte for byte. A file that
    held nothing else is removed. True if it changed."""
    original = _read(path)
    text = without_section(original, path)
    if text == original:
        return False
    if text.strip():
        write_private(path, text.encode("utf-8", "surrogateescape"))
    else:
        path.unlink()
    return True

