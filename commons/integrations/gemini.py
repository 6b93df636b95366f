"""Where Gemini CLI keeps its things, and how it decides which folders it trusts.

Gemini keeps its user files in ``~/.gemini`` (``$GEMINI_CLI_HOME/.gemini`` when that is set: the
variable stands for the home folder): the chats of each project (``tmp/<project>/chats/``, read by
`commons.ingest.gemini`), the global context file ``GEMINI.md`` (loaded in every session, before the
project's own, in trusted and untrusted folders alike; commons renders its shared lessons there,
`commons.render.agents_md`), and ``settings.json``, whose ``mcpServers`` object holds the MCP
servers it starts: `commons setup gemini` adds ``mcpServers.commons`` there with the same JSON
edits as for Claude Code's ``~/.claude.json`` (`commons.integrations.claude_settings`), which keep
every other key in place.

**Folder trust** (read in Gemini CLI 0.61's code): in a folder it does not trust, Gemini starts no
stdio MCP server, user-level ones included (``gemini mcp list`` shows them "Disabled"), and a
headless ``gemini -p`` refuses to run. A folder is trusted when ``security.folderTrust.enabled`` is
false in the settings (the feature off), when ``GEMINI_CLI_TRUST_WORKSPACE=true`` (what
``--skip-trust`` sets, for one session), or by the longest matching rule of ``trustedFolders.json``
(``$GEMINI_CLI_TRUSTED_FOLDERS_PATH``, else ``~/.gemini/trustedFolders.json``): a path mapped to
``TRUST_FOLDER`` (it and everything below), ``TRUST_PARENT`` (its parent folder and below) or
``DO_NOT_TRUST``. Links are followed on both sides. A folder no rule matches is not trusted.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from commons.integrations.claude_settings import SettingsError, parse_object

HOME_ENV = "GEMINI_CLI_HOME"
TRUSTED_FOLDERS_ENV = "GEMINI_CLI_TRUSTED_FOLDERS_PATH"
TRUST_WORKSPACE_ENV = "GEMINI_CLI_TRUST_WORKSPACE"


class TrustLevel(Enum):
    TRUST_FOLDER = "TRUST_FOLDER"
    TRUST_PARENT = "TRUST_PARENT"
    DO_NOT_TRUST = "DO_NOT_TRUST"


@dataclass(frozen=True)
class GeminiHome:
    folder: Path  # ~/.gemini, or $GEMINI_CLI_HOME/.gemini
    trusted_folders_file: Path

    @classmethod
    def locate(cls, environ: Mapping[str, str] | None = None) -> GeminiHome:
        env = os.environ if environ is None else environ
        home = Path(env[HOME_ENV]).expanduser() if env.get(HOME_ENV) else Path(env.get("HOME") or Path.home())
        folder = home / ".gemini"
        trusted = Path(env[TRUSTED_FOLDERS_ENV]).expanduser() if env.get(TRUSTED_FOLDERS_ENV) else folder / "trustedFolders.json"
        return cls(folder, trusted)

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


# -- folder trust ---------------------------------------------------------------------------------


def folder_trust_enabled(settings_text: str, where: str) -> bool:
    """``security.folderTrust.enabled`` of Gemini's user settings (default true)."""
    settings = parse_object(settings_text, where)
    security = settings.get("security") if isinstance(settings.get("security"), dict) else {}
    trust = security.get("folderTrust") if isinstance(security.get("folderTrust"), dict) else {}
    return trust.get("enabled", True) is not False


def trust_rules(text: str, where: str) -> dict[str, TrustLevel]:
    """The rules of a ``trustedFolders.json`` (path → level); the person's to fix when it is not one."""
    rules = parse_object(text, where)
    out = {}
    for path, level in rules.items():
        try:
            out[path] = TrustLevel(level)
        except ValueError:
            raise SettingsError(f"{where}: {path!r} has the trust level {level!r}, which Gemini does not know; "
                                "fix it, then run this again") from None
    return out


def is_trusted(folder: Path, rules: Mapping[str, TrustLevel]) -> bool | None:
    """Gemini's answer for ``folder`` from ``rules``: the longest rule whose folder holds it wins;
    None when no rule matches (Gemini then does not trust it)."""
    where = Path(os.path.realpath(folder))
    best, level = -1, None
    for rule, trust in rules.items():
        base = Path(rule).parent if trust is TrustLevel.TRUST_PARENT else Path(rule)
        base = Path(os.path.realpath(base))
        if (where == base or base in where.parents) and len(rule) > best:
            best, level = len(rule), trust
    if level is None:
        return None
    return level is not TrustLevel.DO_NOT_TRUST


def with_trusted(text: str, where: str, folders: Sequence[Path]) -> str:
    """``text`` with each folder trusted (``TRUST_FOLDER``), written as Gemini writes the file
    (two-space JSON); ``text`` itself when each is trusted already."""
    rules = parse_object(text, where)
    trust_rules(text, where)  # refuse a file Gemini would refuse
    added = {str(f): TrustLevel.TRUST_FOLDER.value for f in folders if rules.get(str(f)) != TrustLevel.TRUST_FOLDER.value}
    if not added:
        return text
    return json.dumps({**rules, **added}, indent=2) + ("\n" if text.endswith("\n") else "")


def without_trusted(text: str, where: str, folders: Sequence[str]) -> str:
    """``text`` without the ``TRUST_FOLDER`` rules setup added for ``folders`` (a rule the person
    changed since is theirs, and stays)."""
    rules = parse_object(text, where)
    kept = {k: v for k, v in rules.items() if not (k in folders and v == TrustLevel.TRUST_FOLDER.value)}
    if kept == rules:
        return text
    return json.dumps(kept, indent=2) + ("\n" if text.endswith("\n") else "")
