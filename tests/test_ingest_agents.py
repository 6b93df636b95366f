"""Codex CLI and Gemini CLI sessions, in their real formats, make the same episodes and the same
lessons as Claude Code's; the ingester picks each file's reader, reads Codex incrementally and
Gemini's rewritten documents again, and every stored episode records the agent it came from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode, SessionEpisode
from commons.ingest import codex, gemini
from commons.ingest.archive import Archive
from commons.ingest.codex import read_output
from commons.ingest.ingester import archive_key, default_roots, discover, ingest_paths, reader_for
from commons.ingest.lessons_report import measure, read_all
from commons.ingest.readers import agent_of_key, expand_root
from commons.store import episodes as episode_store
from commons.store.db import Store

FIXTURES = Path(__file__).parent / "fixtures"
AGENTS = FIXTURES / "agents"
CODEX = sorted((AGENTS / "codex").rglob("rollout-*.jsonl"))
GEMINI = sorted((AGENTS / "gemini").rglob("session-*.json"))
CLAUDE = {
    "pip": [FIXTURES / "lessons" / "pip-uv-httpx.jsonl", FIXTURES / "lessons" / "pip-uv-orjson.jsonl"],
    "pytest": [FIXTURES / "lessons" / "pytest-async-async-retry.jsonl",
               FIXTURES / "lessons" / "pytest-async-worker-retry.jsonl"],
}  # fmt: skip


def lesson_texts(paths: list[Path]) -> set[str]:
    return {lesson.text for lesson in measure(paths).lessons}


def sessions_of(paths: list[Path], pitfall: str) -> list[Path]:
    """The two sessions of one pitfall, found by what the person asked."""
    asked = {"pip": "use it in the client", "pytest": "async retry"}[pitfall]
    return [p for p in paths if asked in p.read_text()]


# -- the same lesson whichever agent -------------------------------------------------------------


@pytest.mark.parametrize("pitfall", ["pip", "pytest"])
def test_a_failure_and_its_fix_in_two_sessions_is_the_same_lesson_from_every_agent(pitfall):
    claude = lesson_texts(CLAUDE[pitfall])
    assert len(claude) == 1
    for agent_files in (CODEX, GEMINI):
        pair = sessions_of(agent_files, pitfall)
        assert len(pair) == 2
        assert lesson_texts(pair) == claude


def test_the_codex_and_gemini_lessons_name_the_fix():
    texts = lesson_texts(CODEX) | lesson_texts(GEMINI)
    assert ('`pip install` failed with "error: externally-managed-environment"; '
            "`uv add <package>` succeeded after it (2 of 2 sessions).") in texts
    assert ('`pytest` failed with "Failed: async def functions are not natively supported."; '
            "it passed after `Edit pyproject.toml: asyncio_mode = 'auto'` (2 of 2 sessions).") in texts


def test_the_fixtures_are_what_their_builder_writes(tmp_path):
    import runpy

    module = runpy.run_path(str(AGENTS / "_build.py"))
    written = module["codex"](tmp_path) + module["gemini"](tmp_path)
    assert sorted(p.relative_to(tmp_path) for p in written) == sorted(p.relative_to(AGENTS) for p in CODEX + GEMINI)
    for path in written:
        assert path.read_bytes() == (AGENTS / path.relative_to(tmp_path)).read_bytes()


# -- Codex --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("output", "expected"), [
    (json.dumps({"output": "boom\n", "metadata": {"exit_code": 2, "duration_seconds": 0.1}}), (False, "Exit code 2\nboom")),
    (json.dumps({"output": "fine", "metadata": {"exit_code": 0, "duration_seconds": 0.1}}), (True, "")),
    ("Exit code: 1\nWall time: 0.4 seconds\nOutput:\nerror: nope", (False, "Exit code 1\nerror: nope")),
    ("Chunk ID: ab12\nWall time: 0.4 seconds\nProcess exited with code 127\nOriginal token count: 3\nOutput:\n"
     "bash: foo: command not found", (False, "Exit code 127\nbash: foo: command not found")),
    ("Process exited with code 0\n\nOutput:\nok", (True, "")),
    ("Process running with session ID 73\n\nOutput:\nstarted", None),
    ("Chunk ID: 04a3b5\nWall time: 1.0025 seconds\nProcess running with session ID 2909\nOriginal token count: 9\n"
     "Output:\n> next dev --port 3001\n", None),
    ("exec command rejected by user", (False, "exec command rejected by user")),
    ("plain text from a tool with no exit code", (True, "")),
    # Codex's own words when the call did not run or its patch did not apply: plain text, no code.
    ("failed in sandbox: go: open /h/.cache/go-build/x: permission denied\n",
     (False, "failed in sandbox: go: open /h/.cache/go-build/x: permission denied\n")),
    ("apply_patch verification failed: Failed to find expected lines in /p/a.go:\nfunc a() {",
     (False, "apply_patch verification failed: Failed to find expected lines in /p/a.go:\nfunc a() {")),
    ({"content": "Exit code: 3\nOutput:\nbad", "success": False}, (False, "Exit code 3\nbad")),
])  # fmt: skip
def test_codex_call_outputs_say_whether_the_call_failed_in_every_shape_written(output, expected):
    assert read_output(output) == expected


    assert read_output(output) == expected


def test_a_codex_failure_keeps_its_exit_code_and_failure_line():
    (error,) = [e for e in read_all(sessions_of(CODEX, "pip")[:1]) if isinstance(e, ErrorEpisode)]
    assert (error.tool, error.target, error.exit_code) == ("Bash", "pip install httpx", 1)
    assert error.failure == "error: externally-managed-environment"
    assert error.resolution is not None and error.resolution.command == "uv add httpx"


def test_codex_words_are_read_once_and_its_own_context_is_not_the_persons():
    path = sessions_of(CODEX, "pip")[0]
    (session,) = [e for e in codex.parse(path.read_bytes()).episodes if isinstance(e, SessionEpisode)]
    assert session.asked == ("add httpx and use it in the client",)  # not the <environment_context>, not twice
    assert session.project == "/home/dev/src/ledgerly"
    assert session.ended == "Added httpx with uv; the client uses it now."
    assert session.session in path.name


def test_an_older_codex_rollout_without_the_envelope_is_read():
    (path,) = [p for p in CODEX if '"record_type"' in p.read_text()]
    result = codex.parse(path.read_bytes())
    session = result.session
    assert session is not None and session.session in path.name
    assert session.project == "/home/dev/src/ledgerly-wt"  # named only in its environment context
    assert session.asked == ("add a test for the async retry and run the suite",)
    (error,) = [e for e in result.episodes if isinstance(e, ErrorEpisode)]
    assert error.resolution is not None
    assert error.resolution.command == 'Edit pyproject.toml: asyncio_mode = "auto"'  # patched through the shell


def test_a_codex_rollout_read_in_pieces_gives_what_one_read_gives():
    data = sessions_of(CODEX, "pytest")[0].read_bytes()
    whole = codex.parse(data).episodes
    first = codex.parse(data[: len(data) // 2])
    rest = codex.parse(data[first.state.offset :], first.state)
    pieces = {(e.kind, e.uid): e for e in first.episodes + rest.episodes}
    assert pieces == {(e.kind, e.uid): e for e in whole}
    assert rest.state.offset == len(data)


def test_a_refused_codex_command_is_no_error():
    lines = [
        {"timestamp": "2026-11-04T09:00:00.000Z", "type": "session_meta", "payload": {"id": "s1", "cwd": "/p"}},
        {"timestamp": "2026-11-04T09:00:01.000Z", "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": "c1",
            "arguments": json.dumps({"command": ["bash", "-lc", "rm -rf build"]})}},
        {"timestamp": "2026-11-04T09:00:02.000Z", "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c1", "output": "exec command rejected by user"}},
    ]  # fmt: skip
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    assert [e for e in codex.parse(data).episodes if isinstance(e, ErrorEpisode)] == []


def _debug(text: str) -> str:
    """`text` as Rust's Debug form writes a string (quoted; quotes, backslashes, line ends escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _not_started(command: str, error: str) -> str:
    """What ``exec_command`` answers when its command did not start: the runtime's error, in Debug
    form, inside the process manager's (codex-rs ``tools/handlers/unified_exec.rs``)."""
    return f"exec_command failed for `{command}`: CreateProcess {{ message: {_debug(error)} }}"


