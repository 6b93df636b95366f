"""Reading Gemini CLI's sessions into episodes: its JSONL chats, its older JSON chats, its checkpoints.

Gemini CLI keeps each project's files in ``~/.gemini/tmp/<project>/`` (``$GEMINI_CLI_HOME/.gemini``
when that is set; ``<project>`` is a short name since 0.5x, the SHA-256 of the folder before):

- **chats, since 0.5x** — ``chats/session-<time>-<id>.jsonl``, appended to: a first metadata record
  ``{sessionId, projectHash, startTime, lastUpdated, kind}``, then the messages, each written again
  (same ``id``) whenever it changes (a tool call added, its result come), ``{"$set": {…}}`` records
  that update the metadata (``$set.messages`` states the whole list again, with new times, when a
  session is resumed or rewritten: passed over but for Gemini's own context, as every message in it
  was written when it happened) and ``{"$rewindTo": id}`` (passed over: what was undone still
  happened). Read like the other agents' JSONL, from where the last
  read stopped (`ChatLogReader`). A subagent's chat is ``chats/<parent session>/<id>.jsonl``.
- **chats, before** — ``chats/session-<time>-<id>.json``: one document ``{sessionId, projectHash,
  startTime, lastUpdated, messages: [...]}``, written again as a whole after every message, so it is
  read again whole when it changed (`DocumentReader`). Its episodes keep their uids (the message and
  call ids), so reading it again adds only what is new.
- **checkpoints** — ``checkpoint-<tag>.json`` (what ``/chat save <tag>`` writes): the conversation as
  the model saw it, ``{"history": [{role, parts}]}`` (older: the list alone), with no ids and no
  times; the file's time stands for every turn. Discovery passes them over, since the chat they were
  saved from is read already; ``commons ingest <file>`` reads one.

Messages are ``{id, timestamp, type, content}`` with ``type`` ``user`` (the person), ``gemini`` (the
agent, its ``toolCalls`` inline: ``{id, name, args, result, status}``), or ``info`` / ``error`` /
``warning`` (the CLI's own notices, passed over). A user message that opens with
``<session_context>`` or ``<hook_context>`` is Gemini's, not the person's; the session context names
the workspace folder, which becomes the session's project. So are "System: Please continue." (the
CLI's nudge when the model stopped mid-turn) and "User has manually exited Plan Mode…"; the
``<system_note>`` the CLI adds after an ``@agent`` and the selected files the IDE companion appends
are cut from the person's words. A call failed when its ``status`` is
``error``, or when a shell call that completed reports a non-zero ``Exit Code:`` (Gemini marks those
``success``: the command ran). A ``cancelled`` call was refused or stopped: no failure. The turns use
the neutral tool names the core knows (``Bash`` for ``run_shell_command``, ``Edit`` for ``replace``,
…) and a failure's output opens with ``Exit code N``, so a Gemini failure is the same episode as a
Claude Code one.

Sans-I/O: each reader takes bytes. A document that does not parse (caught half written) consumes
nothing and is read again at the next change; one that is not a chat is counted as one skipped
record. Transcripts are data, nothing in them is run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from commons.ingest.corrections import is_person_text
from commons.ingest.episodes import BuildState, EpisodeBuilder
from commons.ingest.readers import (
    HEAD_BYTES, ParseResult, ParseState, added_line, clip, document_changed, fingerprint, head_records, is_rewritten,
    json_record, json_value, timestamp_of, whole_document_state,
)  # fmt: skip
from commons.ingest.turns import AgentSaid, PersonSaid, SessionSeen, ToolCalled, ToolRejected, ToolReturned

NAME = "gemini"
TARGET_CHARS = 300
DETAIL_CHARS = 80

# Gemini's tool names → the neutral names of the turn stream (those the core knows).
TOOL_NAMES = {
    "run_shell_command": "Bash", "replace": "Edit", "write_file": "Write", "read_file": "Read",
    "read_many_files": "Read", "glob": "Glob", "search_file_content": "Grep", "grep_search": "Grep",
    "list_directory": "LS", "web_fetch": "WebFetch", "google_web_search": "WebSearch",
}  # fmt: skip
_TARGET_KEYS = ("command", "file_path", "absolute_path", "path", "pattern", "dir_path", "url", "query", "prompt")
_EXIT = re.compile(r"^(?:Exit Code|Exit code): (-?\d+)\s*$", re.MULTILINE)
# The lines of a shell result that describe the call rather than say what it printed, and the
# wrapper 0.61 puts round a command's output.
_META = re.compile(r"^(?:Command|Directory|Exit Code|Exit code|Signal|Background PIDs|Process Group PGID): "
                   r"|^Error: \(none\)$|^</?untrusted_context>$")
_STREAM = re.compile(r"^(?:Output|Stdout|Stderr): ")
_GEMINI_WRAPPERS = ("<session_context>", "<hook_context>")  # user messages the CLI writes itself
# Messages the CLI sends as the user's with no context in them: its nudge when the model stopped
# mid-turn, its note that the person left plan mode. Not the person's words, and no turn of theirs.
_CLI_SAID = re.compile(r"^(?:System: Please continue\.$|User has manually exited Plan Mode\b)")
# What the CLI or the IDE adds to the person's words: a note on the agent they picked with "@", the
# files selected in the editor and the chat history the IDE companion appends.
_ADDED_NOTE = re.compile(r"<system_note>.*?</system_note>", re.DOTALL)
_IDE_TAIL = re.compile(r"\n\s*(?:User Selected Files:|PRIOR CHAT HISTORY:)")
_WORKSPACE = re.compile(r"\*\*Workspace Directories:\*\*\s*\n\s*- (/[^\n]+)")
# How each format opens (JSON.stringify puts the keys in the order Gemini builds them).
_CHAT_OPENING = re.compile(rb'^\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"\s*:')
_CHECKPOINT_OPENING = re.compile(rb'^(?:\{\s*"history"\s*:\s*)?\[\s*\{\s*"role"\s*:\s*"(?:user|model)"')


class _Messages:
    """Gemini's messages → turns, fed to the builder (one chat, in any of its layouts)."""

    def __init__(self, builder: EpisodeBuilder) -> None:
        self.builder = builder
        self.records = 0
        self.skipped = 0

    def metadata(self, record: Mapping[str, Any], *, timed: bool) -> None:
        """The session's id; its start time too when `timed` (a JSONL chat's session starts with its
        first message: a file that only restates another's has none, and makes no session)."""
        sid = record.get("sessionId")
        self.builder.feed(SessionSeen(session=sid if isinstance(sid, str) else "", sidechain=record.get("kind") == "subagent",
                                      at=timestamp_of(record.get("startTime")) if timed else None))

    def message(self, message: Mapping[str, Any]) -> None:
        ts = timestamp_of(message.get("timestamp"))
        kind = message.get("type")
        if kind not in ("user", "gemini"):
            return
        text = _text(message.get("content")).strip()
        if kind == "user" and text.startswith(_GEMINI_WRAPPERS):
            workspace = _WORKSPACE.search(text)
            if workspace is not None:
                self.builder.feed(SessionSeen(project=workspace.group(1).strip()))
            return
        self.builder.feed(SessionSeen(at=ts))
        if kind == "user":
            text = person_words(text)
            if text and not text.startswith("/") and is_person_text(text):  # "/" opens a CLI command
                mid = message.get("id")
                self.builder.feed(PersonSaid(mid if isinstance(mid, str) else "", ts, text))
            return
        if text:
            self.builder.feed(AgentSaid(ts, text))
        calls = message.get("toolCalls")
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict):
                self._call(call, ts)

    def _call(self, call: Mapping[str, Any], message_ts: float | None) -> None:
        cid, name = call.get("id"), call.get("name")
        if not isinstance(cid, str) or not isinstance(name, str) or not name:
            return
        ts = timestamp_of(call.get("timestamp")) or message_ts
        args = call.get("args") if isinstance(call.get("args"), dict) else {}
        tool = TOOL_NAMES.get(name, name)
        self.builder.feed(ToolCalled(cid, tool, _target(args), _detail(args), ts))
        status = call.get("status")
        if status == "cancelled":  # the person refused or stopped it: not a failure of the tool
            self.builder.feed(ToolRejected(cid, cid, ts, ""))
            return
        if status not in ("success", "error"):
            return  # still running, or awaiting approval: its result comes with a later version
        self.returned(cid, tool, _result_text(call), ts, failed=status == "error")

    def returned(self, cid: str, tool: str, output: str, ts: float | None, *, failed: bool) -> None:
        if failed:
            self.builder.feed(ToolReturned(cid, cid, ts, ok=False, output=_printed(output)))
            return
        found = _EXIT.search(output) if tool == "Bash" else None
        if found is not None and int(found.group(1)) != 0:
            self.builder.feed(ToolReturned(cid, cid, ts, ok=False, output=f"Exit code {found.group(1)}\n{_printed(output)}"))
            return
        self.builder.feed(ToolReturned(cid, cid, ts, ok=True, output="", shown=_printed(output)))


