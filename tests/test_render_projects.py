"""Per-project rendering into Claude Code's auto memory: a project's local lessons land only in
that project's ``MEMORY.md``, beside the person's own lines, and every setting that moves or turns
off auto memory is honoured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commons.home import Home
from commons.integrations.claude_code import slug
from tests.claude_homes import PERSON_MEMORY, Machine, make_machine, write_session
from tests.transcripts import cli, cli_json, session

NIGHT = "2026-11-03T03:00Z"


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Home) -> Machine:
    return make_machine(tmp_path, monkeypatch)


def notes_session(machine: Machine) -> Path:
    """A session in the folder outside git in which the person corrects where notes live."""
    s = session(machine.claude / "projects" / slug(machine.scratch), 2, "journal", cwd=str(machine.scratch))
    s.user("show me this week's plans")
    s.bash("ls drafts/", "List the plans", "monday.md\ntuesday.md")
    s.user("no, the weekly plans live in the journal folder, drafts is the archive")
    s.write()
    return s.path


def learn(capsys, machine: Machine) -> dict:
    assert cli(capsys, "ingest", str(machine.claude / "projects"))[0] == 0
    return cli_json(capsys, "sleep", at=NIGHT)


def scratch_memory(machine: Machine) -> Path:
    return machine.claude / "projects" / slug(machine.scratch) / "memory" / "MEMORY.md"


def test_local_lessons_land_only_in_their_projects_memory(capsys, machine: Machine):
    assert cli(capsys, "init")[0] == 0
    write_session(machine, machine.worktree)  # a worktree's session: the repository's project
    notes_session(machine)
    night = learn(capsys, machine)
    assert night["render"]["target"] == "claude-code"
    repo, notes = (machine.memory / "MEMORY.md").read_text(), scratch_memory(machine).read_text()
    assert "this project uses uv" in repo and "this project uses uv" not in notes
    assert "journal folder" in notes and "journal folder" not in repo
    assert repo.startswith(PERSON_MEMORY)  # the person's lines first, byte for byte
    assert (machine.memory / "deploys.md").read_text() == "# Deploys\n\nTag, then push the tag.\n"
    # Every lesson linked from an index has its file beside it, and no other folder has it.
    for index in (machine.memory / "MEMORY.md", scratch_memory(machine)):
        for name in [part.split(")")[0] for part in index.read_text().split("](")[1:]]:
            assert (index.parent / name).is_file(), name
    assert not list(machine.worktree.rglob("MEMORY.md"))  # nothing is written into the checkout


def test_a_shared_lesson_renders_in_every_project(capsys, machine: Machine):
    assert cli(capsys, "init")[0] == 0
    write_session(machine, machine.repo)
    notes_session(machine)
    learn(capsys, machine)
    [listed] = [lesson for lesson in cli_json(capsys, "lessons") if "uses uv" in lesson["text"]]
    assert cli(capsys, "lessons", "scope", listed["id"][:12], "shared", "--yes")[0] == 0
    cli_json(capsys, "render")
    for index in (machine.memory / "MEMORY.md", scratch_memory(machine)):
        own = index.read_text().split("<!-- commons:begin own -->")[1]
        assert "this project uses uv" in own


def test_deleting_a_lesson_file_in_a_project_vetoes_it(capsys, machine: Machine):
    assert cli(capsys, "init")[0] == 0
    write_session(machine, machine.repo)
    learn(capsys, machine)
    files = sorted(machine.memory.glob("commons-*.md"))
    assert files
    files[0].unlink()
    cli_json(capsys, "render")
    vetoed = cli_json(capsys, "lessons", "--status", "vetoed")
    assert [lesson["id"][:12] for lesson in vetoed] == [files[0].stem.removeprefix("commons-")]


def test_auto_memory_turned_off_gets_nothing_and_a_moved_folder_is_followed(capsys, machine: Machine):
    settings = json.loads(machine.settings.read_text())
    moved = machine.home / "memories" / "spotter"
    (machine.repo / ".claude").mkdir()
    (machine.repo / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": str(moved)}))
    # A project's own autoMemoryDirectory counts in a folder the person trusted in Claude Code.
    user_config = machine.home / ".claude.json"
    known = json.loads(user_config.read_text()) if user_config.exists() else {}
    known.setdefault("projects", {})[str(machine.repo)] = {"hasTrustDialogAccepted": True}
    user_config.write_text(json.dumps(known))
    (machine.scratch / ".claude").mkdir()
    (machine.scratch / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    machine.settings.write_text(json.dumps(settings))
    assert cli(capsys, "init")[0] == 0
    write_session(machine, machine.repo)
    notes_session(machine)
    night = learn(capsys, machine)
    assert [f["folder"] for f in night["render"]["folders"]] == [str(moved)]
    assert "this project uses uv" in (moved / "MEMORY.md").read_text()
    assert not scratch_memory(machine).exists()
    assert (machine.memory / "MEMORY.md").read_text() == PERSON_MEMORY  # the old folder is left alone


def test_a_configured_folder_keeps_the_plain_folder_target(capsys, machine: Machine, home: Home):
    assert cli(capsys, "init")[0] == 0
    folder = machine.home / "plain"
    home.config_file.write_text(home.config_file.read_text() + f'\n[render]\nfolder = "{folder}"\n')
    write_session(machine, machine.repo)
    night = learn(capsys, machine)
    assert night["render"]["target"] == "folder"
    assert "this project uses uv" in (folder / "MEMORY.md").read_text()
    assert (machine.memory / "MEMORY.md").read_text() == PERSON_MEMORY


def test_recall_answers_for_the_current_project_unless_asked_for_all(capsys, machine: Machine, monkeypatch):
    assert cli(capsys, "init")[0] == 0
    write_session(machine, machine.repo)
    notes_session(machine)
    learn(capsys, machine)
    query = "pip install httpx: this project uses uv"

    def recalled(*flags: str) -> list[str]:
        return [hit["text"] for hit in cli_json(capsys, "recall", query, "-k", "5", *flags)]

    monkeypatch.chdir(machine.worktree)  # a worktree answers for its repository
    assert any("uses uv" in text for text in recalled())
    monkeypatch.chdir(machine.scratch)
    assert not any("uses uv" in text for text in recalled())
    assert any("journal folder" in text for text in recalled())
    assert any("uses uv" in text for text in recalled("--all"))
    assert any("uses uv" in text for text in recalled("--project", str(machine.repo / "src")))


def test_three_full_layers_stay_within_what_claude_code_loads(tmp_path: Path):
    from commons.render.memory_folder import LOAD_BYTES, LOAD_LINES, Layer, RenderItem, render

    def items(tag: str, n: int) -> list[RenderItem]:
        text = "`pip install` failed with \"error: externally-managed-environment\"; `uv add <package>` succeeded after it"
        return [RenderItem(id=f"{tag}{i:063d}", text=f"{text} ({i}).", kind="error", scope="shared",
                           strength=1.0, seen=2) for i in range(n)]

    (tmp_path / "MEMORY.md").write_text(PERSON_MEMORY)
    result = render(tmp_path, [Layer("project", items("a", 150)), Layer("own", items("b", 150)),
                               Layer("common", items("c", 150))])
    text = (tmp_path / "MEMORY.md").read_text()
    assert len(text.encode()) <= LOAD_BYTES and text.count("\n") <= LOAD_LINES
    assert text.startswith(PERSON_MEMORY) and "<!-- commons:end common -->" in text  # every section whole
    assert sum(result.left_out.values()) == 450 - len(result.written)


def test_init_finds_claude_code_and_says_where_lessons_will_land(capsys, machine: Machine):
    code, out, _ = cli(capsys, "init")
    assert code == 0 and f"each project's Claude Code auto memory ({machine.claude / 'projects'}" in out


def test_a_local_lesson_written_by_hand_lands_in_the_project_it_was_written_in(capsys, machine: Machine,
                                                                               monkeypatch):
    assert cli(capsys, "init")[0] == 0
    write_session(machine, machine.repo)
    notes_session(machine)
    learn(capsys, machine)
    monkeypatch.chdir(machine.worktree)
    text = "The staging database of this project is read-only on Fridays."
    assert cli(capsys, "lessons", "add", text, "--scope", "local")[0] == 0
    cli_json(capsys, "render")
    assert text in (machine.memory / "MEMORY.md").read_text()
    assert text not in scratch_memory(machine).read_text()
