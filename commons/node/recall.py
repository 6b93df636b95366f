"""Recall through the store: the k lessons most relevant to a situation, for the CLI and the MCP tool.

score = relevance·w₁ + recency·w₂ + strength·w₃ ([recall] in config.toml; the core's ``top_k``),
over the node's active lessons (a matrix kept in memory while no lesson changes), the lessons
other agents taught it that are common at this node, and optionally the live episodes. Every
lesson returned is touched: use keeps a memory alive (design paper §4.4).

**For a project.** Given a project (the key of :func:`project_key`: the main git root of a working
directory, so worktrees share it), recall answers with that project's local lessons and every
shared and common lesson; a local lesson learned in other projects' sessions is left out ("this
project uses uv" is no answer in a project that uses poetry). Without one, every lesson is a candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import trio

from commons.core.embed import embed, embed_many
from commons.core.lessons import Lesson, adjust, decay_factor
from commons.core.recall import RecallParams, normalised_strength, top_k
from commons.core.records import Scope
from commons.integrations.claude_code import project_at
from commons.core.scrub import scrub
from commons.node import review
from commons.node.context import NodeContext
from commons.node.lessons import LessonRefused
from commons.store import episodes as episode_store
from commons.store import lessons as ls
from commons.store.db import Store


def _components(query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
                rows: Sequence[int], now: float, params: RecallParams) -> list[tuple[float, float, float]]:
    """(relevance, recency, normalised strength) of some rows, as the score weighs them."""
    sub = matrix[list(rows)]
    relevance = np.maximum(sub @ query_vec, 0.0)
    recency = decay_factor(touched[list(rows)], now, params.recency_half_life_days)
    strength_n = normalised_strength(strength[list(rows)])
    return [(float(a), float(b), float(c)) for a, b, c in zip(relevance, recency, strength_n)]


@dataclass(frozen=True)
class RecallHit:
    """One lesson (own or common) or episode recall returned, with its score and its parts."""

    id: str
    type: str  # lesson | common | episode
    text: str
    score: float
    relevance: float
    recency: float
    strength: float
    strength_normalised: float

    def to_json(self) -> dict:
        return {"id": self.id, "type": self.type, "text": self.text, "score": self.score,
                "relevance": self.relevance, "recency": self.recency, "strength": self.strength,
                "strength_normalised": self.strength_normalised}


def project_key(workdir: str) -> str:
    """The project a working directory belongs to, as recall and the lessons' sessions name it."""
    return str(project_at(workdir).root)


async def project_for(store: Store, workdir: str) -> str | None:
    """The project recall answers for, from a working directory: its :func:`project_key` when some
    held session ran in that project, else None (every lesson): a folder commons has no session of
    is no reason to hide what was learned elsewhere."""
    key = project_key(workdir)
    known = {project_key(w) for w in await episode_store.session_workdirs(store)}
    return key if key in known else None


async def elsewhere(store: Store, lessons: Sequence[Lesson], project: str) -> set[str]:
    """Ids of the local lessons among ``lessons`` that no session of ``project`` taught."""
    local = [lesson for lesson in lessons if lesson.scope is Scope.LOCAL]
    workdirs = await episode_store.workdirs_of(store, [uid for lesson in local for uid in lesson.episodes])
    written = await ls.written_in(store, [lesson.id for lesson in local if not lesson.episodes])
    keys = {w: project_key(w) for w in {*workdirs.values(), *written.values()}}
    return {lesson.id for lesson in local
            if project not in {keys[workdirs[uid]] for uid in lesson.episodes if uid in workdirs}
            | ({keys[written[lesson.id]]} if lesson.id in written else set())}


