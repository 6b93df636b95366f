"""Edits to Claude Code's JSON files, as text in and text out: the `SessionEnd` hook in
``settings.json`` and the user-scope MCP server in ``.claude.json``.

Every edit parses the file, changes one entry and writes the object back in the file's own
indentation, so the person's other keys, hooks and their order are kept (Python dicts keep insertion
order). A file that is not a JSON object, or whose ``hooks`` is not shaped as Claude Code documents
it, is refused with :class:`SettingsError` naming the file and the place: commons never rewrites a
file it does not understand. Writing, backups and the record of what was added are the caller's.

Claude Code's hook format: ``{"hooks": {"SessionEnd": [{"matcher": …, "hooks": [{"type":
"command", "command": "…", "timeout": 10}]}]}}`` (the matcher is optional and matches every reason).
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from typing import Any

from commons.errors import CommonsError

SESSION_END = "SessionEnd"
HOOK_ARGS = ("hook", "session-end")  # what follows the commons executable in our hook's command
MCP_NAME = "commons"


class SettingsError(CommonsError):
    """A Claude Code file commons would edit cannot be parsed: the person's file, not commons; it is
    left as it is (exit code 2)."""

    exit_code = 2


@dataclass(frozen=True)
class Layout:
    """How a JSON file is written, so an edited file looks like the person's."""

    indent: int | str | None  # spaces, a tab, or None for a one-line file
    trailing_newline: bool

    @classmethod
    def of(cls, text: str) -> "Layout":
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                lead = line[: len(line) - len(stripped)]
                return cls(indent="\t" if lead.startswith("\t") else len(lead), trailing_newline=text.endswith("\n"))
        one_line = bool(text.strip()) and "\n" not in text.strip()
        return cls(indent=None if one_line else 2, trailing_newline=text.endswith("\n") or not text.strip())

    def dump(self, value: dict[str, Any]) -> str:
        text = json.dumps(value, indent=self.indent, ensure_ascii=False)
        return text + "\n" if self.trailing_newline else text


def parse_object(text: str, where: str) -> dict[str, Any]:
    """The JSON object in ``text`` (an empty file is an empty object)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as error:
        raise SettingsError(f"{where} is not valid JSON ({error}); fix or move it, then run this again") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{where} holds a JSON {type(value).__name__}, not an object; fix it, then run this again")
    return value


def is_commons_hook(command: object) -> bool:
    """Whether a hook command runs `commons hook session-end` (from any install of commons, with or
    without environment assignments before it)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i, word in enumerate(words):
        name = os.path.basename(word)
        if name in ("commons", "commons.exe") and tuple(words[i + 1 : i + 3]) == HOOK_ARGS:
            return True
        if word == "-m" and words[i + 1 : i + 2] == ["commons"] and tuple(words[i + 2 : i + 4]) == HOOK_ARGS:
            return True
    return False


def _event_groups(settings: dict[str, Any], event: str, where: str) -> list[Any] | None:
    hooks = settings.get("hooks")
    if hooks is None:
        return None
    if not isinstance(hooks, dict):
        raise SettingsError(f'{where}: "hooks" is not an object; fix it, then run this again')
    groups = hooks.get(event)
    if groups is None:
        return None
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise SettingsError(f'{where}: "hooks.{event}" is not a list of objects; fix it, then run this again')
    for n, group in enumerate(groups):
        if not isinstance(group.get("hooks", []), list):
            raise SettingsError(f'{where}: "hooks.{event}[{n}].hooks" is not a list; fix it, then run this again')
    return groups


def commons_hooks(text: str, where: str, event: str = SESSION_END) -> list[str]:
    """The commands of the commons hooks already in a settings file."""
    groups = _event_groups(parse_object(text, where), event, where) or []
    return [
        h["command"] for g in groups for h in g.get("hooks", []) if isinstance(h, dict) and is_commons_hook(h.get("command"))
    ]


def with_hook(text: str, where: str, command: str, timeout: int, event: str = SESSION_END) -> str:
    """``text`` with a hook group running ``command`` appended to ``hooks.<event>``; ``text``
    itself when a commons hook is there already."""
    settings = parse_object(text, where)
    groups = _event_groups(settings, event, where)
    if groups and any(is_commons_hook(h.get("command")) for g in groups for h in g.get("hooks", []) if isinstance(h, dict)):
        return text
    entry = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    settings.setdefault("hooks", {}).setdefault(event, []).append(entry)
    return Layout.of(text).dump(settings)


def without_hook(text: str, where: str, event: str = SESSION_END) -> str:
    """``text`` without commons hooks in ``hooks.<event>``: a group left empty goes, and so do the
    event and ``hooks`` keys when commons' hook was all they held. ``text`` itself if none is there."""
    settings = parse_object(text, where)
    groups = _event_groups(settings, event, where)
    if not groups:
        return text
    kept_groups, removed = [], False
    for group in groups:
        handlers = group.get("hooks", [])
        kept = [h for h in handlers if not (isinstance(h, dict) and is_commons_hook(h.get("command")))]
        if len(kept) != len(handlers):
            removed = True
            if not kept:
                continue
            group = {**group, "hooks": kept}
        kept_groups.append(group)
    if not removed:
        return text
    hooks = settings["hooks"]
    if kept_groups:
        hooks[event] = kept_groups
    else:
        del hooks[event]
        if not hooks:
            del settings["hooks"]
    return Layout.of(text).dump(settings)


def mcp_server(text: str, where: str, name: str = MCP_NAME) -> dict[str, Any] | None:
    """The user-scope MCP server ``name`` in a ``.claude.json``, or None."""
    servers = parse_object(text, where).get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise SettingsError(f'{where}: "mcpServers" is not an object; fix it, then run this again')
    found = (servers or {}).get(name)
    return found if isinstance(found, dict) else None


def with_mcp_server(text: str, where: str, server: dict[str, Any], name: str = MCP_NAME) -> str:
    """``text`` with ``mcpServers.<name>`` set to ``server`` (``text`` itself if one is there)."""
    if mcp_server(text, where, name) is not None:
        return text
    config = parse_object(text, where)
    config.setdefault("mcpServers", {})[name] = server
    return Layout.of(text).dump(config)


def without_mcp_server(text: str, where: str, name: str = MCP_NAME) -> str:
    """``text`` without ``mcpServers.<name>``; an ``mcpServers`` left empty goes too."""
    if mcp_server(text, where, name) is None:
        return text
    config = parse_object(text, where)
    del config["mcpServers"][name]
    if not config["mcpServers"]:
        del config["mcpServers"]
    return Layout.of(text).dump(config)
