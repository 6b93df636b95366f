"""Claude Code's folder for a session in a worktree, matched on real `git worktree` layouts: a
worktree of a bare repository is the bare repository's project, a worktree moved without `git
worktree repair` is its own, and a project's `autoMemoryDirectory` counts in a trusted folder.
(Claude Code 2.1.197 was run in each layout against the fake model: the memory folder its system
prompt names is the one asserted here.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from commons.integrations.claude_code import ClaudeHome, auto_memory, project_at, slug

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
GIT = ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.invalid", "-c", "init.defaultBranch=main"]


def git(*args: str, cwd: Path) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    """``code/src``: a repository with one commit."""
    src = tmp_path / "code" / "src"
    src.mkdir(parents=True)
    git("init", "-q", cwd=src)
    (src / "README").write_text("tidepool\n")
    git("add", "README", cwd=src)
    git("commit", "-qm", "start", cwd=src)
    return tmp_path / "code"


def memory_of(folder: Path) -> Path:
    return auto_memory(project_at(folder), ClaudeHome.locate()).folder


def test_a_worktree_of_a_bare_repository_is_the_bare_repositorys_project(code: Path):
    git("clone", "-q", "--bare", "src", "tidepool.git", cwd=code)
    git("worktree", "add", "-q", "../feature", "-b", "feature", cwd=code / "tidepool.git")
    project = project_at(code / "feature" / "sub")
    assert project.root == code / "tidepool.git" and project.slug == slug(code / "tidepool.git")
    assert memory_of(code / "feature") == ClaudeHome.locate().projects_dir / slug(code / "tidepool.git") / "memory"
    assert "tidepool" in project.names and "feature" in project.names


def test_a_worktree_moved_without_repair_is_its_own_project_and_after_repair_the_repositorys(code: Path):
    git("worktree", "add", "-q", "../wt", "-b", "wt", cwd=code / "src")
    assert project_at(code / "wt").root == code / "src"
    (code / "wt").rename(code / "wt-moved")
    assert project_at(code / "wt-moved").root == code / "wt-moved"
    assert memory_of(code / "wt-moved") == ClaudeHome.locate().projects_dir / slug(code / "wt-moved") / "memory"
    git("worktree", "repair", "../wt-moved", cwd=code / "src")
    assert project_at(code / "wt-moved").root == code / "src"


def test_a_submodule_is_a_project_of_its_own(code: Path):
    lib = code / "lib"
    shutil.copytree(code / "src", lib)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib", cwd=code / "src")
    assert project_at(code / "src" / "vendor" / "lib").root == code / "src" / "vendor" / "lib"


def trust(folder: Path) -> None:
    config = ClaudeHome.locate().user_config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"projects": {str(folder): {"hasTrustDialogAccepted": True}}}))


def test_a_projects_auto_memory_directory_counts_where_the_folder_is_trusted(code: Path, tmp_path: Path):
    settings = code / "src" / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"autoMemoryDirectory": str(tmp_path / "team-memory")}))
    default = ClaudeHome.locate().projects_dir / slug(code / "src") / "memory"
    assert memory_of(code / "src") == default  # untrusted: Claude Code's interactive sessions ignore it
    trust(code)  # a parent folder trusted trusts the ones below it
    assert memory_of(code / "src") == tmp_path / "team-memory"
    local = code / "src" / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"autoMemoryDirectory": "~/mine"}))
    assert memory_of(code / "src") == Path.home() / "mine"  # local over project
    local.write_text(json.dumps({"autoMemoryDirectory": "relative/folder"}))  # not absolute: ignored
    assert memory_of(code / "src") == tmp_path / "team-memory"
