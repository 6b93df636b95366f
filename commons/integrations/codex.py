"""Where Codex CLI keeps its things, and the one edit `commons setup codex` makes to its config.

Codex keeps everything under ``$CODEX_HOME`` (``~/.codex`` unless moved): its sessions
(``sessions/YYYY/MM/DD/rollout-*.jsonl``, read by `commons.ingest.codex`), its global
instructions ``AGENTS.md`` (loaded in every session before the project's own ``AGENTS.md``;
commons renders its shared lessons there, `commons.render.agents_md`) — or, while it holds anything
but blank lines, ``AGENTS.override.md`` beside it, which Codex then reads *instead* (checked with
Codex 0.171: `instructions_in_force`) — and ``config.toml``, whose ``[mcp_servers.<name>]`` tables
are the MCP servers it starts. Setup adds ``[mcp_servers.commons]`` as one block between two comment
lines. Codex itself writes into the file too (``codex features enable``, the TUI's ``[tui]``
notices): a table it adds after ours lands *inside* the block, before the closing comment, so
`--undo` takes out our table and the two comment lines, and leaves every other table where it is.
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commons.integrations.claude_settings import MCP_NAME, SettingsError

HOME_ENV = "CODEX_HOME"
# Codex reads at most this many bytes of instructions (its `project_doc_max_bytes` default, 32 KiB).
LOAD_BYTES = 32 * 1024
INSTRUCTIONS = "AGENTS.md"
OVERRIDE = "AGENTS.override.md"  # read instead of AGENTS.md while it is not blank
BEGIN = "# commons: begin (added by `commons setup codex`; `commons setup codex --undo` removes it)"
END = "# commons: end"


@dataclass(frozen=True)
class CodexHome:
    folder: Path

    @classmethod
    def locate(cls, environ: Mapping[str, str] | None = None) -> CodexHome:
        environ = os.environ if environ is None else environ
        return cls(Path(environ.get(HOME_ENV) or "~/.codex").expanduser())

    @property
    def instructions_file(self) -> Path:
        """The global instructions Codex reads now (`instructions_in_force`)."""
        return instructions_in_force(self.folder / INSTRUCTIONS)

    @property
    def override_file(self) -> Path:
        return self.folder / OVERRIDE

    @property
    def config_file(self) -> Path:
        return self.folder / "config.toml"

    @property
    def sessions(self) -> Path:
        return self.folder / "sessions"

    def installed(self) -> bool:
        """Codex has run here (its folder exists) or can (``codex`` is on PATH)."""
        return self.folder.is_dir() or shutil.which("codex") is not None


def instructions_in_force(agents_md: Path) -> Path:
    """The file Codex reads for the global ``AGENTS.md``: ``AGENTS.override.md`` beside it when that
    holds more than blank lines, else ``AGENTS.md`` itself."""
    override = agents_md.with_name(OVERRIDE)
    try:
        if override.read_text(encoding="utf-8", errors="replace").strip():
            return override
    except OSError:
        pass
    return agents_md.with_name(INSTRUCTIONS)


def _parse(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{where} is not valid TOML ({error}); fix it, then run this again") from None


def mcp_server(text: str, where: str) -> dict[str, Any] | None:
    servers = _parse(text, where).get("mcp_servers")
    server = servers.get(MCP_NAME) if isinstance(servers, dict) else None
    return server if isinstance(server, dict) else None


def _toml(value: Any) -> str:
    """A TOML value of strings, lists of strings and tables of strings (JSON's string escapes are
    TOML's)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__} (API misuse)")


def with_mcp_server(text: str, where: str, command: str, args: Sequence[str], env: Mapping[str, str]) -> str:
    """``text`` with ``[mcp_servers.commons]`` appended (``text`` itself if a server of that name is there)."""
    if mcp_server(text, where) is not None:
        return text
    lines = [BEGIN, f"[mcp_servers.{MCP_NAME}]", f"command = {_toml(command)}", f"args = {_toml(list(args))}"]
    if env:
        lines.append(f"env = {_toml(dict(env))}")
    lines.append(END)
    block = "\n".join(lines) + "\n"
    if not text:
        return block
    return text + ("\n" if text.endswith("\n") else "\n\n") + block


def without_mcp_server(text: str, where: str) -> str:
    """``text`` without what setup added: the two comment lines and the ``[mcp_servers.commons]``
    table between them (with the keys Codex may have added to it), and the blank line before the
    block. A table Codex wrote between our table and the closing comment stays, as do the bytes
    outside the block."""
    start = text.find(BEGIN)
    if start < 0:
        return text
    stop = text.find(END, start)
    if stop < 0:
        raise SettingsError(f"{where} has the line `{BEGIN}` without `{END}`; restore it or remove the block")
    stop += len(END)
    if text.startswith("\n", stop):
        stop += 1
    inside = text[start:stop].splitlines(keepends=True)[1:-1]  # between the two comment lines
    kept: list[str] = []
    ours = False
    for line in inside:
        header = line.strip()
        if header.startswith("["):
            ours = header.replace(" ", "") in (f"[mcp_servers.{MCP_NAME}]", f'[mcp_servers."{MCP_NAME}"]') or (
                header.replace(" ", "").startswith(f"[mcp_servers.{MCP_NAME}."))  # its own sub-tables
        if not ours:
            kept.append(line)
    while kept and not kept[0].strip():
        kept.pop(0)
    if not kept and start >= 2 and text[:start].endswith("\n\n"):
        start -= 1
    return text[:start] + "".join(kept) + text[stop:]
