"""`commons setup claude-code`: install (or `--undo`) the SessionEnd hook and the MCP server.
(`commons setup codex` and `commons setup gemini` are in `commons.cli.setup_agents`.)

Two edits, each idempotent:

1. ``hooks.SessionEnd`` in Claude Code's user ``settings.json`` gets a group running
   `commons hook session-end` (with this home's ``COMMONS_HOME``, if one is set). The file is copied
   to ``settings.json.commons-backup`` first; nothing else in it moves.
2. `commons mcp` is registered as the user-scope MCP server ``commons``: through
   ``claude mcp add --scope user`` when the ``claude`` command is on PATH, else by adding
   ``mcpServers.commons`` to ``~/.claude.json``, the file that command writes.

What was added is recorded in ``<data>/integrations/claude-code.json``. `--undo` removes exactly
that: when ``settings.json`` is byte for byte what setup wrote, the backup is put back byte for
byte; when it changed since, only the commons hook is taken out of it.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
from pathlib import Path

from commons import identity
from commons.cli.context import Context, add_json_flag, emit
from commons.cli.setup_files import (
    Edit, commons_executable, edit_file, home_env, load_record, read_text, save_record, sha256_of, undo_edit,
    write_backup, write_file,
)  # fmt: skip
from commons.errors import CommonsError
from commons.integrations import claude_settings as cs
from commons.integrations.claude_code import ClaudeHome

HOOK_TIMEOUT = 10  # seconds: raises Claude Code's 1.5 s SessionEnd budget so the hook can detach
RECORD = Path("integrations") / "claude-code.json"
CLAUDE_CLI_TIMEOUT = 60.0


def register(subparsers: argparse._SubParsersAction) -> None:
    setup = subparsers.add_parser(
        "setup",
        help="connect commons to an agent (claude-code, codex, gemini)",
        description="Connect commons to a coding agent so that its sessions reach commons as they end.",
    )
    setup.set_defaults(_help=setup)
    targets = setup.add_subparsers(dest="target", metavar="AGENT")
    claude = targets.add_parser(
        "claude-code",
        help="add the SessionEnd hook and the `commons mcp` server to Claude Code",
        description=(
            "Add a SessionEnd hook running `commons hook session-end` to Claude Code's user "
            "settings.json (backed up first to settings.json.commons-backup; other hooks and keys "
            "are kept in place) and register `commons mcp` as the user-scope MCP server `commons` "
            "(through `claude mcp add --scope user` when `claude` is on PATH, else in ~/.claude.json). "
            "Running it again changes nothing. Respects CLAUDE_CONFIG_DIR. Exits 2, changing "
            "nothing, on a settings file it cannot parse."
        ),
    )
    claude.add_argument("--dry-run", action="store_true", help="print what would change, as a diff, and change nothing")
    claude.add_argument("--undo", action="store_true", help="remove what an earlier setup added, and only that")
    add_json_flag(claude)
    claude.set_defaults(handler=cmd_claude_code)
    from commons.cli import setup_agents  # it builds on this module's file edits

    setup_agents.register(targets)


# -- what runs ------------------------------------------------------------------------------------


def hook_command() -> str:
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in home_env().items())
    command = shlex.join([*commons_executable(), *cs.HOOK_ARGS])
    return f"{env} {command}" if env else command


def mcp_server_entry() -> dict:
    exe = commons_executable()
    return {"type": "stdio", "command": exe[0], "args": [*exe[1:], "mcp"], "env": home_env()}


def claude_mcp_add() -> list[str]:
    # The name goes before `-e`: `-e` takes every value up to `--`, so `-e K=V NAME` would read
    # NAME as a second variable (anthropics/claude-code#62332).
    env = [arg for k, v in home_env().items() for arg in ("-e", f"{k}={v}")]
    return ["claude", "mcp", "add", "--scope", "user", cs.MCP_NAME, *env, "--", *commons_executable(), "mcp"]


CLAUDE_MCP_REMOVE = ["claude", "mcp", "remove", "--scope", "user", cs.MCP_NAME]


# -- files ----------------------------------------------------------------------------------------


# -- the command ----------------------------------------------------------------------------------


def cmd_claude_code(ctx: Context, args: argparse.Namespace) -> int:
    claude = ClaudeHome.locate()
    record_path = ctx.home.data_dir / RECORD
    record = load_record(record_path)
    if args.undo:
        result = _undo(claude, record, record_path, dry_run=args.dry_run)
    else:
        result = _install(claude, record, record_path, dry_run=args.dry_run)
        result["home_initialised"] = identity.exists(ctx.home)
    emit(args, result, lambda: _describe(result))
    return 0


def _install(claude: ClaudeHome, record: dict, record_path: Path, *, dry_run: bool) -> dict:
    settings = edit_file(claude.settings_file, lambda t, w: cs.with_hook(t, w, hook_command(), HOOK_TIMEOUT))
    via_cli = shutil.which("claude") is not None
    config_text = read_text(claude.user_config_file)
    registered = _registered(config_text, claude.user_config_file, strict=not via_cli)
    mcp_file = None if via_cli or registered else edit_file(claude.user_config_file, lambda t, w: cs.with_mcp_server(t, w, mcp_server_entry()))
    command = claude_mcp_add() if via_cli and not registered else None
    result = _result(dry_run, settings, mcp_file, command, "add")
    if dry_run:
        return result
    # The MCP step first: when `claude mcp add` fails, nothing has been changed yet.
    if command:
        if _run_claude(command, tolerate="already exists"):
            record["mcp"] = {"via": "claude", "name": cs.MCP_NAME}
        else:  # registered where commons did not look (another config): not ours to undo
            result["mcp"] = {"changed": False}
    elif mcp_file is not None and mcp_file.changes:
        write_file(mcp_file.path, mcp_file.after)
        record["mcp"] = {
            "via": "file", "path": str(mcp_file.path), "name": cs.MCP_NAME, "created": mcp_file.before is None,
        }  # fmt: skip
    save_record(record_path, record)
    if settings.changes:
        backup = write_backup(settings)
        write_file(settings.path, settings.after)
        record["settings"] = {
            "path": str(settings.path), "backup": str(backup) if backup else None,
            "sha256_after": sha256_of(settings.after), "hook_command": hook_command(),
        }  # fmt: skip
        result["settings"]["backup"] = str(backup) if backup else None
        save_record(record_path, record)
    return result


def _undo(claude: ClaudeHome, record: dict, record_path: Path, *, dry_run: bool) -> dict:
    settings, backup = undo_edit(record.get("settings") or {}, claude.settings_file, cs.without_hook)
    mcp = record.get("mcp") or {}
    via_cli = mcp.get("via") == "claude" and shutil.which("claude") is not None
    config_text = read_text(claude.user_config_file)
    registered = _registered(config_text, claude.user_config_file, strict=not via_cli)
    mcp_file = None
    if not via_cli and (mcp or _is_ours(config_text, claude.user_config_file)):
        mcp_file = edit_file(Path(mcp.get("path") or claude.user_config_file), cs.without_mcp_server)
        if mcp.get("created") and mcp_file.after is not None and not cs.parse_object(mcp_file.after.decode(), ""):
            mcp_file = Edit(mcp_file.path, mcp_file.before, None)  # setup made the file; it goes with the server
    command = CLAUDE_MCP_REMOVE if via_cli and registered else None
    result = _result(dry_run, settings, mcp_file, command, "remove")
    if dry_run:
        return result
    # The MCP step first: when `claude mcp remove` fails, the settings and the record are intact.
    if command:
        _run_claude(command)
    elif mcp_file is not None and mcp_file.changes:
        write_file(mcp_file.path, mcp_file.after)
    if settings.changes:
        write_file(settings.path, settings.after)
    if backup is not None:
        backup.unlink(missing_ok=True)
    record_path.unlink(missing_ok=True)
    try:
        record_path.parent.rmdir()  # the integrations folder, if setup's record was all it held
    except OSError:
        pass
    return result


def _registered(config_text: str, path: Path, *, strict: bool) -> bool:
    """Whether the user-scope server ``commons`` is there. ``claude`` itself reads the file when it
    is on PATH, so only the file route refuses an unparseable one."""
    try:
        return cs.mcp_server(config_text, str(path)) is not None
    except cs.SettingsError:
        if strict:
            raise
        return False


def _is_ours(config_text: str, path: Path) -> bool:
    """Whether ``mcpServers.commons`` runs commons (undo without a record removes only that)."""
    try:
        server = cs.mcp_server(config_text, str(path))
    except cs.SettingsError:
        return False
    words = [str(server.get("command", "")), *map(str, server.get("args", []))] if server else []
    return any(Path(w).name in ("commons", "commons.exe") for w in words) or "commons" in words


def _run_claude(command: list[str], tolerate: str | None = None) -> bool:
    """Run the ``claude`` CLI: True when it did it, False when it refused with ``tolerate`` in
    its words; anything else it says is the error."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CLAUDE_CLI_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CommonsError(f"`{shlex.join(command)}` did not run: {error}") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        if tolerate and any(tolerate in line for line in said):
            return False
        raise CommonsError(f"`{shlex.join(command)}` failed (exit {done.returncode}): {said[-1] if said else 'no output'}")
    return True


