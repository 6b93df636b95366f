"""What Claude Code's `SessionEnd` hook does: read the hook's input, ingest that one transcript now.

Claude Code runs the hook as a command with a JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``reason``, ``permission_mode``…).
:func:`parse_hook_input` turns those bytes into a :class:`SessionEnd` (pure; unknown keys are
ignored, as new Claude Code versions add some); :func:`ingest_session_end` reads that transcript
into episodes with the same ingest as `commons ingest`, so a re-read adds nothing and a grown
transcript is read from where the last read stopped. After the ingest comes the nap (the ``nap``
argument; ``commons hook session-end`` passes ``commons.node.nap``): what needs no night is
learned and rendered at once; the nightly sleep does the rest.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from commons.errors import CommonsError

if TYPE_CHECKING:  # the hook's first process only parses; the detached one imports the ingest
    from commons.integrations.claude_code import Project
    from commons.ingest.archive import Archive
    from commons.ingest.ingester import IngestReport
    from commons.store.db import Store

MAX_INPUT = 1024 * 1024  # the hook's JSON is a few hundred bytes; anything this big is not it


class HookInputError(CommonsError):
    """What arrived on the hook's stdin is not a Claude Code hook input (Claude Code's, or the
    caller's, fault; the hook logs it and exits 0)."""


@dataclass(frozen=True)
class SessionEnd:
    """The `SessionEnd` hook's input."""

    session_id: str
    transcript_path: Path
    cwd: str | None  # the session's working directory, when Claude Code sends it
    reason: str  # clear | logout | prompt_input_exit | other | …: why the session ended
    hook_event_name: str


def parse_hook_input(data: bytes) -> SessionEnd:
    if len(data) > MAX_INPUT:
        raise HookInputError(f"hook input of {len(data)} bytes is over the {MAX_INPUT}-byte limit")
    if not data.strip():
        raise HookInputError("no hook input on stdin (expected Claude Code's JSON object)")
    try:
        value = json.loads(data)
    except ValueError as error:
        raise HookInputError(f"hook input is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise HookInputError(f"hook input is a JSON {type(value).__name__}, not an object")
    transcript = value.get("transcript_path")
    if not isinstance(transcript, str) or not transcript.strip():
        raise HookInputError("hook input has no transcript_path")
    path = Path(transcript).expanduser()
    if not path.is_absolute():
        raise HookInputError(f"transcript_path {transcript!r} is not an absolute path")

    def text(key: str) -> str:
        item = value.get(key)
        return item if isinstance(item, str) else ""

    return SessionEnd(
        session_id=text("session_id"),
        transcript_path=path,
        cwd=text("cwd") or None,
        reason=text("reason"),
        hook_event_name=text("hook_event_name"),
    )


@dataclass(frozen=True)
class SessionEndOutcome:
    event: SessionEnd
    project: Project | None  # the session's project (git root of its cwd), when known
    report: IngestReport


Nap = Callable[[SessionEndOutcome], Awaitable[None]]


async def ingest_session_end(
    store: Store, archive: Archive, event: SessionEnd, now: float, *, nap: Nap | None = None
) -> SessionEndOutcome:
    """Ingest the ended session's transcript (its subagents' transcripts beside it included), then
    run ``nap`` on the outcome when one is given."""
    from commons.ingest.ingester import ingest_paths

    paths = [event.transcript_path]
    subagents = event.transcript_path.with_suffix("") / "subagents"
    if subagents.is_dir():
        paths += sorted(subagents.glob("*.jsonl"))
    report = await ingest_paths(store, archive, paths, now)
    from commons.integrations.claude_code import transcript_project

    outcome = SessionEndOutcome(event=event, project=transcript_project(event.transcript_path, event.cwd), report=report)
    if nap is not None:
        await nap(outcome)
    return outcome
