"""Fast where the agent waits (issue #28 item 3): what each start-up loads, checked in a fresh
interpreter, and the MCP handshake answered before the node layer is imported.

The CPU figures are the benchmark's (tests/benchmarks/bench_startup.py); these tests hold what
makes them: the modules a start-up imports."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from commons.cli import COMMAND_MODULES, command_of, modules_for
from commons.home import Home
from commons.launch import mcp_options
from commons.mcp_server.handshake import load_answers
from commons.mcp_server.tools import handshake_answers
from commons.node.home_context import HomeContext

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("commons.node.context", "commons.store.db", "commons.core.learning", "numpy", "trio", "mcp",
         "pydantic", "commons.cli")


def _loaded_after(code: str, env: dict[str, str] | None = None, stdin: bytes = b"") -> dict:
    """Run ``code`` in a fresh interpreter; it ends by printing ``MODULES`` as JSON on stderr's last line."""
    done = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stderr.decode().strip().splitlines()[-1])


REPORT = ("import json, sys\n"
          "print(json.dumps({m: m in sys.modules for m in %r}), file=sys.stderr)\n" % (HEAVY,))


def test_the_command_table_names_the_commands_each_module_registers():
    for module, commands in COMMAND_MODULES.items():
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(subparsers)
        assert tuple(subparsers.choices) == commands, module


def test_a_command_line_loads_only_the_module_of_its_command():
    assert command_of(["--at", "2026-11-01", "-v", "recall", "x"]) == "recall"
    assert command_of(["--version"]) is None
    assert modules_for(["recall", "xterm"]) == ("commons.cli.organism",)
    assert modules_for(["--version"]) == ()
    assert modules_for(["--help"]) == modules_for(["no-such-command"]) == tuple(COMMAND_MODULES)


def test_commons_version_loads_neither_the_node_the_store_numpy_nor_trio(capfd):
    loaded = _loaded_after("from commons.launch import main\n"
                           "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n" + REPORT)
    assert not any(v for m, v in loaded.items() if m != "commons.cli"), loaded


def test_the_session_end_hook_hands_over_without_loading_the_node_numpy_or_trio(tmp_path):
    env = {"COMMONS_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "commons", "init"], env={**os.environ, **env}, check=True,
                   capture_output=True, cwd=ROOT)
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    hook_input = json.dumps({"session_id": "s", "transcript_path": str(transcript), "cwd": str(tmp_path)}).encode()
    loaded = _loaded_after("from commons.launch import main\nassert main(['hook', 'session-end']) == 0\n" + REPORT,
                           env, hook_input)
    assert loaded["commons.cli"] and not any(v for m, v in loaded.items() if m != "commons.cli"), loaded
    (log,) = (tmp_path / "home").rglob("hook.log")
    assert "ingest handed to pid" in log.read_text()


