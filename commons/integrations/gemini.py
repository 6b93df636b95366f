"""Where Gemini CLI keeps its things.

Gemini keeps its user files in ``~/.gemini``: the chats of each project
(``tmp/<project hash>/chats/session-*.json``, read by `commons.ingest.gemini`), the global context
file ``GEMINI.md`` (loaded in every session, before the project's own; commons renders its shared
lessons there, `commons.render.agents_md`), and ``settings.json``, whose ``mcpServers`` object
holds the MCP servers it starts: `commons setup gemini` adds ``mcpServers.commons`` there with the
same JSON edits as for Claude Code's ``~/.claude.json`` (`commons.integrations.claude_settings`),
which keep every other key in place.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GeminiHome:
    folder: Path

    @classmethod
    def locate(cls) -> GeminiHome:
        return cls(Path("~/.gemini").expanduser())

    @property
    def instructions_file(self) -> Path:
        return self.folder / "GEMINI.md"

    @property
    def settings_file(self) -> Path:
        return self.folder / "settings.json"

    @property
    def chats(self) -> Path:
        return self.folder / "tmp"

    def installed(self) -> bool:
        """Gemini has run here (its folder exists) or can (``gemini`` is on PATH)."""
        return self.folder.is_dir() or shutil.which("gemini") is not None


def mcp_server_entry(command: str, args: Sequence[str], env: Mapping[str, str]) -> dict:
    """``mcpServers.commons`` as Gemini's settings spell a stdio server (no ``type`` key)."""
    entry: dict = {"command": command, "args": list(args)}
    if env:
        entry["env"] = dict(env)
    return entry
