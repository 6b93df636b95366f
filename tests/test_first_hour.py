"""The first hour of a new user (issue #28 item 4): what goes wrong before anything is learned."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from commons.daemon.main import bind_listeners
from commons.errors import CommonsError
from tests.daemons import Node

ROOT = Path(__file__).resolve().parents[1]


def _taken_port() -> socket.socket:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder


async def test_a_taken_default_port_gives_way_to_the_next_free_one(tmp_path):
    with _taken_port() as holder:
        port = holder.getsockname()[1]
        listeners = await bind_listeners("127.0.0.1", port, 10, tmp_path / "config.toml")
        try:
            bound = listeners[0].socket.getsockname()[1]
            assert port < bound < port + 10
        finally:
            for listener in listeners:
                await listener.aclose()


async def test_a_chosen_port_that_is_taken_is_said_in_one_line_naming_it_and_how_to_choose(tmp_path):
    with _taken_port() as holder:
        port = holder.getsockname()[1]
        with pytest.raises(CommonsError) as refused:
            await bind_listeners("127.0.0.1", port, 1, tmp_path / "config.toml")
    said = str(refused.value)
    assert f"port {port} on 127.0.0.1 is taken" in said and "[network] listen" in said
    assert str(tmp_path / "config.toml") in said and "\n" not in said


def test_a_second_daemon_on_a_taken_port_exits_with_one_line_and_no_traceback(tmp_path):
    node = Node(tmp_path, "second")
    with _taken_port() as holder:
        port = holder.getsockname()[1]
        done = node.cli("daemon", "--listen", f"127.0.0.1:{port}", check=False)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(f"commons: error: port {port} on 127.0.0.1 is taken")
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_commons_config_prints_toml_that_reads_back_as_the_same_config(home, capsys):
    import tomllib

    from commons.config import load_config, parse_config
    from tests.transcripts import cli

    assert cli(capsys, "init")[0] == 0
    with open(home.config_file, "a", encoding="utf-8") as handle:
        handle.write('\n[[peers]]\naddress = "192.0.2.1:7346"\ntransport_key = "' + "ab" * 32 + '"\n')
    code, out, _ = cli(capsys, "config")
    assert code == 0
    printed = tomllib.loads(out)  # Python's tuples, True and quotes would not parse
    assert printed["network"]["listen"] == "127.0.0.1:7346" and isinstance(printed["ingest"]["roots"], list)
    assert parse_config(out, "printed") == load_config(home.config_file)


def test_the_config_init_writes_is_toml_and_so_is_every_default_it_shows_uncommented():
    import tomllib

    from commons.config import Config, default_config_text, parse_config

    text = default_config_text(bytes(32))
    assert tomllib.loads(text)["network"]["key"] == "00" * 32
    body = text.split("# Peers to dial", 1)[0]  # the peers example holds a placeholder key
    uncommented = "\n".join(line.removeprefix("# ") if line.startswith(("# [", "# ")) and " = " in line
                            or line.startswith("# [") else line for line in body.splitlines())
    assert parse_config(uncommented, "uncommented") == Config(network=Config().network.__class__(key="00" * 32))


def test_a_misspelled_flag_is_named_not_the_word_after_it_and_exits_2(home, capsys):
    from tests.transcripts import cli

    code, _, err = cli(capsys, "lessons", "--stauts", "all")
    assert code == 2
    assert err.strip().splitlines()[-1] == "commons: error: unrecognized option --stauts (did you mean --status?)"
    code, _, err = cli(capsys, "recall", "--kk", "3", "pip")
    assert code == 2 and "--kk" in err.strip().splitlines()[-1]
    code, _, err = cli(capsys, "lessons", "--stat", "bogus")  # a prefix is that option: its value is blamed
    assert code == 2 and "invalid choice: 'bogus'" in err


def test_recall_takes_the_words_of_the_situation_unquoted(home, capsys, tmp_path):
    from tests.test_organism import day2_pip_twice_and_a_correction, ingest
    from tests.transcripts import cli, cli_json

    assert cli(capsys, "init")[0] == 0
    ingest(capsys, day2_pip_twice_and_a_correction(tmp_path / "sessions"), "2026-11-02T18:00Z")
    cli_json(capsys, "sleep", at="2026-11-03T03:00Z")
    quoted = cli_json(capsys, "recall", "pip install externally managed", "-k", "3", at="2026-11-03T09:00Z")
    unquoted = cli_json(capsys, "recall", "pip", "install", "externally", "managed", "-k", "3", at="2026-11-03T09:00Z")
    assert unquoted and [h["id"] for h in unquoted] == [h["id"] for h in quoted]


def test_a_render_with_nothing_to_say_writes_no_memory_file_and_leaves_none_empty(tmp_path):
    from commons.render.memory_folder import INDEX, Layer, file_name, markers, render
    from tests.test_render import item

    folder = tmp_path / "memory"
    render(folder, [Layer("own", []), Layer("common", [])])
    assert not folder.exists()  # nothing learned: no folder, no MEMORY.md

    render(folder, [Layer("own", [item(1)]), Layer("common", [])])
    index = (folder / INDEX).read_text()
    assert markers("own")[0] in index and markers("common")[0] not in index  # the silent layer has no section

    render(folder, [Layer("own", []), Layer("common", [])], previous_files=[file_name(item(1).id)])
    assert not (folder / INDEX).exists() and not list(folder.iterdir())  # it held only commons' words

    (folder / INDEX).write_text("# my notes\n\nkeep this\n")
    render(folder, [Layer("own", [item(2)])])
    render(folder, [Layer("own", [])], previous_files=[file_name(item(2).id)])
    assert (folder / INDEX).read_text() == "# my notes\n\nkeep this\n"  # the person's file, as it was


def test_status_tells_of_inbound_peers_and_their_last_sync_and_the_daemon_logs_who_connected(tmp_path):
    import json

    from tests.daemons import wait_for

    server, dialer = Node(tmp_path, "server"), Node(tmp_path, "dialer")
    server.sign_lessons(3)
    server.cli("publish", "on")
    try:
        server.start()
        dialer.start()
        address = server.address
        dialer.cli("peers", "add", address, server.transport)
        wait_for(lambda: len(dialer.keys("lesson")) == 3, 30, "the lessons to arrive")
        wait_for(lambda: (server.daemon_info() or {}).get("last_sync") is not None, 20, "the server to note the sync")
        status = json.loads(server.cli("status", "--json").stdout)
        assert status["peers_connected"] == 1 and status["last_sync"] is not None  # it was dialled, not dialling
        assert status["sessions"][0]["key"] == dialer.transport and status["sessions"][0]["direction"] == "inbound"
        assert "1 peer connected (1 inbound, 0 outbound)" in server.cli("status").stdout
    finally:
        dialer.stop()
        server.stop()
    logged = server.stderr() + "".join(p.read_text() for p in server.path.rglob("*.log"))
    assert f"peer {dialer.transport[:12]} connected from 127.0.0.1:" in logged and "(inbound)" in logged
    dialled = dialer.stderr() + "".join(p.read_text() for p in dialer.path.rglob("*.log"))
    assert f"peer {server.transport[:12]} connected at {address} (outbound)" in dialled
    after = json.loads(server.cli("status", "--json").stdout)  # its daemon gone, the sync still told
    assert after["daemon"] is False and after["last_sync"] is not None


def test_the_demo_tells_how_to_run_commons_when_no_path_finds_it(monkeypatch, tmp_path):
    from commons.cli.demo import commons_command

    venv_bin = Path(sys.executable).parent
    if not (venv_bin / "commons").is_file():
        pytest.skip("commons is not installed beside this interpreter")
    monkeypatch.setenv("PATH", str(tmp_path))  # `make demo`: .venv/bin is on no PATH
    monkeypatch.chdir(tmp_path)
    told = commons_command()
    assert told != "commons" and Path(told).resolve() == (venv_bin / "commons").resolve()
    monkeypatch.setenv("PATH", str(venv_bin))
    assert commons_command() == "commons"
    assert subprocess.run([told, "--version"], capture_output=True, text=True).stdout.startswith("commons ")
