"""Reading Claude Code transcripts (JSONL, one record per line) into episodes, incrementally.

Claude Code appends to ``~/.claude/projects/<project>/<session>.jsonl`` while a session runs, and
subagents write ``agent-<id>.jsonl`` files of their own. This reader is sans-I/O: the caller reads
the bytes that were appended since the last time and hands them in with the state it kept::

    result = parse(new_bytes, state)          # state None for a transcript never read
    store(result.episodes)                    # errors, corrections, and the session (replace by uid)
    keep(result.state)                        # result.state.to_json() is small; next read starts
                                              # at result.state.offset

Only complete lines (ending in ``\\n``) are consumed; a line still being written is left for the
next call. A transcript rewritten in place (it shrank, or its first bytes changed) must be read
again from scratch: `is_rewritten` tells, from the state and the file's size and head.

This module knows Claude Code's records and nothing of what they mean: it turns them into the
neutral stream of turns (`commons.ingest.turns`) that the one episode builder
(`commons.ingest.episodes`, which says what each episode holds) turns into episodes, as every
agent's reader does. What is Claude Code's own stays here: the records that carry no turn
(progress, snapshots), the wrappers it writes into user records, its rejection text, and the
"Sibling tool call errored" results that echo another call's failure and make no episode. Uids:
a session is its sessionId (``sessionId:agentId`` for a subagent's file), an error its tool_use
id, a correction the uuid of the record that carried the person's words.

Transcripts are data: nothing in them is executed or opened. Bad lines are counted and skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from commons.core.learning import failure_line
from commons.ingest.corrections import INTERRUPTED, is_person_text, rejection_words
from commons.ingest.episodes import BuildState, EpisodeBuilder
from commons.ingest.readers import (
    HEAD_BYTES, STATE_VERSION, ParseResult, ParseState, StateError, added_line, clip, fingerprint, head_records,
    is_rewritten, json_record, timestamp_of,
)  # fmt: skip
from commons.ingest.turns import AgentSaid, PersonInterrupted, PersonSaid, SessionSeen, ToolCalled, ToolRejected, ToolReturned

__all__ = [
    "HEAD_BYTES", "READER", "STATE_VERSION", "ParseResult", "ParseState", "StateError", "failure_line",
    "fingerprint", "is_rewritten", "parse",
]  # fmt: skip

NAME = "claude_code"

TARGET_CHARS = 300
DETAIL_CHARS = 80

# Records that never carry a conversation turn. Checked on the raw bytes of the line's head before
# json.loads; a user or assistant record always has a message with a "role", so a line holding a
# role is parsed whatever its head says (a tool input may contain the same bytes).
_SKIP_MARKERS = (b'"type":"progress"', b'"type":"file-history-snapshot"', b'"type":"queue-operation"')
_SKIP_HEAD = 600

# Keys only Claude Code's records carry (every record has a string ``type`` beside one of them), and
# how an unfinished first line opens (a first user record can be longer than the head read).
_OWN_KEYS = ("sessionId", "uuid", "leafUuid", "messageId")
_FOREIGN_KEYS = ("payload", "projectHash", "$set")  # Codex's envelope, Gemini's chat
_OPENING = re.compile(rb'^\{"(?:parentUuid|leafUuid|isSidechain|userType)":|^\{"type":"(?:summary|queue-operation|'
                      rb'file-history-snapshot|user|assistant|system|attachment)","(?!payload)')

# Keys of a tool's input that name what the call was aimed at, most telling first.
_TARGET_KEYS = (
    "command", "file_path", "notebook_path", "pattern", "path", "url", "query",
    "description", "prompt", "skill", "subagent_type",
)  # fmt: skip


def parse(data: bytes, state: ParseState | None = None, *, session_hint: str = "") -> ParseResult:
    """Read the complete lines of `data`, the bytes of the transcript from `state.offset` on.

    `session_hint` names the session if the transcript never does (used when `state` is None).
    """
    if state is None:
        state = ParseState(build=BuildState(hint=session_hint))
    end = data.rfind(b"\n") + 1
    builder = EpisodeBuilder(state.build)
    reader = _Reader(builder)
    skipped = reader.feed(data[:end]) if end else 0
    new_state = replace(state, offset=state.offset + end, records=state.records + reader.records,
                        skipped_lines=state.skipped_lines + skipped, build=builder.snapshot())
    if state.head_len == 0 and state.offset == 0 and end:
        head_len = min(HEAD_BYTES, end)
        new_state = replace(new_state, head_len=head_len, head_hash=fingerprint(data[:head_len]))
    session = builder.session_episode()
    episodes = builder.episodes() + ((session,) if session is not None else ())
    return ParseResult(new_state, episodes, skipped, end, session)


class _Reader:
    """Claude Code's records → turns, fed to the builder as they are read."""

    def __init__(self, builder: EpisodeBuilder) -> None:
        self.builder = builder
        self.records = 0
        self.skipped = 0

    def feed(self, body: bytes) -> int:
        for line in body.split(b"\n"):
            if not line or line.isspace():
                continue
            head = line[:_SKIP_HEAD]
            if (
                _SKIP_MARKERS[0] in head or _SKIP_MARKERS[1] in head or _SKIP_MARKERS[2] in head
            ) and b'"role":' not in line:
                continue
            rec = json_record(line)
            if rec is None:
                self.skipped += 1
                continue
            self.records += 1
            self._record(rec)
        return self.skipped

    def _record(self, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind != "user" and kind != "assistant":
            return
        feed = self.builder.feed
        session, agent, cwd = rec.get("sessionId"), rec.get("agentId"), rec.get("cwd")
        ts = timestamp_of(rec.get("timestamp"))
        feed(SessionSeen(
            session=session if isinstance(session, str) else "", agent=agent if isinstance(agent, str) else "",
            project=cwd if isinstance(cwd, str) else "", sidechain=rec.get("isSidechain") is True, at=ts,
        ))  # fmt: skip
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        content = msg.get("content")
        if kind == "assistant":
            self._assistant(content, ts)
        elif not rec.get("isMeta") and not rec.get("isCompactSummary"):
            self._user(rec, content, ts)

    def _assistant(self, content: Any, ts: float | None) -> None:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if isinstance(text, str) and text.strip():
                    self.builder.feed(AgentSaid(ts, text))
            elif kind == "tool_use":
                use_id, name = block.get("id"), block.get("name")
                if isinstance(use_id, str) and isinstance(name, str) and name:
                    tool_input = block.get("input")
                    self.builder.feed(ToolCalled(use_id, name, _target(tool_input), _detail(tool_input), ts))

    def _user(self, rec: dict[str, Any], content: Any, ts: float | None) -> None:
        texts: list[str] = []
        results = False
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "tool_result":
                    results = True
                    self._tool_result(rec, block, ts)
                elif kind == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
        if results:  # text beside tool results is Claude Code's, not the person's
            return
        text = "\n".join(texts).strip()
        if rec.get("isSidechain") is True and not self.builder.sidechain:
            # A subagent's records kept inline in the main transcript: its "user" words are the
            # agent's own prompt to it, not the person speaking (who would end the task).
            return
        if text.startswith(INTERRUPTED):
            self.builder.feed(PersonInterrupted(ts))
        elif is_person_text(text):
            uid = rec.get("uuid")
            self.builder.feed(PersonSaid(uid if isinstance(uid, str) else "", ts, text))

    def _tool_result(self, rec: dict[str, Any], block: dict[str, Any], ts: float | None) -> None:
        use_id = block.get("tool_use_id")
        if not isinstance(use_id, str):
            return
        uid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else ""
        if block.get("is_error") is not True:
            self.builder.feed(ToolReturned(use_id, uid, ts, ok=True, output="", shown=_result_text(block.get("content"))))
            return
        text = _result_text(block.get("content"))
        words = rejection_words(text)
        if words is not None:  # the person said no to this call: not a failure of the tool
            self.builder.feed(ToolRejected(use_id, uid, ts, words))
            return
        if "Sibling tool call errored" in text[:200]:  # an echo of the call that really failed
            return
        self.builder.feed(ToolReturned(use_id, uid, ts, ok=False, output=text))


# -- helpers over one record's values -----------------------------------------------------------


def _target(tool_input: Any) -> str:
    """What a tool call was aimed at: its command, path, pattern, url, query or description."""
    if not isinstance(tool_input, dict):
        return ""
    for key in _TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return clip(value, TARGET_CHARS)
    for value in tool_input.values():  # an unknown tool: its first string argument
        if isinstance(value, str) and value.strip():
            return clip(value, TARGET_CHARS)
    return ""


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(parts)
    return ""


def _detail(tool_input: Any) -> str:
    """What an edit added, when it is one short line (``asyncio_mode = "auto"``): the part of a
    fix a lesson can name. Longer edits are named by their file alone."""
    if not isinstance(tool_input, dict):
        return ""
    # What a retry of a Read or an agent call can change beside its target: where it reads, and
    # which agent it asks (the difference a fix names).
    chosen = [f"{key}={tool_input[key]}" for key in ("offset", "limit", "subagent_type")
              if isinstance(tool_input.get(key), (int, str)) and str(tool_input[key]).strip()]
    if tool_input.get("replace_all") is True:
        chosen.append("replace_all=true")
    if "command" in tool_input and tool_input.get("run_in_background") is True:
        chosen.append("run_in_background=true")
    if "command" in tool_input and tool_input.get("dangerouslyDisableSandbox") is True:
        chosen.append("dangerouslyDisableSandbox=true")  # out of the sandbox: what a retry after its refusal changes
    if "command" in tool_input and isinstance(tool_input.get("timeout"), int) and not isinstance(tool_input["timeout"], bool):
        chosen.append(f"timeout={tool_input['timeout']}")  # a longer wait: what a retry after a time-out changes
    if chosen:
        return clip(" ".join(chosen), DETAIL_CHARS)
    new, old = tool_input.get("new_string", tool_input.get("content")), tool_input.get("old_string")
    return added_line(new, old, DETAIL_CHARS)


class ClaudeCodeReader:
    """Claude Code's transcripts as a `commons.ingest.readers.Reader`."""

    name = NAME
    suffix = ".jsonl"
    whole_document = False

    def default_roots(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        return ("$CLAUDE_CONFIG_DIR/projects",)

    def may_hold(self, path: Path) -> bool:
        return path.suffix == ".jsonl"

    def recognises(self, path: Path, head: bytes) -> bool:
        """A Claude Code record: a string ``type`` with its ``sessionId``, ``uuid``, ``leafUuid`` or
        ``messageId``, and none of Codex's or Gemini's keys."""
        if path.suffix != ".jsonl":
            return False
        records, opening = head_records(head)
        if not records:
            return bool(_OPENING.match(opening.lstrip()))
        return all(not any(k in r for k in _FOREIGN_KEYS) for r in records) and any(
            isinstance(r.get("type"), str) and any(k in r for k in _OWN_KEYS) for r in records)

    def archive_key(self, path: Path) -> str:
        """``claude_code/<project folder>/<file>``; a subagent file in a ``subagents`` folder keeps
        its session folder too (``claude_code/<session>/subagents/agent-<id>.jsonl``), as its short
        agent id alone could repeat across sessions."""
        parts = path.parts
        depth = 3 if len(parts) >= 3 and parts[-2] == "subagents" else 2
        return "/".join((NAME, *parts[-depth:]))

    def parse(self, data: bytes, state: ParseState | None = None, *, session_hint: str = "",
              file_time: float | None = None) -> ParseResult:
        return parse(data, state, session_hint=session_hint)

    def is_rewritten(self, state: ParseState, size: int, head: bytes) -> bool:
        return is_rewritten(state, size, head)


READER = ClaudeCodeReader()
