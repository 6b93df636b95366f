"""Claude Code's folders as commons finds them: slugs, projects and worktrees, auto memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commons.integrations.claude_code import (
    MAX_SLUG,
    ClaudeHome,
    auto_memory,
    find_checkout,
    folder_of_slug,
    name_variants,
    project_at,
    slug,
    transcript_project,
)
from tests.claude_homes import Machine, make_machine, write_session


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    return make_machine(tmp_path, monkeypatch)


def test_slug_replaces_every_character_that_is_not_an_ascii_letter_or_digit():
    assert slug("/home/ada/spotter_web") == "-home-ada-spotter-web"
    assert slug("/Users/me/.agents") == "-Users-me--agents"
    assert slug("C:\\Users\\me\\proj") == "C--Users-me-proj"
    assert slug("/srv/café") == "-srv-caf-"
    assert slug("/a/😀") == "-a---"  # one emoji is two UTF-16 code units, so two dashes


def test_slug_past_200_characters_keeps_200_and_appends_a_hash_of_the_path():
    a, b = "/deep/" + "x" * 300 + "/one", "/deep/" + "x" * 300 + "/two"
    assert slug(a)[:MAX_SLUG] == slug(b)[:MAX_SLUG] and slug(a) != slug(b)
    assert slug(a)[MAX_SLUG] == "-" and slug(a)[MAX_SLUG + 1 :].isalnum()
    assert slug(a) == slug(a)


def test_long_project_folder_that_exists_is_found_by_its_prefix(machine: Machine):
    claude = ClaudeHome.locate()
    long_path = "/deep/" + "y" * 300
    native = claude.projects_dir / (slug(long_path)[:MAX_SLUG] + "-bunhash1")  # the native build's hash
    native.mkdir(parents=True)
    assert claude.project_folder(long_path) == native
    assert claude.project_folder("/short") == claude.projects_dir / "-short"


def test_claude_home_is_dot_claude_unless_claude_config_dir_moves_it(machine: Machine, monkeypatch, tmp_path):
    claude = ClaudeHome.locate()
    assert claude.config_dir == machine.claude
    assert claude.user_config_file == machine.home / ".claude.json"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "alt"))
    moved = ClaudeHome.locate()
    assert moved.settings_file == tmp_path / "alt" / "settings.json"
    assert moved.user_config_file == tmp_path / "alt" / ".claude.json"


def test_a_worktree_and_a_subfolder_belong_to_the_main_checkouts_project(machine: Machine):
    from_worktree, from_subfolder = project_at(machine.worktree), project_at(machine.repo / "src")
    assert from_worktree.root == from_subfolder.root == machine.repo
    assert from_worktree.slug == slug(machine.repo)
    checkout = find_checkout(machine.worktree)
    assert checkout is not None and checkout.is_linked_worktree and checkout.toplevel == machine.worktree


def test_project_names_are_repository_remote_and_worktree_names_in_each_case(machine: Machine):
    names = project_at(machine.repo).names
    assert names[0] == "spotter-web"
    assert {"spotter-web", "spotter_web", "SpotterWeb", "spotterWeb", "feature-x", "FeatureX"} <= set(names)
    assert len(names) == len(set(names))


def test_the_origin_remote_names_a_project_whose_folder_is_named_otherwise(machine: Machine):
    checkout = machine.home / "code" / "sw2"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/ada/ledger_api.git\n')
    assert {"sw2", "ledger_api", "LedgerApi", "ledger-api"} <= set(project_at(checkout).names)


def test_a_submodule_is_a_project_of_its_own(machine: Machine):
    module_git = machine.repo / ".git" / "modules" / "vendored"
    module_git.mkdir(parents=True)
    sub = machine.repo / "vendored"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/vendored\n")
    assert project_at(sub / "x").root == sub


def test_a_folder_outside_git_is_its_own_project(machine: Machine):
    project = project_at(machine.scratch)
    assert project.root == machine.scratch and project.slug == slug(machine.scratch)
    assert project.names == ("notes_2026", "notes-2026", "Notes2026", "notes2026")


def test_name_variants_split_at_separators_and_case_changes():
    assert name_variants("spotter_web") == ("spotter_web", "spotter-web", "SpotterWeb", "spotterWeb", "spotterweb")
    assert name_variants("HTTPServer") == ("HTTPServer", "http-server", "http_server", "HttpServer", "httpServer", "httpserver")
    assert name_variants("") == ()


def test_auto_memory_defaults_to_the_git_roots_memory_folder(machine: Machine):
    memory = auto_memory(project_at(machine.worktree), ClaudeHome.locate())
    assert memory.folder == machine.memory and memory.enabled and memory.decided_by == "default"
    assert memory.index.read_text().startswith("# Memory")


def _settings(path: Path, **values) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


def test_auto_memory_directory_of_an_untrusted_folder_comes_from_user_settings_only(machine: Machine):
    claude, project = ClaudeHome.locate(), project_at(machine.repo)
    data = json.loads(machine.settings.read_text())
    machine.settings.write_text(json.dumps({**data, "autoMemoryDirectory": "~/sync/memory"}))
    assert auto_memory(project, claude).folder == machine.home / "sync" / "memory"
    # The project's own settings, shared or local, count only where the folder is trusted
    # (tests/test_claude_code_worktrees.py): Claude Code's interactive sessions ignore them here.
    _settings(machine.repo / ".claude" / "settings.json", autoMemoryDirectory="/tmp/elsewhere")
    _settings(machine.repo / ".claude" / "settings.local.json", autoMemoryDirectory="/srv/mine")
    assert auto_memory(project, claude).folder == machine.home / "sync" / "memory"


def test_auto_memory_enabled_false_turns_it_off_and_the_higher_scope_wins(machine: Machine, monkeypatch):
    claude, project = ClaudeHome.locate(), project_at(machine.repo)
    project_file = machine.repo / ".claude" / "settings.json"
    _settings(project_file, autoMemoryEnabled=False)
    off = auto_memory(project, claude)
    assert not off.enabled and off.decided_by == str(project_file)
    _settings(machine.repo / ".claude" / "settings.local.json", autoMemoryEnabled=True)
    assert auto_memory(project, claude).enabled
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    assert auto_memory(project, claude).decided_by == "CLAUDE_CODE_DISABLE_AUTO_MEMORY"


def test_an_unparseable_settings_file_is_passed_over_when_reading(machine: Machine):
    machine.settings.write_text("{not json")
    assert auto_memory(project_at(machine.repo), ClaudeHome.locate()).enabled


def test_a_transcripts_project_comes_from_the_cwd_it_records(machine: Machine):
    transcript = write_session(machine, machine.worktree)
    assert transcript.parent.name == slug(machine.worktree)  # transcripts are kept by cwd …
    project = transcript_project(transcript)
    assert project is not None and project.root == machine.repo  # … memory by the git root
    assert transcript_project(transcript, cwd=str(machine.scratch)).root == machine.scratch


def test_a_transcript_that_records_no_cwd_has_no_known_project(machine: Machine):
    bare = machine.claude / "projects" / "-x" / "s.jsonl"
    bare.parent.mkdir(parents=True)
    bare.write_text('{"type":"summary","summary":"x"}\n')
    assert transcript_project(bare) is None
    assert transcript_project(machine.claude / "missing.jsonl") is None


def test_a_transcript_without_cwd_gets_the_project_its_folder_slug_names_on_disk(machine: Machine):
    transcript = machine.claude / "projects" / slug(machine.worktree) / "abc" / "subagents" / "agent-1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text('{"type":"summary","summary":"x"}\n')
    project = transcript_project(transcript)
    assert project is not None and project.root == machine.repo


def test_a_slug_names_a_folder_only_when_one_reading_of_it_exists(tmp_path: Path):
    (tmp_path / "my_app" / "src").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    assert folder_of_slug("-my-app-src", tmp_path) == tmp_path / "my_app" / "src"
    assert folder_of_slug("--hidden", tmp_path) == tmp_path / ".hidden"
    (tmp_path / "my" / "app-src").mkdir(parents=True)
    assert folder_of_slug("-my-app-src", tmp_path) is None  # two folders, one slug
    assert folder_of_slug("-nothing-here", tmp_path) is None
    assert folder_of_slug("-" + "x" * 250, tmp_path) is None  # cut and hashed: not decodable
