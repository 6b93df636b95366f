"""Where Codex CLI keeps its things, and the one edit `commons setup codex` makes to its config.

Codex keeps everything under ``$CODEX_HOME`` (``~/.codex`` unless moved): its sessions
(``sessions/YYYY/MM/DD/rollout-*.jsonl``, read by `commons.ingest.codex`), its global
instructions ``AGENTS.md`` (loaded in every session before the project's own ``AGENTS.md``;
commons renders its shared lessons there, `commons.render.agents_md`), and ``config.toml``, whose
``[mcp_servers.<name>]`` tables are the MCP servers it starts. Setup adds ``[mcp_servers.commons]``
as one block between two comment lines, so that `--undo` takes out exactly that block and nothing
of the person's.
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
        return self.folder / "AGENTS.md"

    @property
    def config_file(self) -> Path:
        return self.folder / "config.toml"

    @property
    def sessions(self) -> Path:
        return self.folder / "sessions"

    def installed(self) -> bool:
        """Codex has run here (its folder exists) or can (``codex`` is on PATH)."""
        return self.folder.is_dir() or shutil.which("codex") is not None


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
    """``text`` without the block setup added (and the blank line before it); the rest byte for byte."""
    start = text.find(BEGIN)
    if start < 0:
        return text
    stop = text.find(END, start)
    if stop < 0:
        raise SettingsError(f"{where} has the line `{BEGIN}` without `{END}`; restore it or remove the block")
    stop += len(END)
    if text.startswith("\n", stop):
        stop += 1
    if start >= 2 and text[:start].endswith("\n\n"):
        start -= 1
    return text[:start] + text[stop:]