def _result(builder: EpisodeBuilder, state: ParseState, data: bytes, end: int, records: int, skipped: int) -> ParseResult:
    new_state = replace(state, offset=state.offset + end, records=state.records + records,
                        skipped_lines=state.skipped_lines + skipped, build=builder.snapshot())
    if state.head_len == 0 and state.offset == 0 and end:
        head_len = min(HEAD_BYTES, end)
        new_state = replace(new_state, head_len=head_len, head_hash=fingerprint(data[:head_len]))
    session = builder.session_episode()
    return ParseResult(new_state, builder.episodes() + ((session,) if session is not None else ()), skipped, end, session)


def parse_log(data: bytes, state: ParseState | None = None, *, session_hint: str = "") -> ParseResult:
    """Read the complete lines of a JSONL chat, the bytes from `state.offset` on."""
    if state is None:
        state = ParseState(build=BuildState(hint=session_hint))
    end = data.rfind(b"\n") + 1
    builder = EpisodeBuilder(state.build)
    messages = _Messages(builder)
    for line in data[:end].split(b"\n"):
        if not line.strip():
            continue
        record = json_record(line)
        if record is None:
            messages.skipped += 1
            continue
        messages.records += 1
        if isinstance(record.get("projectHash"), str) and isinstance(record.get("sessionId"), str):
            messages.metadata(record, timed=False)
        elif isinstance(record.get("$set"), dict):
            # The conversation stated again as the model sees it (on resume, after a rewrite), with
            # new times: every word and call in it was written as a message record when it happened.
            # Only Gemini's own context is read from it, for the workspace folder.
            listed = record["$set"].get("messages")
            for message in listed if isinstance(listed, list) else ():
                if isinstance(message, dict) and message.get("type") == "user" and _text(
                        message.get("content")).lstrip().startswith(_GEMINI_WRAPPERS):
                    messages.message(message)
        elif isinstance(record.get("id"), str):
            messages.message(record)
    return _result(builder, state, data, end, messages.records, messages.skipped)


