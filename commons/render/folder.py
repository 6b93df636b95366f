"""The plain folder target: one memory folder for every project (``[render] folder``).

The folder commons wrote before it knew projects, kept for agents that read one folder, for tests
and for the experiment harness: every own lesson in the ``own`` layer, common lessons below.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from commons.render import memory_folder
from commons.render.memory_folder import Layer, RenderResult
from commons.render.target import Destination


@dataclass(frozen=True)
class FolderTarget:
    folder: Path
    name: str = "folder"

    def project_of(self, workdir: str) -> str:
        return ""  # one folder for every project

    def destinations(self, projects: Iterable[str]) -> Sequence[Destination]:
        return (Destination(self.folder),)

    def write(self, destination: Destination, layers: Sequence[Layer], previous_files: Iterable[str]) -> RenderResult:
        return memory_folder.render(destination.folder, layers, previous_files)
