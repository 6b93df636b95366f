"""A growing transcript read as the daemon reads it (issue #25) makes the episodes one read makes.

The daemon reads a session while the agent writes it: each read takes the bytes past the offset
the last one saved, with the parse state saved as JSON in the store. A call's line and its
result's, a failure and its fix, the agent's claim and the person's reply can then fall in two or
three reads. For Claude Code's and Gemini CLI's JSONL, cut at every line boundary (and inside
lines: a line still being written), the stored episodes must be those of one read. A transcript
truncated or replaced between two reads is read again from its start, once, and said so.
"""

from __future__ import annotations

import itertools
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode, SessionEpisode
from commons.ingest import claude_code, gemini
from commons.ingest.archive import Archive
from commons.ingest.ingester import IngestReport, ingest_paths
from commons.ingest.readers import ParseState, Reader
from commons.store import episodes as episode_store
from commons.store.db import Store
from commons.store.episodes import episode_key

AGENTS = Path(__file__).parent / "fixtures" / "agents"
GEMINI_RECORDED = AGENTS / "gemini-0.61.0" / ".gemini" / "tmp" / "tidepool" / "chats" / "session-2026-12-01T22-17-9e91d5ac.jsonl"


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def stored_after_reads(reader: Reader, data: bytes, cuts: tuple[int, ...], hint: str = "session") -> dict[str, Any]:
    """The episodes the store holds after reading `data` as it grew to each of `cuts`, then whole:
    every read from the offset saved by the one before, with the state round-tripped through JSON
    as `ingester._read_transcript` and the store do; a later form of an episode replaces the
    earlier (the store's key is its kind and uid)."""
    state: ParseState | None = None
    held: dict[str, Any] = {}
    for end in (*cuts, len(data)):
        offset = state.offset if state is not None else 0
        result = reader.parse(data[offset:end], state, session_hint=hint, file_time=1.0)
        state = ParseState.from_json(result.state.to_json())
        held.update((episode_key(e), e) for e in result.episodes)
    return held


def line_ends(data: bytes) -> list[int]:
    """Every boundary between two lines (the first byte of each line but the first)."""
    return [i + 1 for i, byte in enumerate(data[:-1]) if byte == ord("\n")]


def inside_lines(data: bytes) -> list[int]:
    """Cuts inside each line, as a read finds a line half written: after its first byte, at its
    middle, and just before its newline."""
    starts = [0, *line_ends(data)]
    ends = [*starts[1:], len(data)]
    return sorted({cut for start, end in zip(starts, ends) for cut in (start + 1, (start + end) // 2, end - 1)
                   if start < cut < end})


def assert_read_apart_as_whole(reader: Reader, data: bytes) -> dict[str, Any]:
    whole = stored_after_reads(reader, data, ())
    for cut in line_ends(data) + inside_lines(data):
        assert stored_after_reads(reader, data, (cut,)) == whole, f"read in two at byte {cut}"
    for cuts in itertools.combinations(line_ends(data), 2):
        assert stored_after_reads(reader, data, cuts) == whole, f"read in three at bytes {cuts}"
    return whole


def kinds(held: dict[str, Any]) -> tuple[list[ErrorEpisode], list[CorrectionEpisode], list[SessionEpisode]]:
    episodes = list(held.values())
    return ([e for e in episodes if isinstance(e, ErrorEpisode)], [e for e in episodes if isinstance(e, CorrectionEpisode)],
            [e for e in episodes if isinstance(e, SessionEpisode)])


# -- Claude Code --------------------------------------------------------------------------------

REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
            "edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n"
            "use the project's venv, not the system pip")


def _cc(kind: str, uuid: str, second: int, content: Any, **extra: Any) -> bytes:
    role = "assistant" if kind == "assistant" else "user"
    message = {"role": role, "content": content} | ({"id": f"msg_{uuid}"} if role == "assistant" else {})
    return _line({"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/ada/code/tidepool",
                  "sessionId": "469d4a74", "version": "2.1.197", "type": kind, "message": message, "uuid": uuid,
                  "timestamp": f"2026-12-01T22:30:{second:02d}.000Z"} | extra)


