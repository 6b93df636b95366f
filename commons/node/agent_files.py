"""Which agents' global instruction files this node renders into, and rendering them.

`commons setup codex` / `commons setup gemini` register the agent's global file (``~/.codex/AGENTS.md``,
``~/.gemini/GEMINI.md``) here; every render of the memory folder (`commons render`, each night)
then writes the same lessons into each registered file's managed section
(`commons.render.agents_md`, which says what goes in and why local lessons stay out). The list is
node state, in the store's settings, not configuration: setup adds to it and `--undo` takes out.
A file that cannot be written (it moved into a repository, its section was damaged) is reported
and the others are written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import trio

from commons.errors import CommonsError
from commons.integrations.codex import instructions_in_force
from commons.render import agents_md
from commons.render.memory_folder import RenderItem
from commons.store import settings
from commons.store.db import Store

SETTING = "render.agent_files"


@dataclass(frozen=True)
class AgentFile:
    agent: str  # "codex", "gemini"
    path: Path
    load_bytes: int | None = None  # what the agent reads of its instructions, when it caps it

    def to_json(self) -> dict:
        return {"agent": self.agent, "path": str(self.path), "load_bytes": self.load_bytes}


@dataclass(frozen=True)
class AgentRender:
    """What one render did to one agent's file: its result, or why it could not be written."""

    agent: str
    path: Path
    result: agents_md.AgentFileResult | None
    error: str | None = None

    def to_json(self) -> dict:
        body = {"agent": self.agent, "path": str(self.path)}
        return body | (self.result.to_json() if self.result else {"error": self.error})


async def registered(store: Store) -> list[AgentFile]:
    rows = await settings.get(store, SETTING, [])
    return [AgentFile(str(r["agent"]), Path(r["path"]), r.get("load_bytes")) for r in rows if isinstance(r, dict)]


async def register(store: Store, target: AgentFile, now: float) -> bool:
    """Render into `target` from now on (one file per agent). False if it was already so."""
    current = await registered(store)
    if target in current:
        return False
    kept = [t for t in current if t.agent != target.agent]
    await settings.put(store, SETTING, [t.to_json() for t in [*kept, target]], now)
    return True


async def unregister(store: Store, agent: str, now: float) -> AgentFile | None:
    """Stop rendering into `agent`'s file; returns the file it was, if any."""
    current = await registered(store)
    gone = next((t for t in current if t.agent == agent), None)
    if gone is not None:
        await settings.put(store, SETTING, [t.to_json() for t in current if t.agent != agent], now)
    return gone


async def render_all(store: Store, items: Sequence[RenderItem]) -> tuple[AgentRender, ...]:
    """Write `items` (both layers) into every registered agent file."""
    out = []
    for target in await registered(store):
        path = in_force(target)
        try:
            result = await trio.to_thread.run_sync(partial(
                agents_md.render, path, items, load_bytes=target.load_bytes))
        except (CommonsError, OSError) as error:
            out.append(AgentRender(target.agent, path, None, str(error)))
            continue
        out.append(AgentRender(target.agent, path, result))
    return tuple(out)


def in_force(target: AgentFile) -> Path:
    """The file the agent reads now for the one registered: for Codex, ``AGENTS.override.md`` beside
    ``AGENTS.md`` while the override is not blank (it is read instead)."""
    return instructions_in_force(target.path) if target.agent == "codex" else target.path