def _result(dry_run: bool, settings: Edit, mcp_file: Edit | None, command: list[str] | None, verb: str) -> dict:
    if mcp_file is not None and mcp_file.changes:
        mcp = {"via": "file", "path": str(mcp_file.path), "changed": True}
    elif command:
        mcp = {"via": "claude", "command": shlex.join(command), "changed": True}
    else:
        mcp = {"changed": False}
    return {
        "action": verb, "dry_run": dry_run,
        "settings": {"path": str(settings.path), "changed": settings.changes},
        "mcp": mcp,
        "diff": "".join(e.diff() for e in (settings, mcp_file) if e is not None and e.changes),
    }  # fmt: skip


def _describe(result: dict) -> str:
    adding = result["action"] == "add"
    would = "would " if result["dry_run"] else ""
    settings, mcp = result["settings"], result["mcp"]
    lines = []
    if settings["changed"]:
        lines.append(f"{would}{'add' if adding else 'remove'} the SessionEnd hook in {settings['path']}")
        if settings.get("backup"):
            lines.append(f"  backup of the previous file: {settings['backup']}")
    else:
        lines.append(f"SessionEnd hook {'already in' if adding else 'not in'} {settings['path']}")
    if mcp["changed"] and mcp["via"] == "claude":
        lines.append(f"{would}run: {mcp['command']}")
    elif mcp["changed"]:
        lines.append(f"{would}{'add' if adding else 'remove'} the MCP server `commons` in {mcp['path']}")
    else:
        lines.append(f"MCP server `commons` {'already registered' if adding else 'not registered by setup'}")
    if result.get("home_initialised") is False:
        lines.append("note: this commons home has no keys yet: run `commons init`, or the hook skips every session")
    if result["dry_run"] and result["diff"]:
        lines.append(result["diff"].rstrip("\n"))
    return "\n".join(lines)
