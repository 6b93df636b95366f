"""What every agent's transcript reader is: the interface the ingester picks readers by.

One module per agent (`claude_code`, `codex`, `gemini`) turns its agent's files into the neutral
stream of turns (`commons.ingest.turns`) and hands them to the one episode builder
(`commons.ingest.episodes`), so the same session yields the same episodes whichever agent wrote
it. A reader says, as a `Reader`:

- which agent it reads (``name``: it prefixes the archive keys, so every stored episode records the
  agent it came from through its transcript's key; see `agent_of_key`),
- where that agent keeps its sessions by default (``default_roots``), which files, by their name and
  folder, may be its transcripts (``may_hold``: what discovery lists under a root, read from no
  file), and whether a file *is* one, from its first bytes (``recognises``): the records of each
  agent have keys of their own (a Claude Code record its ``sessionId``/``uuid`` and ``type``, a
  Codex one its ``{timestamp, type, payload}`` envelope, a Gemini chat its ``sessionId`` and
  ``projectHash``), so no reader takes another's file, and a file none recognises is not read,
- whether its files only grow (``whole_document`` False: read from the saved offset, complete
  lines only) or are rewritten as a whole on every change (True: Gemini's one JSON document per
  session, read again from scratch whenever it changed),
- and the sans-I/O parser: ``parse(data, state)`` from the bytes past ``state.offset``.

The state and result types are shared: every reader keeps the offset, a fingerprint of what it
read (to notice a file rewritten in place, `is_rewritten`) and the builder's state.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import msgspec
from blake3 import blake3

from commons.core.learning import Episode, SessionEpisode
from commons.ingest.episodes import BuildState

# 2: the episode builder's state apart (open failures awaiting a resolution, call details, "the
# agent claimed done"); older states are refused by `from_json`, and the ingester then reads the
# transcript again from scratch. 3: fixes proven by a retry (core/learning/evidence.py), the
# agent's last words kept. 4: whether the person interrupted the agent before their next message.
# 5: whether the agent's last words asked the person a question.
STATE_VERSION = 5
HEAD_BYTES = 4096  # the fingerprint of an append-only transcript covers (at most) its first 4 KB
# Bytes read to tell whose transcript a file is: a Codex rollout's first line (its session_meta,
# with the whole system prompt) runs past 20 KB.
SNIFF_BYTES = 64 * 1024
SNIFF_RECORDS = 5  # complete records looked at

# Variables a root may name, and what each stands for when it is not set: each agent's own variable
# for the folder it keeps everything in (Claude Code's config folder, Codex's home, the home folder
# Gemini CLI puts its .gemini in).
ROOT_VARIABLES = {"CLAUDE_CONFIG_DIR": "~/.claude", "CODEX_HOME": "~/.codex", "GEMINI_CLI_HOME": "~"}


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
    skipped_lines: int  # malformed records in this call (not JSON, or not a JSON object)
    consumed_bytes: int  # bytes of `data` consumed (complete lines; the whole document, or nothing)
    session: SessionEpisode | None = field(default=None)


def fingerprint(head: bytes) -> str:
    """BLAKE3 of a transcript's first bytes (at most `HEAD_BYTES`), to notice a rewrite in place."""
    return blake3(head[:HEAD_BYTES]).hexdigest()


def is_rewritten(state: ParseState, size: int, head: bytes) -> bool:
    """True when an append-only transcript must be read from scratch: it shrank below what was
    consumed, or its first `state.head_len` bytes changed. `head` is the file's current beginning
    (reading `HEAD_BYTES` is always enough)."""
    if size < state.offset:
        return True
    if state.head_len == 0:
        return False
    return len(head) < state.head_len or fingerprint(head[: state.head_len]) != state.head_hash


def torn(state: ParseState, before: bytes) -> bool:
    """True when an append-only transcript no longer ends a line where the last read stopped:
    `before` is its byte just before `state.offset`. A read consumes whole lines only, so that byte
    was a newline; another one there means the file was replaced, or put back to an earlier copy
    that then grew, with the same first bytes (which `is_rewritten` cannot tell), and reading on
    from the offset would start mid-line and lose every line up to it."""
    return state.offset > 0 and before != b"\n"


def document_changed(state: ParseState, size: int, head: bytes) -> bool:
    """True when a whole-document transcript differs from the one read: another size, or other
    first bytes. The head is enough: Gemini's chat opens with its ``lastUpdated`` time, which
    every rewrite changes, so a poll reads 4 KB of an unchanged chat, not all of it."""
    if size != state.offset or state.head_len == 0:
        return True
    return len(head) < state.head_len or fingerprint(head[: state.head_len]) != state.head_hash


def whole_document_state(data: bytes, records: int, skipped: int, build: BuildState) -> ParseState:
    """The state after reading `data`, a whole document."""
    head_len = min(HEAD_BYTES, len(data))
    return ParseState(offset=len(data), head_len=head_len, head_hash=fingerprint(data[:head_len]), records=records,
                      skipped_lines=skipped, build=build)