def parse_document(data: bytes, state: ParseState | None = None, *, session_hint: str = "",
                   file_time: float | None = None) -> ParseResult:
    """Read a whole JSON document: an older chat, or a checkpoint. `state` is only consulted for its
    session hint: a document is always read from its start."""
    hint = state.build.hint if state is not None and state.build.hint else session_hint
    fresh = BuildState(hint=hint)
    try:
        document = json_value(data)
    except ValueError:  # half written (or not JSON at all): nothing consumed, read at the next change
        return ParseResult(ParseState(build=fresh), (), 0, 0)
    builder = EpisodeBuilder(fresh)
    messages = _Messages(builder)
    history = _history(document)
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        messages.metadata(document, timed=True)
        for message in document["messages"]:
            if isinstance(message, dict):
                messages.records += 1
                messages.message(message)
            else:
                messages.skipped += 1
    elif history is not None:
        _checkpoint(messages, history, file_time)
    else:
        messages.skipped = 1
    new_state = whole_document_state(data, messages.records, messages.skipped, builder.snapshot())
    session = builder.session_episode()
    episodes = builder.episodes() + ((session,) if session is not None else ())
    return ParseResult(new_state, episodes, messages.skipped, len(data), session)


def _history(document: Any) -> list[Any] | None:
    history = document.get("history") if isinstance(document, dict) else document
    if isinstance(history, list) and all(isinstance(c, dict) and "role" in c and "parts" in c for c in history):
        return history
    return None


