"""Reading Codex CLI rollouts (JSONL, one record per line) into episodes, incrementally.

Codex appends to ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`` (``$CODEX_HOME``
is ``~/.codex`` unless moved) while a session runs. Two layouts are in use:

- since the ``{timestamp, type, payload}`` envelope: ``session_meta`` (id, cwd), ``turn_context``
  (cwd, model), ``response_item`` (``message``, ``function_call`` / ``custom_tool_call`` /
  ``local_shell_call`` and their ``*_output`` linked by ``call_id``, ``reasoning``) and
  ``event_msg`` (``user_message``, ``agent_message``, token counts, …). What the person typed and
  what the agent said are read from the ``event_msg`` records: the ``message`` items carry the
  same words again, wrapped in Codex's own context (``<environment_context>``, AGENTS.md).
- since 0.171 the ``user_message`` / ``agent_message`` events are gone: the words and every tool run
  are ``event_msg`` ``item_completed`` records, the thread items Codex shows (``UserMessage``,
  ``AgentMessage``, ``CommandExecution`` with its ``exit_code`` and ``aggregated_output``,
  ``FileChange``). Its default model runs tools from JavaScript (``custom_tool_call`` ``exec``, "code
  mode"): the ``exec`` call is only the script, and the commands it ran are the ``CommandExecution``
  items; with a model that calls ``exec_command`` directly, item and call share their id, so a call
  is counted once. Newer records Codex adds (``world_state``, ``token_usage_record``) are passed over.
- older files: a first line ``{id, timestamp, instructions}``, then the bare response items and
  ``{"record_type": "state"}`` lines; there the ``message`` items are the only words.

What the person typed is a user message past Codex's own words: the IDE extension opens it with
``# Context from my IDE setup:`` (active file, open tabs, a selection) and puts the person's words
after ``## My request for Codex:``; a turn the person stopped is a ``turn_aborted`` event (or a
``<turn_aborted>`` user message), an interrupt and not words.

A call's failure comes from its output in the shapes Codex writes: a JSON string
``{"output": …, "metadata": {"exit_code": N}}`` (the ``shell`` tool), or text whose header gives
the exit code (``Exit code: N`` / ``Process exited with code N``, then ``Output:``). The turns use
the neutral tool names the core knows (``Bash`` for every shell tool, ``Edit`` for apply_patch) and
a failure's output opens with ``Exit code N``, so a Codex failure is the same episode as a Claude
Code one. A call the person refused ("rejected by user") is no failure. An ``exec_command`` that did
not start says so in Rust's Debug form (``exec_command failed for `cmd`: CreateProcess { message:
"Rejected(\"…\")" }``): its inner error is read as the shell tool writes the same error, a refusal of
Codex's own (its rules, approval settings, auto-reviewer) opens with the core's ``Not run:`` and
makes no error, and a program that could not be spawned is a failure in its own words. The older
shell tool's ``failed in sandbox LinuxSeccomp with execution error: …`` (the sandbox's report of the
command's non-zero exit, in Rust's Debug or Display form) is that exit and what the command printed.
A program
that keeps running past its ``exec_command`` ("Process running with session ID N") is polled or
typed into with ``write_stdin``: a poll returns what the program printed so far and is no call of its
own; the exit a poll finally returns is the ``exec_command``'s, its command the target. A poll Codex
refused (``write_stdin failed: …``: no such session, or typing into one without a tty) is the poll's
own failure, and the program's exit, if it runs on, still comes with a later poll.

Sans-I/O, as `commons.ingest.claude_code` is (it says how a caller uses `parse`); transcripts are
data, nothing in them is run. Bad lines are counted and skipped.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from commons.core.learning import NOT_RUN_OPENING
from commons.ingest.corrections import is_person_text
from commons.ingest.episodes import BuildState, EpisodeBuilder
from commons.ingest.readers import (
    HEAD_BYTES, ParseResult, ParseState, added_line, clip, fingerprint, head_records, is_rewritten, json_record,
    timestamp_of,
)  # fmt: skip
from commons.ingest.turns import (
    AgentSaid, PersonInterrupted, PersonSaid, SessionSeen, ToolCalled, ToolRejected, ToolReturned,
)  # fmt: skip

NAME = "codex"
TARGET_CHARS = 300
DETAIL_CHARS = 80

# Codex's tool names → the neutral names of the turn stream (those the core knows).
SHELL_NAMES = frozenset({"shell", "exec_command", "shell_command", "local_shell", "container.exec", "unified_exec"})
EDIT_NAMES = frozenset({"apply_patch"})
_ENVELOPE = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
# The words Codex itself puts in a user message: its context, the AGENTS.md it read, its instructions.
_WRAPPERS = ("<environment_context>", "<user_instructions>", "<user_shell_command>", "# AGENTS.md instructions")
# The IDE extension sends the person's words after what the editor shows (active file, open tabs, a
# selection): the person typed only what follows this heading.
_IDE_CONTEXT = "# Context from my IDE setup:"
_IDE_REQUEST = re.compile(r"^## My request for Codex:[ \t]*\n?", re.MULTILINE)
# A prompt file's expansion (Speckit's slash commands: "## User Input", a ```text block holding what
# the person typed after the command, then the command's own instructions): the person's words are
# the block's text alone.
_PROMPT_INPUT = re.compile(r"\A#+[ \t]*User Input[ \t]*\n\s*```[\w-]*[ \t]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
# What Codex writes as a user message when the person stopped a turn (Escape): an interrupt, not words.
_ABORTED = "<turn_aborted>"
_EXIT_HEADER = re.compile(r"^(?:Exit code:|Process exited with code) (-?\d+)\s*$", re.MULTILINE)
_REJECTED = re.compile(r"^(?:(?:exec command|patch) )?rejected by user", re.IGNORECASE)
_RUNNING = "Process running with session ID"
_RUNNING_ID = re.compile(r"^Process running with session ID (\d+)\s*$", re.MULTILINE)
# The tool that polls (or types into) a program an ``exec_command`` left running, by its session id:
# what it returns is the program's output so far, or its exit once it ended.
POLL_NAME = "write_stdin"
# How Codex refuses a poll (``write_stdin failed: {UnifiedExecError}``): the session is not one it
# knows (``Unknown process id 7``: ended, or never was), or it was started without a tty and takes
# no typing (its program runs on).
_POLL_FAILED = re.compile(r"\Awrite_stdin failed\b", re.IGNORECASE)
_STDIN_CLOSED = re.compile(r"\bstdin is closed\b", re.IGNORECASE)
# What Codex writes, as plain text with no exit code, when the call did not get to run or its
# patch did not apply: a failure, not an answer ("failed in sandbox: …", "apply_patch verification
# failed: Failed to find expected lines in …"; ``write_stdin failed: Unknown process id 7`` when the
# session polled had already ended or never was).
_FAILED_PLAIN = re.compile(r"^(?:failed in sandbox\b|apply_patch verification failed\b|execution error\b|exec_command failed\b"
                           r"|write_stdin failed\b)",
                           re.IGNORECASE)
# How the unified-exec tool (``exec_command``) says its command did not start: the error it met, in
# Rust's Debug form, inside its own (``exec_command failed for `cmd`: CreateProcess { message:
# "Rejected(\"…\")" }``; before it named the command, ``exec_command failed: …``).
_EXEC_FAILED = re.compile(r"\Aexec_command failed(?: for `.*?`)?: (?=[A-Z]\w*(?: \{|\(|\s*\Z))", re.DOTALL)
_CREATE_PROCESS = re.compile(r'\ACreateProcess \{ message: "((?:[^"\\]|\\.)*)', re.DOTALL)
# The error inside, the tool runtime's: a refusal or a start that failed (``Rejected("…")``), or
# what Codex met running it (``Codex(Io(Os { … }))``, ``Codex(Sandbox(Denied { … }))``).
_REJECTED_ERROR = re.compile(r'\ARejected\("((?:[^"\\]|\\.)*)', re.DOTALL)
_CODEX_ERROR = re.compile(r"\ACodex\((.*)\)\s*\Z", re.DOTALL)
# A start that failed (the program or its folder is not there): the agent's step failed. Any other
# reason a command was rejected for is Codex's refusal to run it.
_NOT_STARTED = re.compile(r"\AFailed to create unified exec (?:process|session)\b")
# The reasons Codex gives, as plain text, for a command it refused to run: its rules forbade it
# ("`rm -rf x` rejected: blocked by policy"), the approval settings allow no prompt, its
# auto-reviewer rejected it or did not answer in time, escalation asked for where the approval
# policy forbids it, no shell in this session; and the sandbox it could not set up.
_REFUSED = re.compile(
    r"\A(?:`.*?` rejected: |approval required by policy\b|This action was rejected due to unacceptable risk\b"
    r"|The automatic permission approval review did not finish\b|approval policy is \w+; reject command\b"
    r"|(?:unified exec|exec_command) is unavailable in this session\b"
    r"|execution error: (?:UnsupportedOperation|LandlockSandboxExecutableNotProvided)\b)",
    re.DOTALL)
# What a command printed, when the sandbox reported its exit as a denial (Rust's Debug form).
_SANDBOX_EXIT = re.compile(r'ExecToolCallOutput \{ exit_code: (-?\d+),.*?aggregated_output: StreamOutput \{ text: "((?:[^"\\]|\\.)*)"',
                           re.DOTALL)
# The shell tool before unified exec, when its sandbox reported a command's non-zero exit as a denial:
# "failed in sandbox LinuxSeccomp with execution error: " then the error, in Rust's Debug form
# (``Denied { output: ExecToolCallOutput { exit_code: 1, … } }``) or, later, in its Display form
# (``sandbox denied exec error, exit code: 128, stdout: …, stderr: …``).
_SANDBOX_FAILED = re.compile(r"\Afailed in sandbox \w+ with execution error: ")
_SANDBOX_DENIED = re.compile(r"\Asandbox denied exec error, exit code: (-?\d+), stdout: (.*?), stderr: (.*)\Z", re.DOTALL)
_RUST_ESCAPE = re.compile(r"\\(?:u\{([0-9a-fA-F]{1,6})\}|(.))", re.DOTALL)
_RUST_ESCAPED = {"n": "\n", "r": "\r", "t": "\t", "0": "\0"}
_CWD = re.compile(r"<cwd>([^<\n]+)</cwd>")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
CODE_MODE = "exec"  # the custom tool whose input is JavaScript calling the other tools
# What the reader notes of a call until its result comes (`EpisodeBuilder.note`, kept across reads):
# a code-mode script (`CODE_MODE`), or a poll and the session it polls ("" when not seen starting).
_NOTE = "codex-call:"
_POLLED = "poll:"
# How a rollout's first line opens when it is longer than the head read (a session_meta carries
# the whole system prompt): the envelope's keys in the order Codex writes them, or an older file's.
_OPENING = re.compile(rb'^\{"timestamp":"[^"]*",(?:"ordinal":\d+,)?"type":"(?:session_meta|response_item|event_msg|'
                      rb'turn_context)","payload":|^\{"id":"[^"]*","timestamp":"[^"]*","instructions":')


def parse(data: bytes, state: ParseState | None = None, *, session_hint: str = "") -> ParseResult:
    """Read the complete lines of `data`, the bytes of the rollout from `state.offset` on.

    `session_hint` names the session if the rollout never does (used when `state` is None)."""
    if state is None:
        state = ParseState(build=BuildState(hint=session_hint))
    end = data.rfind(b"\n") + 1
    builder = EpisodeBuilder(state.build)
    reader = _Reader(builder, first=state.offset == 0)
    if end:
        reader.feed(data[:end])
    new_state = replace(state, offset=state.offset + end, records=state.records + reader.records,
                        skipped_lines=state.skipped_lines + reader.skipped, build=builder.snapshot())
    if state.head_len == 0 and state.offset == 0 and end:
        head_len = min(HEAD_BYTES, end)
        new_state = replace(new_state, head_len=head_len, head_hash=fingerprint(data[:head_len]))
    session = builder.session_episode()
    episodes = builder.episodes() + ((session,) if session is not None else ())
    return ParseResult(new_state, episodes, reader.skipped, end, session)


class _Reader:
    """Codex's records → turns, fed to the builder as they are read."""

    def __init__(self, builder: EpisodeBuilder, *, first: bool) -> None:
        self.builder = builder
        self.first = first  # the next line is the rollout's first (an older file's session line)
        self.records = 0
        self.skipped = 0
        # The person's last words read, until the agent or a tool moves on: a version that wrote
        # both the `user_message` event and the `UserMessage` item says them once.
        self.last_person = ""

    def feed(self, body: bytes) -> None:
        for line in body.split(b"\n"):
            if not line or line.isspace():
                continue
            rec = json_record(line)
            if rec is None:
                self.skipped += 1
                continue
            self.records += 1
            first, self.first = self.first, False
            kind, payload = rec.get("type"), rec.get("payload")
            if isinstance(payload, dict) and (kind in _ENVELOPE or "timestamp" in rec):
                self._envelope(str(kind), payload, timestamp_of(rec.get("timestamp")))
            elif first and "type" not in rec and isinstance(rec.get("id"), str):
                self._session(rec, timestamp_of(rec.get("timestamp")))  # an older file's first line
            elif isinstance(kind, str):
                self._item(rec, None, words=True)  # an older file's bare response item

    def _envelope(self, kind: str, payload: dict[str, Any], ts: float | None) -> None:
        if ts is not None and kind != "session_meta":
            self.builder.feed(SessionSeen(at=ts))  # every record's time: when the session ended
        if kind == "session_meta":
            self._session(payload, ts)
        elif kind == "turn_context":
            cwd = payload.get("cwd")
            self.builder.feed(SessionSeen(project=cwd if isinstance(cwd, str) else "", at=ts))
        elif kind == "response_item":
            self._item(payload, ts, words=False)
        elif kind == "event_msg":
            if payload.get("type") == "item_completed" and isinstance(payload.get("item"), dict):
                self._thread_item(payload["item"], ts)
            else:
                self._event(payload, ts)

    def _session(self, meta: dict[str, Any], ts: float | None) -> None:
        sid, cwd = meta.get("id"), meta.get("cwd")
        at = ts if ts is not None else timestamp_of(meta.get("timestamp"))
        self.builder.feed(SessionSeen(
            session=sid if isinstance(sid, str) else "", project=cwd if isinstance(cwd, str) else "", at=at,
        ))  # fmt: skip

    def _event(self, payload: dict[str, Any], ts: float | None) -> None:
        kind, message = payload.get("type"), payload.get("message")
        if kind == "turn_aborted":
            self._aborted(payload, ts)
            return
        if not isinstance(message, str) or not message.strip():
            return
        if kind == "user_message":
            self._person(message, ts)
        elif kind == "agent_message":
            self._agent(message, ts)

    def _aborted(self, payload: dict[str, Any], ts: float | None) -> None:
        if payload.get("reason", "interrupted") == "interrupted":
            self.builder.feed(PersonInterrupted(ts))

    def _person(self, text: str, ts: float | None, uid: str = "") -> None:
        text = person_words(text)
        if text.startswith(_ABORTED):
            self.builder.feed(PersonInterrupted(ts))
            return
        if text.startswith(_WRAPPERS):
            cwd = _CWD.search(text)  # an older file names its folder only here
            if cwd is not None:
                self.builder.feed(SessionSeen(project=cwd.group(1).strip(), at=ts))
            return
        if not is_person_text(text) or text == self.last_person:
            return
        self.last_person = text
        self.builder.feed(PersonSaid(uid, ts, text))

    def _agent(self, text: str, ts: float | None) -> None:
        self.last_person = ""
        self.builder.feed(AgentSaid(ts, text))

    def _thread_item(self, item: dict[str, Any], ts: float | None) -> None:
        """One ``item_completed`` thread item (Codex 0.171 and later)."""
        kind, item_id = item.get("type"), item.get("id")
        if kind == "UserMessage":
            self._person(_content_text(item.get("content")), ts, item_id if isinstance(item_id, str) else "")
        elif kind == "AgentMessage":
            text = _content_text(item.get("content")).strip()
            if text:
                self._agent(text, ts)
        elif kind == "CommandExecution" and isinstance(item_id, str):
            self.last_person = ""
            self._call(item_id, "exec_command", {"command": item.get("command")}, ts)
            status, code = item.get("status"), item.get("exit_code")
            if status == "declined":
                self.builder.feed(ToolRejected(item_id, item_id, ts, ""))
            elif status in ("completed", "failed"):
                output = item.get("aggregated_output") if isinstance(item.get("aggregated_output"), str) else ""
                exit_code = code if isinstance(code, int) and not isinstance(code, bool) else (1 if status == "failed" else 0)
                ok, text = _verdict(exit_code, output)
                self.builder.feed(ToolReturned(item_id, item_id, ts, ok=ok, output="" if ok else text,
                                               shown=output if ok else None))
        elif kind == "FileChange" and isinstance(item_id, str):
            self.last_person = ""
            self._file_change(item_id, item, ts)

    def _file_change(self, item_id: str, item: dict[str, Any], ts: float | None) -> None:
        changes = item.get("changes") if isinstance(item.get("changes"), dict) else {}
        path, change = next(iter(changes.items()), ("", {}))
        change = change if isinstance(change, dict) else {}
        diff = change.get("unified_diff")
        detail = (_patch_detail(diff) if isinstance(diff, str)
                  else added_line(change.get("content"), None, DETAIL_CHARS) if change.get("type") == "add" else "")
        self.builder.feed(ToolCalled(item_id, "Edit", clip(str(path), TARGET_CHARS), detail, ts))
        status = item.get("status")
        if status == "declined":
            self.builder.feed(ToolRejected(item_id, item_id, ts, ""))
        elif status in ("completed", "failed"):
            said = "\n".join(v for v in (item.get("stderr"), item.get("stdout")) if isinstance(v, str)).strip()
            ok = status == "completed"
            self.builder.feed(ToolReturned(item_id, item_id, ts, ok=ok, output="" if ok else f"Exit code 1\n{said}"))

    def _item(self, item: dict[str, Any], ts: float | None, *, words: bool) -> None:
        """One response item. `words`: its messages are the session's words (an older file, which
        has no event_msg records); otherwise they repeat the events' words and are passed over."""
        kind = item.get("type")
        if kind == "message":
            if words:
                self._message(item, ts)
        elif kind == "function_call":
            self._call(item.get("call_id"), item.get("name"), _arguments(item.get("arguments")), ts)
        elif kind == "custom_tool_call":
            if item.get("name") == CODE_MODE and isinstance(item.get("call_id"), str):
                self.builder.note(_NOTE + item["call_id"], CODE_MODE)  # its commands come as CommandExecution items
                return
            self._call(item.get("call_id"), item.get("name"), {"input": item.get("input")}, ts)
        elif kind == "local_shell_call":
            action = item.get("action") if isinstance(item.get("action"), dict) else {}
            self._call(item.get("call_id") or item.get("id"), "local_shell", action, ts)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item.get("call_id"), item.get("output"), ts)

    def _message(self, item: dict[str, Any], ts: float | None) -> None:
        content = item.get("content")
        parts = content if isinstance(content, list) else [{"text": content}]
        text = "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)).strip()
        if not text:
            return
        if item.get("role") == "user":
            self._person(text, ts)
        elif item.get("role") == "assistant":
            self._agent(text, ts)

    def _call(self, call_id: Any, name: Any, arguments: dict[str, Any], ts: float | None) -> None:
        if not isinstance(call_id, str) or not isinstance(name, str) or not name:
            return
        self.last_person = ""
        argv = arguments.get("command")
        if name in SHELL_NAMES and isinstance(argv, list) and len(argv) == 2 and argv[0] == "apply_patch":
            name, arguments = "apply_patch", {"input": argv[1]}  # older versions patched through the shell
        if name == POLL_NAME:
            self._poll(call_id, arguments.get("session_id"))
        elif name in SHELL_NAMES:
            self.builder.feed(ToolCalled(call_id, "Bash", _command(arguments), _shell_detail(arguments), ts))
        elif name in EDIT_NAMES:
            patch = arguments.get("input") if isinstance(arguments.get("input"), str) else ""
            self.builder.feed(ToolCalled(call_id, "Edit", _patched_file(patch), _patch_detail(patch), ts))
        else:
            self.builder.feed(ToolCalled(call_id, name, _first_string(arguments), "", ts))

    def _poll(self, call_id: str, session: Any) -> None:
        """A poll of a running program is no tool call of its own: the ``exec_command`` that started
        it awaits its result under this poll's id, so the exit a poll returns is that command's
        (its tool and target, this poll's id). A poll of a program not seen starting returns nothing."""
        known = not isinstance(session, bool) and isinstance(session, (int, str)) and \
            self.builder.hand_over(_running(session), call_id)
        self.builder.note(_NOTE + call_id, _POLLED + (str(session).strip() if known else ""))

    def _poll_failed(self, call_id: str, session: str, said: str, ts: float | None) -> None:
        """A poll Codex refused (``write_stdin failed: …``) is the poll's own failure, not the
        program's exit: typed into a session without a tty, the program runs on and its exit is
        still to come with a later poll; a session Codex no longer knows ended unseen."""
        if session and _STDIN_CLOSED.search(said):
            self.builder.hand_over(call_id, _running(session))
        self.builder.feed(ToolCalled(call_id, POLL_NAME, "", "", ts))
        self.builder.feed(ToolReturned(call_id, call_id, ts, ok=False, output=said))

    def _output(self, call_id: Any, output: Any, ts: float | None) -> None:
        if not isinstance(call_id, str):
            return
        noted = self.builder.take_note(_NOTE + call_id)
        if noted == CODE_MODE:
            return  # a code-mode script's result: its commands were read as they ran
        if noted is not None and noted.startswith(_POLLED):
            session = noted[len(_POLLED):]
            if _POLL_FAILED.match(_output_text(output).lstrip()):
                self._poll_failed(call_id, session, _output_text(output).strip(), ts)
                return
            if not session:
                return  # a poll of a program not seen starting: its output is no call's
        verdict = read_output(output)
        if verdict is None:  # a program still running: its exit comes with a later poll of its session
            session = _running_session(_output_text(output))
            if session is not None:
                self.builder.hand_over(call_id, _running(session))
            return
        ok, text = verdict
        if not ok and _REJECTED.match(text.strip()):  # the person said no: not a failure of the tool
            self.builder.feed(ToolRejected(call_id, call_id, ts, ""))
            return
        self.builder.feed(ToolReturned(call_id, call_id, ts, ok=ok, output="" if ok else text))


