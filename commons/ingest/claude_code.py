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

import json
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from typing import Any

from blake3 import blake3

from commons.core.episode import Episode, SessionEpisode
from commons.core.failure import failure_line
from commons.ingest.corrections import is_person_text, rejection_words
from commons.ingest.episodes import BuildState, EpisodeBuilder
from commons.ingest.turns import AgentSaid, PersonSaid, SessionSeen, ToolCalled, ToolRejected, ToolReturned

__all__ = ["ParseResult", "ParseState", "StateError", "failure_line", "fingerprint", "is_rewritten", "parse"]

# 2: the episode builder's state apart (open failures awaiting a resolution, call details, "the
# agent claimed done"); older states are refused by `from_json`, and the ingester then reads the
# transcript again from scratch.
STATE_VERSION = 2
HEAD_BYTES = 4096  # the fingerprint of a transcript covers (at most) its first 4 KB
TARGET_CHARS = 300
DETAIL_CHARS = 80

# Records that never carry a conversation turn. Checked on the raw bytes of the line's head before
# json.loads; a user or assistant record always has a message with a "role", so a line holding a
# role is parsed whatever its head says (a tool input may contain the same bytes).
_SKIP_MARKERS = (b'"type":"progress"', b'"type":"file-history-snapshot"', b'"type":"queue-operation"')
_SKIP_HEAD = 600

# Keys of a tool's input that name what the call was aimed at, most telling first.
_TARGET_KEYS = (
    "command", "file_path", "notebook_path", "pattern", "path", "url", "query",
    "description", "prompt", "skill", "subagent_type",
)  # fmt: skip


class StateError(ValueError):
    """A saved parse state could not be read back (the caller's storage is corrupt or foreign)."""


@dataclass(frozen=True)
class ParseState:
    """Everything needed to continue reading a transcript where the last read stopped."""

    offset: int = 0  # bytes of the transcript consumed so far
    head_len: int = 0  # how many leading bytes `head_hash` covers
    head_hash: str = ""
    records: int = 0
    skipped_lines: int = 0
    build: BuildState = field(default_factory=BuildState)  # the episode builder's own state

    def to_json(self) -> str:
        body = {"v": STATE_VERSION, "offset": self.offset, "head_len": self.head_len, "head_hash": self.head_hash,
                "records": self.records, "skipped_lines": self.skipped_lines, "build": self.build.to_json()}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> ParseState:
        try:
            body = json.loads(text)
            if body.pop("v") != STATE_VERSION:
                raise StateError(f"parse state version {body.get('v')!r} is not {STATE_VERSION}")
            names = {f.name for f in fields(cls)}
            if set(body) != names:
                raise StateError(f"parse state fields differ: {sorted(set(body) ^ names)}")
            return cls(offset=int(body["offset"]), head_len=int(body["head_len"]), head_hash=str(body["head_hash"]),
                       records=int(body["records"]), skipped_lines=int(body["skipped_lines"]),
                       build=BuildState.from_json(body["build"]))
        except StateError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise StateError(f"saved parse state is not readable: {exc}") from exc


@dataclass(frozen=True)
class ParseResult:
    state: ParseState
    episodes: tuple[Episode, ...]  # new errors and corrections, then the current session (if any)
    skipped_lines: int  # malformed lines in this call (not JSON, or not a JSON object)
    consumed_bytes: int  # bytes of `data` consumed: up to and including its last "\n"
    session: SessionEpisode | None = field(default=None)


def fingerprint(head: bytes) -> str:
    """BLAKE3 of a transcript's first bytes (at most `HEAD_BYTES`), to notice a rewrite in place."""
    return blake3(head[:HEAD_BYTES]).hexdigest()


def is_rewritten(state: ParseState, size: int, head: bytes) -> bool:
    """True when the transcript must be read from scratch: it shrank below what was consumed, or
    its first `state.head_len` bytes changed. `head` is the file's current beginning (reading
    `HEAD_BYTES` is always enough)."""
    if size < state.offset:
        return True
    if state.head_len == 0:
        return False
    return len(head) < state.head_len or fingerprint(head[: state.head_len]) != state.head_hash


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
        loads = json.loads
        for line in body.split(b"\n"):
            if not line or line.isspace():
                continue
            head = line[:_SKIP_HEAD]
            if (
                _SKIP_MARKERS[0] in head or _SKIP_MARKERS[1] in head or _SKIP_MARKERS[2] in head
            ) and b'"role":' not in line:
                continue
            try:
                rec = loads(line)
            except UnicodeDecodeError:  # one bad byte must not cost the line (and a correction in it)
                try:
                    rec = loads(line.decode("utf-8", errors="replace"))
                except ValueError:
                    self.skipped += 1
                    continue
            except ValueError:
                self.skipped += 1
                continue
            if not isinstance(rec, dict):
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
        ts = _timestamp(rec.get("timestamp"))
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
        if is_person_text(text):
            uid = rec.get("uuid")
            self.builder.feed(PersonSaid(uid if isinstance(uid, str) else "", ts, text))

    def _tool_result(self, rec: dict[str, Any], block: dict[str, Any], ts: float | None) -> None:
        use_id = block.get("tool_use_id")
        if not isinstance(use_id, str):
            return
        uid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else ""
        if block.get("is_error") is not True:
            self.builder.feed(ToolReturned(use_id, uid, ts, ok=True, output=""))
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


def _timestamp(value: Any) -> float | None:
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _clip(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit]


def _target(tool_input: Any) -> str:
    """What a tool call was aimed at: its command, path, pattern, url, query or description."""
    if not isinstance(tool_input, dict):
        return ""
    for key in _TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _clip(value, TARGET_CHARS)
    for value in tool_input.values():  # an unknown tool: its first string argument
        if isinstance(value, str) and value.strip():
            return _clip(value, TARGET_CHARS)
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
    new = tool_input.get("new_string", tool_input.get("content"))
    old = tool_input.get("old_string")
    if isinstance(new, str):
        before = set(old.splitlines()) if isinstance(old, str) else set()
        added = [line.strip() for line in new.splitlines() if line.strip() and line not in before]
        if len(added) == 1 and len(added[0]) <= DETAIL_CHARS:
            return added[0]
    return ""
