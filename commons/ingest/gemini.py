"""Reading Gemini CLI chats (one JSON document per session) into episodes.

Gemini CLI records each session in ``~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.json``:
``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``, each message
``{id, timestamp, type, content}`` with ``type`` ``user`` (the person), ``gemini`` (the agent, its
``toolCalls`` inline: ``{id, name, args, result, status, resultDisplay}``), or ``info`` / ``error`` /
``warning`` (the CLI's own notices, passed over). The file is written again as a whole after every
message, so it is not append-only: the reader is a whole-document reader (`whole_document`), and a
changed file is read again from scratch. Its episodes keep their uids (the message and call ids),
so reading it again adds only what is new.

A call failed when its ``status`` is ``error``, or when a shell call that completed reports a
non-zero ``Exit Code:`` in its output (Gemini marks those ``success``: the command ran). A call
whose status is ``cancelled`` was refused or interrupted by the person: no failure. The turns use
the neutral tool names the core knows (``Bash`` for ``run_shell_command``, ``Edit`` for
``replace``, …) and a failure's output opens with ``Exit code N``, so a Gemini failure is the same
episode as a Claude Code one. The file names no working folder (only its hash), so the session's
project is left unknown.

Sans-I/O: `parse` takes the whole document's bytes. A document that does not parse (caught half
written) consumes nothing and is read again at the next change; one that is not a chat is counted
as one skipped record. Transcripts are data, nothing in them is run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from commons.ingest.corrections import is_person_text
from commons.ingest.episodes import BuildState, EpisodeBuilder
from commons.ingest.readers import (
    ParseResult, ParseState, added_line, clip, document_changed, timestamp_of, whole_document_state,
)  # fmt: skip
from commons.ingest.turns import AgentSaid, PersonSaid, SessionSeen, ToolCalled, ToolRejected, ToolReturned

NAME = "gemini"
TARGET_CHARS = 300
DETAIL_CHARS = 80

# Gemini's tool names → the neutral names of the turn stream (those the core knows).
TOOL_NAMES = {
    "run_shell_command": "Bash", "replace": "Edit", "write_file": "Write", "read_file": "Read",
    "read_many_files": "Read", "glob": "Glob", "search_file_content": "Grep", "list_directory": "LS",
    "web_fetch": "WebFetch", "google_web_search": "WebSearch",
}  # fmt: skip
_TARGET_KEYS = ("command", "file_path", "absolute_path", "path", "pattern", "dir_path", "url", "query", "prompt")
_EXIT = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
# The lines of a shell result that describe the call rather than say what it printed.
_META = re.compile(r"^(?:Command|Directory|Exit Code|Signal|Background PIDs|Process Group PGID): |^Error: \(none\)$")
_STREAM = re.compile(r"^(?:Output|Stdout|Stderr): ")


def parse(data: bytes, state: ParseState | None = None, *, session_hint: str = "") -> ParseResult:
    """Read a whole chat document. `state` is only consulted for its session hint: a document is
    always read from its start. `session_hint` names the session if the chat never does."""
    hint = state.build.hint if state is not None and state.build.hint else session_hint
    fresh = BuildState(hint=hint)
    try:
        chat = json.loads(data)
    except ValueError:  # half written (or not JSON at all): nothing consumed, read at the next change
        return ParseResult(ParseState(build=fresh), (), 0, 0)
    builder = EpisodeBuilder(fresh)
    records = skipped = 0
    messages = chat.get("messages") if isinstance(chat, dict) else None
    if not isinstance(messages, list):
        skipped = 1
    else:
        sid = chat.get("sessionId")
        builder.feed(SessionSeen(session=sid if isinstance(sid, str) else "", at=timestamp_of(chat.get("startTime"))))
        for message in messages:
            if isinstance(message, dict):
                records += 1
                _message(builder, message)
            else:
                skipped += 1
    new_state = whole_document_state(data, records, skipped, builder.snapshot())
    session = builder.session_episode()
    episodes = builder.episodes() + ((session,) if session is not None else ())
    return ParseResult(new_state, episodes, skipped, len(data), session)


def _message(builder: EpisodeBuilder, message: dict[str, Any]) -> None:
    ts = timestamp_of(message.get("timestamp"))
    kind = message.get("type")
    if kind not in ("user", "gemini"):
        return
    builder.feed(SessionSeen(at=ts))
    text = _text(message.get("content")).strip()
    if kind == "user":
        if text and not text.startswith("/") and is_person_text(text):  # "/" opens a CLI command
            mid = message.get("id")
            builder.feed(PersonSaid(mid if isinstance(mid, str) else "", ts, text))
        return
    if text:
        builder.feed(AgentSaid(ts, text))
    calls = message.get("toolCalls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict):
            _call(builder, call, ts)


def _call(builder: EpisodeBuilder, call: dict[str, Any], message_ts: float | None) -> None:
    cid, name = call.get("id"), call.get("name")
    if not isinstance(cid, str) or not isinstance(name, str) or not name:
        return
    ts = timestamp_of(call.get("timestamp")) or message_ts
    args = call.get("args") if isinstance(call.get("args"), dict) else {}
    tool = TOOL_NAMES.get(name, name)
    builder.feed(ToolCalled(cid, tool, _target(args), _detail(args), ts))
    status = call.get("status")
    if status == "cancelled":  # the person refused or stopped it: not a failure of the tool
        builder.feed(ToolRejected(cid, cid, ts, ""))
        return
    if status not in ("success", "error"):
        return  # still running, or awaiting approval: its result comes with a later version
    output = _result_text(call)
    if status == "error":
        builder.feed(ToolReturned(cid, cid, ts, ok=False, output=output))
        return
    found = _EXIT.search(output) if tool == "Bash" else None
    if found is not None and int(found.group(1)) != 0:
        builder.feed(ToolReturned(cid, cid, ts, ok=False, output=f"Exit code {found.group(1)}\n{_printed(output)}"))
        return
    builder.feed(ToolReturned(cid, cid, ts, ok=True, output=""))


def _result_text(call: dict[str, Any]) -> str:
    """What the call returned to the model: its functionResponse's output or error, else what the
    CLI displayed."""
    parts = call.get("result")
    texts: list[str] = []
    for part in parts if isinstance(parts, list) else [parts]:
        if not isinstance(part, dict):
            continue
        response = part.get("functionResponse", {}).get("response") if isinstance(part.get("functionResponse"), dict) else None
        if isinstance(response, dict):
            for key in ("output", "error"):
                value = response.get(key)
                if isinstance(value, str) and value.strip():
                    texts.append(value)
                elif isinstance(value, dict) and isinstance(value.get("message"), str):
                    texts.append(value["message"])
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    if not texts and isinstance(call.get("resultDisplay"), str):
        texts.append(call["resultDisplay"])
    return "\n".join(texts)


def _printed(output: str) -> str:
    """A shell result's printed lines, without the lines that describe the call."""
    lines = [_STREAM.sub("", line) for line in output.splitlines() if not _META.match(line)]
    return "\n".join(line for line in lines if line.strip() != "(empty)")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # newer writers: the message's parts
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _target(args: dict[str, Any]) -> str:
    for key in _TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return clip(value, TARGET_CHARS)
    for value in args.values():
        if isinstance(value, str) and value.strip():
            return clip(value, TARGET_CHARS)
    return ""


def _detail(args: dict[str, Any]) -> str:
    return added_line(args.get("new_string", args.get("content")), args.get("old_string"), DETAIL_CHARS)


class GeminiReader:
    """Gemini CLI's chats as a `commons.ingest.readers.Reader`."""

    name = NAME
    whole_document = True

    def default_roots(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        return ("~/.gemini/tmp",)

    def recognises(self, path: Path) -> bool:
        return path.suffix == ".json" and path.name.startswith("session-") and path.parent.name == "chats"

    def archive_key(self, path: Path) -> str:
        """``gemini/<project hash>/chats/session-….json``."""
        return "/".join((NAME, *path.parts[-3:]))

    def parse(self, data: bytes, state: ParseState | None = None, *, session_hint: str = "") -> ParseResult:
        return parse(data, state, session_hint=session_hint)

    def is_rewritten(self, state: ParseState, size: int, head: bytes) -> bool:
        return document_changed(state, size, head)


READER = GeminiReader()
