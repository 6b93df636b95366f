"""The render target interface: what a module of ``commons/render/`` offers the node's rendering.

A target is where an agent reads lessons: one plain folder (``folder``), each project's Claude Code
auto memory (``claude_code``), a project's ``AGENTS.md``… ``commons.node.rendering`` decides which
lessons go where; a target only answers three questions, and reads no store:

``project_of(workdir)``
    The project a session's working directory belongs to, as a key (Claude Code: the main git
    root, so worktrees and subfolders are one project). ``""`` when the target does not split by
    project: every lesson then goes to its one destination.

``destinations(projects)``
    The folders to write for these project keys (the projects lessons or sessions were seen in).
    A project whose agent does not read memory (Claude Code's ``autoMemoryEnabled: false``) gets
    none. A destination whose ``project`` is ``""`` shows every lesson of this node.

``write(destination, layers, previous_files)``
    Write the layers there and return a :class:`~commons.render.memory_folder.RenderResult`
    (what was written, so that a file the person deleted can become a veto). Only files named in
    ``previous_files`` that commons wrote are ever removed.

The layers handed to ``write`` are named: ``project`` (this project's local lessons), ``own``
(this node's lessons that are not tied to one project) and ``common`` (lessons common at this
node). A destination with ``project == ""`` gets ``own`` and ``common`` only, ``own`` holding every
own lesson, as before projects existed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from commons.render.memory_folder import Layer, RenderResult


@dataclass(frozen=True)
class Destination:
    """One place a target writes: a folder, and the project it is the memory of ("" for none)."""

    folder: Path
    project: str = ""
    name: str = ""  # how the project is called in messages (its folder's name)


class RenderTarget(Protocol):
    name: str  # "folder", "claude-code", …: what `[render] target` says and `--json` shows

    def project_of(self, workdir: str) -> str: ...

    def destinations(self, projects: Iterable[str]) -> Sequence[Destination]: ...

    def write(self, destination: Destination, layers: Sequence[Layer],
              previous_files: Iterable[str]) -> RenderResult: ...
