"""`commons mcp` through the official SDK's client: list the tools, recall a lesson."""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.test_organism import day2_pip_twice_and_a_correction, ingest
from tests.transcripts import cli, cli_json


async def _ask(home_root: str) -> tuple[set[str], list[dict], list[dict]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "commons", "mcp"],
                                   env={"COMMONS_HOME": home_root, "COMMONS_AT": "2026-11-04T12:00Z",
                                        "PYTHONPATH": os.getcwd()})
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                recalled = await session.call_tool("recall", {"query": "pip install externally managed", "k": 2})
                listed = await session.call_tool("lessons", {"status": "active"})
    return tools, json.loads(recalled.content[0].text), json.loads(listed.content[0].text)


def test_mcp_client_lists_the_tools_and_recalls_the_lesson(home, capsys, tmp_path):
    assert cli(capsys, "init")[0] == 0
    ingest(capsys, day2_pip_twice_and_a_correction(tmp_path / "sessions"), "2026-11-02T18:00Z")
    cli_json(capsys, "sleep", at="2026-11-03T03:00Z")
    # The client runs in a loop of its own (the CLI above ran trio.run itself, one at a time).
    tools, hits, lessons = anyio.run(_ask, str(home.config_dir), backend="trio")
    assert {"recall", "lessons"} <= tools
    assert hits[0]["text"].startswith("`pip install` failed") and hits[0]["score"] > 0
    assert len(lessons) == 2 and {d["kind"] for d in lessons} == {"error", "correction"}
