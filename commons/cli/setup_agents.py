"""`commons setup codex` and `commons setup gemini`: the MCP server in, lessons into the global file.

Two things, each idempotent, and `--undo` takes out exactly them:

1. `commons mcp` is registered as the MCP server ``commons`` in the agent's own config: Codex's
   ``$CODEX_HOME/config.toml`` gets a ``[mcp_servers.commons]`` block between two comment lines,
   Gemini's ``~/.gemini/settings.json`` gets ``mcpServers.commons`` (other keys kept in place).
   The file is copied to ``<file>.commons-backup`` first. Undo puts the backup back byte for byte
   when the file is still what setup wrote, else takes out the server alone.
2. The agent's global instructions file (``AGENTS.md`` / ``GEMINI.md``) becomes a render target:
   from the next `commons render` (and every night) its managed section holds the shared lessons
   (`commons.render.agents_md`); undo removes the section, and the person's lines stay as they were.

Sessions need no hook: ``$CODEX_HOME/sessions`` and ``~/.gemini/tmp`` are among the default
``[ingest] roots``, which the daemon polls. What setup did is recorded in
``<data>/integrations/<agent>.json``.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from commons.cli.context import Context, add_json_flag, emit
from commons.cli.setup_files import (
    BACKUP_SUFFIX, Edit, commons_executable, edit_file, home_env, load_record, save_record, sha256_of, undo_edit, write_file,
)  # fmt: skip
from commons.errors import CommonsError
from commons.integrations import claude_settings as cs
from commons.integrations import codex as codex_home
from commons.integrations import gemini as gemini_home
from commons.integrations.claude_code import ClaudeHome
from commons.node import agent_files
from commons.render import agents_md


@dataclass(frozen=True)
class Agent:
    """What setup touches for one agent."""

    name: str  # "codex", "gemini": the render target's and the record's name
    label: str
    config: Path  # where the MCP server is registered
    instructions: Path  # the global file lessons are rendered into
    load_bytes: int | None
    add_server: Callable[[str, str], str]  # (text, where) -> text
    remove_server: Callable[[str, str], str]

    @property
    def record(self) -> Path:
        return Path("integrations") / f"{self.name}.json"


def codex_agent() -> Agent:
    home = codex_home.CodexHome.locate()
    exe = commons_executable()
    return Agent(
        "codex", "Codex CLI", home.config_file, home.instructions_file, codex_home.LOAD_BYTES,
        lambda t, w: codex_home.with_mcp_server(t, w, exe[0], [*exe[1:], "mcp"], home_env()),
        codex_home.without_mcp_server,
    )  # fmt: skip


def gemini_agent() -> Agent:
    home = gemini_home.GeminiHome.locate()
    exe = commons_executable()
    entry = gemini_home.mcp_server_entry(exe[0], [*exe[1:], "mcp"], home_env())
    return Agent(
        "gemini", "Gemini CLI", home.settings_file, home.instructions_file, None,
        lambda t, w: cs.with_mcp_server(t, w, entry), cs.without_mcp_server,
    )  # fmt: skip


AGENTS = {"codex": codex_agent, "gemini": gemini_agent}


def installed_agents() -> dict[str, bool]:
    """Which agents this machine has (their folder exists or their command is on PATH), by the
    name `commons setup` knows them by."""
    claude = ClaudeHome.locate()
    return {
        "claude-code": claude.config_dir.is_dir() or shutil.which("claude") is not None,
        "codex": codex_home.CodexHome.locate().installed(),
        "gemini": gemini_home.GeminiHome.locate().installed(),
    }  # fmt: skip


def register(targets: argparse._SubParsersAction) -> None:
    """The `codex` and `gemini` targets of `commons setup`."""
    texts = {
        "codex": ("register `commons mcp` with Codex CLI and render lessons into ~/.codex/AGENTS.md",
                  "Add `[mcp_servers.commons]` to $CODEX_HOME/config.toml (default ~/.codex; backed up first "
                  "to config.toml.commons-backup; the rest of the file is kept byte for byte) and render the "
                  "shared lessons, at every `commons render` and every night, into a managed section of "
                  "$CODEX_HOME/AGENTS.md, the instructions Codex loads in every session (your own lines "
                  "there are never touched). Lessons of one project stay out of that file: Codex reaches "
                  "them through the MCP server. Codex's sessions are read from $CODEX_HOME/sessions. "
                  "Running it again changes nothing. Exits 2, changing nothing, on a config it cannot parse."),
        "gemini": ("register `commons mcp` with Gemini CLI and render lessons into ~/.gemini/GEMINI.md",
                   "Add `mcpServers.commons` to ~/.gemini/settings.json (backed up first to "
                   "settings.json.commons-backup; other keys are kept in place) and render the shared "
                   "lessons, at every `commons render` and every night, into a managed section of "
                   "~/.gemini/GEMINI.md, the context Gemini loads in every session (your own lines there "
                   "are never touched). Lessons of one project stay out of that file: Gemini reaches them "
                   "through the MCP server. Gemini's chats are read from ~/.gemini/tmp. Running it again "
                   "changes nothing. Exits 2, changing nothing, on a settings file it cannot parse."),
    }  # fmt: skip
    for name, (help_text, description) in texts.items():
        parser = targets.add_parser(name, help=help_text, description=description)
        parser.add_argument("--dry-run", action="store_true", help="print what would change, as a diff, and change nothing")
        parser.add_argument("--undo", action="store_true", help="remove what an earlier setup added, and only that")
        add_json_flag(parser)
        parser.set_defaults(handler=cmd_setup_agent, agent=name)


async def cmd_setup_agent(ctx: Context, args: argparse.Namespace) -> int:
    agent = AGENTS[args.agent]()
    record_path = ctx.home.data_dir / agent.record
    record = load_record(record_path)
    checkout = agents_md.checkout_of(agent.instructions)
    if checkout is not None and not args.undo:
        raise CommonsError(f"{agent.instructions} is inside the git checkout {checkout}: commons writes only an "
                           "agent's global file, never one a project would commit; move it out, then run this again")
    result = (_undo if args.undo else _install)(agent, record, record_path, dry_run=args.dry_run)
    if not args.dry_run:
        async with await ctx.open_store() as store:
            if args.undo:
                result["instructions"]["changed"] |= await agent_files.unregister(store, agent.name, ctx.now()) is not None
            else:
                target = agent_files.AgentFile(agent.name, agent.instructions, agent.load_bytes)
                result["instructions"]["changed"] = await agent_files.register(store, target, ctx.now())
    emit(args, result, lambda: _describe(agent, result))
    return 0


def _install(agent: Agent, record: dict, record_path: Path, *, dry_run: bool) -> dict:
    config = edit_file(agent.config, agent.add_server)
    result = _result(agent, "add", dry_run, config, instructions_changed=not record)
    if dry_run or not config.changes:
        return result
    backup = None
    if config.before is not None:
        backup = config.path.with_name(config.path.name + BACKUP_SUFFIX)
        write_file(backup, config.before)
    write_file(config.path, config.after)
    record["config"] = {"path": str(config.path), "backup": str(backup) if backup else None,
                        "sha256_after": sha256_of(config.after)}
    record["instructions"] = str(agent.instructions)
    save_record(record_path, record)
    result["config"]["backup"] = str(backup) if backup else None
    return result


def _undo(agent: Agent, record: dict, record_path: Path, *, dry_run: bool) -> dict:
    config, backup = undo_edit(record.get("config") or {}, agent.config, agent.remove_server)
    instructions = Path(record.get("instructions") or agent.instructions)
    section = edit_file(instructions, lambda t, w: agents_md.without_section(t, instructions))
    result = _result(agent, "remove", dry_run, config, instructions_changed=section.changes, section=section)
    if dry_run:
        return result
    if config.changes:
        write_file(config.path, config.after)
    if section.changes:
        agents_md.remove(instructions)
    if backup is not None:
        backup.unlink(missing_ok=True)
    record_path.unlink(missing_ok=True)
    return result


def _result(agent: Agent, verb: str, dry_run: bool, config: Edit, *, instructions_changed: bool,
            section: Edit | None = None) -> dict:
    edits = [e for e in (config, section) if e is not None and e.changes]
    return {
        "agent": agent.name, "action": verb, "dry_run": dry_run,
        "config": {"path": str(config.path), "changed": config.changes},
        "instructions": {"path": str(agent.instructions), "changed": instructions_changed},
        "diff": "".join(e.diff() for e in edits),
    }  # fmt: skip


def _describe(agent: Agent, result: dict) -> str:
    adding = result["action"] == "add"
    would = "would " if result["dry_run"] else ""
    config, instructions = result["config"], result["instructions"]
    if config["changed"]:
        lines = [f"{would}{'add' if adding else 'remove'} the MCP server `commons` in {config['path']}"]
        if config.get("backup"):
            lines.append(f"  backup of the previous file: {config['backup']}")
    else:
        lines = [f"MCP server `commons` {'already in' if adding else 'not in'} {config['path']}"]
    if adding:
        lines.append(f"{would}render shared lessons into {instructions['path']} at every `commons render` and night"
                     if instructions["changed"] or result["dry_run"] else
                     f"lessons already rendered into {instructions['path']}")
    else:
        lines.append(f"{would}stop rendering lessons into {instructions['path']}" + (
            " and remove its commons section" if result["diff"] and agents_md.BEGIN in result["diff"] else ""))
    if result["dry_run"] and result["diff"]:
        lines.append(result["diff"].rstrip("\n"))
    return "\n".join(lines)