# msgspec's JSON decoder, untyped: dicts, lists, str, int (of any size), float, bool and None, as json.
_DECODE_JSON = msgspec.json.Decoder().decode


def json_value(data: bytes) -> Any:
    """``json.loads(data)``, read in C by msgspec first (a transcript's lines are most of what
    ingest reads: bench_ingest_profile's "JSON decoding"). What msgspec reads it reads as json
    does (``tests/test_ingest_json.py`` holds the two to the same values); what it refuses is read
    by json, which decides: NaN and Infinity, numbers beyond a float, a lone surrogate, a BOM or
    UTF-16, surrogates written in UTF-8, deeper nesting than it takes, and everything malformed."""
    try:
        return _DECODE_JSON(data)
    except (ValueError, RecursionError):  # msgspec.DecodeError and UnicodeDecodeError are ValueErrors
        return json.loads(data)


def json_record(line: bytes) -> dict[str, Any] | None:
    """One JSONL line as a JSON object, or None when it is not one (the caller counts it skipped).
    An invalid UTF-8 byte is replaced, not the line dropped: a correction in it must survive."""
    try:
        rec = json_value(line)
    except UnicodeDecodeError:
        try:
            rec = json.loads(line.decode("utf-8", errors="replace"))
        except ValueError:
            return None
    except ValueError:
        return None
    return rec if type(rec) is dict else None


def timestamp_of(value: Any) -> float | None:
    """Unix seconds of a record's time: an ISO 8601 string (UTC unless it says otherwise) or a number."""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def head_records(head: bytes, limit: int = SNIFF_RECORDS) -> tuple[list[dict[str, Any]], bytes]:
    """The first complete JSONL records of a file's `head` (JSON objects only, blank lines passed
    over), and the start of the first line when no line of the head is complete (b"" otherwise):
    a reader then tells its agent's records by the keys that open them."""
    lines = head.split(b"\n")
    complete, rest = lines[:-1], lines[-1]
    records = []
    for line in complete:
        if line.strip():
            record = json_record(line)
            if record is not None:
                records.append(record)
            if len(records) >= limit:
                break
    return records, (rest if not any(line.strip() for line in complete) else b"")


def clip(text: str, limit: int) -> str:
    return " ".join(text.split())[:limit]


def added_line(new: Any, old: Any = None, limit: int = 80) -> str:
    """What an edit added, when it is one short line (``asyncio_mode = "auto"``): the part of a fix
    a lesson can name. `new` is the text written, `old` what it replaced (None for a new file)."""
    if not isinstance(new, str):
        return ""
    before = set(old.splitlines()) if isinstance(old, str) else set()
    added = [line.strip() for line in new.splitlines() if line.strip() and line not in before]
    return added[0] if len(added) == 1 and len(added[0]) <= limit else ""


class Reader(Protocol):
    """One agent's transcript format. See the module docstring."""

    name: str  # "claude_code", "codex", "gemini": the archive key prefix and what `why` shows
    suffix: str  # ".jsonl" or ".json": one agent may have a reader for each (Gemini does)
    whole_document: bool

    def default_roots(self, environ: Mapping[str, str]) -> tuple[str, ...]:
        """Where the agent keeps its sessions on this machine (whether or not they exist)."""
        ...

    def may_hold(self, path: Path) -> bool:
        """Whether a file found under a root may be one of this agent's transcripts, by its name
        and folder alone (discovery lists these; `recognises` decides)."""
        ...

    def recognises(self, path: Path, head: bytes) -> bool:
        """Whether the file is one of this agent's transcripts, from its first `SNIFF_BYTES`
        (`head`) and its place. At most one reader recognises a file."""
        ...

    def archive_key(self, path: Path) -> str:
        """A stable, readable archive key that begins with ``name + "/"``."""
        ...

    def parse(self, data: bytes, state: ParseState | None = None, *, session_hint: str = "",
              file_time: float | None = None) -> ParseResult:
        """`file_time`: the file's modification time, for a format whose records carry no time."""
        ...

    def is_rewritten(self, state: ParseState, size: int, head: bytes) -> bool:
        """Whether the file must be read again from scratch (`head`: its first `state.head_len` bytes)."""
        ...


# How each agent is named to the person (`why`, `commons episodes`).
AGENT_NAMES = {"claude_code": "Claude Code", "codex": "Codex", "gemini": "Gemini"}


def agent_of_key(archive_key: str) -> str:
    """The agent a stored transcript (so every episode taken from it) came from, by its key."""
    return archive_key.split("/", 1)[0] if "/" in archive_key else ""


def expand_root(root: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> Path:
    """A configured root as a path: ``$CODEX_HOME`` (see `ROOT_VARIABLES`) stands for the variable
    or, unset, for its default; ``~`` is the home folder."""
    environ = os.environ if environ is None else environ
    text = os.fspath(root)
    for name, default in ROOT_VARIABLES.items():
        for spelled in (f"${{{name}}}", f"${name}"):
            if spelled in text:
                text = text.replace(spelled, environ.get(name) or default)
    return Path(text).expanduser()
