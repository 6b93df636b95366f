"""The Claude Code target: each project's lessons in that project's auto memory.

Claude Code loads, at the start of every session, the first 200 lines / 25 KB of ``MEMORY.md`` in
the project's auto-memory folder (``~/.claude/projects/<slug>/memory/``, or where
``autoMemoryDirectory`` moved it) and reads the files it links on demand. So each project known
from the sessions gets, in its own ``MEMORY.md``, managed sections (the rest of the file is the
person's and Claude's, and is never touched):

* ``project``: the local lessons learned in this project's sessions ("this project uses uv");
* ``own``: this node's lessons that are about tools, not one project, learned in any project;
* ``common``: lessons common at this node (confirmed by other agents).

Shared and common lessons are written into every project's section rather than once into a
user-level ``~/.claude/CLAUDE.md`` import: CLAUDE.md and its imports are loaded *in full*, with no
budget, so lessons there would grow every session's context without bound, while ``MEMORY.md``'s
budget is enforced by :mod:`commons.render.memory_folder` (strongest first, the rest counted as
left out); and a lesson file deleted from a project's folder is a veto like any other.

A project is keyed by its main git root (:func:`commons.integrations.claude_code.project_at`), so
every worktree shares one folder, as in Claude Code. A project whose auto memory is off
(``autoMemoryEnabled: false``, ``CLAUDE_CODE_DISABLE_AUTO_MEMORY``) gets nothing; a project Claude
Code never ran in (no ``projects/<slug>/`` folder, no moved memory folder) is not created.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from commons.integrations.claude_code import ClaudeHome, auto_memory, project_at
from commons.render import memory_folder
from commons.render.memory_folder import Layer, RenderResult
from commons.render.target import Destination

TITLES = {
    "project": "Lessons from this project's past sessions (kept by commons)",
    "own": "Lessons from this agent's sessions in every project (kept by commons)",
}


@dataclass(frozen=True)
class ClaudeCodeTarget:
    claude: ClaudeHome
    environ: Mapping[str, str] = field(default_factory=dict, compare=False)
    name: str = "claude-code"
    _roots: dict[str, str] = field(default_factory=dict, compare=False, repr=False)  # workdir → project key

    @classmethod
    def locate(cls, environ: Mapping[str, str]) -> "ClaudeCodeTarget":
        return cls(ClaudeHome.locate(environ), dict(environ))

    def project_of(self, workdir: str) -> str:
        if workdir not in self._roots:
            self._roots[workdir] = str(project_at(workdir).root)
        return self._roots[workdir]

    def destinations(self, projects: Iterable[str]) -> Sequence[Destination]:
        found: dict[Path, Destination] = {}
        for key in sorted(set(projects)):
            if not key:
                continue
            project = project_at(key)
            memory = auto_memory(project, self.claude, environ=self.environ)
            ran_here = self.claude.project_folder(project.root).is_dir() or memory.folder.is_dir()
            if memory.enabled and ran_here and memory.folder not in found:
                found[memory.folder] = Destination(memory.folder, key, project.root.name)
        return tuple(found.values())

    def write(self, destination: Destination, layers: Sequence[Layer], previous_files: Iterable[str]) -> RenderResult:
        titled = [Layer(layer.name, layer.items, layer.title or TITLES.get(layer.name, "")) for layer in layers]
        return memory_folder.render(destination.folder, titled, previous_files)
