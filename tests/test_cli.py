"""The CLI through its entry point: exit codes, --json shapes, one-line errors."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from commons.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_init_then_id_prints_two_distinct_lowercase_hex_keys(home, capsys):
    assert run(capsys, "init")[0] == 0
    code, out, _ = run(capsys, "id", "--json")
    keys = json.loads(out)
    assert code == 0 and set(keys) == {"author", "transport"}
    for value in keys.values():
        assert len(value) == 64 and value == value.lower() and int(value, 16) >= 0
    assert keys["author"] != keys["transport"]


def test_init_twice_exits_zero_says_so_and_keeps_the_keys(home, capsys):
    run(capsys, "init")
    before = run(capsys, "id", "--json")[1]
    code, out, err = run(capsys, "init")
    assert code == 0 and out.startswith("this home is already initialised") and "nothing was changed" in out
    assert err == ""
    assert run(capsys, "id", "--json")[1] == before
    code, out, _ = run(capsys, "init", "--json")
    assert code == 0 and json.loads(out)["already_initialised"] is True


def test_init_with_network_key_sets_it_in_config(home, capsys):
    key = "ab" * 32
    run(capsys, "init", "--network-key", key)
    code, out, _ = run(capsys, "config", "--json")
    assert code == 0 and json.loads(out)["network"]["key"] == key


def test_bad_network_key_is_a_usage_error(home, capsys):
    code, _, err = run(capsys, "init", "--network-key", "xyz")
    assert code == 2 and "64 hex characters" in err


def test_id_before_init_says_what_to_do(home, capsys):
    code, _, err = run(capsys, "id")
    assert code == 1 and "run `commons init` first" in err and "Traceback" not in err


def test_unknown_command_is_a_usage_error(home, capsys):
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and "invalid choice" in err


def test_bad_config_fails_naming_the_file_and_key(home, capsys):
    run(capsys, "init")
    home.config_file.write_text("[trust]\nrequired = 'many'\n")
    code, _, err = run(capsys, "config")
    assert code == 1 and str(home.config_file) in err and "trust.required" in err


def test_bad_at_is_a_usage_error(home, capsys):
    run(capsys, "init")
    code, _, err = run(capsys, "--at", "yesterday", "config")
    assert code in (0, 2)  # config does not read the clock; a command that does refuses it
    code, _, err = run(capsys, "--at", "yesterday", "import", "-")
    assert code == 2 and "not an ISO time" in err


def test_export_import_round_trip_between_two_homes(tmp_path, monkeypatch, capsys):
    from tests.test_store import KEY, lesson  # a signed lesson by a fixed key

    a, b = tmp_path / "a", tmp_path / "b"
    for home in (a, b):
        monkeypatch.setenv("COMMONS_HOME", str(home))
        run(capsys, "init", "--network-key", "00" * 32)
    signed = lesson(KEY, "pip install fails on a managed Python")
    line = json.dumps({"type": "lesson", "id": signed.id.hex(), "body": signed.body.hex(), "signature": signed.signature.hex()})
    (tmp_path / "in.jsonl").write_text(line + "\n" + "{not json\n")
    monkeypatch.setenv("COMMONS_HOME", str(a))
    code, out, _ = run(capsys, "--at", "2024-10-04", "import", str(tmp_path / "in.jsonl"), "--json")
    report = json.loads(out)
    assert code == 1 and report["accepted"] == 1 and report["refused"][0]["line"] == 2
    code, exported, _ = run(capsys, "export")
    assert code == 0 and json.loads(exported)["id"] == signed.id.hex()
    (tmp_path / "export.jsonl").write_text(exported)
    monkeypatch.setenv("COMMONS_HOME", str(b))
    code, out, _ = run(capsys, "--at", "2024-10-04", "import", str(tmp_path / "export.jsonl"), "--json")
    assert code == 0 and json.loads(out) == {"accepted": 1, "duplicates": 0, "refused": []}
    code, out, _ = run(capsys, "store", "check", "--json")
    assert code == 0 and json.loads(out)["ok"] and json.loads(out)["records_checked"] == 1


def test_import_from_another_network_is_refused_with_reason(tmp_path, monkeypatch, capsys):
    from tests.test_store import KEY, lesson

    monkeypatch.setenv("COMMONS_HOME", str(tmp_path / "x"))
    run(capsys, "init")  # the public network, not the test lessons' all-zero one
    signed = lesson(KEY, "from elsewhere")
    line = json.dumps({"type": "lesson", "id": signed.id.hex(), "body": signed.body.hex(), "signature": signed.signature.hex()})
    (tmp_path / "in.jsonl").write_text(line + "\n")
    code, out, _ = run(capsys, "--at", "2024-10-04", "import", str(tmp_path / "in.jsonl"), "--json")
    assert code == 1 and "another network" in json.loads(out)["refused"][0]["reason"]


def test_help_lists_every_command():
    done = subprocess.run([sys.executable, "-m", "commons", "--help"], capture_output=True, text=True)
    assert done.returncode == 0
    for command in ("init", "id", "config", "export", "import", "store", "demo"):
        assert command in done.stdout


def _commands() -> list[str]:
    from commons.cli import build_parser

    (subparsers,) = [a for a in build_parser()._actions if a.dest == "command"]
    return sorted(subparsers.choices)


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert "usage: commons" in capsys.readouterr().out


def test_demo_over_daemons_promotes_then_revokes_and_names_every_node(tmp_path, capsys):
    """The whole demo: daemons carry a lesson, three verifications make it common on every
    reviewer's memory folder, and its revocation takes it (and its derived lesson) off all five."""
    code, out, _ = run(capsys, "demo", "--dir", str(tmp_path / "demo"), "--json")
    summary = json.loads(out)
    assert code == 0 and len(summary["nodes"]) >= 2
    review = summary["review"]["nodes"]
    assert len(review) == 5
    assert all(review[name]["had_common_before"] for name in ("grace", "linus", "hedy", "katherine"))
    assert not any(node["has_after"] for node in review.values())
    # A session ending made a lesson in its project's memory at once, before any night.
    assert summary["session_end_hook"]["node"] == "grace" and "pnpm" in summary["session_end_hook"]["lesson"]
    # The bundled sessions show what fixed each failure: every error lesson a node shows names it.
    index = [line for node in summary["nodes"] for folder in node["memory_folders"]
             if (Path(folder) / "MEMORY.md").exists()
             for line in (Path(folder) / "MEMORY.md").read_text().splitlines() if "— error," in line]
    assert index and all(re.search(r"; (?:`[^`]+` succeeded after it|it passed after `)", line) for line in index), index
    for node in summary["nodes"]:
        assert set(node) >= {"home", "public_key", "memory_folders"}
        # Lessons landed in each project's Claude Code auto memory under the person's own HOME.
        assert node["memory_folders"], node["name"]
        for folder in node["memory_folders"]:
            assert folder.startswith(str(Path(node["person_home"]) / ".claude" / "projects"))
            assert (Path(folder) / "MEMORY.md").is_file()
        done = subprocess.run(
            [sys.executable, "-m", "commons", "id", "--json"],
            env={"COMMONS_HOME": node["home"], "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
        )
        assert json.loads(done.stdout)["author"] == node["public_key"]


def test_status_json_names_everything_a_script_needs_without_a_daemon(home, capsys):
    run(capsys, "init")
    code, out, _ = run(capsys, "status", "--json")
    status = json.loads(out)
    assert code == 0 and status["daemon"] is False and status["listen"] is None
    assert set(status) >= {"peers_connected", "records", "lessons", "received_lessons", "last_ingest",
                           "last_sleep", "last_sync", "publishing"}
    assert set(status["records"]["by_type"]) == {"revocation", "vouch", "lesson", "verification"}
    assert status["publishing"] is False


def test_an_empty_listing_names_the_status_asked_for_and_all_reads_as_none_yet(home, capsys):
    run(capsys, "init")
    assert run(capsys, "lessons", "--status", "all")[1].strip() == "no lessons yet"
    assert run(capsys, "lessons", "--status", "candidate")[1].strip() == "no candidate lessons"


def test_only_the_daemon_command_opens_the_asyncio_bridge():
    """A command's store runs inline, so it runs in plain trio; `commons daemon` reaches aiosqlite's
    thread and zeroconf, which need trio-asyncio's loop."""
    import commons.cli as cli

    parser = cli.build_parser()
    assert parser.parse_args(["daemon"]).asyncio_bridge is True
    for argv in (["lessons"], ["sleep"], ["ingest"], ["render"], ["peers", "add", "127.0.0.1:1", "00"]):
        assert getattr(parser.parse_args(argv), "asyncio_bridge", False) is False
