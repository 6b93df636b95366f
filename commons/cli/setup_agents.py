"""`commons setup codex` and `commons setup gemini`: the MCP server in, lessons into the global file.

Two things, each idempotent, and `--undo` takes out exactly them:

1. `commons mcp` is registered as the MCP server ``commons`` in the agent's own config: Codex's
   ``$CODEX_HOME/config.toml`` gets a ``[mcp_servers.commons]`` block between two comment lines,
   Gemini's ``~/.gemini/settings.json`` gets ``mcpServers.commons`` (other keys kept in place).
   The file is copied to ``<file>.commons-backup`` first. Undo puts the backup back byte for byte
   when the file is still what setup wrote, else takes out the server alone (and, in Codex's
   config, leaves the tables Codex itself wrote into the block).
2. The agent's global instructions file (``AGENTS.md`` / ``GEMINI.md``) becomes a render target:
   from the next `commons render` (and every night) its managed section holds the shared lessons
   (`commons.render.agents_md`); undo removes the section, and the person's lines stay as they were.
   While Codex's ``AGENTS.override.md`` is not blank, Codex reads it instead of ``AGENTS.md``, and
   the lessons are rendered there (setup says so).
3. Gemini only: it starts MCP servers only in folders it trusts. Setup says which folders those are
   and, with ``--trust-folder PATH``, trusts more in ``trustedFolders.json`` (undone by ``--undo``).

Sessions need no hook: ``$CODEX_HOME/sessions`` and ``~/.gemini/tmp`` are among the default
``[ingest] roots``, which the daemon polls. What setup did is recorded in
``<data>/integrations/<agent>.json``.
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from commons.cli.context import Context, add_json_flag, emit
from commons.cli.setup_files import (
    Edit, commons_executable, edit_file, home_env, load_record, read_text, save_record, sha256_of, undo_edit,
    write_backup, write_file,
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
    read_instead: Path | None = None  # a file the agent reads instead of `instructions` now (Codex's override)
    also_rendered: tuple[Path, ...] = ()  # other files a render may have written, cleaned by undo
    gemini: gemini_home.GeminiHome | None = None  # folder trust is Gemini's alone

    @property
    def record(self) -> Path:
        return Path("integrations") / f"{self.name}.json"


def codex_agent() -> Agent:
    home = codex_home.CodexHome.locate()
    exe = commons_executable()
    registered = home.folder / codex_home.INSTRUCTIONS
    in_force = home.instructions_file
    return Agent(
        "codex", "Codex CLI", home.config_file, registered, codex_home.LOAD_BYTES,
        lambda t, w: codex_home.with_mcp_server(t, w, exe[0], [*exe[1:], "mcp"], home_env()),
        codex_home.without_mcp_server, read_instead=in_force if in_force != registered else None,
        also_rendered=(home.override_file,),
    )  # fmt: skip


def gemini_agent() -> Agent:
    home = gemini_home.GeminiHome.locate()
    exe = commons_executable()
    entry = gemini_home.mcp_server_entry(exe[0], [*exe[1:], "mcp"], home_env())
    return Agent(
        "gemini", "Gemini CLI", home.settings_file, home.instructions_file, None,
        lambda t, w: cs.with_mcp_server(t, w, entry), cs.without_mcp_server, gemini=home,
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
                  "there are never touched; while AGENTS.override.md is not blank, Codex reads it instead, "
                  "and lessons go there). Lessons of one project stay out of that file: Codex reaches "
                  "them through the MCP server. Codex's sessions are read from $CODEX_HOME/sessions. "
                  "Running it again changes nothing. Exits 2, changing nothing, on a config it cannot parse."),
        "gemini": ("register `commons mcp` with Gemini CLI and render lessons into ~/.gemini/GEMINI.md",
                   "Add `mcpServers.commons` to $GEMINI_CLI_HOME/.gemini/settings.json (default ~/.gemini; backed up first to "
                   "settings.json.commons-backup; other keys are kept in place) and render the shared "
                   "lessons, at every `commons render` and every night, into a managed section of "
                   "~/.gemini/GEMINI.md, the context Gemini loads in every session (your own lines there "
                   "are never touched). Lessons of one project stay out of that file: Gemini reaches them "
                   "through the MCP server. Gemini's chats are read from ~/.gemini/tmp. Gemini starts MCP "
                   "servers only in folders it trusts: setup lists them, and --trust-folder PATH trusts one "
                   "more (in trustedFolders.json; --undo takes it out). Running it again "
                   "changes nothing. Exits 2, changing nothing, on a settings file it cannot parse."),
    }  # fmt: skip
    for name, (help_text, description) in texts.items():
        parser = targets.add_parser(name, help=help_text, description=description)
        parser.add_argument("--dry-run", action="store_true", help="print what would change, as a diff, and change nothing")
        parser.add_argument("--undo", action="store_true", help="remove what an earlier setup added, and only that")
        if name == "gemini":
            parser.add_argument("--trust-folder", action="append", default=[], metavar="PATH", type=_folder,
                                help="trust this folder (and those below it) in Gemini, so it starts commons "
                                     "there; repeatable")
        add_json_flag(parser)
        parser.set_defaults(handler=cmd_setup_agent, agent=name)


def _folder(text: str) -> Path:
    path = Path(os.path.abspath(os.path.expanduser(text)))
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a folder")
    return path


async def cmd_setup_agent(ctx: Context, args: argparse.Namespace) -> int:
    agent = AGENTS[args.agent]()
    record_path = ctx.home.data_dir / agent.record
    record = load_record(record_path)
    checkout = agents_md.checkout_of(agent.instructions)
    if checkout is not None and not args.undo:
        raise CommonsError(f"{agent.instructions} is inside the git checkout {checkout}: commons writes only an "
                           "agent's global file, never one a project would commit; move it out, then run this again")
    if args.undo:
        result = _undo(agent, record, record_path, dry_run=args.dry_run)
    else:
        result = _install(agent, record, record_path, dry_run=args.dry_run, trust=getattr(args, "trust_folder", []))
    if not args.dry_run:
        async with await ctx.open_store() as store:
            if args.undo:
                result["instructions"]["changed"] |= await agent_files.unregister(store, agent.name, ctx.now()) is not None
            else:
                target = agent_files.AgentFile(agent.name, agent.instructions, agent.load_bytes)
                result["instructions"]["changed"] = await agent_files.register(store, target, ctx.now())
    emit(args, result, lambda: _describe(agent, result))
    return 0


def _install(agent: Agent, record: dict, record_path: Path, *, dry_run: bool, trust: list[Path]) -> dict:
    config = edit_file(agent.config, agent.add_server)
    trusting = None
    if agent.gemini is not None:
        trusting = edit_file(agent.gemini.trusted_folders_file, lambda t, w: gemini_home.with_trusted(t, w, trust))
    result = _result(agent, "add", dry_run, config, instructions_changed=not record, section=trusting)
    if agent.gemini is not None:
        result["trust"] = _trust_state(agent.gemini, trusting, trust)
    if dry_run:
        return result
    if trusting is not None and trusting.changes:
        write_file(trusting.path, trusting.after)
        noted = record.setdefault("trusted", {"path": str(trusting.path), "folders": []})
        noted["folders"] = sorted({*noted["folders"], *map(str, trust)})
    if config.changes:
        backup = write_backup(config)
        write_file(config.path, config.after)
        record["config"] = {"path": str(config.path), "backup": str(backup) if backup else None,
                            "sha256_after": sha256_of(config.after)}
        result["config"]["backup"] = str(backup) if backup else None
    record["instructions"] = str(agent.instructions)
    save_record(record_path, record)
    return result


def _trust_state(gemini: gemini_home.GeminiHome, trusting: Edit | None, asked: list[Path]) -> dict:
    """Which folders Gemini will start commons in, once this setup is done."""
    settings_file = gemini.settings_file
    enabled = gemini_home.folder_trust_enabled(read_text(settings_file), str(settings_file))
    after = trusting.after if trusting is not None and trusting.after is not None else b""
    rules = gemini_home.trust_rules(after.decode("utf-8"), str(gemini.trusted_folders_file))
    trusted = sorted(p for p, level in rules.items() if level is not gemini_home.TrustLevel.DO_NOT_TRUST)
    return {"folder_trust": enabled, "file": str(gemini.trusted_folders_file), "trusted": trusted,
            "added": [str(f) for f in asked if trusting is not None and trusting.changes]}


def _undo(agent: Agent, record: dict, record_path: Path, *, dry_run: bool) -> dict:
    config, backup = undo_edit(record.get("config") or {}, agent.config, agent.remove_server)
    registered = Path(record.get("instructions") or agent.instructions)
    files = list(dict.fromkeys([registered, *agent.also_rendered]))
    sections = [edit_file(f, lambda t, w, f=f: agents_md.without_section(t, f)) for f in files]
    noted = record.get("trusted") or {}
    trusting = None
    if noted:
        trusting = edit_file(Path(noted["path"]), lambda t, w: gemini_home.without_trusted(t, w, noted["folders"]))
    more = [e for e in (*sections, trusting) if e is not None]
    result = _result(agent, "remove", dry_run, config, instructions_changed=any(e.changes for e in sections), more=more)
    if dry_run:
        return result
    if config.changes:
        write_file(config.path, config.after)
    for section in sections:
        if section.changes:
            agents_md.remove(section.path)
    if trusting is not None and trusting.changes:
        write_file(trusting.path, trusting.after)
    if backup is not None:
        backup.unlink(missing_ok=True)
    record_path.unlink(missing_ok=True)
    return result


def _result(agent: Agent, verb: str, dry_run: bool, config: Edit, *, instructions_changed: bool,
            section: Edit | None = None, more: Sequence[Edit] = ()) -> dict:
    edits = [e for e in (config, section, *more) if e is not None and e.changes]
    return {
        "agent": agent.name, "action": verb, "dry_run": dry_run,
        "config": {"path": str(config.path), "changed": config.changes},
        "instructions": {"path": str(agent.instructions), "changed": instructions_changed,
                         "read_instead": str(agent.read_instead) if agent.read_instead else None},
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
        target = instructions["read_instead"] or instructions["path"]
        lines.append(f"{would}render shared lessons into {target} at every `commons render` and night"
                     if instructions["changed"] or result["dry_run"] else
                     f"lessons already rendered into {target}")
        if instructions["read_instead"]:
            lines.append(f"  Codex reads {instructions['read_instead']} instead of {instructions['path']} while it is "
                         "not blank, so the lessons go there; empty it to have Codex read AGENTS.md again")
        if "trust" in result:
            lines += _describe_trust(result["trust"], would)
    else:
        lines.append(f"{would}stop rendering lessons into {instructions['path']}" + (
            " and remove its commons section" if result["diff"] and agents_md.BEGIN in result["diff"] else ""))
    if result["dry_run"] and result["diff"]:
        lines.append(result["diff"].rstrip("\n"))
    return "\n".join(lines)


def _describe_trust(trust: dict, would: str) -> list[str]:
    if not trust["folder_trust"]:
        return ["Gemini's folder trust is off (security.folderTrust.enabled: false): it starts commons in every folder"]
    lines = [f"{would}trust {folder} in {trust['file']}" for folder in trust["added"]]
    if trust["trusted"]:
        lines.append(f"Gemini starts commons only in folders it trusts: {', '.join(trust['trusted'])} (and below)")
    else:
        lines.append("Gemini starts commons only in folders it trusts, and trusts none yet: "
                     "`commons setup gemini --trust-folder ~/code` trusts ~/code and below")
    lines.append("  elsewhere: trust the folder when Gemini asks, or run `gemini --skip-trust` for one session")
    return lines
