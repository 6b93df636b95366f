"""`commons setup claude-code`: the SessionEnd hook and the MCP server go in, and `--undo` takes
exactly them out again."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from commons.home import Home
from commons.integrations.claude_settings import SettingsError, is_commons_hook, with_hook, without_hook
from tests.claude_homes import PERSON_SETTINGS, Machine, make_machine
from tests.transcripts import cli


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Home) -> Machine:
    # No `claude` on PATH unless a test puts one there: the file route.
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.path.dirname(sys.executable))
    return make_machine(tmp_path, monkeypatch)


def _setup(capsys, *flags: str) -> tuple[int, str, str]:
    return cli(capsys, "setup", "claude-code", *flags)


def _session_end_commands(settings: Path) -> list[str]:
    data = json.loads(settings.read_text())
    return [h["command"] for group in data["hooks"]["SessionEnd"] for h in group["hooks"]]


def test_setup_appends_the_hook_and_keeps_every_other_key_and_hook_in_place(capsys, machine: Machine, home: Home):
    code, out, err = _setup(capsys)
    assert code == 0, err
    data = json.loads(machine.settings.read_text())
    assert list(data) == list(PERSON_SETTINGS)  # same keys, same order
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in PERSON_SETTINGS.items() if k != "hooks"}
    assert list(data["hooks"]) == ["PreToolUse", "SessionEnd", "Stop"]
    assert data["hooks"]["PreToolUse"] == PERSON_SETTINGS["hooks"]["PreToolUse"]
    person, ours = data["hooks"]["SessionEnd"]
    assert person == PERSON_SETTINGS["hooks"]["SessionEnd"][0]
    hook = ours["hooks"][0]
    assert hook["type"] == "command" and hook["timeout"] >= 2 and is_commons_hook(hook["command"])
    assert f"COMMONS_HOME={home.config_dir}" in hook["command"]
    # Written as Claude Code writes it, the file differs by the new group alone.
    assert without_hook(machine.settings.read_text(), "s").encode() == machine.settings_bytes
    assert Path(str(machine.settings) + ".commons-backup").read_bytes() == machine.settings_bytes


def test_setup_registers_the_mcp_server_in_the_user_config_file_without_claude_on_path(capsys, machine: Machine):
    config = machine.home / ".claude.json"
    config.write_text(json.dumps({"numStartups": 12, "projects": {"/x": {"allowedTools": []}}}, indent=2))
    assert _setup(capsys)[0] == 0
    data = json.loads(config.read_text())
    assert list(data) == ["numStartups", "projects", "mcpServers"]
    server = data["mcpServers"]["commons"]
    assert server["type"] == "stdio" and server["args"][-1] == "mcp" and "COMMONS_HOME" in server["env"]


def test_setup_twice_changes_nothing_the_second_time(capsys, machine: Machine):
    assert _setup(capsys)[0] == 0
    settings, config = machine.settings.read_bytes(), (machine.home / ".claude.json").read_bytes()
    code, out, _ = cli(capsys, "setup", "claude-code", "--json")
    result = json.loads(out)
    assert code == 0 and not result["settings"]["changed"] and not result["mcp"]["changed"]
    assert machine.settings.read_bytes() == settings and (machine.home / ".claude.json").read_bytes() == config
    assert len(_session_end_commands(machine.settings)) == 2


def test_dry_run_prints_the_diff_and_changes_nothing(capsys, machine: Machine, home: Home):
    code, out, _ = _setup(capsys, "--dry-run")
    assert code == 0
    assert "would add the SessionEnd hook" in out
    assert '+            "command": "COMMONS_HOME=' in out and "hook session-end" in out
    assert '+    "commons": {' in out
    assert machine.settings.read_bytes() == machine.settings_bytes
    assert not (machine.home / ".claude.json").exists()
    assert not Path(str(machine.settings) + ".commons-backup").exists()
    assert not (home.data_dir / "integrations").exists()


def test_undo_restores_settings_byte_for_byte_and_removes_all_setup_added(capsys, machine: Machine, home: Home):
    os.chmod(machine.settings, 0o600)
    assert _setup(capsys)[0] == 0
    code, out, err = _setup(capsys, "--undo")
    assert code == 0, err
    assert machine.settings.read_bytes() == machine.settings_bytes
    assert stat.S_IMODE(machine.settings.stat().st_mode) == 0o600
    assert not Path(str(machine.settings) + ".commons-backup").exists()
    assert not (machine.home / ".claude.json").exists()  # setup created it, undo takes it away
    assert not (home.data_dir / "integrations").exists()
    assert sorted(p.name for p in machine.claude.iterdir()) == ["projects", "settings.json"]


def test_undo_keeps_the_user_config_files_other_keys(capsys, machine: Machine):
    config = machine.home / ".claude.json"
    config.write_text(json.dumps({"numStartups": 3, "mcpServers": {"github": {"command": "gh-mcp"}}}, indent=2))
    assert _setup(capsys)[0] == 0
    data = json.loads(config.read_text())
    data["numStartups"] = 4  # Claude Code rewrites this file as it runs
    config.write_text(json.dumps(data, indent=2))
    assert _setup(capsys, "--undo")[0] == 0
    assert json.loads(config.read_text()) == {"numStartups": 4, "mcpServers": {"github": {"command": "gh-mcp"}}}


def test_undo_after_the_person_edited_settings_removes_only_the_commons_hook(capsys, machine: Machine):
    assert _setup(capsys)[0] == 0
    data = json.loads(machine.settings.read_text())
    data["model"] = "sonnet"
    data["hooks"]["SessionEnd"].append({"hooks": [{"type": "command", "command": "echo bye"}]})
    machine.settings.write_text(json.dumps(data, indent=2) + "\n")
    assert _setup(capsys, "--undo")[0] == 0
    after = json.loads(machine.settings.read_text())
    assert after["model"] == "sonnet"
    assert _session_end_commands(machine.settings) == ["notify-send 'Claude is done'", "echo bye"]


def test_setup_refuses_a_settings_file_it_cannot_parse_and_touches_nothing(capsys, machine: Machine, home: Home):
    machine.settings.write_text('{"model": "opus",}\n')
    code, out, err = _setup(capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "settings.json is not valid JSON" in err
    assert machine.settings.read_text() == '{"model": "opus",}\n'
    assert not (machine.home / ".claude.json").exists() and not (home.data_dir / "integrations").exists()


@pytest.mark.parametrize(
    "settings, place",
    [('["a"]', "not an object"), ('{"hooks": []}', '"hooks" is not an object'),
     ('{"hooks": {"SessionEnd": {"x": 1}}}', '"hooks.SessionEnd" is not a list')],
)  # fmt: skip
def test_setup_refuses_settings_not_shaped_as_claude_code_documents(capsys, machine: Machine, settings, place):
    machine.settings.write_text(settings)
    code, _, err = _setup(capsys)
    assert code == 2 and place in err
    assert machine.settings.read_text() == settings


def test_a_commons_hook_from_another_install_is_not_added_twice():
    text = json.dumps({"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "/opt/old/bin/commons hook session-end"}]}]}})
    assert with_hook(text, "s", "/new/bin/commons hook session-end", 10) == text
    assert is_commons_hook("COMMONS_HOME=/h /usr/bin/python3 -m commons hook session-end")
    assert not is_commons_hook("commons-lint hook session-end") and not is_commons_hook("echo commons hook")
    assert json.loads(without_hook(text, "s")) == {}
    with pytest.raises(SettingsError):
        with_hook("[]", "s", "x", 1)


def test_setup_goes_through_the_claude_cli_when_it_is_on_path(capsys, machine: Machine, tmp_path: Path):
    calls = tmp_path / "claude-calls.jsonl"
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir(exist_ok=True)
    # A stand-in for `claude mcp add/remove`: records its arguments and edits ~/.claude.json as it does.
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"open({str(calls)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "path = os.path.expanduser('~/.claude.json')\n"
        "data = json.load(open(path)) if os.path.exists(path) else {}\n"
        "servers = data.setdefault('mcpServers', {})\n"
        "if sys.argv[2] == 'add': servers['commons'] = {'command': sys.argv[sys.argv.index('--') + 1]}\n"
        "else: servers.pop('commons')\n"
        "json.dump(data, open(path, 'w'))\n"
    )
    fake.chmod(0o755)
    assert _setup(capsys)[0] == 0
    assert _setup(capsys)[0] == 0  # registered already: `claude` is not run again
    assert _setup(capsys, "--undo")[0] == 0
    runs = [json.loads(line) for line in calls.read_text().splitlines()]
    assert len(runs) == 2
    add, remove = runs
    assert add[:4] == ["mcp", "add", "--scope", "user"] and add[-1] == "mcp"
    assert add[4:6] == ["commons", "-e"] and add[6].startswith("COMMONS_HOME=") and add[7] == "--"
    assert remove == ["mcp", "remove", "--scope", "user", "commons"]


def test_claude_config_dir_moves_what_setup_edits(capsys, machine: Machine, monkeypatch, tmp_path: Path):
    alt = tmp_path / "alt-claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(alt))
    assert _setup(capsys)[0] == 0
    assert len(_session_end_commands(alt / "settings.json")) == 1
    assert "commons" in json.loads((alt / ".claude.json").read_text())["mcpServers"]
    assert machine.settings.read_bytes() == machine.settings_bytes
    assert _setup(capsys, "--undo")[0] == 0
    assert not (alt / "settings.json").exists()


def test_undo_with_the_backup_gone_still_takes_the_hook_out(capsys, machine: Machine):
    assert _setup(capsys)[0] == 0
    Path(str(machine.settings) + ".commons-backup").unlink()
    assert _setup(capsys, "--undo")[0] == 0
    assert _session_end_commands(machine.settings) == ["notify-send 'Claude is done'"]


def _fake_claude(tmp_path: Path, said: str) -> None:
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f"#!/bin/sh\necho '{said}' >&2\nexit 1\n")
    fake.chmod(0o755)


def test_a_failing_claude_cli_leaves_the_settings_untouched(capsys, machine: Machine, tmp_path: Path):
    _fake_claude(tmp_path, "Error: Invalid configuration: unreadable config")
    code, _, err = _setup(capsys)
    assert code == 1 and "Invalid configuration" in err and len(err.strip().splitlines()) == 1
    assert machine.settings.read_bytes() == machine.settings_bytes


def test_a_server_the_claude_cli_already_has_is_left_to_it_and_not_undone(capsys, machine: Machine, tmp_path, home):
    _fake_claude(tmp_path, "MCP server commons already exists in user config")
    assert _setup(capsys)[0] == 0
    assert "mcp" not in json.loads((home.data_dir / "integrations" / "claude-code.json").read_text())
    assert len(_session_end_commands(machine.settings)) == 2