def _output(at: str, cid: str, text: str) -> tuple[str, str, dict]:
    return at, "response_item", {"type": "function_call_output", "call_id": cid, "output": text}


SHELL = "/bin/bash -lc"
SPAWN_FAILED = "Failed to create unified exec process: No such file or directory (os error 2)"
FORBIDDEN = f'`{SHELL} "git push -f"` rejected: blocked by policy'  # a quoted command, escaped twice on the way


@pytest.mark.parametrize(("output", "expected"), [
    # The person said no: the same as the shell tool's "exec command rejected by user".
    (_not_started(f"{SHELL} 'rm -rf dist'", f"Rejected({_debug('rejected by user')})"), (False, "rejected by user")),
    ("exec_command failed: CreateProcess { message: " + _debug(f"Rejected({_debug('rejected by user')})") + " }",
     (False, "rejected by user")),  # before the wrapper named the command
    # Codex's rules forbade it, its approval settings allow no prompt, its auto-reviewer said no: not run.
    (_not_started(f"{SHELL} 'git push -f'", f"Rejected({_debug(FORBIDDEN)})"), (False, f"Not run: {FORBIDDEN}")),
    (_not_started("npm publish", "Rejected(" + _debug("This action was rejected due to unacceptable risk.\n"
                                                      "Reason: it publishes the package.") + ")"),
     (False, "Not run: This action was rejected due to unacceptable risk.\nReason: it publishes the package.")),
    (_not_started("cargo test", f"Codex(UnsupportedOperation({_debug('seatbelt sandbox is only available on macOS')}))"),
     (False, 'Not run: execution error: UnsupportedOperation("seatbelt sandbox is only available on macOS")')),
    # The shell tool writes a refusal's reason bare.
    ("approval required by policy, but AskForApproval is set to Never",
     (False, "Not run: approval required by policy, but AskForApproval is set to Never")),
    # The program could not be spawned: a failure, in its own words once Rust's escapes are read.
    (_not_started("cargo build", f"Rejected({_debug(SPAWN_FAILED)})"), (False, SPAWN_FAILED)),
    (_not_started("make", "Codex(Io(Os { code: 2, kind: NotFound, message: " + _debug("No such file or directory") + " }))"),
     (False, 'execution error: Io(Os { code: 2, kind: NotFound, message: "No such file or directory" })')),
    # The command ran and the sandbox reported its exit as a denial: the command's exit and words.
    (_not_started("cargo fmt", "Codex(Sandbox(Denied { output: ExecToolCallOutput { exit_code: 1, stdout: StreamOutput "
                               "{ text: \"\", truncated_after_lines: None }, aggregated_output: StreamOutput { text: "
                               + _debug("error: could not create temp file /h/.rustup/tmp/x: Operation not permitted\n")
                               + ", truncated_after_lines: None }, duration: 1.2s, timed_out: false }, "
                               "network_policy_decision: None }))"),
     (False, "Exit code 1\nerror: could not create temp file /h/.rustup/tmp/x: Operation not permitted")),
])  # fmt: skip
def test_an_exec_command_that_did_not_start_is_read_from_the_error_inside_codex_wrapper(output, expected):
    assert read_output(output) == expected


