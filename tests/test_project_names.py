"""A project's own names never leave it: the package and module names its manifests declare
count as its names, a lesson naming one is local, is never published, and is never rendered into
another project's memory; MCP answers for the current project (docs/privacy.md "Projects keep
their names")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commons.home import Home
from commons.integrations.claude_code import slug
from commons.node.projects import declared_names, project_names
from tests.claude_homes import Machine, make_machine, write_session
from tests.review_helpers import Nodes
from tests.transcripts import cli, cli_json, session

NIGHT = "2026-11-03T03:00Z"
CODENAME = "zebrafish"


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Home) -> Machine:
    m = make_machine(tmp_path, monkeypatch)
    (m.scratch / "pyproject.toml").write_text('[project]\nname = "zebrafish-billing"\n')
    (m.scratch / "src" / CODENAME).mkdir(parents=True)
    (m.scratch / "src" / CODENAME / "__init__.py").write_text("")
    return m


def scratch_session(machine: Machine) -> Path:
    s = session(machine.claude / "projects" / slug(machine.scratch), 2, "billing", cwd=str(machine.scratch))
    s.user("run the invoices job")
    s.bash("make invoices", "Run the job", "ok")
    s.write()
    return s.path


def test_manifest_and_module_names_are_the_projects_names(machine: Machine):
    assert declared_names(machine.scratch) == ["zebrafish-billing", CODENAME]
    assert CODENAME in project_names([str(machine.scratch)])
    (machine.scratch / "package.json").write_text("{not json")  # the person's file, broken: names nothing
    assert declared_names(machine.scratch) == ["zebrafish-billing", CODENAME]


def test_a_lesson_naming_a_module_is_local_unpublished_and_never_in_another_projects_memory(
        capsys, machine: Machine, monkeypatch):
    assert cli(capsys, "init")[0] == 0
    assert cli(capsys, "publish", "on")[0] == 0
    write_session(machine, machine.worktree)
    scratch_session(machine)
    assert cli(capsys, "ingest", str(machine.claude / "projects"))[0] == 0
    monkeypatch.chdir(machine.scratch)
    text = f"`pytest` failed importing {CODENAME}.ledger with 'ModuleNotFoundError: No module named yaml'."
    added = cli_json(capsys, "lessons", "add", text, "--kind", "error", "--scope", "shared")
    night = cli_json(capsys, "sleep", at=NIGHT)
    assert added["id"] not in {s.get("lesson") for s in night["review"]["signed"]}
    assert cli(capsys, "export")[1].count(CODENAME) == 0  # never published
    repo_memory = "\n".join(p.read_text() for p in machine.memory.glob("*.md"))
    assert CODENAME not in repo_memory  # not rendered into the other project
    scratch = machine.claude / "projects" / slug(machine.scratch) / "memory"
    assert CODENAME in "\n".join(p.read_text() for p in scratch.glob("*.md"))  # but shown in its own


def test_mcp_lists_a_projects_local_lessons_only_in_that_project(tmp_path, monkeypatch, capsys):
    nodes = Nodes(tmp_path, monkeypatch, capsys)
    nodes.init("ada")
    p1, p2 = tmp_path / "p1", tmp_path / "p2"
    p1.mkdir()
    p2.mkdir()
    monkeypatch.chdir(p1)
    nodes.ok("ada", "lessons", "add", "The staging database of this project is reset every night.", "--scope", "local")
    home = nodes.home("ada")

    def listed(workdir: Path, **args) -> list[str]:
        return [item["text"] for item in _mcp_lessons(home, workdir, args)]

    assert listed(p1) == ["The staging database of this project is reset every night."]
    assert listed(p2) == []
    assert listed(p2, all_projects=True) == listed(p1)


def _mcp_lessons(home: Home, workdir: Path, args: dict) -> list[dict]:
    from commons.cli.context import Context
    from commons.mcp_server.tools import build_server
    from commons.runtime import run

    async def ask():
        ctx = Context(home, NIGHT)
        async with await ctx.open_store() as store:
            server = build_server(ctx, store, str(workdir))
            result = await server.call_tool("lessons", {"which": "all", **args})
        return json.loads(result.content[0].text)["lessons"]

    return run(ask)
