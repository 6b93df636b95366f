"""Lessons that are true, from small hand-written transcripts: a stale edit mended by a look at the
file in the shell names the look; one session's one-off missing script makes no lesson."""

from __future__ import annotations

from pathlib import Path

from commons.home import Home
from tests.transcripts import cli_json, lessons_after_a_night, session

STALE = "<tool_use_error>String to replace not found in file.\nString: def total(rows):</tool_use_error>"


def _edit_fails_then_look_then_edit(folder: Path, day: int) -> Path:
    s = session(folder, day, f"stale-{day}")
    s.user("rename total to sum_rows")
    edit = {"file_path": "/home/dev/ledger/src/report.py", "old_string": "def total(rows):", "new_string": "def sum_rows(rows):"}
    (tool_id,) = s.say(("Edit", edit))
    s.result(tool_id, STALE, error=True)
    s.bash("sed -n '1,40p' src/report.py", "Show the file", "def total(rows, *, skip=()):\n    return sum(rows)")
    s.tool("Edit", {**edit, "old_string": "def total(rows, *, skip=()):"}, "The file has been updated.")
    s.say(("text", "Renamed."))
    s.write()
    return s.path


def _missing_script(folder: Path, day: int) -> Path:
    s = session(folder, day, f"missing-{day}")
    s.user("run the director")
    for flag in ("", " --plan"):
        s.bash(f"claude-agent director{flag}", "Run it",
               "Error: /usr/bin/python3: can't open file '/home/dev/ledger/tools/director.py': [Errno 2] "
               "No such file or directory", exit_code=2)
    s.say(("text", "The director script is not there; stopping."))
    s.write()
    return s.path


def test_a_stale_edit_mended_by_a_shell_look_in_two_sessions_names_the_look_and_the_edit_made_again(
        tmp_path: Path, capsys, home: Home):
    lessons = lessons_after_a_night(capsys, [_edit_fails_then_look_then_edit(tmp_path, day) for day in (3, 4)])
    (stale,) = [l for l in lessons if "String to replace not found" in l["text"]]
    assert stale["fix"]["evidence"] == "read-before-retry"
    assert stale["fix"]["step"].startswith("sed -n '1,40p'")
    assert "it succeeded after the file was re-read (`sed -n '1,40p' <path>`) and edited again (`Edit <path>`)" \
        in stale["text"]


def test_one_sessions_missing_script_never_mended_makes_no_lesson_but_two_sessions_do(tmp_path: Path, capsys,
                                                                                      home: Home):
    cli_json(capsys, "init")
    cli_json(capsys, "ingest", str(_missing_script(tmp_path, 3)), at="2026-11-03T18:00Z")
    cli_json(capsys, "sleep", at="2026-11-04T03:00Z")
    assert [l for l in cli_json(capsys, "lessons", "--status", "all", at="2026-11-04T04:00Z")
            if "can't open file" in l["text"]] == []
    cli_json(capsys, "ingest", str(_missing_script(tmp_path, 4)), at="2026-11-04T18:00Z")
    cli_json(capsys, "sleep", at="2026-11-05T03:00Z")
    (lesson,) = [l for l in cli_json(capsys, "lessons", "--status", "all", at="2026-11-05T04:00Z")
                 if "can't open file" in l["text"]]
    assert lesson["fix"] is None and "no fix was seen" in lesson["text"]
