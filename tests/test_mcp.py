"""`commons mcp` through the official SDK's client: the tools' schemas, structured results, and
errors whose words reach the client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from commons import __version__
from tests.test_organism import day2_pip_twice_and_a_correction, ingest
from tests.transcripts import cli, cli_json

ROOT = Path(__file__).resolve().parents[1]


async def _session(home_root: str, cwd: Path, script):
    """Run ``script(session, init)`` against `commons mcp` started in ``cwd``."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "commons", "mcp"], cwd=str(cwd),
                                   env={"COMMONS_HOME": home_root, "COMMONS_AT": "2026-11-04T12:00Z",
                                        "PYTHONPATH": str(ROOT), "HOME": os.environ["HOME"]})
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                return await script(session, init)


def _run(home, tmp_path, script):
    # The client runs in a loop of its own (the CLI calls run trio.run themselves, one at a time).
    return anyio.run(_session, str(home.config_dir), tmp_path, script, backend="trio")


def _learned(home, capsys, tmp_path):
    assert cli(capsys, "init")[0] == 0
    ingest(capsys, day2_pip_twice_and_a_correction(tmp_path / "sessions"), "2026-11-02T18:00Z")
    cli_json(capsys, "sleep", at="2026-11-03T03:00Z")


def test_every_tool_has_an_output_schema_and_every_parameter_a_description(home, capsys, tmp_path):
    _learned(home, capsys, tmp_path)

    async def script(session, init):
        return init.server_info, (await session.list_tools()).tools

    info, tools = _run(home, tmp_path, script)
    assert info.name == "commons" and info.version == __version__
    assert {t.name for t in tools} == {"recall", "lessons", "why", "remember", "forget"}
    for tool in tools:
        assert tool.description and tool.output_schema and tool.output_schema["type"] == "object", tool.name
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    by_name = {t.name: t for t in tools}
    assert by_name["lessons"].input_schema["properties"]["which"]["enum"] == [
        "own", "candidate", "common", "archived", "vetoed", "all"]
    assert by_name["remember"].input_schema["properties"]["kind"]["enum"] == ["error", "correction"]


def test_recall_and_lessons_answer_with_structured_objects(home, capsys, tmp_path):
    _learned(home, capsys, tmp_path)

    async def script(session, init):
        recalled = await session.call_tool("recall", {"query": "pip install externally managed", "k": 2})
        listed = await session.call_tool("lessons", {"which": "own", "all_projects": True})
        return recalled, listed

    recalled, listed = _run(home, tmp_path, script)
    # answered for the folder the server runs in, though no session ran here
    assert not recalled.is_error and recalled.structured_content["project"] == str(tmp_path)
    hits = recalled.structured_content["hits"]
    assert hits[0]["text"].startswith("`pip install` failed") and hits[0]["score"] > 0
    assert json.loads(recalled.content[0].text) == recalled.structured_content
    kinds = {lesson["kind"] for lesson in listed.structured_content["lessons"]}
    assert listed.structured_content["which"] == "own" and kinds == {"error", "correction"}


def test_errors_reach_the_client_in_commons_words(home, capsys, tmp_path):
    _learned(home, capsys, tmp_path)

    async def script(session, init):
        return (await session.call_tool("lessons", {"which": "mine"}),
                await session.call_tool("remember", {"observation": "Always run uv add instead of pip install."}),
                await session.call_tool("forget", {"id": "ffffffffffff"}),
                await session.call_tool("recall", {"query": "   "}))

    bad_enum, instruction, unknown, empty = _run(home, tmp_path, script)
    assert bad_enum.is_error and "which" in bad_enum.content[0].text
    assert instruction.is_error and "never an instruction" in instruction.content[0].text
    assert "could read" in instruction.content[0].text  # the observation form it could take
    assert unknown.is_error and "no lesson has an id starting with 'ffffffffffff'" in unknown.content[0].text
    assert empty.is_error and "recall needs a query" in empty.content[0].text


def test_remember_scrubs_scopes_and_forget_vetoes(home, capsys, tmp_path):
    _learned(home, capsys, tmp_path)

    async def script(session, init):
        local = await session.call_tool("remember", {
            "observation": "The staging API at https://admin:hunter2@staging.example.internal/v1 "
                           "was down on Tuesday mornings."})
        tool = await session.call_tool("remember", {
            "observation": "`docker compose up` failed with 'port is already allocated' while another stack ran."})
        gone = await session.call_tool("forget", {"id": tool.structured_content["id"][:12]})
        return local, tool, gone

    local, tool, gone = _run(home, tmp_path, script)
    assert not local.is_error, local.content[0].text
    stored = local.structured_content
    assert stored["scrubbed"] and "hunter2" not in stored["text"] and stored["scope"] == "local"
    assert stored["project"] == str(tmp_path)
    assert tool.structured_content["scope"] == "shared", tool.structured_content
    assert gone.structured_content["vetoed"]
    vetoed = cli_json(capsys, "lessons", "--status", "vetoed")
    assert [v["id"] for v in vetoed] == [tool.structured_content["id"]]
    assert "hunter2" not in json.dumps(cli_json(capsys, "lessons"))