def _stream(text: str) -> str:
    return f"StreamOutput {{ text: {_debug(text)}, truncated_after_lines: None }}"


# The shell tool before unified exec: "failed in sandbox {SandboxType:?} with execution error: {error}",
# the sandbox's report of a command's non-zero exit, in Rust's Debug form and later its Display form.
FD_MISSING = "bash: line 1: fd: command not found\nrg: No files were searched.\n"
LOCKED = "fatal: Unable to create '/w/app/.git/index.lock': Permission denied\n"


@pytest.mark.parametrize(("output", "expected"), [
    ("failed in sandbox LinuxSeccomp with execution error: Denied { output: ExecToolCallOutput { exit_code: 2, "
     f"stdout: {_stream('')}, stderr: {_stream(FD_MISSING)}, aggregated_output: {_stream(FD_MISSING)}, "
     "duration: 291.686564ms, timed_out: false } }",
     (False, "Exit code 2\nbash: line 1: fd: command not found\nrg: No files were searched.")),
    ("failed in sandbox LinuxSeccomp with execution error: Denied { output: ExecToolCallOutput { exit_code: 1, "
     f"stdout: {_stream('')}, stderr: {_stream('')}, aggregated_output: {_stream('')}, duration: 62.8ms, timed_out: false }} }}",
     (False, "Exit code 1\n")),  # it printed nothing: an exit code, no words
    (f"failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 128, stdout: , stderr: {LOCKED}",
     (False, "Exit code 128\nfatal: Unable to create '/w/app/.git/index.lock': Permission denied")),
    ("failed in sandbox MacosSeatbelt with execution error: sandbox denied exec error, exit code: 1, stdout: total 40, stderr: ",
     (False, "Exit code 1\ntotal 40")),
    # Any other error the sandbox met is said as Codex said it.
    ("failed in sandbox None with execution error: command timed out",
     (False, "failed in sandbox None with execution error: command timed out")),
])  # fmt: skip
def test_a_sandbox_denial_of_the_older_shell_tool_is_the_commands_exit_and_words_unwrapped(output, expected):
    assert read_output(output) == expected


def test_a_command_codex_refused_to_run_is_neither_an_error_nor_the_fix_of_one():
    refused = f"`{SHELL} 'rm -rf target'` rejected: blocked by policy"
    data = _rollout(
        _exec("2026-11-04T09:00:01.000Z", "c1", "exec_command", {"cmd": "cargo build"}),
        _exec_output("2026-11-04T09:00:02.000Z", "c1", "Process exited with code 101",
                     "error: could not find `Cargo.toml` in `/p` or any parent directory\n"),
        _exec("2026-11-04T09:00:03.000Z", "c2", "exec_command", {"cmd": "rm -rf target"}),
        _output("2026-11-04T09:00:04.000Z", "c2", _not_started(f"{SHELL} 'rm -rf target'", f"Rejected({_debug(refused)})")),
        _exec("2026-11-04T09:00:05.000Z", "c3", "exec_command", {"cmd": "cargo build"}),
        _exec_output("2026-11-04T09:00:06.000Z", "c3", "Process exited with code 0", "Finished\n"),
    )  # fmt: skip
    (error,) = [e for e in codex.parse(data).episodes if isinstance(e, ErrorEpisode)]
    assert error.uid == "c1"  # the refusal made none
    assert error.resolution is not None and "rm -rf" not in error.resolution.command  # nor is it the fix