def _checkpoint(messages: _Messages, history: Iterable[dict[str, Any]], at: float | None) -> None:
    """A checkpoint's contents (``{role, parts}``): the person's texts, the model's texts and calls,
    the calls' responses. Ids are the position in the history, as the file has none."""
    builder = messages.builder
    builder.feed(SessionSeen(at=at))
    calls: dict[str, list[str]] = {}  # a function's name → its calls waiting for their response
    for index, content in enumerate(history):
        messages.records += 1
        parts = [p for p in content.get("parts") or () if isinstance(p, dict)]
        if content.get("role") == "model":
            for number, part in enumerate(parts):
                if isinstance(part.get("text"), str) and part["text"].strip() and not part.get("thought"):
                    builder.feed(AgentSaid(at, part["text"]))
                call = part.get("functionCall")
                if isinstance(call, dict) and isinstance(call.get("name"), str):
                    cid = call.get("id") if isinstance(call.get("id"), str) else f"checkpoint-{index}-{number}"
                    calls.setdefault(call["name"], []).append(cid)
                    args = call.get("args") if isinstance(call.get("args"), dict) else {}
                    builder.feed(ToolCalled(cid, TOOL_NAMES.get(call["name"], call["name"]), _target(args), _detail(args), at))
            continue
        for part in parts:
            response = part.get("functionResponse")
            if isinstance(response, dict) and isinstance(response.get("name"), str):
                waiting = calls.get(response["name"]) or []
                cid = response.get("id") if isinstance(response.get("id"), str) else (waiting.pop(0) if waiting else "")
                body = response.get("response") if isinstance(response.get("response"), dict) else {}
                failed = "error" in body
                if cid:
                    messages.returned(cid, TOOL_NAMES.get(response["name"], response["name"]),
                                      _response_text(body), at, failed=failed)
        texts = [p["text"].strip() for p in parts if isinstance(p.get("text"), str) and p["text"].strip()]
        for wrapper in (t for t in texts if t.startswith(_GEMINI_WRAPPERS)):  # Gemini's context, in the same content
            workspace = _WORKSPACE.search(wrapper)
            if workspace is not None:
                builder.feed(SessionSeen(project=workspace.group(1).strip(), at=at))
        text = "\n".join(t for t in texts if not t.startswith(_GEMINI_WRAPPERS))
        if text and not text.startswith("/") and is_person_text(text):
            builder.feed(PersonSaid(f"checkpoint-{index}", at, text))


def _response_text(response: Mapping[str, Any]) -> str:
    texts = []
    for key in ("output", "error"):
        value = response.get(key)
        if isinstance(value, str) and value.strip():
            texts.append(value)
        elif isinstance(value, dict) and isinstance(value.get("message"), str):
            texts.append(value["message"])
    return "\n".join(texts)


def _result_text(call: Mapping[str, Any]) -> str:
    """What the call returned to the model: its functionResponse's output or error, else what the
    CLI displayed."""
    parts = call.get("result")
    texts: list[str] = []
    for part in parts if isinstance(parts, list) else [parts]:
        if not isinstance(part, dict):
            continue
        response = part.get("functionResponse", {}).get("response") if isinstance(part.get("functionResponse"), dict) else None
        if isinstance(response, dict):
            said = _response_text(response)
            if said:
                texts.append(said)
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    if not texts and isinstance(call.get("resultDisplay"), str):
        texts.append(call["resultDisplay"])
    return "\n".join(texts)


def _printed(output: str) -> str:
    """A shell result's printed lines, without the lines that describe the call."""
    lines = [_STREAM.sub("", line) for line in output.splitlines() if not _META.match(line)]
    return "\n".join(line for line in lines if line.strip() != "(empty)")