def person_words(text: str) -> str:
    """What the person typed of a user message: past the IDE's context when the extension sent it
    (the whole text when it has no request heading: nothing of it is known to be theirs alone); the
    text of the "User Input" block of a prompt file's expansion (the whole expansion when the block
    is empty: the person ran the command and typed nothing beside it)."""
    text = text.strip()
    expanded = _PROMPT_INPUT.match(text)
    if expanded is not None:
        return expanded.group(1).strip() or text
    if text.startswith(_IDE_CONTEXT):
        found = _IDE_REQUEST.search(text)
        if found is not None:
            return text[found.end():].strip()
    return text


# -- a call's output ----------------------------------------------------------------------------


def read_output(output: Any) -> tuple[bool, str] | None:
    """Whether a call succeeded, and (when it failed) its output in the turn stream's form: opening
    with ``Exit code N`` when Codex gave one, with `NOT_RUN_OPENING` when Codex refused to run it.
    None for a command that is still running."""
    if isinstance(output, dict):  # newer writers: {"content": …, "success": …}
        verdict = read_output(_output_text(output))
        if output.get("success") is False and verdict is not None and verdict[0]:
            return False, verdict[1]
        return verdict
    if isinstance(output, list):
        return read_output(_output_text(output))
    if not isinstance(output, str):
        return True, ""
    body = _json_object(output)
    if body is not None and isinstance(body.get("metadata"), dict):
        code = body["metadata"].get("exit_code")
        text = body.get("output") if isinstance(body.get("output"), str) else ""
        return _verdict(code if isinstance(code, int) and not isinstance(code, bool) else None, text)
    head = output[:2000]
    found = _EXIT_HEADER.search(head)
    if found is not None:
        rest = output[found.end():]
        cut = rest.find("\nOutput:")
        return _verdict(int(found.group(1)), rest[cut + len("\nOutput:"):] if cut >= 0 else rest)
    if output.startswith(_RUNNING) or _running_session(output) is not None:
        return None  # the header of a program still running (``Chunk ID``, ``Wall time``, then this)
    failed = _EXEC_FAILED.match(output)
    if failed is not None:
        return False, _exec_failure(output[failed.end():])
    sandboxed = _SANDBOX_FAILED.match(output)
    denied = _sandbox_denial(output[sandboxed.end():]) if sandboxed is not None else None
    if denied is not None:
        return False, denied
    if _REFUSED.match(output.lstrip()):
        return False, NOT_RUN_OPENING + output.strip()
    if _REJECTED.match(output.strip()) or _FAILED_PLAIN.match(output.lstrip()):
        return False, output
    return True, ""