def test_a_command_codex_could_not_spawn_is_an_error_in_the_words_of_the_error_inside():
    data = _rollout(
        _exec("2026-11-04T09:00:01.000Z", "c1", "exec_command", {"cmd": "cargo build", "workdir": "/p/crate"}),
        _output("2026-11-04T09:00:02.000Z", "c1", _not_started(f"{SHELL} 'cargo build'", f"Rejected({_debug(SPAWN_FAILED)})")),
        _exec("2026-11-04T09:00:03.000Z", "c2", "exec_command", {"cmd": "cargo build", "workdir": "/p"}),
        _output("2026-11-04T09:00:04.000Z", "c2",
                _not_started(f"{SHELL} 'cargo build'", f"Rejected({_debug('rejected by user')})")),
    )  # fmt: skip
    (error,) = [e for e in codex.parse(data).episodes if isinstance(e, ErrorEpisode)]  # the person's "no" is none
    assert (error.uid, error.tool, error.target) == ("c1", "Bash", "cargo build")
    assert error.failure == SPAWN_FAILED


def _rollout(*records: tuple[str, str, dict]) -> bytes:
    """A rollout of envelope records (time, type, payload), after a session_meta."""
    lines = [{"timestamp": "2026-11-04T09:00:00.000Z", "type": "session_meta", "payload": {"id": "s1", "cwd": "/p"}}]
    lines += [{"timestamp": at, "type": kind, "payload": payload} for at, kind, payload in records]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _exec(at: str, cid: str, name: str, arguments: dict) -> tuple[str, str, dict]:
    return at, "response_item", {"type": "function_call", "name": name, "call_id": cid, "arguments": json.dumps(arguments)}


def _exec_output(at: str, cid: str, header: str, output: str) -> tuple[str, str, dict]:
    text = f"Chunk ID: 1f\nWall time: 1.0 seconds\n{header}\nOriginal token count: 9\nOutput:\n{output}"
    return at, "response_item", {"type": "function_call_output", "call_id": cid, "output": text}


RUNNING_SESSION = (  # a dev server started, polled twice (its log so far), then exiting 1
    _exec("2026-11-04T09:00:01.000Z", "c1", "exec_command", {"cmd": "npm run dev -- --port 3001"}),
    _exec_output("2026-11-04T09:00:02.000Z", "c1", "Process running with session ID 2909", "> next dev\n"),
    _exec("2026-11-04T09:00:03.000Z", "p1", "write_stdin", {"session_id": 2909, "chars": ""}),
    _exec_output("2026-11-04T09:00:04.000Z", "p1", "Process running with session ID 2909", "error: warming up\n"),
    _exec("2026-11-04T09:00:05.000Z", "p2", "write_stdin", {"session_id": 2909, "chars": "", "yield_time_ms": 1000}),
    _exec_output("2026-11-04T09:00:06.000Z", "p2", "Process exited with code 1",
                 "Unable to acquire lock at /p/.next/dev/lock, is another instance of next dev running?\n"),
)


def test_a_poll_of_a_running_codex_program_is_no_call_and_its_exit_is_the_starting_commands():
    data = _rollout(*RUNNING_SESSION)
    result = codex.parse(data)
    (error,) = [e for e in result.episodes if isinstance(e, ErrorEpisode)]
    assert (error.tool, error.target, error.exit_code) == ("Bash", "npm run dev -- --port 3001", 1)
    assert error.uid == "p2"  # the poll that carried the exit
    assert "Unable to acquire lock" in error.failure
    assert result.session is not None and "write_stdin" not in dict(result.session.tool_counts)
    # Read in pieces, cut between any two records, the same: the running program waits in the state.
    cuts = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")][:-1]
    for cut in cuts:
        first = codex.parse(data[:cut])
        rest = codex.parse(data[first.state.offset:], first.state)
        assert [e.uid for e in first.episodes + rest.episodes if isinstance(e, ErrorEpisode)] == ["p2"]


def test_a_codex_program_still_running_or_exiting_zero_makes_no_error():
    still = _rollout(*RUNNING_SESSION[:4])
    assert [e for e in codex.parse(still).episodes if isinstance(e, ErrorEpisode)] == []
    unknown = _rollout(RUNNING_SESSION[0], _exec("2026-11-04T09:00:03.000Z", "p9", "write_stdin", {"session_id": 7}),
                       _exec_output("2026-11-04T09:00:04.000Z", "p9", "Process exited with code 2", "bye\n"))
    assert [e for e in codex.parse(unknown).episodes if isinstance(e, ErrorEpisode)] == []  # not seen starting


def _said(at: str, text: str, kind: str = "user_message") -> tuple[str, str, dict]:
    return at, "event_msg", {"type": kind, "message": text}


