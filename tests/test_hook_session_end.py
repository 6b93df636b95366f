"""`commons hook session-end`: the ended session's transcript is ingested at once, and nothing the
hook meets ever fails the agent's session."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commons.home import Home
from commons.integrations.session_end import HookInputError, parse_hook_input
from commons.integrations.claude_code import slug as slug_of
from tests.claude_homes import Machine, make_machine, write_session
from tests.transcripts import cli, cli_json, pip_fails, session

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Home) -> Machine:
    return make_machine(tmp_path, monkeypatch)


def _hook_input(transcript: Path, cwd: Path) -> bytes:
    return json.dumps({
        "session_id": transcript.stem, "transcript_path": str(transcript), "cwd": str(cwd),
        "permission_mode": "default", "hook_event_name": "SessionEnd", "reason": "prompt_input_exit",
    }).encode()  # fmt: skip


class _Stdin(io.BufferedReader):
    """The hook's stdin: a real pipe holding ``data``, closed at the writing end."""

    def __init__(self, data: bytes) -> None:
        read, write = os.pipe()
        os.write(write, data)
        os.close(write)
        super().__init__(io.FileIO(read, "rb"))


def _hook(capsys, monkeypatch, data: bytes, *flags: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    return cli(capsys, "hook", "session-end", *flags)


def _log(home: Home) -> str:
    return (home.log_dir / "hook.log").read_text()


def test_hook_ingests_the_ended_sessions_transcript(capsys, monkeypatch, machine: Machine, home: Home):
    assert cli(capsys, "init")[0] == 0
    transcript = write_session(machine, machine.worktree)
    code, out, _ = _hook(capsys, monkeypatch, _hook_input(transcript, machine.worktree), "--wait")
    assert code == 0 and out == ""
    kinds = [e["kind"] for e in cli_json(capsys, "episodes")["episodes"]]
    assert sorted(kinds) == ["correction", "error", "session"]
    assert f"(prompt_input_exit, {machine.repo})" in _log(home)  # the session's project: the git root
    # The same session ending again (a resumed session) adds nothing.
    assert _hook(capsys, monkeypatch, _hook_input(transcript, machine.worktree), "--wait")[0] == 0
    assert len(cli_json(capsys, "episodes")["episodes"]) == 3


def test_hook_detaches_the_ingest_and_the_episodes_still_arrive(capsys, machine: Machine, home: Home):
    assert cli(capsys, "init")[0] == 0
    transcript = write_session(machine, machine.repo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "commons", "hook", "session-end"],
        input=_hook_input(transcript, machine.repo), capture_output=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == b""
    deadline = time.monotonic() + 60
    while "1 session" not in _log(home) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "ingest handed to pid" in _log(home) and "1 session, 1 error, 1 correction" in _log(home)


@pytest.mark.parametrize(
    "data, logged",
    [(b"", "no hook input"), (b"\x00\xffnot json", "not JSON"), (b"[1, 2]", "not an object"),
     (b'{"session_id": "s"}', "no transcript_path")],
)  # fmt: skip
def test_hook_exits_0_on_garbage_input_and_logs_it(capsys, monkeypatch, home: Home, data, logged):
    assert cli(capsys, "init")[0] == 0
    code, out, _ = _hook(capsys, monkeypatch, data)
    assert code == 0 and out == ""
    assert logged in _log(home)


def test_hook_exits_0_on_a_missing_transcript(capsys, monkeypatch, machine: Machine, home: Home):
    assert cli(capsys, "init")[0] == 0
    gone = machine.claude / "projects" / "-gone" / "0000.jsonl"
    code, out, _ = _hook(capsys, monkeypatch, _hook_input(gone, machine.repo), "--wait")
    assert code == 0 and out == ""
    assert f"cannot read {gone}" in _log(home)


def test_hook_exits_0_without_an_initialised_home_and_creates_none(capsys, monkeypatch, machine: Machine, home: Home):
    transcript = write_session(machine, machine.repo)
    code, out, err = _hook(capsys, monkeypatch, _hook_input(transcript, machine.repo), "--wait")
    assert code == 0 and out == ""
    assert "commons init" in err
    assert not home.data_dir.exists()


def test_hook_exits_0_when_the_store_cannot_be_opened(capsys, monkeypatch, machine: Machine, home: Home):
    assert cli(capsys, "init")[0] == 0
    home.database.parent.mkdir(parents=True, exist_ok=True)
    home.database.write_bytes(b"this is not an SQLite database" * 100)
    transcript = write_session(machine, machine.repo)
    code, out, _ = _hook(capsys, monkeypatch, _hook_input(transcript, machine.repo), "--wait")
    assert code == 0 and out == ""
    assert "session-end hook failed" in _log(home)


def test_hook_input_is_parsed_from_claude_codes_json_and_unknown_keys_are_ignored():
    event = parse_hook_input(b'{"session_id": "abc", "transcript_path": "/t/abc.jsonl", "cwd": "/w", '
                             b'"hook_event_name": "SessionEnd", "reason": "clear", "new_key": {"x": 1}}')  # fmt: skip
    assert (event.session_id, str(event.transcript_path), event.cwd, event.reason) == ("abc", "/t/abc.jsonl", "/w", "clear")
    with pytest.raises(HookInputError, match="not an absolute path"):
        parse_hook_input(b'{"transcript_path": "rel/abc.jsonl"}')
    with pytest.raises(HookInputError, match="over the"):
        parse_hook_input(b" " * (2 * 1024 * 1024))


def test_hook_ingests_the_sessions_subagent_transcripts_too(capsys, monkeypatch, machine: Machine, home: Home):
    assert cli(capsys, "init")[0] == 0
    transcript = write_session(machine, machine.repo)
    agent = session(transcript.with_suffix("") / "subagents", 2, "agent", cwd=str(machine.repo))
    agent.path = agent.path.with_name("agent-a1b2c3.jsonl")
    agent.user("install requests")
    pip_fails(agent, "requests")
    agent.write()
    assert _hook(capsys, monkeypatch, _hook_input(transcript, machine.repo), "--wait")[0] == 0
    kinds = sorted(e["kind"] for e in cli_json(capsys, "episodes")["episodes"])
    assert kinds == ["correction", "error", "error", "session", "session"]


def test_hook_exits_0_when_its_log_folder_cannot_be_made(capsys, monkeypatch, machine: Machine, home: Home):
    assert cli(capsys, "init")[0] == 0
    home.log_dir.parent.mkdir(parents=True, exist_ok=True)
    home.log_dir.write_text("a file where the log folder should be")
    code, out, err = _hook(capsys, monkeypatch, b"not json")
    assert code == 0 and out == "" and "not JSON" in err


def test_the_hook_makes_a_correction_a_lesson_in_the_projects_memory_before_any_night(capsys, machine: Machine,
                                                                                    home: Home):
    """The real hook, detached as Claude Code runs it: the correction is in the repository's
    MEMORY.md (a worktree's session is the repository's project) before any night, and the
    person's own lines are still there, first."""
    assert cli(capsys, "init")[0] == 0
    transcript = write_session(machine, machine.worktree)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "commons", "hook", "session-end"],
        input=_hook_input(transcript, machine.worktree), capture_output=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == b""
    index = machine.memory / "MEMORY.md"
    deadline = started + 60  # a bound on the wait (≈ 2 s idle, 3 s with the whole suite on 2 cores)
    # the detached ingest renders the memory first and logs its outcome after: wait for both
    while not ("this project uses uv" in index.read_text() and "nap learned" in _log(home)) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    text = index.read_text()
    assert "this project uses uv" in text, _log(home)
    assert text.startswith("# Memory\n\n- The staging database is read-only on Fridays.\n")
    assert "nap learned 1" in _log(home)


def test_a_failure_with_no_fix_seen_waits_for_the_night(capsys, monkeypatch, machine: Machine, home: Home):
    assert cli(capsys, "init")[0] == 0
    for day in (2, 3):  # pip fails twice, nothing fixes it: a lesson only the night may make
        s = session(machine.claude / "projects" / slug_of(machine.repo), day, "pip", cwd=str(machine.repo))
        s.user("add httpx")
        pip_fails(s, "httpx")
        s.write()
        assert _hook(capsys, monkeypatch, _hook_input(s.path, machine.repo), "--wait")[0] == 0
    assert cli_json(capsys, "lessons") == []
    assert "nap learned 0, joined 0, 2 left for the night" in _log(home)