def test_initialize_is_answered_before_the_node_layer_is_loaded(tmp_path):
    """The real `commons mcp` entry, fed initialize and tools/list on a pipe: what was loaded when
    each answer was written, and the answers."""
    env = {"COMMONS_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "commons", "init"], env={**os.environ, **env}, check=True,
                   capture_output=True, cwd=ROOT)
    script = (
        "import json, os, sys\n"
        "import commons.mcp_server.handshake as handshake\n"
        "seen, write = [], handshake.write_message\n"
        "def spy(fd, message):\n"
        "    seen.append({m: m in sys.modules for m in %r}); write(fd, message)\n"
        "handshake.write_message = spy\n"
        "from commons.launch import main\n"
        "assert main(['mcp']) == 0\n"
        "print(json.dumps(seen), file=sys.stderr)\n" % (HEAVY,))
    lines = [{"jsonrpc": "2.0", "id": 7, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
             {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}]
    done = subprocess.run([sys.executable, "-c", script], input="".join(json.dumps(m) + "\n" for m in lines).encode(),
                          capture_output=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stderr.decode().strip().splitlines()[-1])
    assert len(seen) == 2 and not any(seen[0].values()) and not any(seen[1].values()), seen
    replies = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [r["id"] for r in replies] == [7, 8]
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[0]["result"]["serverInfo"]["name"] == "commons"
    assert {t["name"] for t in replies[1]["result"]["tools"]} == {"recall", "lessons", "why", "remember", "forget"}


def test_the_handshake_answers_kept_ready_are_what_the_sdk_server_answers(tmp_path):
    # If this fails, the SDK or a tool changed: regenerate commons/mcp_server/handshake.json with
    #   .venv/bin/python -m commons.mcp_server.tools
    assert load_answers() == handshake_answers(HomeContext(Home(tmp_path / "c", tmp_path / "d"), None))


def test_after_the_handshake_the_sdk_takes_over_without_answering_initialize_twice(home, capsys, tmp_path):
    from tests.transcripts import cli

    assert cli(capsys, "init")[0] == 0
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "lessons", "arguments": {}}}]
    server = subprocess.Popen([sys.executable, "-m", "commons", "mcp"], cwd=tmp_path, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(ROOT), "COMMONS_HOME": str(home.config_dir)})
    server.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode())
    server.stdin.flush()
    replies = [json.loads(server.stdout.readline()) for _ in range(2)]  # the client waits for its answer
    server.stdin.close()
    assert server.wait(timeout=120) == 0, server.stderr.read().decode()
    assert server.stdout.read() == b""  # nothing more: no second answer to initialize
    assert [r["id"] for r in replies] == [1, 2], replies
    assert "result" in replies[1], replies[1]
    assert replies[1]["result"]["structuredContent"] == {"which": "own", "lessons": []}


def test_only_commons_mcp_with_global_options_is_the_mcp_face():
    assert mcp_options(["mcp"]) == {"at": None, "verbose": False}
    assert mcp_options(["-v", "--at", "2026-11-01", "mcp"]) == {"at": "2026-11-01", "verbose": True}
    assert mcp_options(["--at=2026-11-01", "mcp"]) == {"at": "2026-11-01", "verbose": False}
    assert mcp_options(["mcp", "--help"]) is None and mcp_options(["recall", "mcp"]) is None


def test_the_handshake_answers_from_the_file_and_stops_at_the_first_other_message():
    read_end, write_end = os.pipe()
    out_read, out_write = os.pipe()
    lines = [{"jsonrpc": "2.0", "id": "a", "method": "initialize", "params": {"protocolVersion": "1999-01-01"}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": "b", "method": "ping"},
             {"jsonrpc": "2.0", "id": "c", "method": "tools/list"},
             {"jsonrpc": "2.0", "id": "c2", "method": "prompts/list"},
             {"jsonrpc": "2.0", "id": "d", "method": "tools/call", "params": {"name": "lessons"}},
             {"jsonrpc": "2.0", "id": "e", "method": "tools/list"}]
    os.write(write_end, "".join(json.dumps(m) + "\n" for m in lines).encode())
    os.close(write_end)
    started = []
    from commons.mcp_server.handshake import LineReader, answer_handshake

    reader = LineReader(read_end)
    shook = answer_handshake(reader, out_write, on_initialized=lambda: started.append(1))
    os.close(out_write)
    with os.fdopen(out_read) as replies_file:
        replies = [json.loads(line) for line in replies_file]
    answers = load_answers()
    assert [r["id"] for r in replies] == ["a", "b", "c", "c2"]  # tools/call is the SDK's, and all after it
    assert replies[3]["result"]["prompts"] == []
    assert replies[0]["result"] == {"protocolVersion": answers["latest"], **answers["initialize"]}  # unknown version
    assert replies[2]["result"] == answers["lists"]["tools/list"][answers["latest"]]
    assert started == [1] and shook.initialize_id == "a" and len(shook.replay) == 3
    assert json.loads(shook.pending)["id"] == "d" and json.loads(reader.readline())["id"] == "e"
    os.close(read_end)
