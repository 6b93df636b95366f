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

What each episode holds (§4.1 of the design paper):

- `SessionEpisode` (uid = sessionId, or ``sessionId:agentId`` for a subagent's file): the person's
  first requests, tool counts, the tool calls (tool + target), the last thing the agent said.
- `ErrorEpisode` (uid = the tool_use id) per failed tool call: its tool and target, the line that
  says what failed and the sub-command it belongs to (`commons.core.failure`), the exit code, and
  what resolved it (`commons.core.resolution`). A resolution shows only in later calls, possibly
  in a later read of a growing transcript: the error episode is then emitted again, same uid, with
  its resolution (the store replaces by kind and uid). "Sibling tool call errored" results are the
  echo of another call's failure and make no episode; a rejection by the person is not an error.
- `CorrectionEpisode` (uid = the record's uuid) per message in which the person corrected the
  agent (rules in `corrections.py`), a rejected tool use that carried the person's words, or a
  message that contradicts the agent's claim to be done; with the command the agent had run.

Transcripts are data: nothing in them is executed or opened. Bad lines are counted and skipped.
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from typing import Any

from blake3 import blake3

from commons.core.episode import CorrectionEpisode, Episode, ErrorEpisode, SessionEpisode, ToolCall
from commons.core.failure import attribute, failure_line
from commons.core.resolution import OpenFailure, advance, named, named_fix, opened
from commons.core.scope import SHELL_TOOLS
from commons.ingest.corrections import claims_done, contradicts, is_correction, is_person_text, rejection_words

__all__ = ["ParseResult", "ParseState", "StateError", "failure_line", "fingerprint", "is_rewritten", "parse"]

# 2: open failures awaiting a resolution, call details, "the agent claimed done" (older states are
# refused by `from_json`, and the ingester then reads the transcript again from scratch).
STATE_VERSION = 2
HEAD_BYTES = 4096  # the fingerprint of a transcript covers (at most) its first 4 KB

# Bounds that keep the parse state small whatever the transcript's length.
MAX_ASKED = 3  # first requests kept
MAX_CALLS = 200  # distinct (tool, target) pairs kept for the session episode
MAX_PENDING = 256  # tool calls awaiting their result; older ones are forgotten
MAX_SEEN = 512  # recently seen tool_use ids (a split or repeated message is counted once)
ASKED_CHARS = 500
SAID_CHARS = 1000
ENDED_CHARS = 1000
PRECEDING_CHARS = 500
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
    hint: str = ""  # session name to use if the transcript never states one (its file stem)
    session: str = ""
    agent: str = ""
    project: str = ""
    sidechain: bool = False
    at: float | None = None
    ended_at: float | None = None
    asked: tuple[str, ...] = ()
    person_messages: int = 0
    tool_counts: tuple[tuple[str, int], ...] = ()
    calls: tuple[ToolCall, ...] = ()
    ended: str = ""
    turn_text: str = ""  # the agent's last words since the person last spoke
    turn_call: str = ""  # the agent's last tool call since the person last spoke
    turn_done: bool = False  # the agent's last words since the person spoke claimed the work done
    pending: tuple[tuple[str, str, str, str], ...] = ()  # (tool_use id, tool, target, detail), oldest first
    open_failures: tuple[OpenFailure, ...] = ()  # failed calls still awaiting a resolution
    open_errors: tuple[ErrorEpisode, ...] = ()  # their episodes, to emit again once resolved
    seen: tuple[str, ...] = ()  # tool_use ids (and "!"+id for reported errors), oldest first
    records: int = 0
    skipped_lines: int = 0

    def to_json(self) -> str:
        body = asdict(self)
        body["calls"] = [[c.tool, c.target] for c in self.calls]
        body["open_failures"] = [f.to_json() for f in self.open_failures]
        body["open_errors"] = [[e.session, e.uid, e.at, e.tool, e.target, e.failure, e.exit_code, e.command]
                               for e in self.open_errors]
        body["v"] = STATE_VERSION
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> ParseState:
        try:
            body = json.loads(text)
            if body.pop("v") != STATE_VERSION:
                raise StateError(f"parse state version {body.get('v')!r} is not {STATE_VERSION}")
            body["asked"] = tuple(str(a) for a in body["asked"])
            body["tool_counts"] = tuple((str(t), int(n)) for t, n in body["tool_counts"])
            body["calls"] = tuple(ToolCall(str(t), str(g)) for t, g in body["calls"])
            body["pending"] = tuple((str(i), str(t), str(g), str(d)) for i, t, g, d in body["pending"])
            body["open_failures"] = tuple(OpenFailure.from_json(row) for row in body["open_failures"])
            body["open_errors"] = tuple(
                ErrorEpisode(session=str(s), uid=str(u), at=float(a), tool=str(t), target=str(g), failure=str(f),
                             exit_code=None if x is None else int(x), command=str(c))
                for s, u, a, t, g, f, x, c in body["open_errors"])
            body["seen"] = tuple(str(s) for s in body["seen"])
            names = {f.name for f in fields(cls)}
            if set(body) != names:
                raise StateError(f"parse state fields differ: {sorted(set(body) ^ names)}")
            return cls(**body)
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
        state = ParseState(hint=session_hint)
    end = data.rfind(b"\n") + 1
    reader = _Reader(state)
    skipped = reader.feed(data[:end]) if end else 0
    new_state = reader.snapshot(consumed=end)
    if state.head_len == 0 and state.offset == 0 and end:
        head_len = min(HEAD_BYTES, end)
        new_state = replace(new_state, head_len=head_len, head_hash=fingerprint(data[:head_len]))
    session = reader.session_episode()
    # An error resolved in the same read was emitted twice: keep its last form, in its first place.
    latest: dict[tuple[str, str], Episode] = {}
    for episode in reader.out:
        latest[(episode.kind.value, episode.uid)] = episode
    episodes = tuple(latest.values()) + ((session,) if session is not None else ())
    return ParseResult(new_state, episodes, skipped, end, session)


class _Reader:
    """The mutable working copy of a `ParseState` while one batch of lines is read."""

    def __init__(self, s: ParseState) -> None:
        self.s = s
        self.session, self.agent, self.project, self.sidechain = s.session, s.agent, s.project, s.sidechain
        self.at, self.ended_at = s.at, s.ended_at
        self.asked = list(s.asked)
        self.person_messages = s.person_messages
        self.counts = Counter(dict(s.tool_counts))
        self.calls = list(s.calls)
        self.call_set = set(s.calls)
        self.ended, self.turn_text, self.turn_call = s.ended, s.turn_text, s.turn_call
        self.turn_done = s.turn_done
        self.pending: OrderedDict[str, tuple[str, str, str]] = OrderedDict((i, (t, g, d)) for i, t, g, d in s.pending)
        self.open_failures = s.open_failures
        self.open_errors = {e.uid: e for e in s.open_errors}
        self.seen: OrderedDict[str, None] = OrderedDict.fromkeys(s.seen)
        self.records = s.records
        self.skipped = 0
        self.out: list[Episode] = []

    # -- lines -------------------------------------------------------------------------------

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
            except ValueError:  # includes bad UTF-8
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
        if not self.session and isinstance(rec.get("sessionId"), str):
            self.session = rec["sessionId"]
            self.sidechain = rec.get("isSidechain") is True
            agent = rec.get("agentId")
            self.agent = agent if isinstance(agent, str) else ""
        if not self.project and isinstance(rec.get("cwd"), str):
            self.project = rec["cwd"]
        ts = _timestamp(rec.get("timestamp"))
        if ts is not None:
            if self.at is None:
                self.at = ts
            if self.ended_at is None or ts > self.ended_at:
                self.ended_at = ts
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        content = msg.get("content")
        if kind == "assistant":
            self._assistant(content)
        elif not rec.get("isMeta") and not rec.get("isCompactSummary"):
            self._user(rec, content, ts)

    # -- the agent ---------------------------------------------------------------------------

    def _assistant(self, content: Any) -> None:
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
                    text = text.strip()
                    self.ended = text[:ENDED_CHARS]
                    self.turn_text = text[:PRECEDING_CHARS]
                    self.turn_done = claims_done(text)
            elif kind == "tool_use":
                self._tool_use(block)

    def _tool_use(self, block: dict[str, Any]) -> None:
        use_id, name = block.get("id"), block.get("name")
        if not isinstance(use_id, str) or not isinstance(name, str) or not name:
            return
        if use_id in self.seen:  # the same call written twice (a message split or replayed)
            return
        self._remember(use_id)
        target = _target(block.get("input"))
        self.counts[name] += 1
        call = ToolCall(name, target)
        if call not in self.call_set and len(self.calls) < MAX_CALLS:
            self.calls.append(call)
            self.call_set.add(call)
        self.pending[use_id] = (name, target, _detail(block.get("input")))
        while len(self.pending) > MAX_PENDING:
            self.pending.popitem(last=False)
        self.turn_call = f"{name} {target}".strip()

    def _remember(self, key: str) -> None:
        self.seen[key] = None
        while len(self.seen) > MAX_SEEN:
            self.seen.popitem(last=False)

    # -- the person and the tools ------------------------------------------------------------

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
            self._person(rec, text, ts)

    def _person(self, rec: dict[str, Any], text: str, ts: float | None) -> None:
        uid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else f"{self.session}#{self.person_messages}"
        worded = is_correction(text)
        after_done = not worded and self.turn_done and contradicts(text)
        if self.person_messages > 0 and (worded or after_done):
            self.out.append(
                CorrectionEpisode(
                    session=self._session_id(), uid=uid, at=self._at(ts),
                    said=text[:SAID_CHARS], preceding=self.turn_text or self.turn_call,
                    command=self.turn_call, after_done=after_done,
                )  # fmt: skip
            )
        if len(self.asked) < MAX_ASKED:
            self.asked.append(text[:ASKED_CHARS])
        self.person_messages += 1
        self.turn_text = self.turn_call = ""
        self.turn_done = False
        # The person spoke: the task moved on, and what follows no longer resolves earlier failures.
        self.open_failures = ()
        self.open_errors = {}

    def _tool_result(self, rec: dict[str, Any], block: dict[str, Any], ts: float | None) -> None:
        use_id = block.get("tool_use_id")
        if not isinstance(use_id, str):
            return
        tool, target, detail = self.pending.pop(use_id, ("", "", ""))
        if block.get("is_error") is not True:
            if tool:
                self._resolve(tool, target, detail)
            return
        text = _result_text(block.get("content"))
        words = rejection_words(text)
        if words is not None:  # the person said no to this call: not a failure of the tool
            if words:
                uid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else use_id
                rejected = f"{tool} {target}".strip()
                self.out.append(
                    CorrectionEpisode(
                        session=self._session_id(), uid=uid, at=self._at(ts), said=words[:SAID_CHARS],
                        preceding=rejected or self.turn_text or self.turn_call, via_rejection=True,
                        command=rejected,
                    )  # fmt: skip
                )
                self.turn_text = self.turn_call = ""
            return
        if "Sibling tool call errored" in text[:200]:  # an echo of the call that really failed
            return
        key = "!" + use_id
        if key in self.seen:
            return
        self._remember(key)
        text = _ends(text)
        failure, exit_code = failure_line(text)
        tool = tool or "unknown"
        shell = tool.lower() in SHELL_TOOLS
        command = attribute(target, text) if shell else ""
        hint = named_fix(text)
        episode = ErrorEpisode(
            session=self._session_id(), uid=use_id, at=self._at(ts), tool=tool, target=target,
            failure=failure, exit_code=exit_code, command=command if command != target else "",
            resolution=named(hint, tool),
        )  # fmt: skip
        self.out.append(episode)
        self.open_failures, resolved = advance(self.open_failures, tool, target, ok=False)
        self._drop_closed()
        self.open_failures = opened(self.open_failures, OpenFailure(use_id, tool, command or target, hint))
        self.open_errors[use_id] = replace(episode, resolution=None)

    def _resolve(self, tool: str, target: str, detail: str) -> None:
        """A call succeeded: emit again, with their resolution, the open failures it resolved."""
        if not self.open_failures:
            return
        self.open_failures, resolved = advance(self.open_failures, tool, target, ok=True, detail=detail)
        for item in resolved:
            episode = self.open_errors.pop(item.uid, None)
            if episode is not None:
                self.out.append(replace(episode, resolution=item.resolution))
        self._drop_closed()

    def _drop_closed(self) -> None:
        live = {f.uid for f in self.open_failures}
        self.open_errors = {uid: e for uid, e in self.open_errors.items() if uid in live}

    # -- results -----------------------------------------------------------------------------

    def _session_id(self) -> str:
        return self.session or self.s.hint

    def _at(self, ts: float | None) -> float:
        if ts is not None:
            return ts
        return self.ended_at if self.ended_at is not None else 0.0

    def session_episode(self) -> SessionEpisode | None:
        session = self._session_id()
        if self.at is None or not session:
            return None
        return SessionEpisode(
            session=session,
            uid=f"{session}:{self.agent}" if self.agent else session,
            at=self.at,
            ended_at=self.ended_at if self.ended_at is not None else self.at,
            asked=tuple(self.asked),
            tool_counts=tuple(sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            ended=self.ended,
            calls=tuple(self.calls),
            project=self.project,
            sidechain=self.sidechain,
        )

    def snapshot(self, consumed: int) -> ParseState:
        return replace(
            self.s,
            offset=self.s.offset + consumed,
            session=self.session, agent=self.agent, project=self.project, sidechain=self.sidechain,
            at=self.at, ended_at=self.ended_at, asked=tuple(self.asked),
            person_messages=self.person_messages,
            tool_counts=tuple(sorted(self.counts.items())), calls=tuple(self.calls),
            ended=self.ended, turn_text=self.turn_text, turn_call=self.turn_call, turn_done=self.turn_done,
            pending=tuple((i, t, g, d) for i, (t, g, d) in self.pending.items()),
            open_failures=self.open_failures,
            open_errors=tuple(e for e in self.open_errors.values()),
            seen=tuple(self.seen), records=self.records,
            skipped_lines=self.s.skipped_lines + self.skipped,
        )  # fmt: skip


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


OUTPUT_ENDS = 6000  # characters of a failed output's head and of its tail that are searched


def _ends(text: str) -> str:
    """A long output's head and tail: a failure is stated near one end (the error first, or the
    summary last), and the middle of a 30 KB log would only cost time."""
    if len(text) <= 2 * OUTPUT_ENDS:
        return text
    return text[:OUTPUT_ENDS] + "\n" + text[-OUTPUT_ENDS:]


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
