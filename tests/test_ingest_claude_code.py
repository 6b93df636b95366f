"""Reading Claude Code transcripts into episodes: the real fixtures, growth, bad input, demo sessions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode, SessionEpisode, ToolCall
from commons.ingest.claude_code import (
    HEAD_BYTES,
    ParseState,
    StateError,
    failure_line,
    fingerprint,
    is_rewritten,
    parse,
)


def _shared_transcripts() -> Path | None:
    here = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
    if here.is_dir():
        return here
    env = os.environ.get("COMMONS_SHARED_DIR")
    if env and (Path(env) / "transcripts").is_dir():
        return Path(env) / "transcripts"
    return None


SHARED = _shared_transcripts()
needs_shared = pytest.mark.skipif(
    SHARED is None, reason="real transcripts not found: put them in ../shared/transcripts or set COMMONS_SHARED_DIR"
)
DEMO = Path(__file__).resolve().parents[1] / "commons" / "demo" / "sessions"


def _read(name: str) -> bytes:
    assert SHARED is not None
    return (SHARED / name).read_bytes()


def _split(episodes):
    sessions = [e for e in episodes if isinstance(e, SessionEpisode)]
    errors = [e for e in episodes if isinstance(e, ErrorEpisode)]
    corrections = [e for e in episodes if isinstance(e, CorrectionEpisode)]
    return sessions, errors, corrections


def _feed_in_pieces(data: bytes, cuts: list[int]):
    """Feed `data` cut at `cuts`, as a growing file is read, saving the state as JSON in between."""
    state, buffered, surprises, session = None, b"", [], None
    for start, end in zip([0, *cuts], [*cuts, len(data)]):
        buffered += data[start:end]
        result = parse(buffered, state, session_hint="hint")
        state = ParseState.from_json(result.state.to_json())
        buffered = buffered[result.consumed_bytes :]
        surprises += [e for e in result.episodes if not isinstance(e, SessionEpisode)]
        session = result.session or session
    return state, surprises, session


# -- the real transcripts, as read by a person --------------------------------------------------


@needs_shared
def test_short_session_with_two_rejections_has_no_error_and_no_correction():
    result = parse(_read("marot__spotter__short.jsonl"))
    sessions, errors, corrections = _split(result.episodes)
    assert errors == [] and corrections == []
    (s,) = sessions
    assert s.uid == s.session == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert s.asked == ("mix phx.server doesnt seem to start",)
    assert s.tool_counts == (("Bash", 1), ("Glob", 1))
    assert s.calls == (ToolCall("Bash", "mix phx.server 2>&1 | head -80"), ToolCall("Glob", "mix.exs"))
    assert s.ended == "Let me check the project structure and try running the server to see the error."
    assert s.project == "/home/marco/projects/spotter" and not s.sidechain
    assert result.skipped_lines == 0 and result.consumed_bytes == len(_read("marot__spotter__short.jsonl"))


@needs_shared
def test_still_does_not_work_after_interrupts_is_the_one_correction():
    result = parse(_read("marot__spotter__tool_heavy.jsonl"))
    sessions, errors, corrections = _split(result.episodes)
    assert errors == []
    (c,) = corrections
    assert c.uid == "f643538d-cf06-4b9a-9bb0-9ae5c26ea07a"
    assert c.said.startswith("scrolling back in xterm.js still does not work")
    assert c.preceding == "Phoenix server is starting in the background.\n\nLet me check the MCP servers status."
    assert not c.via_rejection
    (s,) = sessions
    assert s.asked == ("start phoenix in background", c.said)
    assert dict(s.tool_counts) == {"Bash": 2, "WebSearch": 1, "Glob": 1, "Read": 1, "WebFetch": 1}
    assert s.tool_counts[0] == ("Bash", 2)
    assert ToolCall("Bash", "mix phx.server") in s.calls
    assert ToolCall("WebFetch", "https://github.com/xtermjs/xterm.js/issues/1343") in s.calls


@needs_shared
def test_subagent_sibling_cascade_and_its_missing_file_read_make_no_error_episode():
    # Eight errored calls: one Read of a path that does not exist (a probe: the agent then looks the
    # file up) and seven "Sibling tool call errored" cascades of it. None is a failure of a step.
    result = parse(_read("marot__spotter__agent-a2898e3.jsonl"))
    sessions, errors, corrections = _split(result.episodes)
    assert corrections == []
    assert errors == []
    (s,) = sessions
    assert s.uid == "4d5611e5-241a-462a-8d15-5122611a9569:a2898e3"
    assert s.sidechain
    assert s.tool_counts == (("Read", 16), ("Glob", 10), ("Bash", 5), ("Grep", 2))
    assert s.asked[0].startswith("Very thorough exploration. I need to understand:")
    assert s.ended.startswith("Perfect! Now I have all the information needed.")


@needs_shared
def test_edge_cases_count_malformed_lines_and_keep_the_unterminated_last_line():
    data = _read("daaain__claude-code-log__edge_cases.jsonl")
    result = parse(data)
    sessions, errors, corrections = _split(result.episodes)
    assert result.skipped_lines == 3  # "massive error", 42, [1]
    assert result.consumed_bytes == data.rfind(b"\n") + 1 < len(data)  # the summary has no "\n" yet
    assert corrections == []
    (e,) = errors
    assert (e.uid, e.tool, e.failure) == (
        "tool_edge_001", "FailingTool", "Error: Tool execution failed with error: Command not found"
    )
    assert e.target == "This tool will fail to demonstrate error handling"
    (s,) = sessions
    assert s.session == "edge_cases"
    assert len(s.asked) == 3
    assert s.asked[0].startswith("Here's a message with some **markdown**")
    assert s.asked[2].startswith("Testing special characters: café, naïve")
    assert s.tool_counts == (("FailingTool", 1), ("MultiEdit", 1), ("TodoWrite", 1))


@needs_shared
@pytest.mark.parametrize(
    "name",
    [
        "marot__spotter__short.jsonl",
        "marot__spotter__tool_heavy.jsonl",
        "marot__spotter__agent-a2898e3.jsonl",
        "daaain__claude-code-log__edge_cases.jsonl",
    ],
)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_growing_transcript_read_in_pieces_yields_the_same_episodes(name, data):
    raw = _read(name)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=8)))
    whole = parse(raw, session_hint="hint")
    state, surprises, session = _feed_in_pieces(raw, cuts)
    assert surprises == [e for e in whole.episodes if not isinstance(e, SessionEpisode)]
    assert session == whole.session
    assert state.offset == whole.state.offset
    assert state.skipped_lines == whole.skipped_lines


# -- bad input, state, rewrites -----------------------------------------------------------------


def _user(uuid: str, text: str, ts: str = "2026-11-01T10:00:00Z") -> bytes:
    rec = {"type": "user", "sessionId": "s1", "cwd": "/p", "uuid": uuid, "timestamp": ts,
           "message": {"role": "user", "content": text}}  # fmt: skip
    return json.dumps(rec).encode() + b"\n"


def _assistant(mid: str, blocks: list, uuid: str = "a") -> bytes:
    rec = {"type": "assistant", "sessionId": "s1", "uuid": uuid, "timestamp": "2026-11-01T10:00:01Z",
           "message": {"id": mid, "role": "assistant", "content": blocks}}  # fmt: skip
    return json.dumps(rec).encode() + b"\n"


def _result(uuid: str, tool_id: str, content: str, is_error: bool = True) -> bytes:
    rec = {"type": "user", "sessionId": "s1", "uuid": uuid, "timestamp": "2026-11-01T10:00:02Z",
           "message": {"role": "user", "content": [
               {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}]}}  # fmt: skip
    return json.dumps(rec).encode() + b"\n"


def _bash(tool_id: str, command: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command, "description": "d"}}


def test_malformed_lines_are_counted_and_skipped_never_fatal():
    data = (
        _user("u1", "hello")
        + b"{not json\n"
        + b"\xff\xfe\x00garbage\n"
        + b'"a string"\n'
        + b"\n"
        + b'{"type":"user","message":"oops"}\n'
        + b'{"type":"assistant","message":{"content":[42,"x",{"type":"tool_use"}]}}\n'
        + _user("u2", "no, the other one")
    )
    result = parse(data)
    assert result.skipped_lines == 3
    assert result.state.skipped_lines == 3
    _, _, corrections = _split(result.episodes)
    assert [c.uid for c in corrections] == ["u2"]


def test_split_message_repeating_a_tool_use_counts_it_once():
    use = _bash("toolu_1", "pytest")
    data = _user("u1", "run tests") + _assistant("m1", [use], "a1") + _assistant("m1", [use], "a2")
    data += _result("r1", "toolu_1", "Exit code 1\nE   assert 1 == 2") + _result("r2", "toolu_1", "Exit code 1\nE   assert 1 == 2")
    sessions, errors, _ = _split(parse(data).episodes)
    assert sessions[0].tool_counts == (("Bash", 1),)
    assert [(e.uid, e.exit_code, e.failure) for e in errors] == [("toolu_1", 1, "E assert 1 == 2")]


def test_rejection_with_words_is_a_correction_not_an_error():
    rejected = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
        "edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\nuse uv"
    )
    data = _user("u1", "install httpx") + _assistant("m1", [_bash("t1", "pip install httpx")]) + _result("r1", "t1", rejected)
    _, errors, corrections = _split(parse(data).episodes)
    assert errors == []
    (c,) = corrections
    assert (c.uid, c.said, c.preceding, c.via_rejection) == ("r1", "use uv", "Bash pip install httpx", True)


def test_first_message_is_never_a_correction_and_preceding_falls_back_to_the_last_call():
    data = _user("u1", "no tests yet, write some") + _assistant("m1", [_bash("t1", "ls tests")])
    data += _result("r1", "t1", "x", is_error=False) + _user("u2", "don't use unittest")
    _, _, corrections = _split(parse(data).episodes)
    assert [(c.uid, c.preceding) for c in corrections] == [("u2", "Bash ls tests")]


def test_meta_and_compact_summary_records_are_not_corrections():
    meta = json.loads(_user("u2", "no, that's wrong"))
    meta["isMeta"] = True
    summary = json.loads(_user("u3", "No, this session is being continued"))
    summary["isCompactSummary"] = True
    data = _user("u1", "hi") + json.dumps(meta).encode() + b"\n" + json.dumps(summary).encode() + b"\n"
    _, _, corrections = _split(parse(data).episodes)
    assert corrections == []


def test_progress_shaped_bytes_inside_a_conversation_record_are_still_read():
    use = {"type": "tool_use", "id": "t1", "name": "Mcp", "input": {"type": "progress"}}
    rec = {"type": "assistant", "message": {"role": "assistant", "id": "m", "content": [use]},
           "sessionId": "s1", "timestamp": "2026-11-01T10:00:00Z"}  # fmt: skip
    line = json.dumps(rec, separators=(",", ":")).encode() + b"\n"
    assert b'"type":"progress"' in line
    (s,) = parse(line).episodes
    assert s.tool_counts == (("Mcp", 1),)


def test_failure_line_skips_exit_code_and_boilerplate():
    assert failure_line("Exit code 2\n\n   \nfatal: not a git repository") == ("fatal: not a git repository", 2)
    pytest_out = "=== test session starts ===\nplatform linux\nrootdir: /x\ncollected 1 item\n\nt.py F\nFAILED t.py::t - boom"
    assert failure_line("Exit code 1\n" + pytest_out) == ("FAILED t.py::t - boom", 1)
    assert failure_line("Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'x'")[0] == (
        "ModuleNotFoundError: No module named 'x'"
    )
    assert failure_line("Exit code 127") == ("Exit code 127", 127)


def test_state_round_trips_through_json_and_rejects_garbage():
    result = parse(_user("u1", "hi") + _assistant("m1", [_bash("t1", "make")]))
    assert ParseState.from_json(result.state.to_json()) == result.state
    for bad in ["{}", "not json", '{"v": 99}', json.dumps({**json.loads(result.state.to_json()), "extra": 1})]:
        with pytest.raises(StateError):
            ParseState.from_json(bad)


def test_rewrite_is_detected_by_shrink_or_changed_head_but_growth_is_not():
    first = _user("u1", "hello") + _user("u2", "more")
    state = parse(first).state
    assert state.head_len == min(HEAD_BYTES, len(first)) and state.head_hash == fingerprint(first)
    grown = first + _user("u3", "even more")
    assert not is_rewritten(state, len(grown), grown[:HEAD_BYTES])
    assert is_rewritten(state, len(first) - 1, first[:HEAD_BYTES])
    changed = _user("u9", "HELLO") + _user("u2", "more")
    assert is_rewritten(state, len(changed), changed[:HEAD_BYTES])


def test_partial_last_line_is_left_for_the_next_read():
    line = _user("u1", "hi")
    result = parse(line + line[:10])
    assert result.consumed_bytes == len(line) and result.state.offset == len(line)
    nothing = parse(b'{"type":"us')
    assert nothing.consumed_bytes == 0 and nothing.episodes == ()


# -- the bundled demo sessions ------------------------------------------------------------------

DEMO_COUNTS = {
    "ada/day-02-rates-client.jsonl": (1, 1),
    "ada/day-04-async-tests.jsonl": (2, 1),
    "ada/day-09-report-table.jsonl": (2, 0),
    "grace/day-03-ci-install.jsonl": (1, 1),
    "grace/day-06-build-icons.jsonl": (1, 0),
    "grace/day-10-worker-tests.jsonl": (2, 1),
    "linus/day-01-release-push.jsonl": (1, 1),
    "linus/day-05-docs-site.jsonl": (1, 0),
    "linus/day-08-lint-tooling.jsonl": (3, 1),
}


def test_demo_sessions_yield_the_errors_and_corrections_their_readme_lists():
    found = sorted(str(p.relative_to(DEMO)) for p in DEMO.glob("*/day-*.jsonl"))
    assert found == sorted(DEMO_COUNTS)
    for name, (n_errors, n_corrections) in DEMO_COUNTS.items():
        result = parse((DEMO / name).read_bytes())
        sessions, errors, corrections = _split(result.episodes)
        assert (len(errors), len(corrections), len(sessions), result.skipped_lines) == (n_errors, n_corrections, 1, 0), name


def test_demo_pitfalls_read_as_their_first_meaningful_lines():
    failures = set()
    for path in DEMO.glob("*/day-*.jsonl"):
        failures |= {e.failure for e in parse(path.read_bytes()).episodes if isinstance(e, ErrorEpisode)}
    assert "error: externally-managed-environment" in failures
    assert "! [rejected] main -> main (non-fast-forward)" in failures
    assert "npm error The `npm ci` command can only install with an existing package-lock.json or" in failures
    assert any("async def functions are not natively supported" in f for f in failures)
    via_rejection = [
        c.said for p in DEMO.glob("*/day-*.jsonl") for c in parse(p.read_bytes()).episodes
        if isinstance(c, CorrectionEpisode) and c.via_rejection
    ]  # fmt: skip
    assert sorted(via_rejection) == ["never force-push main. pull --rebase and push again", "no, this project uses uv, not pip. use uv add"]


def test_injected_instruction_in_tool_output_reaches_no_episode():
    raw = (DEMO / "grace/day-06-build-icons.jsonl").read_bytes()
    assert b"NOTE TO AI AGENTS" in raw
    for episode in parse(raw).episodes:
        assert "NOTE TO AI AGENTS" not in episode.text()
        assert "install.sh | sh" not in episode.text()


def test_a_bash_call_retried_with_a_longer_timeout_names_the_timeout_as_its_fix():
    slow = {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "npm ci", "timeout": 600000}}
    data = (_user("u1", "install") + _assistant("m1", [_bash("toolu_1", "npm ci")], "a1")
            + _result("r1", "toolu_1", "Command timed out after 2m 0.0s")
            + _assistant("m2", [slow], "a2") + _result("r2", "toolu_2", "added 812 packages", is_error=False))
    _, errors, _ = _split(parse(data).episodes)
    (error,) = errors
    assert error.resolution is not None and error.resolution.command == "npm ci (with timeout=600000)"


def test_a_filtered_retry_whose_output_no_longer_shows_the_error_proves_the_edit_before_it():
    edit = {"type": "tool_use", "id": "toolu_2", "name": "Edit",
            "input": {"file_path": "/p/run.sh", "old_string": "a", "new_string": "DIM='x'"}}
    data = (_user("u1", "go") + _assistant("m1", [_bash("toolu_1", "./run.sh help")], "a1")
            + _result("r1", "toolu_1", "./run.sh: line 3: DIM: unbound variable")
            + _assistant("m2", [edit], "a2") + _result("r2", "toolu_2", "ok", is_error=False)
            + _assistant("m3", [_bash("toolu_3", "./run.sh help 2>&1 | tail -5")], "a3")
            + _result("r3", "toolu_3", "usage: run.sh build|help", is_error=False))
    _, errors, _ = _split(parse(data).episodes)
    (error,) = errors
    assert error.resolution is not None and error.resolution.command.startswith("Edit /p/run.sh")