def _exec_failure(error: str) -> str:
    """An ``exec_command`` that did not start, in the turn stream's form: the inner error read as
    Codex's shell tool writes the same error (the refusal's reason, ``execution error: …``), a
    refusal opening with `NOT_RUN_OPENING`, a sandbox's denial as the command's own exit."""
    wrapped = _CREATE_PROCESS.match(error)
    inner = _rust_unescaped(wrapped.group(1)) if wrapped else error
    rejected, met = _REJECTED_ERROR.match(inner), _CODEX_ERROR.match(inner)
    if rejected is not None:
        reason = _rust_unescaped(rejected.group(1)).strip()
        if _REJECTED.match(reason) or _NOT_STARTED.match(reason):
            return reason  # the person said no; or the program could not start: the step's failure
        return NOT_RUN_OPENING + reason
    denied = _sandbox_denial(inner)
    if denied is not None:
        return denied
    said = f"execution error: {met.group(1)}" if met is not None else inner
    return NOT_RUN_OPENING + said if _REFUSED.match(said) else said


def _sandbox_denial(error: str) -> str | None:
    """The command's own exit and what it printed, in the turn stream's form, when the sandbox
    reported its non-zero exit as a denial (the command ran: nothing is known to have been denied
    but what its words say); None for any other error."""
    debug = _SANDBOX_EXIT.search(error) if error.startswith(("Denied {", "Codex(Sandbox(Denied {")) else None
    if debug is not None:
        return f"Exit code {debug.group(1)}\n{_rust_unescaped(debug.group(2)).strip()}"
    shown = _SANDBOX_DENIED.match(error)
    if shown is not None:
        said = "\n".join(part.strip() for part in shown.group(2, 3) if part.strip())
        return f"Exit code {shown.group(1)}\n{said}"
    return None


