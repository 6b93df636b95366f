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
