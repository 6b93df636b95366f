"""`commons setup codex|gemini` as the agents ship: `--undo` keeps what Codex itself wrote into the
block (its config as Codex 0.171 really writes it), lessons go to `AGENTS.override.md` while Codex
reads that instead, `CODEX_HOME` and `GEMINI_CLI_HOME` move everything, and Gemini's folder trust
is said and, on request, granted and undone."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from commons.home import Home
from commons.integrations import gemini as gemini_home
from commons.integrations.gemini import TrustLevel, is_trusted
from commons.render import agents_md
from tests.transcripts import cli, cli_json

CODEX_WROTE = Path(__file__).parent / "fixtures" / "agents" / "codex-0.171.0" / ".codex" / "config-after-codex-features-enable.toml"


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Home) -> Path:
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    return user


def init(capsys) -> None:
    assert cli(capsys, "init")[0] == 0


def test_undo_keeps_the_table_codex_wrote_inside_commons_block(capsys, user: Path, monkeypatch):
    codex = user / "elsewhere" / "codex"
    codex.mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(codex))
    (codex / "config.toml").write_text('model = "gpt-5.5"\n')
    init(capsys)
    assert cli_json(capsys, "setup", "codex")["config"]["path"] == str(codex / "config.toml")
    # Codex then writes its own table where `codex features enable` put it in the recorded file:
    # after commons' table, before the closing comment.
    recorded = CODEX_WROTE.read_text()
    codex_table = recorded[recorded.index("args = "):recorded.index("# commons: end")].split("\n", 1)[1]
    ours = (codex / "config.toml").read_text()
    (codex / "config.toml").write_text(ours.replace("# commons: end", codex_table + "# commons: end"))
    cli_json(capsys, "setup", "codex", "--undo")
    assert (codex / "config.toml").read_text() == 'model = "gpt-5.5"\n' + codex_table


def test_undo_of_the_file_codex_really_wrote_takes_out_only_commons_table(capsys, user: Path):
    from commons.integrations.codex import without_mcp_server

    recorded = CODEX_WROTE.read_text()
    left = without_mcp_server(recorded, "config.toml")
    assert left.startswith('model = "gpt-5.5"\n\n[features]\n') and left.count("\n") == 4
    assert "commons" not in left


def test_lessons_go_into_agents_override_while_codex_reads_it_instead(capsys, user: Path):
    codex = user / ".codex"
    codex.mkdir()
    (codex / "AGENTS.md").write_text("# read only without the override\n")
    (codex / "AGENTS.override.md").write_text("# mine, for now\n")
    init(capsys)
    code, out, _ = cli(capsys, "setup", "codex")
    assert code == 0 and f"Codex reads {codex / 'AGENTS.override.md'} instead of {codex / 'AGENTS.md'}" in out
    rendered = cli_json(capsys, "render")
    assert [f["path"] for f in rendered["agent_files"]] == [str(codex / "AGENTS.override.md")]
    assert agents_md.BEGIN in (codex / "AGENTS.override.md").read_text()
    assert agents_md.BEGIN not in (codex / "AGENTS.md").read_text()
    (codex / "AGENTS.override.md").write_text("\n\n")  # emptied: Codex reads AGENTS.md again
    cli_json(capsys, "render")
    assert agents_md.BEGIN in (codex / "AGENTS.md").read_text()
    cli_json(capsys, "setup", "codex", "--undo")
    assert (codex / "AGENTS.md").read_text() == "# read only without the override\n"


def test_gemini_cli_home_moves_every_file_setup_touches(capsys, user: Path, monkeypatch):
    moved = user / "gemini-home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(moved))
    init(capsys)
    result = cli_json(capsys, "setup", "gemini")
    assert result["config"]["path"] == str(moved / ".gemini" / "settings.json")
    assert result["instructions"]["path"] == str(moved / ".gemini" / "GEMINI.md")
    assert "commons" in json.loads((moved / ".gemini" / "settings.json").read_text())["mcpServers"]
    assert not (user / ".gemini").exists()


def test_setup_gemini_says_where_gemini_starts_commons_and_trusts_a_folder_on_request(capsys, user: Path):
    code_dir = user / "code"
    code_dir.mkdir()
    trusted_file = user / ".gemini" / "trustedFolders.json"
    trusted_file.parent.mkdir()
    trusted_file.write_text(json.dumps({"/srv/shared": "DO_NOT_TRUST"}, indent=2))
    init(capsys)
    code, out, _ = cli(capsys, "setup", "gemini")
    assert code == 0 and "Gemini starts commons only in folders it trusts, and trusts none yet" in out
    assert "--trust-folder" in out and "gemini --skip-trust" in out
    code, out, _ = cli(capsys, "setup", "gemini", "--trust-folder", str(code_dir))
    assert code == 0 and f"trust {code_dir} in {trusted_file}" in out
    rules = json.loads(trusted_file.read_text())
    assert rules == {"/srv/shared": "DO_NOT_TRUST", str(code_dir): "TRUST_FOLDER"}
    assert is_trusted(code_dir / "project", gemini_home.trust_rules(trusted_file.read_text(), "t")) is True
    cli_json(capsys, "setup", "gemini", "--undo")
    assert json.loads(trusted_file.read_text()) == {"/srv/shared": "DO_NOT_TRUST"}


def test_setup_gemini_says_folder_trust_is_off_when_the_person_turned_it_off(capsys, user: Path):
    (user / ".gemini").mkdir()
    (user / ".gemini" / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    init(capsys)
    code, out, _ = cli(capsys, "setup", "gemini")
    assert "folder trust is off" in out


def test_gemini_trust_is_the_longest_matching_rule(tmp_path):
    (tmp_path / "code" / "secret" / "x").mkdir(parents=True)
    rules = {str(tmp_path / "code"): TrustLevel.TRUST_FOLDER, str(tmp_path / "code" / "secret"): TrustLevel.DO_NOT_TRUST}
    assert is_trusted(tmp_path / "code", rules) is True
    assert is_trusted(tmp_path / "code" / "secret" / "x", rules) is False
    assert is_trusted(tmp_path, rules) is None
    parent = {str(tmp_path / "code" / "secret"): TrustLevel.TRUST_PARENT}
    assert is_trusted(tmp_path / "code", parent) is True
