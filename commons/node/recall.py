"""Recall through the store: the k lessons most relevant to a situation, for the CLI and the MCP tool.

score = relevance·w₁ + recency·w₂ + strength·w₃ ([recall] in config.toml; the core's ``top_k``),
over the node's active lessons (a matrix kept in memory while no lesson changes), the lessons
other agents taught it that are common at this node, and optionally the live episodes. Every
lesson returned is touched: use keeps a memory alive (design paper §4.4).

**For a project.** Given a project (the key of :func:`project_key`: the main git root of a working
directory, so worktrees share it), recall answers with that project's local lessons and every
shared and common lesson; a local lesson learned in other projects' sessions is left out ("this
project uses uv" is no answer in a project that uses poetry). Without one, every lesson is a candidate.

**Through an index, when many.** Past ``IndexParams.scan_below`` active lessons the own lessons are
recalled through the core's :class:`~commons.core.recall.index.RecallIndex` (the lessons' columns
and prior bounds: the scan's top k exactly, reading only the query's dimensions), kept per store in
memory; a process makes it at its first recall (a transpose of the matrix, about a second at 10^6
lessons) and keeps no file (the file an earlier version kept beside the database is removed). Before
each query the index is synced with the lessons as they are now (a reloaded matrix: what was
added, archived, revoked or faded since), and a lesson the index still holds but the store no
longer offers is never returned: only the rows of the present matrix are. Common lessons (embedded
once per process) and episodes are scanned, and the two rankings merged as one scan over them all
would rank them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import trio

from commons.core.embedding import embed, embed_many
from commons.core.learning import Lesson, adjust, decay_factor
from commons.core.recall import RecallParams, normalised_strength, relevance, top_k
from commons.core.recall import IndexParams, RecallIndex
from commons.core.records import Scope
from commons.integrations.claude_code import project_at
from commons.core.policy import Admitted, admit, scrub
from commons.node import review
from commons.node.context import NodeContext
from commons.node.lessons import LessonRefused
from commons.store import episodes as episode_store
from commons.store import lessons as ls
from commons.store import recall_file
from commons.store.db import Store


def _components(query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
                now: float, params: RecallParams) -> list[tuple[float, float, float]]:
    """(relevance, recency, normalised strength) of some rows, as the score weighs them."""
    recency = decay_factor(touched, now, params.recency_half_life_days)
    strength_n = normalised_strength(strength)
    return [(float(a), float(b), float(c)) for a, b, c in zip(relevance(query_vec, matrix), recency, strength_n)]


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


INDEX_PARAMS = IndexParams()


async def recall(store: Store, node: NodeContext, query: str, k: int, now: float, *,
                 episodes: bool = False, project: str | None = None, index_params: IndexParams | None = None,
                 progress: Callable[[str], None] | None = None) -> list[RecallHit]:
    """The ``k`` best active lessons (and episodes) for ``query``; each one returned is touched.
    ``project`` (a :func:`project_key`): that project's local lessons and every shared one.
    ``progress`` hears of a recall index being built (about a second at 10^6 lessons)."""
    if not query.strip():
        raise LessonRefused("recall needs a query: the words of the situation, e.g. an error line")
    params, half_life = node.recall, node.sleep.half_life_days
    qvec = embed(query)
    cached = await ls.recall_matrix(store)
    held = await _synced_index(store, cached, now, half_life, params, index_params or INDEX_PARAMS, progress)
    own = len(cached.ids)

    def own_strength(rows: np.ndarray) -> np.ndarray:  # as of now, for the rows asked only
        return cached.strength[rows] * decay_factor(cached.strength_at[rows], now, half_life)

    extra = _Extra()
    common = await _common_lessons(store, node, now)
    if common:
        # Lessons other agents taught this node and enough of them confirmed: no local strength
        # or touches, so recency counts from receipt and strength is the confirmation count.
        extra.add(await _common_vectors(store, common), [c[2] for c in common],
                  [float(c[3]) for c in common], [(rid, "common", text) for rid, text, _, _ in common])
    ep_keys: dict[str, str] = {}
    if episodes:
        live = await episode_store.load_episodes(store)
        touches = await ls.episode_touches(store)
        if live:
            ep_last = np.array([max(s.episode.at, touches.get(s.episode.uid, s.episode.at)) for s in live])
            extra.add(await trio.to_thread.run_sync(embed_many, [s.episode.text() for s in live]), ep_last,
                      decay_factor(ep_last, now, half_life), [(s.key, "episode", s.episode.text()) for s in live])
            ep_keys = {s.key: s.episode.uid for s in live}

    async def best_of(wanted: int) -> list[tuple[int, float]]:
        """The best rows of the own lessons (0..own-1) then the extra ones, as one scan would rank them."""
        async with held.lock:
            best = held.index.top_k(qvec, cached.vectors, cached.touched, own_strength, now, wanted)
        if len(extra):
            best += [(own + row, score) for row, score in top_k(qvec, *extra.arrays(), now, wanted, params)]
            best.sort(key=lambda hit: (-hit[1], hit[0]))
        return best[:wanted]

    def id_of(row: int) -> str:
        return cached.ids[row] if row < own else extra.items[row - own][0]

    wanted = k
    while True:  # over-fetch, then drop other projects' local lessons, until k remain or none are left
        best = await best_of(wanted)
        lesson_ids = [id_of(i) for i, _ in best if i < own]
        found = {s.lesson.id: s.lesson for s in await ls.load_lessons(store, ids=lesson_ids)} if lesson_ids else {}
        if project is None:
            break
        drop = await elsewhere(store, list(found.values()), project)
        kept = [(i, score) for i, score in best if id_of(i) not in drop]
        if len(kept) >= k or len(best) < wanted:
            best = kept[:k]
            lesson_ids = [id_of(i) for i, _ in best if i < own]
            break
        wanted *= 4
    rows = np.array([i for i, _ in best], dtype=np.int64)
    mine, theirs = rows[rows < own], rows[rows >= own] - own
    ex_matrix, ex_touched, ex_strength = extra.arrays()
    hit_strength = np.concatenate([own_strength(mine), ex_strength[theirs]])
    parts = _components(qvec, np.concatenate([cached.vectors[mine], ex_matrix[theirs]]),
                        np.concatenate([cached.touched[mine], ex_touched[theirs]]), hit_strength, now, params)
    order = {int(row): n for n, row in enumerate(np.concatenate([mine, theirs + own]))}
    hits = []
    for row, score in best:
        relevance, recency, strength_n = parts[order[row]]
        hit_id = id_of(row)
        kind, text = ("lesson", found[hit_id].text) if row < own else extra.items[row - own][1:]
        # the last pass, the door policy's: the CLI and MCP answer with what the render would show
        shown = admit(text) if kind != "episode" else Admitted(scrub(text), False)
        if not isinstance(shown, Admitted):
            continue
        hits.append(RecallHit(hit_id, kind, shown.text,
                              round(score, 4), round(relevance, 4), round(recency, 4),
                              round(float(hit_strength[order[row]]), 4), round(strength_n, 4)))
    answered = {h.id for h in hits}
    lesson_ids = [i for i in lesson_ids if i in answered]
    await _touch(store, [found[i] for i in lesson_ids], [(key, ep_keys[key]) for key in
                 (h.id for h in hits if h.type == "episode")], now, half_life)
    await _follow_touch(held, cached, [cached.rows[i] for i in lesson_ids], own_strength, now)
    return hits


@dataclass
class _Extra:
    """The rows recall scans beside the own lessons: common lessons and episodes (id, kind, text)."""

    vectors: list[np.ndarray] = field(default_factory=list)
    touched: list[np.ndarray] = field(default_factory=list)
    strength: list[np.ndarray] = field(default_factory=list)
    items: list[tuple[str, str, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)

    def add(self, vectors: np.ndarray, touched: Sequence[float] | np.ndarray, strength: Sequence[float] | np.ndarray,
            items: Sequence[tuple[str, str, str]]) -> None:
        self.vectors.append(vectors)
        self.touched.append(np.asarray(touched, dtype=np.float64))
        self.strength.append(np.asarray(strength, dtype=np.float64))
        self.items.extend(items)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.items:
            return np.zeros((0, 256), dtype=np.float32), np.zeros(0), np.zeros(0)
        return np.concatenate(self.vectors), np.concatenate(self.touched), np.concatenate(self.strength)


# -- the index -----------------------------------------------------------------------------------


@dataclass
class _Held:
    """A store's recall index in this process, and the matrix it was last synced with."""

    index: RecallIndex
    matrix: ls.RecallMatrix | None = None
    generation: int = -1
    lock: trio.Lock = field(default_factory=trio.Lock)


