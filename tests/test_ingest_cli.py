"""`commons ingest`, `commons archive`, `commons episodes` through the CLI's entry point."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from commons.cli import main
from tests.conftest import SHARED_DIR

TRANSCRIPTS = SHARED_DIR / "transcripts"
needs_shared = pytest.mark.skipif(
    not TRANSCRIPTS.is_dir(),
    reason=f"real transcripts not found in {TRANSCRIPTS}: set COMMONS_SHARED_DIR to the folder holding transcripts/",
)
DEMO = Path(__file__).resolve().parents[1] / "commons" / "demo" / "sessions"

# What reading each real transcript yields (checked by reading the files; see
# tests/test_ingest_claude_code.py for the episodes themselves).
EXPECTED = {
    "marot__spotter__short.jsonl": {"skipped_lines": 0, "error": 0, "correction": 0},
    "marot__spotter__tool_heavy.jsonl": {"skipped_lines": 0, "error": 0, "correction": 1},
    "marot__spotter__agent-a2898e3.jsonl": {"skipped_lines": 0, "error": 0, "correction": 0},  # a probe and its cascade
    "daaain__claude-code-log__edge_cases.jsonl": {"skipped_lines": 3, "error": 1, "correction": 0},
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def initialised(request, capsys):
    """Every test here reads into an initialised home (ingest refuses a home without keys)."""
    if "home" in request.fixturenames:
        request.getfixturevalue("home")
        assert main(["init"]) == 0
        capsys.readouterr()


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@needs_shared
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_transcript_yields_its_session_errors_and_corrections(home, capsys, name):
    report = run_json(capsys, "ingest", str(TRANSCRIPTS / name))
    want = EXPECTED[name]
    assert report["transcripts"] == 1 and report["skipped_lines"] == want["skipped_lines"]
    assert report["episodes"] == {"session": 1, "error": want["error"], "correction": want["correction"]}
    sessions = run_json(capsys, "episodes", "--kind", "session")["episodes"]
    assert [s["sidechain"] for s in sessions] == ["agent-" in name]


@needs_shared
def test_ingesting_the_real_transcripts_twice_adds_nothing(home, capsys):
    first = run_json(capsys, "ingest", str(TRANSCRIPTS))
    second = run_json(capsys, "ingest", str(TRANSCRIPTS))
    assert first["transcripts"] == second["transcripts"] == 4
    assert first["episodes"] == {"session": 4, "error": 1, "correction": 1} and first["skipped_lines"] == 3
    assert second["episodes"] == {"session": 0, "error": 0, "correction": 0} and second["skipped_lines"] == 0
    assert len(run_json(capsys, "episodes", "--limit", "0")["episodes"]) == 6


@needs_shared
def test_json_report_has_the_promised_keys(home, capsys):
    report = run_json(capsys, "ingest", str(TRANSCRIPTS / "marot__spotter__short.jsonl"))
    assert {"transcripts", "skipped_lines", "episodes"} <= set(report)
    assert set(report["episodes"]) == {"session", "error", "correction"}
    assert report["unreadable"] == []


@needs_shared
def test_archive_keeps_the_bytes_each_transcript_was_read_from(home, capsys):
    from commons.ingest.archive import Archive

    run_json(capsys, "ingest", str(TRANSCRIPTS))
    listing = run_json(capsys, "archive")
    assert set(listing) >= {"transcripts", "totals"}
    rows = {Path(r["original_path"]).name: r for r in listing["transcripts"]}
    assert set(rows) == set(EXPECTED)
    archive = Archive(home.archive_dir)
    for name, row in rows.items():
        assert set(row) >= {"key", "original_path", "bytes", "stored_bytes", "chunks"}
        assert row["key"] == f"claude_code/transcripts/{name}"
        data = (TRANSCRIPTS / name).read_bytes()
        # Complete lines are archived; edge_cases ends in a line still being written (no "\n").
        assert archive.read(row["key"]) == data[: data.rfind(b"\n") + 1] == data[: row["bytes"]]
        assert 0 < row["stored_bytes"] < row["bytes"] and row["chunks"] >= 1
    totals = listing["totals"]
    assert totals["transcripts"] == 4 and totals["bytes"] == sum(r["bytes"] for r in rows.values())


def test_unreadable_file_is_named_exit_code_1_and_the_others_are_ingested(home, capsys, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(DEMO / "ada" / "day-02-rates-client.jsonl", folder)
    (folder / "gone.jsonl").symlink_to(tmp_path / "deleted.jsonl")
    code, out, err = run(capsys, "ingest", str(folder), str(tmp_path / "missing.jsonl"), "--json")
    report = json.loads(out)
    assert code == 1
    assert {u["path"] for u in report["unreadable"]} == {str(folder / "gone.jsonl"), str(tmp_path / "missing.jsonl")}
    assert f"cannot read {folder / 'gone.jsonl'}" in err
    assert report["transcripts"] == 1 and report["episodes"] == {"session": 1, "error": 1, "correction": 1}


def test_growing_transcript_adds_only_the_new_episodes(home, capsys, tmp_path):
    data = (DEMO / "ada" / "day-04-async-tests.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:3]))
    first = run_json(capsys, "ingest", str(path))
    path.write_bytes(data)
    second = run_json(capsys, "ingest", str(path))
    assert first["episodes"] == {"session": 1, "error": 0, "correction": 0}
    assert second["episodes"] == {"session": 0, "error": 2, "correction": 1}
    assert second["bytes_read"] == len(data) - len(b"".join(lines[:3]))


def test_transcript_rewritten_in_place_is_read_again(home, capsys, tmp_path):
    path = tmp_path / "s.jsonl"
    shutil.copy(DEMO / "ada" / "day-04-async-tests.jsonl", path)
    run_json(capsys, "ingest", str(path))
    shutil.copy(DEMO / "grace" / "day-03-ci-install.jsonl", path)
    report = run_json(capsys, "ingest", str(path))
    assert report["rewritten"] == [str(path)]
    assert report["episodes"] == {"session": 1, "error": 1, "correction": 1}
    (row,) = run_json(capsys, "archive")["transcripts"]
    assert row["generations"] == 2 and row["bytes"] == path.stat().st_size


def test_without_paths_ingest_reads_the_configured_roots(home, capsys, tmp_path):
    home.config_dir.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(f"[ingest]\nroots = [{json.dumps(str(DEMO / 'linus'))}]\n")
    report = run_json(capsys, "ingest")
    assert report["transcripts"] == 3 and report["episodes"] == {"session": 3, "error": 5, "correction": 2}


def test_episodes_json_lists_kind_text_fields_session_and_iso_time(home, capsys):
    run_json(capsys, "ingest", str(DEMO / "ada"))
    everything = run_json(capsys, "episodes", "--limit", "0")["episodes"]
    assert [e["kind"] for e in everything].count("error") == 5 and len(everything) == 10
    assert [e["at"] for e in everything] == sorted(e["at"] for e in everything)
    for episode in everything:
        assert set(episode) >= {"kind", "session", "at", "uid"}
        assert episode["at"].startswith("2026-11-") and episode["at"].endswith("Z")
    (error,) = [e for e in everything if "externally-managed" in e.get("failure", "") and "httpx" in e["target"]]
    assert error["tool"] == "Bash" and error["target"] == "pip install httpx"
    corrections = run_json(capsys, "episodes", "--kind", "correction")["episodes"]
    assert {e["kind"] for e in corrections} == {"correction"} and all(e["said"] for e in corrections)
    latest = run_json(capsys, "episodes", "--limit", "2")["episodes"]
    assert latest == everything[-2:]


def test_episodes_and_archive_say_what_they_hold_in_text(home, capsys):
    run(capsys, "ingest", str(DEMO / "grace"))
    code, out, _ = run(capsys, "episodes", "--kind", "error")
    assert code == 0 and "npm ci" in out and "Cannot find module '@tidepool/icons'" in out
    code, out, _ = run(capsys, "archive")
    assert code == 0 and "claude_code/grace/day-06-build-icons.jsonl" in out and "3 transcripts" in out


def test_episodes_before_any_ingest_says_what_to_do(home, capsys):
    code, out, _ = run(capsys, "episodes")
    assert code == 0 and "commons ingest" in out


def test_negative_limit_is_a_usage_error(home, capsys):
    code, _, err = run(capsys, "episodes", "--limit", "-1")
    assert code == 2 and "--limit -1" in err


def test_help_names_the_three_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(command in out for command in ("ingest", "archive", "episodes"))


def test_ingest_of_a_file_no_agent_wrote_says_so_in_one_line_and_archives_nothing(home, capsys, tmp_path):
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    code, out, err = run(capsys, "ingest", str(passwd))
    assert code == 1
    assert err.strip().splitlines() == [
        f"commons: {passwd} is not a transcript of Claude Code, Codex or Gemini CLI; not read"]
    assert "0 transcripts" in out
    assert run_json(capsys, "archive")["transcripts"] == []
