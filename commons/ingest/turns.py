"""The neutral, ordered stream of turns every agent's reader produces.

A format reader (Claude Code's JSONL today; Codex's rollouts and Gemini's chats later) knows its
agent's records and nothing of what they mean; it turns them into these turns, in order, and the
one episode builder (`commons.ingest.episodes`) turns the stream into episodes: errors with their
failure line and resolution, corrections, the session. A new agent is a new reader of its format.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SessionSeen:
    """What the transcript says about its session (sent whenever a record names it; the builder
    keeps the first of each)."""

    session: str = ""
    agent: str = ""  # a subagent's id
    project: str = ""  # the working directory
    sidechain: bool = False
    at: float | None = None  # the record's time


@dataclass(frozen=True)
class PersonSaid:
    uid: str  # the record's id ("" when the format has none)
    at: float | None
    text: str


@dataclass(frozen=True)
class AgentSaid:
    at: float | None
    text: str


@dataclass(frozen=True)
class ToolCalled:
    use_id: str
    tool: str
    target: str  # what the call was aimed at: its command, path, pattern, url or query
    detail: str = ""  # what an edit added, when it is one short line
    at: float | None = None


@dataclass(frozen=True)
class ToolReturned:
    use_id: str
    uid: str  # the record that carried the result
    at: float | None
    ok: bool
    output: str  # the result's text (only read when the call failed)
    shown: str | None = None  # what a successful call showed, when the reader says (a filtered retry's proof)


@dataclass(frozen=True)
class ToolRejected:
    """The person refused a tool call, with the words they typed ("" for none)."""

    use_id: str
    uid: str
    at: float | None
    words: str


@dataclass(frozen=True)
class PersonInterrupted:
    """The person stopped the agent mid-turn (Claude Code's "[Request interrupted by user]")."""

    at: float | None


Turn = SessionSeen | PersonSaid | AgentSaid | ToolCalled | ToolReturned | ToolRejected | PersonInterrupted