_INDEXES: "weakref.WeakKeyDictionary[Store, _Held]" = weakref.WeakKeyDictionary()


async def _synced_index(store: Store, cached: ls.RecallMatrix, now: float, half_life: float, params: RecallParams,
                        index_params: IndexParams, progress: Callable[[str], None] | None) -> _Held:
    """The store's index, in step with ``cached`` (the active lessons as they are now)."""
    held = _INDEXES.get(store)
    if held is None or held.index.params != params or held.index.index_params != index_params:
        held = _INDEXES[store] = _Held(RecallIndex(params, index_params))
        await trio.to_thread.run_sync(recall_file.remove_kept_index, store)
    async with held.lock:
        if held.matrix is cached and held.generation == cached.generation:
            return held
        strength = cached.strength * decay_factor(cached.strength_at, now, half_life)
        await trio.to_thread.run_sync(
            lambda: held.index.sync(cached.ids, cached.vectors, cached.touched, strength, now, progress))
        held.matrix, held.generation = cached, cached.generation
    return held


async def _follow_touch(held: _Held, cached: ls.RecallMatrix, rows: Sequence[int],
                        strength: Callable[[np.ndarray], np.ndarray], now: float) -> None:
    """Recall's own touch changed these rows in the cached matrix: the index follows, no re-sync."""
    if held.matrix is not cached or not rows:
        return
    async with held.lock:
        if held.generation != cached.generation:  # touched in place (else the next recall re-syncs)
            held.index.changed(rows, cached.vectors, cached.touched, strength, now)
            held.generation = cached.generation


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


@dataclass
class _CommonVectors:
    """The embeddings of the common lessons last recalled over (a record's text never changes)."""

    ids: tuple[str, ...] = ()
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 256), dtype=np.float32))


_COMMON: "weakref.WeakKeyDictionary[Store, _CommonVectors]" = weakref.WeakKeyDictionary()


async def _common_vectors(store: Store, common: Sequence[tuple[str, str, float, int]]) -> np.ndarray:
    """The common lessons' embeddings, made only for those not embedded before in this process:
    embedding every common lesson for every query was most of a recall's time once they are many."""
    held = _COMMON.setdefault(store, _CommonVectors())
    ids = tuple(c[0] for c in common)
    if ids != held.ids:
        row_of = {rid: row for row, rid in enumerate(held.ids)}
        new = [c for c in common if c[0] not in row_of]
        made = dict(zip((c[0] for c in new), await trio.to_thread.run_sync(embed_many, [c[1] for c in new]))) if new else {}
        held.matrix = np.stack([made[rid] if rid in made else held.matrix[row_of[rid]] for rid in ids])
        held.ids = ids
    return held.matrix


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