IDE_CONTEXT = ("# Context from my IDE setup:\n\n## Active file: cmd/api/main.go\n\n## Open tabs:\n- main.go: cmd/api/main.go\n"
               "- .env: .env\n\n## My request for Codex:\n")


def test_a_codex_message_from_the_ide_is_the_persons_request_past_the_editors_context():
    data = _rollout(
        _said("2026-11-04T09:00:01.000Z", IDE_CONTEXT + "fais un frontend en Go pur"),
        _said("2026-11-04T09:00:05.000Z", "C'est fait : le frontend React est prêt.", "agent_message"),
        _said("2026-11-04T09:00:09.000Z", IDE_CONTEXT + "Tu ne dois pas faire un frontend en react. Pas de JavaScript."),
    )  # fmt: skip
    result = codex.parse(data)
    assert result.session is not None and result.session.asked[0] == "fais un frontend en Go pur"
    (correction,) = [e for e in result.episodes if isinstance(e, CorrectionEpisode)]
    assert correction.said.startswith("Tu ne dois pas")


def test_a_codex_turn_the_person_stopped_is_an_interrupt_not_their_words():
    stopped = (_said("2026-11-04T09:00:01.000Z", "add the export button"),
               _said("2026-11-04T09:00:03.000Z", "I'll add it to the toolbar.", "agent_message"))
    follow = _said("2026-11-04T09:00:06.000Z", "in the sidebar, not the toolbar")
    aborted = ("2026-11-04T09:00:04.000Z", "event_msg", {"type": "turn_aborted", "reason": "interrupted"})
    plain = codex.parse(_rollout(*stopped, follow))
    interrupted = codex.parse(_rollout(*stopped, aborted, follow))
    assert [e for e in plain.episodes if isinstance(e, CorrectionEpisode)] == []  # a reply, said with no push-back
    (correction,) = [e for e in interrupted.episodes if isinstance(e, CorrectionEpisode)]
    assert correction.said.startswith("in the sidebar")
    assert interrupted.session is not None and len(interrupted.session.asked) == 2  # no "<turn_aborted>" message


# -- Gemini -------------------------------------------------------------------------------------


def _chat(calls: list[dict]) -> bytes:
    return json.dumps({"sessionId": "g1", "projectHash": "h", "startTime": "2026-11-04T09:00:00.000Z",
                       "lastUpdated": "2026-11-04T09:00:09.000Z", "messages": [
        {"id": "m1", "timestamp": "2026-11-04T09:00:01.000Z", "type": "user", "content": "build it"},
        {"id": "m2", "timestamp": "2026-11-04T09:00:02.000Z", "type": "gemini", "content": "", "toolCalls": calls},
    ]}).encode()  # fmt: skip


