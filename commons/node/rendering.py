"""The memory folder, rendered from the store: the own layer and the common layer.

Files the person deleted are vetoes (``detect_deleted``), read before every render and every night.
The files themselves are written by ``commons.render.memory_folder``; this module decides what goes in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

import trio

from commons.core.lessons import Lesson
from commons.core.records import Lesson as LessonRecord
from commons.node import agent_files, review
from commons.node.context import NodeContext
from commons.render import memory_folder as renderer
from commons.store import lessons as ls
from commons.store import records as record_store
from commons.store.db import Store


async def detect_deleted(store: Store, node: NodeContext, now: float) -> list[str]:
    """Record a veto for every rendered lesson file the person deleted; returns their ids."""
    folder = node.memory_folder
    previous = [r for r in await ls.rendered(store) if r.folder == str(folder)]
    gone = renderer.deleted_by_person(folder, [(r.lesson_id, r.file) for r in previous])
    if gone:
        found = {s.lesson.id: (s.lesson.kind, s.lesson.text) for s in await ls.load_lessons(store, ids=gone)}
        for lid in gone:  # a common lesson's file is named after its record: veto it the same way
            if lid not in found and len(lid) == 64:
                signed = await record_store.get(store, bytes.fromhex(lid))
                if signed is not None and isinstance(signed.record, LessonRecord):
                    found[lid] = (signed.record.kind, signed.record.text)
        async with store.transaction():
            await ls.add_vetoes(store, [(lid, ls.content_key(*found[lid]), found[lid][1])
                                        for lid in gone if lid in found], "file deleted", now)
    return gone


@dataclass(frozen=True)
class RenderSummary:
    """What one render of the memory folder did."""

    folder: Path
    rendered: int  # lesson files written (both layers)
    removed: tuple[str, ...]  # files removed: their lessons left the folder
    unsafe_skipped: tuple[str, ...]  # lessons whose text read as instructions: not written
    left_out: tuple[tuple[str, int], ...]  # per layer: lessons over MEMORY.md's budget
    vetoed_deleted_files: tuple[str, ...]  # lessons whose files the person deleted: vetoed now
    memory_lines: int
    memory_bytes: int
    agent_files: tuple[agent_files.AgentRender, ...] = ()  # Codex's AGENTS.md, Gemini's GEMINI.md, if set up

    def to_json(self) -> dict:
        return {"folder": str(self.folder), "rendered": self.rendered, "removed": list(self.removed),
                "unsafe_skipped": list(self.unsafe_skipped), "left_out": dict(self.left_out),
                "vetoed_deleted_files": list(self.vetoed_deleted_files), "memory_lines": self.memory_lines,
                "memory_bytes": self.memory_bytes, "agent_files": [a.to_json() for a in self.agent_files]}


def strength_now(lesson: Lesson, now: float, node: NodeContext) -> float:
    return lesson.strength_now(now, node.sleep.half_life_days)


async def render(store: Store, node: NodeContext, now: float) -> RenderSummary:
    """Render the memory folder now: the ``own`` layer (this node's active lessons) and, for a node
    that knows its identity, the ``common`` layer (lessons common at this node, never candidates).

    An own lesson whose record is revoked or superseded is left out; one that a common lesson
    stands for (content dedupe) is shown once, in the common layer, with its confirmations.
    """
    vetoed = await detect_deleted(store, node, now)
    folder = node.memory_folder
    own = [s for s in await ls.load_lessons(store, statuses=["active"]) if s.origin == "own"]
    hidden: set[str] = set()
    common: list[renderer.RenderItem] = []
    if node.trust is not None:
        held = await node.trust.held(store, now)
        hidden = review.hidden_own(held, {s.lesson.id: s.record_id for s in own})
        vetoed_ids, vetoed_keys = await ls.veto_keys(store)
        common = review.common_layer(held, vetoed_ids, vetoed_keys)
    active = [s.lesson for s in own if s.lesson.id not in hidden]
    predictions = await ls.open_prediction_of(store, [lesson.id for lesson in active])
    items = [renderer.RenderItem(
        id=lesson.id, text=lesson.text, kind=lesson.kind.value, scope=lesson.scope.value,
        strength=strength_now(lesson, now, node), seen=lesson.seen,
        prediction=({"situation": predictions[lesson.id].situation, "outcome": predictions[lesson.id].outcome}
                    if lesson.id in predictions else None)) for lesson in active]
    previous = await ls.rendered(store)
    layers = [renderer.Layer("own", items)]
    if common or renderer.has_section(folder, "common"):  # an emptied section is rewritten, not left stale
        layers.append(renderer.Layer("common", common))
    result = await trio.to_thread.run_sync(partial(
        renderer.render, folder, layers,
        [r.file for r in previous if r.folder == str(folder)]))
    since = {r.lesson_id: r.since for r in previous if r.folder == str(folder)}
    async with store.transaction():
        await ls.replace_rendered(store, [ls.Rendered(lid, layer, str(folder), name, since.get(lid, now))
                                          for layer, lid, name in result.written])
    agents = await agent_files.render_all(store, [*items, *common])
    return RenderSummary(folder, len(result.written), tuple(result.removed), tuple(result.unsafe),
                         tuple(dict(result.left_out).items()), tuple(vetoed), result.lines, result.bytes, agents)