def _rust_unescaped(text: str) -> str:
    """A string as Rust's Debug form wrote it, its escapes (``\\"``, ``\\\\``, ``\\n``, ``\\u{…}``) read."""
    def one(found: re.Match[str]) -> str:
        if found.group(1) is None:
            return _RUST_ESCAPED.get(found.group(2), found.group(2))
        code = int(found.group(1), 16)
        return chr(code) if code <= 0x10FFFF else found.group(0)
    return _RUST_ESCAPE.sub(one, text)


def _running(session: int | str) -> str:
    """The key a running program's starting call awaits its exit under, between two polls."""
    return f"codex-session:{str(session).strip()}"


def _running_session(output: str) -> str | None:
    """The session id in the header of a program still running (``Chunk ID``, ``Wall time``, then
    ``Process running with session ID N``, before any ``Output:``), else None."""
    found = _RUNNING_ID.search(output[:2000].split("\nOutput:", 1)[0])
    return None if found is None else found.group(1)


def _output_text(output: Any) -> str:
    """A call's output as text, whichever shape the writer gave it (a string, content items, or
    ``{"content": …}``)."""
    if isinstance(output, dict):
        output = output.get("content", output.get("output", ""))
    return output if isinstance(output, str) else _content_text(output)


def _verdict(code: int | None, text: str) -> tuple[bool, str]:
    if code is None or code == 0:
        return True, ""
    return False, f"Exit code {code}\n{text.strip()}"


