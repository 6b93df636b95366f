"""Files commons writes in the person's agent folders: a file it replaces keeps its mode, one it
creates (a memory file, a lesson file, ``GEMINI.md``, ``~/.claude.json``, a backup) is 0600,
whatever the umask; so is a backup of a world-readable file."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from commons.home import Home
from commons.integrations.files import write_private
from commons.render import agents_md
from commons.render.memory_folder import INDEX, Layer, RenderItem, file_name, render
from tests.claude_homes import Machine, make_machine
from tests.transcripts import cli


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def permissive_umask():
    """A umask that would make new files world-readable (0644), as on most machines."""
    old = os.umask(0o022)
    yield
    os.umask(old)


LESSON = RenderItem(id="ab" * 32, text="`npm ci` failed: no lockfile; `npm install` worked after it.", kind="error",
                    scope="shared", strength=1.0, seen=2, confirmations=2)


def test_a_memory_folder_commons_creates_holds_only_0600_files(tmp_path):
    folder = tmp_path / "memory"
    render(folder, [Layer("own", [LESSON])])
    assert mode(folder) == 0o700
    assert mode(folder / INDEX) == 0o600 and mode(folder / file_name(LESSON.id)) == 0o600


@pytest.mark.parametrize("before", [0o644, 0o640, 0o600, 0o400 | 0o200])
def test_a_memory_file_the_person_had_keeps_its_mode(tmp_path, before):
    (tmp_path / INDEX).write_text("# mine\n")
    os.chmod(tmp_path / INDEX, before)
    render(tmp_path, [Layer("own", [LESSON])])
    assert mode(tmp_path / INDEX) == before and "# mine\n" in (tmp_path / INDEX).read_text()


def test_an_agents_global_file_is_created_0600_and_one_through_a_link_keeps_its_targets_mode(tmp_path):
    created = tmp_path / ".gemini" / "GEMINI.md"
    agents_md.render(created, [LESSON])
    assert mode(created) == 0o600
    target = tmp_path / "dotfiles" / "AGENTS.md"
    target.parent.mkdir()
    target.write_text("# rules\n")
    os.chmod(target, 0o664)
    link = tmp_path / "AGENTS.md"
    link.symlink_to(target)
    agents_md.render(link, [LESSON])
    assert link.is_symlink() and mode(target) == 0o664 and "commons" in target.read_text()


def test_a_crashed_write_left_nothing_readable_and_the_next_one_replaces_it(tmp_path):
    path = tmp_path / "settings.json"
    stale = tmp_path / ".settings.json.commons-tmp"
    stale.write_text("half of an old write")
    os.chmod(stale, 0o666)
    assert write_private(path, b"{}\n") and mode(path) == 0o600 and not stale.exists()
    assert not write_private(path, b"{}\n")  # the same bytes: nothing written


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Home) -> Machine:
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.path.dirname(sys.executable))
    return make_machine(tmp_path, monkeypatch)


def test_setup_claude_code_backs_up_a_world_readable_settings_file_0600_and_creates_its_config_0600(capsys, machine):
    os.chmod(machine.settings, 0o644)
    code, _, err = cli(capsys, "setup", "claude-code")
    assert code == 0, err
    assert mode(machine.settings) == 0o644  # the person's file keeps the mode it had
    assert mode(Path(str(machine.settings) + ".commons-backup")) == 0o600
    config = machine.home / ".claude.json"
    assert "commons" in json.loads(config.read_text())["mcpServers"] and mode(config) == 0o600


def test_setup_keeps_the_mode_of_a_user_config_the_person_had(capsys, machine):
    config = machine.home / ".claude.json"
    config.write_text(json.dumps({"numStartups": 3}))
    os.chmod(config, 0o640)
    assert cli(capsys, "setup", "claude-code")[0] == 0
    assert mode(config) == 0o640 and "mcpServers" in json.loads(config.read_text())