def _call(cid: str, status: str, output: str, name: str = "run_shell_command") -> dict:
    return {"id": cid, "name": name, "args": {"command": "make"}, "status": status,
            "result": [{"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}]}


def test_a_gemini_shell_command_that_exited_non_zero_is_an_error_though_marked_success():
    result = gemini.parse(_chat([_call("c1", "success", "Output: make: *** No rule to make target\nExit Code: 2")]))
    (error,) = [e for e in result.episodes if isinstance(e, ErrorEpisode)]
    assert (error.tool, error.target, error.exit_code) == ("Bash", "make", 2)
    assert error.failure == "make: *** No rule to make target"


def test_a_gemini_call_with_status_error_is_an_error_and_a_cancelled_one_is_not():
    result = gemini.parse(_chat([
        _call("c1", "error", "File not found: /p/x.py", name="read_file"),
        _call("c2", "cancelled", ""),
        _call("c3", "success", "Output: fine\nExit Code: 0"),
    ]))  # fmt: skip
    errors = [e for e in result.episodes if isinstance(e, ErrorEpisode)]
    assert [(e.uid, e.tool, e.failure) for e in errors] == [("c1", "Read", "File not found: /p/x.py")]


def test_a_half_written_gemini_chat_consumes_nothing():
    data = _chat([_call("c1", "success", "ok")])
    result = gemini.parse(data[:-10])
    assert (result.consumed_bytes, result.episodes, result.state.offset) == (0, (), 0)


def _messages(*messages: tuple[str, object]) -> bytes:
    """A Gemini chat of (type, content) messages, a second apart."""
    return json.dumps({"sessionId": "g2", "projectHash": "h", "startTime": "2026-11-04T09:00:00.000Z", "messages": [
        {"id": f"m{i}", "timestamp": f"2026-11-04T09:00:{i:02d}.000Z", "type": kind, "content": content}
        for i, (kind, content) in enumerate(messages, 1)]}).encode()  # fmt: skip


def test_what_the_gemini_cli_and_ide_write_as_the_users_is_not_the_persons_words():
    data = _messages(
        ("user", [{"text": "@codebase_investigator"}, {"text": "\n<system_note>\nThe user has explicitly selected the "
                                                               "following agent(s): codebase_investigator.\n</system_note>\n"}]),
        ("gemini", "The resize handle is fixed and works now."),
        ("user", [{"text": "System: Please continue."}]),
        ("user", "User has manually exited Plan Mode. Switching to Default mode (edits will require confirmation)."),
        ("user", "the panel still does not expand\n\nUser Selected Files:\n- c:\\Users\\dev\\app\\Panel.tsx\n"),
    )  # fmt: skip
    result = gemini.parse(data)
    assert result.session is not None
    assert result.session.asked == ("@codebase_investigator", "the panel still does not expand")
    (correction,) = [e for e in result.episodes if isinstance(e, CorrectionEpisode)]
    assert correction.said == "the panel still does not expand" and correction.after_done is False
    assert correction.preceding.startswith("The resize handle is fixed")  # the CLI's messages did not end the turn


# -- finding and ingesting ------------------------------------------------------------------------


def test_each_file_goes_to_its_agents_reader_and_key():
    assert {reader_for(p).name for p in CODEX} == {"codex"}
    assert {reader_for(p).name for p in GEMINI} == {"gemini"}
    assert reader_for(CLAUDE["pip"][0]).name == "claude_code"
    assert all(agent_of_key(archive_key(p)) == "codex" for p in CODEX)
    assert archive_key(GEMINI[0]).startswith("gemini/") and archive_key(GEMINI[0]).endswith(GEMINI[0].name)


def test_discover_finds_every_agents_sessions_and_nothing_else(tmp_path):
    for agent in ("codex", "gemini"):  # the built fixtures (the recorded ones have a test of their own)
        shutil.copytree(AGENTS / agent, tmp_path / "home" / agent)
    (tmp_path / "home" / "gemini" / "settings.json").write_text("{}")  # not a chat
    found = discover([tmp_path / "home"])
    assert len(found) == len(CODEX) + len(GEMINI)


def test_codex_home_names_the_codex_root(tmp_path):
    assert "$CODEX_HOME/sessions" in default_roots({})
    assert expand_root("$CODEX_HOME/sessions", {"CODEX_HOME": str(tmp_path)}) == tmp_path / "sessions"
    assert expand_root("$CODEX_HOME/sessions", {}) == Path("~/.codex/sessions").expanduser()


@pytest.fixture
async def node(aio, tmp_path):
    async with await Store.open(tmp_path / "c.db") as store:
        yield store, Archive(tmp_path / "archive")


async def test_a_gemini_chat_written_again_is_read_again_keeping_one_archived_version(node, tmp_path):
    store, archive = node
    chat = json.loads(sessions_of(GEMINI, "pytest")[0].read_text())
    full = chat["messages"]
    path = tmp_path / "tmp" / "hash" / "chats" / "session-2026-11-09T10-00-c064d322.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**chat, "messages": full[:3]}, indent=2))  # up to the failed pytest
    first = await ingest_paths(store, archive, [path], now=1.0)
    again = await ingest_paths(store, archive, [path], now=2.0)
    path.write_text(json.dumps({**chat, "messages": full}, indent=2))  # Gemini rewrites the whole file
    later = await ingest_paths(store, archive, [path], now=3.0)
    assert first.episodes["error"] == 1 and first.episodes["session"] == 1
    assert again.bytes_read == 0 and sum(again.episodes.values()) == 0
    assert sum(later.episodes.values()) == 0  # the same error (now resolved) and session, replaced
    assert later.rewritten == ()  # a whole document changing is no news
    stored = await episode_store.load_episodes(store, include_archived=True)
    (error,) = [s.episode for s in stored if isinstance(s.episode, ErrorEpisode)]
    assert error.resolution is not None and "asyncio_mode" in error.resolution.command
    assert {agent_of_key(s.transcript) for s in stored} == {"gemini"}
    (entry,) = archive.entries()
    assert entry.generations == 1 and archive.read(entry.key) == path.read_bytes()


async def test_a_growing_codex_rollout_is_read_from_where_the_last_read_stopped(node, tmp_path):
    store, archive = node
    source = sessions_of(CODEX, "pytest")[0]
    path = tmp_path / "sessions" / "2026" / "11" / "09" / source.name
    path.parent.mkdir(parents=True)
    data = source.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    await ingest_paths(store, archive, [path], now=1.0)
    path.write_bytes(data)
    second = await ingest_paths(store, archive, [path], now=2.0)
    assert second.bytes_read < len(data) and second.rewritten == ()
    stored = await episode_store.load_episodes(store, include_archived=True)
    assert {agent_of_key(s.transcript) for s in stored} == {"codex"}
    assert archive.read(archive_key(path)) == data


def test_an_invalid_byte_in_a_codex_line_costs_the_byte_not_the_line():
    from commons.ingest import codex as codex_reader

    rollout = sorted((Path(__file__).parent / "fixtures" / "agents" / "codex").rglob("rollout-*.jsonl"))[0]
    data = rollout.read_bytes()
    clean = codex_reader.parse(data)
    # A stray Latin-1 byte inside the text of the first line that carries the person's words.
    at = data.index(b'"message": "') + len(b'"message": "')
    damaged = codex_reader.parse(data[:at] + b"\xe9" + data[at:])
    assert damaged.skipped_lines == clean.skipped_lines == 0
    assert [e.kind for e in damaged.episodes] == [e.kind for e in clean.episodes]


SPECKIT = "\n## User Input\n\n```text\n{}\n```\n\nYou **MUST** consider the user input before proceeding (if not empty).\n\n" \
          "## Outline\n\n1. Run `.specify/scripts/bash/check-prerequisites.sh` and do not stop until every task is done.\n"


def test_a_codex_prompt_expansion_is_the_persons_words_inside_its_user_input_block():
    assert codex.person_words(SPECKIT.format("Phase 2, but not the CLI yet")) == "Phase 2, but not the CLI yet"
    empty = SPECKIT.format("")
    assert codex.person_words(empty) == empty.strip()  # the command alone: nothing typed beside it
    data = _rollout(
        _said("2026-11-04T09:00:01.000Z", SPECKIT.format("Phase 1")),
        _said("2026-11-04T09:00:05.000Z", "Phase 1 is done: all tasks pass.", "agent_message"),
        _said("2026-11-04T09:00:09.000Z", SPECKIT.format("no, phase 1 still fails: the tests do not build")),
    )  # fmt: skip
    result = codex.parse(data)
    assert result.session is not None and result.session.asked[0] == "Phase 1"
    (correction,) = [e for e in result.episodes if isinstance(e, CorrectionEpisode)]
    assert correction.said.startswith("no, phase 1 still fails")


def _subagent_chat(kind: str | None) -> bytes:
    head = {"sessionId": "g2", "projectHash": "h", "startTime": "2026-11-04T09:00:00.000Z",
            "lastUpdated": "2026-11-04T09:00:09.000Z"} | ({"kind": kind} if kind else {})
    return json.dumps(head | {"messages": [
        {"id": "m1", "timestamp": "2026-11-04T09:00:01.000Z", "type": "user", "content": "investigate the vault layout"},
        {"id": "m2", "timestamp": "2026-11-04T09:00:02.000Z", "type": "gemini", "content": "Done: the layout is mapped."},
        {"id": "m3", "timestamp": "2026-11-04T09:00:03.000Z", "type": "user",
         "content": "no, that is wrong: you still did not read the templates folder"},
    ]}).encode()  # fmt: skip


def test_a_gemini_subagents_user_words_are_its_parent_agents_and_correct_nothing():
    def corrections(data: bytes) -> list[CorrectionEpisode]:
        return [e for e in gemini.parse(data).episodes if isinstance(e, CorrectionEpisode)]

    assert len(corrections(_subagent_chat(None))) == 1  # the person's chat: a correction
    assert corrections(_subagent_chat("subagent")) == []  # the parent agent prompting its subagent


def test_a_write_stdin_to_a_session_that_is_gone_is_a_failure_not_an_answer():
    # codex-rs unified_exec handler: ``write_stdin failed: {err}`` with UnifiedExecError's Display.
    said = "write_stdin failed: Unknown process id 4711"
    assert read_output(said) == (False, said)


def test_typing_into_a_session_started_without_a_tty_is_a_failure_not_an_answer():
    said = "write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open"
    assert read_output(said) == (False, said)


def test_a_sandbox_denials_failure_line_is_what_the_command_printed_not_rusts_debug_form():
    denied = ("failed in sandbox LinuxSeccomp with execution error: Denied { output: ExecToolCallOutput { exit_code: 2, "
              f"stdout: {_stream('')}, stderr: {_stream(FD_MISSING)}, aggregated_output: {_stream(FD_MISSING)}, "
              "duration: 291.686564ms, timed_out: false } }")
    data = _rollout(
        _exec("2025-10-06T08:10:54.000Z", "c1", "shell", {"command": ["bash", "-lc", "fd -e go"], "workdir": "/w/app"}),
        ("2025-10-06T08:10:55.000Z", "response_item", {"type": "function_call_output", "call_id": "c1", "output": denied}),
    )
    (error,) = [e for e in codex.parse(data).episodes if isinstance(e, ErrorEpisode)]
    assert (error.target, error.exit_code) == ("fd -e go", 2)
    assert error.failure.startswith("bash: line 1: fd: command not found") and "StreamOutput" not in error.failure


STDIN_CLOSED = "write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open"
REFUSED_POLL = (  # Ctrl-C typed into a session started without a tty: Codex refuses the write, the program runs on
    RUNNING_SESSION[0], RUNNING_SESSION[1],
    _exec("2026-11-04T09:00:03.000Z", "p1", "write_stdin", {"session_id": 2909, "chars": "\u0003"}),
    ("2026-11-04T09:00:04.000Z", "response_item", {"type": "function_call_output", "call_id": "p1", "output": STDIN_CLOSED}),
    *RUNNING_SESSION[4:],
)


def test_a_poll_codex_refused_is_the_polls_own_failure_and_the_program_keeps_its_own_exit():
    data = _rollout(*REFUSED_POLL)
    errors = {e.uid: e for e in codex.parse(data).episodes if isinstance(e, ErrorEpisode)}
    assert (errors["p1"].tool, errors["p1"].failure) == ("write_stdin", STDIN_CLOSED)
    assert (errors["p2"].tool, errors["p2"].target, errors["p2"].exit_code) == ("Bash", "npm run dev -- --port 3001", 1)
    assert "Unable to acquire lock" in errors["p2"].failure


def test_a_poll_of_a_session_codex_no_longer_knows_gives_the_program_no_verdict():
    gone = "write_stdin failed: Unknown process id 2909"
    data = _rollout(
        RUNNING_SESSION[0], RUNNING_SESSION[1],
        _exec("2026-11-04T09:00:03.000Z", "p1", "write_stdin", {"session_id": 2909, "chars": ""}),
        ("2026-11-04T09:00:04.000Z", "response_item", {"type": "function_call_output", "call_id": "p1", "output": gone}),
    )  # fmt: skip
    (error,) = [e for e in codex.parse(data).episodes if isinstance(e, ErrorEpisode)]
    assert (error.uid, error.tool, error.failure) == ("p1", "write_stdin", gone)  # not `npm run dev` failing


def _escalated_fetch(session: str, escalation: dict) -> bytes:
    """`git fetch` refused by the sandbox (the shell tool's "Exit code: N … Output:" text), then the
    same command made again with the escalation Codex's tool takes, passing."""
    fetch = {"command": "git fetch --all --prune", "workdir": "/w/app"}
    lines = [{"timestamp": "2026-11-04T09:00:00.000Z", "type": "session_meta", "payload": {"id": session, "cwd": "/w/app"}}]
    lines += [{"timestamp": at, "type": kind, "payload": payload} for at, kind, payload in (
        _exec("2026-11-04T09:00:01.000Z", f"{session}-c1", "shell_command", fetch),
        ("2026-11-04T09:00:02.000Z", "response_item", {"type": "function_call_output", "call_id": f"{session}-c1", "output":
         "Exit code: 255\nWall time: 1 seconds\nOutput:\nerror: cannot open '.git/FETCH_HEAD': Operation not permitted\n"}),
        _exec("2026-11-04T09:00:03.000Z", f"{session}-c2", "shell_command",
              {**fetch, **escalation, "justification": "Need to fetch remote branches"}),
        ("2026-11-04T09:00:04.000Z", "response_item", {"type": "function_call_output", "call_id": f"{session}-c2", "output":
         "Exit code: 0\nWall time: 0.9 seconds\nOutput:\n"}),
    )]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_a_sandbox_denial_passed_when_escalated_is_a_lesson_that_says_so_in_words(tmp_path):
    # The older shell tool's boolean and the later enum: either is the same fix.
    for i, escalation in enumerate(({"with_escalated_permissions": True}, {"sandbox_permissions": "require_escalated"})):
        (tmp_path / f"rollout-2026-11-04T09-00-0{i}-s{i}.jsonl").write_bytes(_escalated_fetch(f"s{i}", escalation))
    (text,) = lesson_texts(sorted(tmp_path.glob("rollout-*.jsonl")))
    assert text.startswith("`git fetch` failed with \"error: cannot open '.git/FETCH_HEAD': Operation not permitted\"")
    assert "it passed when run outside the sandbox (escalated) (2 of 2 sessions)" in text  # one fix, however asked
    assert "with_escalated_permissions" not in text and "require_escalated" not in text


def _errors_read_in_two(data: bytes) -> list[list[tuple[str, str]]]:
    """The error episodes (uid, tool) of a rollout read in two pieces, cut between any two records."""
    cuts = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")][:-1]
    found = []
    for cut in cuts:
        first = codex.parse(data[:cut])
        rest = codex.parse(data[first.state.offset:], first.state)
        found.append(sorted({(e.uid, e.tool) for e in first.episodes + rest.episodes if isinstance(e, ErrorEpisode)}))
    return found


def test_a_polls_call_and_its_answer_read_apart_are_read_as_read_together():
    # A growing rollout is read as it is written: a poll's line and its answer's can come in two reads.
    refused = _rollout(*REFUSED_POLL)
    assert all(found == [("p1", "write_stdin"), ("p2", "Bash")] for found in _errors_read_in_two(refused))
    unseen = _rollout(RUNNING_SESSION[0], _exec("2026-11-04T09:00:03.000Z", "p9", "write_stdin", {"session_id": 7}),
                      _exec_output("2026-11-04T09:00:04.000Z", "p9", "Process exited with code 2", "bye\n"))
    assert all(found == [] for found in _errors_read_in_two(unseen))  # a program not seen starting: no call's exit