def _content_text(items: Any) -> str:
    if not isinstance(items, list):
        return ""
    return "\n".join(i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str))


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        body = json.loads(text)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


# -- a call's arguments -------------------------------------------------------------------------


def _arguments(raw: Any) -> dict[str, Any]:
    """A function call's arguments: a JSON string in the rollout (an object, or nothing usable)."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        body = _json_object(raw.strip())
        if body is not None:
            return body
        return {"input": raw}  # apply_patch as a function takes the patch itself
    return {}


def _shell_detail(arguments: dict[str, Any]) -> str:
    """What a retried shell call can change beside its command: leaving the sandbox, a longer
    timeout (the difference a fix names, ``with_escalated_permissions=true``)."""
    chosen = [f"{key}={str(arguments[key]).lower() if isinstance(arguments[key], bool) else arguments[key]}"
              for key in ("with_escalated_permissions", "sandbox_permissions", "timeout_ms", "timeout")
              if isinstance(arguments.get(key), (bool, int, str)) and str(arguments[key]).strip()
              and arguments[key] is not False]
    return " ".join(chosen)[:80]


def _command(arguments: dict[str, Any]) -> str:
    """The shell command a call ran: ``cmd`` / ``command`` as a string, or the argv Codex writes
    (``["bash", "-lc", "pytest -x"]``: the script that the shell was handed)."""
    command = arguments.get("cmd", arguments.get("command"))
    if isinstance(command, list) and all(isinstance(a, str) for a in command):
        if len(command) == 3 and command[1] in ("-lc", "-c") and command[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh"):
            command = command[2]
        else:
            command = shlex.join(command)
    return clip(command, TARGET_CHARS) if isinstance(command, str) else ""


def _patched_file(patch: str) -> str:
    found = _PATCH_FILE.search(patch)
    return clip(found.group(1), TARGET_CHARS) if found else ""


def _patch_detail(patch: str) -> str:
    """The one short line a patch added, if it added one (``asyncio_mode = "auto"``)."""
    added = "\n".join(line[1:] for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++"))
    removed = "\n".join(line[1:] for line in patch.splitlines() if line.startswith("-") and not line.startswith("---"))
    return added_line(added, removed, DETAIL_CHARS)


def _first_string(arguments: dict[str, Any]) -> str:
    for value in arguments.values():
        if isinstance(value, str) and value.strip():
            return clip(value, TARGET_CHARS)
    return ""


class CodexReader:
    """Codex CLI's rollouts as a `commons.ingest.readers.Reader`."""

    name = NAME
    suffix = ".jsonl"
    whole_document = False

    def default_roots(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        return ("$CODEX_HOME/sessions",)

    def may_hold(self, path: Path) -> bool:
        return path.suffix == ".jsonl" and path.name.startswith("rollout-")

    def recognises(self, path: Path, head: bytes) -> bool:
        """A rollout: its first record is an envelope (``timestamp``, ``type``, ``payload``) or an
        older file's session line (``id``, ``timestamp``, ``instructions``)."""
        if path.suffix != ".jsonl":
            return False
        records, opening = head_records(head, limit=1)
        if not records:
            return bool(_OPENING.match(opening.lstrip()))
        first = records[0]
        if isinstance(first.get("payload"), dict):
            return isinstance(first.get("type"), str) and isinstance(first.get("timestamp"), str)
        return ("type" not in first and "sessionId" not in first and isinstance(first.get("id"), str)
                and isinstance(first.get("timestamp"), str) and ("instructions" in first or "git" in first))

    def archive_key(self, path: Path) -> str:
        """``codex/YYYY/MM/DD/rollout-….jsonl``: the file's name holds its time and session id."""
        return "/".join((NAME, *path.parts[-4:]))

    def parse(self, data: bytes, state: ParseState | None = None, *, session_hint: str = "",
              file_time: float | None = None) -> ParseResult:
        return parse(data, state, session_hint=session_hint)

    def is_rewritten(self, state: ParseState, size: int, head: bytes) -> bool:
        return is_rewritten(state, size, head)


READER = CodexReader()