async def recall(store: Store, node: NodeContext, query: str, k: int, now: float, *,
                 episodes: bool = False, project: str | None = None) -> list[RecallHit]:
    """The ``k`` best active lessons (and episodes) for ``query``; each one returned is touched.
    ``project`` (a :func:`project_key`): that project's local lessons and every shared one."""
    if not query.strip():
        raise LessonRefused("recall needs a query: the words of the situation, e.g. an error line")
    params, half_life = node.recall, node.sleep.half_life_days
    qvec = embed(query)
    cached = await ls.recall_matrix(store)
    ids, matrix, touched = list(cached.ids), cached.vectors, cached.touched
    strength = cached.strength * decay_factor(cached.strength_at, now, half_life)
    texts: dict[str, str] = {}
    kinds = ["lesson"] * len(ids)
    ep_keys: dict[str, str] = {}
    common = await _common_lessons(store, node, now)
    if common:
        # Lessons other agents taught this node and enough of them confirmed: no local strength
        # or touches, so recency counts from receipt and strength is the confirmation count.
        matrix = np.concatenate([matrix, await trio.to_thread.run_sync(embed_many, [c[1] for c in common])])
        touched = np.concatenate([touched, [c[2] for c in common]])
        strength = np.concatenate([strength, [float(c[3]) for c in common]])
        for rid, text, _, _ in common:
            ids.append(rid)
            kinds.append("common")
            texts[rid] = text
    if episodes:
        live = await episode_store.load_episodes(store)
        touches = await ls.episode_touches(store)
        if live:
            ep_last = np.array([max(s.episode.at, touches.get(s.episode.uid, s.episode.at)) for s in live])
            ep_vecs = await trio.to_thread.run_sync(embed_many, [s.episode.text() for s in live])
            matrix = np.concatenate([matrix, ep_vecs])
            touched = np.concatenate([touched, ep_last])
            strength = np.concatenate([strength, decay_factor(ep_last, now, half_life)])
            for s in live:
                ids.append(s.key)
                kinds.append("episode")
                texts[s.key] = s.episode.text()
                ep_keys[s.key] = s.episode.uid
    wanted = k
    while True:  # over-fetch, then drop other projects' local lessons, until k remain or none are left
        best = top_k(qvec, matrix, touched, strength, now, wanted, params)
        lesson_ids = [ids[i] for i, _ in best if kinds[i] == "lesson"]
        found = {s.lesson.id: s.lesson for s in await ls.load_lessons(store, ids=lesson_ids)} if lesson_ids else {}
        if project is None:
            break
        drop = await elsewhere(store, list(found.values()), project)
        kept = [(i, score) for i, score in best if ids[i] not in drop]
        if len(kept) >= k or len(best) < wanted:
            best = kept[:k]
            lesson_ids = [ids[i] for i, _ in best if kinds[i] == "lesson"]
            break
        wanted *= 4
    parts = _components(qvec, matrix, touched, strength, [i for i, _ in best], now, params)
    hits = []
    for (row, score), (relevance, recency, strength_n) in zip(best, parts):
        hit_id = ids[row]
        text = found[hit_id].text if kinds[row] == "lesson" else texts[hit_id]
        hits.append(RecallHit(hit_id, kinds[row], scrub(text),  # the last pass: the CLI and MCP answer with it
                              round(score, 4), round(relevance, 4), round(recency, 4), round(float(strength[row]), 4),
                              round(strength_n, 4)))
    await _touch(store, [found[i] for i in lesson_ids], [(key, ep_keys[key]) for key in
                 (h.id for h in hits if h.type == "episode")], now, half_life)
    return hits


async def _common_lessons(store: Store, node: NodeContext, now: float) -> list[tuple[str, str, float, int]]:
    """(record id, text, received at, confirmations) of the received lessons common at this node."""
    if node.trust is None:
        return []
    held = await node.trust.held(store, now)
    found = []
    for signed in held.received_lessons(review.LessonStatus.COMMON):
        state = held.state(signed.id)
        found.append((signed.id.hex(), signed.record.text, held.received[signed.id], state.confirmations))
    return found


async def _touch(store: Store, lessons: Sequence[Lesson], episode_keys: Sequence[tuple[str, str]],
                 now: float, half_life: float) -> None:
    """Use keeps a memory alive: every recalled lesson's recency is renewed (the core's adjust)."""
    if (not lessons and not episode_keys) or store.readonly:  # a read-only home: recalled, not renewed
        return
    touched = [adjust(lesson, 0.0, now, half_life, touch=True) for lesson in lessons]
    async with store.transaction():
        await ls.touch_lessons(store, [(t.strength, t.strength_at, t.touched, t.id) for t in touched])
        if episode_keys:
            await ls.touch_episodes(store, episode_keys, now)