def _use(use_id: str, command: str, name: str = "Bash", **more: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": {"command": command, "description": "d"} | more}


def _answer(use_id: str, text: str, is_error: bool) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": use_id, "content": text, "is_error": is_error}]


CLAUDE_SESSION = b"".join([
    _line({"type": "file-history-snapshot", "messageId": "s0", "snapshot": {"trackedFileBackups": {}}}),
    _cc("user", "u1", 1, "run the checks in this project"),
    _cc("assistant", "a1", 2, [{"type": "text", "text": "I'll run the checks."}, _use("t1", "python3 check.py")]),
    _cc("user", "r1", 3, _answer("t1", "Exit code 1\nerror: config.ini not found: the checks read [checks] mode from it", True)),
    _line({"type": "progress", "sessionId": "469d4a74", "data": {"type": "hook_progress"}, "uuid": "p1"}),
    # A subagent's records kept in the main transcript: its prompt is the agent's, and its own call fails.
    _cc("user", "sc1", 4, "Find where the checks read their mode", isSidechain=True, agentId="a77"),
    _cc("assistant", "sc2", 5, [_use("t2", "grep -rn mode .")], isSidechain=True, agentId="a77"),
    _cc("user", "sc3", 6, _answer("t2", "Exit code 2\ngrep: ./secrets: Permission denied", True), isSidechain=True,
        agentId="a77"),
    # One message written as two records, the call in both; its edit is the fix.
    _cc("assistant", "a2", 7, [_use("t3", "", name="Write", file_path="/home/ada/code/tidepool/config.ini",
                                    content="[checks]\nmode = strict\n")]),
    _cc("assistant", "a2b", 7, [_use("t3", "", name="Write", file_path="/home/ada/code/tidepool/config.ini",
                                     content="[checks]\nmode = strict\n")]),
    _cc("user", "r3", 8, _answer("t3", "File created successfully at: /home/ada/code/tidepool/config.ini", False)),
    _cc("assistant", "a3", 9, [_use("t4", "python3 check.py")]),
    _cc("user", "r4", 10, _answer("t4", "3 checks passed", False)),
    _cc("assistant", "a4", 11, [{"type": "text", "text": "The checks pass now. Install the dependencies with "
                                                         "`pip install -r requirements.txt`."}]),
    _cc("user", "u2", 12, "no, that is wrong: use uv instead of pip in this project"),
    _cc("assistant", "a5", 13, [_use("t5", "pip install -r requirements.txt")]),
    _cc("user", "r5", 14, _answer("t5", REJECTED, True)),
    _cc("assistant", "a6", 15, [_use("t6", "uv sync")]),
    _cc("user", "r6", 16, [{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
    _cc("user", "u3", 17, "stop, that's not it either: run uv pip sync requirements.txt"),
    _cc("assistant", "a7", 18, [_use("t7", "uv pip sync requirements.txt")]),
    _cc("user", "r7", 19, _answer("t7", "Exit code 2\nerror: No virtual environment found", True)),
])  # fmt: skip


def test_a_claude_code_session_read_apart_at_any_byte_is_stored_as_read_whole():
    whole = assert_read_apart_as_whole(claude_code.READER, CLAUDE_SESSION)
    errors, corrections, sessions = kinds(whole)
    assert {e.uid: e.failure for e in errors} == {
        "t1": "error: config.ini not found: the checks read [checks] mode from it",
        "t2": "grep: ./secrets: Permission denied", "t7": "error: No virtual environment found"}
    (fixed,) = [e for e in errors if e.uid == "t1"]
    assert fixed.resolution is not None and fixed.resolution.retry == "python3 check.py"  # proven in a later read
    assert {c.uid: c.via_rejection for c in corrections} == {"u2": False, "r5": True, "u3": False}
    (session,) = sessions
    assert session.asked[0] == "run the checks in this project" and dict(session.tool_counts)["Write"] == 1


def test_the_recorded_claude_code_session_read_apart_is_stored_as_read_whole():
    (path,) = (AGENTS / "claude-code-2.1.197").rglob("*.jsonl")
    errors, corrections, _ = kinds(assert_read_apart_as_whole(claude_code.READER, path.read_bytes()))
    assert len(errors) == len(corrections) == 1 and errors[0].resolution is not None


# -- Gemini CLI's JSONL chats -------------------------------------------------------------------

GEMINI_CONTEXT = ("<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - /home/ada/code/tidepool\n"
                  "</session_context>")


def _said(mid: str, second: int, kind: str, content: Any, **extra: Any) -> bytes:
    return _line({"id": mid, "timestamp": f"2026-12-01T22:17:{second:02d}.000Z", "type": kind, "content": content} | extra)


def _gcall(cid: str, name: str, args: dict[str, Any], status: str, output: str | None = None) -> dict[str, Any]:
    call = {"id": cid, "name": name, "args": args, "status": status, "timestamp": "2026-12-01T22:17:30.000Z"}
    if output is not None:
        call["result"] = [{"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}]
    return call


def _turn(mid: str, second: int, *calls: dict[str, Any], text: str = "") -> bytes:
    """A model message as Gemini writes it: once as it starts, again with each call's new status."""
    return _said(mid, second, "gemini", text, model="gemini-3.1-pro-preview", toolCalls=list(calls))


SHELL = "run_shell_command"
CHECK = {"command": "python3 check.py"}
GEMINI_SESSION = b"".join([
    _line({"sessionId": "9e91d5ac", "projectHash": "485f0c00", "startTime": "2026-12-01T22:17:20.208Z",
           "lastUpdated": "2026-12-01T22:17:20.208Z", "kind": "main"}),
    _line({"$set": {"messages": [{"id": "ctx", "timestamp": "2026-12-01T22:17:20.217Z", "type": "user",
                                  "content": [{"text": GEMINI_CONTEXT}]}], "lastUpdated": "2026-12-01T22:17:20.217Z"}}),
    _said("m1", 21, "user", [{"text": "run the checks in this project"}]),
    _line({"$set": {"lastUpdated": "2026-12-01T22:17:21.000Z"}}),
    _said("m2", 22, "gemini", "", model="gemini-3.1-pro-preview"),
    _turn("m2", 22, _gcall("c1", SHELL, CHECK, "executing")),
    _turn("m2", 22, _gcall("c1", SHELL, CHECK, "success", "<untrusted_context>\nOutput: error: config.ini not found: "
                                                          "the checks read [checks] mode from it\nExit Code: 1\n"
                                                          "Process Group PGID: 15876\n</untrusted_context>")),
    _said("m3", 23, "user", [{"functionResponse": {"id": "c1", "name": SHELL, "response": {"output": "Exit Code: 1"}}}]),
    _turn("m4", 24, _gcall("c2", "read_file", {"absolute_path": "/home/ada/code/tidepool/setup.cfg"}, "error",
                           "File not found: /home/ada/code/tidepool/setup.cfg")),
    _turn("m5", 25, _gcall("c3", "write_file", {"file_path": "/home/ada/code/tidepool/config.ini",
                                                "content": "[checks]\nmode = strict\n"}, "success", "Successfully created")),
    _turn("m6", 26, _gcall("c4", SHELL, CHECK, "success", "Output: 3 checks passed\nExit Code: 0")),
    _said("m7", 27, "gemini", "The checks pass now. To install the dependencies, run `pip install -r requirements.txt`."),
    _line({"$set": {"lastUpdated": "2026-12-01T22:17:27.000Z"}}),
    _said("m8", 28, "user", [{"text": "no, that is wrong: use uv instead of pip in this project"}]),
    _turn("m9", 29, _gcall("c5", SHELL, {"command": "pip install -r requirements.txt"}, "awaiting_approval")),
    _turn("m9", 29, _gcall("c5", SHELL, {"command": "pip install -r requirements.txt"}, "cancelled")),
    _line({"$rewindTo": "m8"}),
    _turn("m10", 31, _gcall("c6", SHELL, {"command": "uv sync"}, "success", "Output: error: No `pyproject.toml` found\n"
                                                                           "Exit Code: 2")),
])  # fmt: skip


def test_a_gemini_chat_read_apart_at_any_byte_is_stored_as_read_whole():
    whole = assert_read_apart_as_whole(gemini.CHAT_LOG, GEMINI_SESSION)
    errors, corrections, sessions = kinds(whole)
    assert {e.uid: (e.tool, e.exit_code) for e in errors} == {"c1": ("Bash", 1), "c2": ("Read", None), "c6": ("Bash", 2)}
    (fixed,) = [e for e in errors if e.uid == "c1"]
    assert fixed.resolution is not None and fixed.resolution.retry == "python3 check.py"
    assert [c.uid for c in corrections] == ["m8"]
    (session,) = sessions
    assert session.project == "/home/ada/code/tidepool" and session.asked[0] == "run the checks in this project"


def test_the_recorded_gemini_chat_read_apart_is_stored_as_read_whole():
    errors, corrections, _ = kinds(assert_read_apart_as_whole(gemini.CHAT_LOG, GEMINI_RECORDED.read_bytes()))
    assert len(errors) == len(corrections) == 1 and errors[0].resolution is not None


def test_a_gemini_subagents_chat_read_apart_still_corrects_nothing():
    subagent = GEMINI_SESSION.replace(b'"kind":"main"', b'"kind":"subagent"', 1)
    errors, corrections, (session,) = kinds(assert_read_apart_as_whole(gemini.CHAT_LOG, subagent))
    assert corrections == [] and session.sidechain and len(errors) == 3


# -- a transcript truncated or replaced between two reads -----------------------------------------


async def _ingest(store: Store, archive: Archive, path: Path, now: float) -> IngestReport:
    return await ingest_paths(store, archive, [path], now=now)


async def _held(store: Store) -> dict[str, Any]:
    return {s.key: s.episode for s in await episode_store.load_episodes(store, include_archived=True)}


@pytest.fixture
async def node(aio, tmp_path):
    async with await Store.open(tmp_path / "c.db") as store:
        yield store, Archive(tmp_path / "archive")


def _said_why(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "commons.ingest" and r.levelno == logging.WARNING]


async def test_a_transcript_truncated_between_two_reads_is_read_again_from_its_start_with_no_episode_twice(
        node, tmp_path, caplog):
    store, archive = node
    path = tmp_path / "469d4a74.jsonl"
    path.write_bytes(CLAUDE_SESSION)
    first = await _ingest(store, archive, path, 1.0)
    path.write_bytes(CLAUDE_SESSION[: len(CLAUDE_SESSION) // 2])  # cut mid-line (a restore, a full disk)
    cut = await _ingest(store, archive, path, 2.0)
    assert _said_why(caplog) == [f"{path} was rewritten in place (it shrank from {len(CLAUDE_SESSION)} to "
                                 f"{len(CLAUDE_SESSION) // 2} bytes): reading it again from its start; its episodes "
                                 "keep their ids, so none is stored twice"]
    path.write_bytes(CLAUDE_SESSION)
    regrown = await _ingest(store, archive, path, 3.0)
    assert cut.rewritten == (str(path),) and regrown.rewritten == ()
    assert sum(first.episodes.values()) == len(stored_after_reads(claude_code.READER, CLAUDE_SESSION, ()))
    assert sum(cut.episodes.values()) == sum(regrown.episodes.values()) == 0  # every uid was stored already
    assert await _held(store) == stored_after_reads(claude_code.READER, CLAUDE_SESSION, (), hint=path.stem)


async def test_a_transcript_put_back_to_an_earlier_version_that_then_grew_is_read_again_from_its_start(
        node, tmp_path, caplog):
    store, archive = node
    path = tmp_path / "469d4a74.jsonl"
    pasted = "run the checks in this project; the log of the last run:\n" + "ok: check passed\n" * 300
    lines = [_cc("user", "u0", 0, pasted), *CLAUDE_SESSION.splitlines(keepends=True)[2:]]  # a first line past 4 KB
    read = b"".join(lines[:12])
    path.write_bytes(read)
    await _ingest(store, archive, path, 1.0)
    # Put back to an earlier copy (a backup restored, a sync): the same first 4 KB, then the session went on.
    went_on = b"".join(lines[:3]) + _cc("assistant", "b1", 30, [_use("t9", "make test")]) + _cc(
        "user", "b2", 31, _answer("t9", "Exit code 2\nmake: *** No rule to make target 'test'.  Stop.", True))
    went_on += b"".join(lines[3:12])  # longer than what was read
    path.write_bytes(went_on)
    report = await _ingest(store, archive, path, 2.0)
    assert report.rewritten == (str(path),) and report.skipped_lines == 0
    assert "error:t9" in await _held(store)  # none of its lines lost
    (said,) = _said_why(caplog)
    assert said.startswith(f"{path} was rewritten in place (byte {len(read)}, where the last read stopped, no longer begins a line)")
