"""Episodes: what ingest keeps of a session, and what sleep learns from.

An episode is a plain, immutable fact taken from a transcript: a whole session, one failed tool
call, or one message in which the person corrected the agent. Errors and corrections are the
*surprises* (§3.1 of the design paper); the session episode records which situations a session
met, so that predictions can be checked against it later.

Every episode has a ``uid`` that is stable for the transcript it came from, so that reading the
same transcript again yields the same uids and adds nothing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from commons.core.learning.evidence import Resolution


class EpisodeKind(enum.Enum):
    SESSION = "session"
    ERROR = "error"
    CORRECTION = "correction"


@dataclass(frozen=True)
class ToolCall:
    """One tool call a session made: the tool and what it was aimed at (command, path, pattern)."""

    tool: str
    target: str


@dataclass(frozen=True)
class SessionEpisode:
    session: str
    uid: str
    at: float  # unix seconds of the first record
    ended_at: float
    asked: tuple[str, ...]  # the person's first requests
    tool_counts: tuple[tuple[str, int], ...]  # (tool, calls), most used first
    ended: str  # the last message of the session
    calls: tuple[ToolCall, ...] = ()
    project: str = ""  # the working directory the session ran in
    sidechain: bool = False  # a subagent's transcript
    kind: EpisodeKind = field(default=EpisodeKind.SESSION, init=False)

    def text(self) -> str:
        """The words that stand for this episode when it is embedded or shown."""
        parts = list(self.asked)
        parts += dict.fromkeys(f"{c.tool} {c.target}".strip() for c in self.calls)  # each call once
        if self.ended:
            parts.append(self.ended)
        return "\n".join(parts)


@dataclass(frozen=True)
class ErrorEpisode:
    session: str
    uid: str  # the tool_use id of the failed call
    at: float
    tool: str
    target: str  # the command, description or path the call was aimed at
    failure: str  # the line of the output that says what failed (core/learning/failure.py)
    exit_code: int | None = None
    command: str = ""  # for a shell call, the sub-command the failure belongs to ("" = the target)
    resolution: Resolution | None = None  # the fix the session proved (core/learning/evidence.py), if any
    kind: EpisodeKind = field(default=EpisodeKind.ERROR, init=False)

    @property
    def failed(self) -> str:
        """What failed: the attributed sub-command, else the call's target."""
        return self.command or self.target

    def text(self) -> str:
        return f"{self.tool} {self.target}\n{self.failure}".strip()


@dataclass(frozen=True)
class CorrectionEpisode:
    session: str
    uid: str  # the uuid of the record that carried the person's words
    at: float
    said: str  # the person's words
    preceding: str  # what the agent had said or done just before
    via_rejection: bool = False  # the words came with a rejected tool use
    command: str = ""  # the agent's last tool call before the words ("Bash pip install httpx")
    after_done: bool = False  # found by structure: the agent claimed done, the person contradicted it
    kind: EpisodeKind = field(default=EpisodeKind.CORRECTION, init=False)

    def text(self) -> str:
        return f"{self.said}\n{self.preceding}".strip()


Episode = SessionEpisode | ErrorEpisode | CorrectionEpisode
SURPRISE_KINDS = frozenset({EpisodeKind.ERROR, EpisodeKind.CORRECTION})