def person_words(text: str) -> str:
    """What the person typed of a user message's text: "" for the CLI's own messages, and without
    the notes the CLI and the IDE add to theirs."""
    if _CLI_SAID.match(text):
        return ""
    text = _ADDED_NOTE.sub("", text)
    found = _IDE_TAIL.search(text)
    return (text[:found.start()] if found else text).strip()


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # newer writers: the message's parts
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _target(args: Mapping[str, Any]) -> str:
    for key in _TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return clip(value, TARGET_CHARS)
    for value in args.values():
        if isinstance(value, str) and value.strip():
            return clip(value, TARGET_CHARS)
    return ""


def _detail(args: Mapping[str, Any]) -> str:
    return added_line(args.get("new_string", args.get("content")), args.get("old_string"), DETAIL_CHARS)


def _in_chats(path: Path) -> bool:
    """``…/chats/<file>``, or a subagent's ``…/chats/<parent session>/<file>``."""
    return path.parent.name == "chats" or path.parent.parent.name == "chats"


class ChatLogReader:
    """Gemini CLI's JSONL chats (0.5x and later) as a `commons.ingest.readers.Reader`."""

    name = NAME
    suffix = ".jsonl"
    whole_document = False

    def default_roots(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        return ("$GEMINI_CLI_HOME/.gemini/tmp",)

    def may_hold(self, path: Path) -> bool:
        return path.suffix == ".jsonl" and _in_chats(path)

    def recognises(self, path: Path, head: bytes) -> bool:
        """The chat's metadata record opens the file: ``sessionId`` and ``projectHash``."""
        if path.suffix != ".jsonl":
            return False
        records, opening = head_records(head, limit=1)
        if not records:
            return bool(_CHAT_OPENING.match(opening.lstrip()))
        return isinstance(records[0].get("sessionId"), str) and isinstance(records[0].get("projectHash"), str)

    def archive_key(self, path: Path) -> str:
        """``gemini/<project>/chats/session-….jsonl`` (a subagent's: ``gemini/chats/<parent>/<id>.jsonl``)."""
        return "/".join((NAME, *path.parts[-3:]))

    def parse(self, data: bytes, state: ParseState | None = None, *, session_hint: str = "",
              file_time: float | None = None) -> ParseResult:
        return parse_log(data, state, session_hint=session_hint)

    def is_rewritten(self, state: ParseState, size: int, head: bytes) -> bool:
        return is_rewritten(state, size, head)


class DocumentReader:
    """Gemini CLI's JSON documents (older chats, checkpoints) as a `commons.ingest.readers.Reader`."""

    name = NAME
    suffix = ".json"
    whole_document = True

    def default_roots(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        return ("$GEMINI_CLI_HOME/.gemini/tmp",)

    def may_hold(self, path: Path) -> bool:
        """Chats only: a checkpoint repeats a chat that is read already."""
        return path.suffix == ".json" and path.name.startswith("session-") and _in_chats(path)

    def recognises(self, path: Path, head: bytes) -> bool:
        if path.suffix != ".json":
            return False
        opening = head.lstrip()
        return bool(_CHAT_OPENING.match(opening) or _CHECKPOINT_OPENING.match(opening))

    def archive_key(self, path: Path) -> str:
        """``gemini/<project>/chats/session-….json``, ``gemini/tmp/<project>/checkpoint-<tag>.json``."""
        return "/".join((NAME, *path.parts[-3:]))

    def parse(self, data: bytes, state: ParseState | None = None, *, session_hint: str = "",
              file_time: float | None = None) -> ParseResult:
        return parse_document(data, state, session_hint=session_hint, file_time=file_time)

    def is_rewritten(self, state: ParseState, size: int, head: bytes) -> bool:
        return document_changed(state, size, head)


CHAT_LOG = ChatLogReader()
DOCUMENT = DocumentReader()
READER = DOCUMENT  # the older name: Gemini's JSON chats
parse = parse_document
