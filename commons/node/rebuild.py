"""Rebuild: the lessons a fresh home would learn from the same episodes, without losing the person's say.

The design keeps the raw transcripts so that a better reader can re-derive everything
(``commons.ingest.rederive`` re-reads the episodes). This module re-derives the lessons: one night
of the core's sleep from an empty state over every live episode (what a new home that ingested
the same transcripts would learn), then each lesson it makes is matched with this node's own
lessons made from the same episodes (by episode uid):

* **unchanged** — the same lesson (same id, or the same normalised text): nothing to do;
* **new** — made of episodes no lesson held: added;
* **reworded** — the old lessons it shares episodes with are retired (archived, kept) and the new
  one takes their place, strength carried over. An old lesson this node published is not silently
  changed: a new signed record *supersedes* its record (``authoring.supersede``, as `commons
  reword` does), so peers learn the new wording and what it replaces;
* **suppressed** — it shares episodes with a vetoed lesson, or its id or normalised text was
  vetoed: stored as vetoed, with a veto of its own, so no later night makes it again;
* **retired** — an old lesson whose every episode was read again and that no new lesson covers
  (the reader now drops them, e.g. a progress line taken for a failure): archived. A published one
  keeps its record; `commons revoke` takes it down.

Lessons written by hand, lessons received from peers, and lessons made (in part) of episodes the
archive could not re-derive are left as they are. `plan` writes nothing (`--dry-run`); `apply`
writes the plan and renders the memory folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import trio

from commons.core.learning import SleepResult, SleepState, run_night
from commons.core.embedding import embed_many
from commons.core.learning import Episode, SessionEpisode
from commons.core.learning import project_aliases
from commons.core.learning import Lesson, LessonStatus
from commons.core.learning import Prediction
from commons.core.records import Lesson as LessonRecord
from commons.core.records import Scope, day_of
from commons.node import authoring, publish, rendering
from commons.node.context import NodeContext
from commons.store import lessons as ls
from commons.store import records as record_store
from commons.store.db import Store

NEW, REWORDED, SUPPRESSED, RETIRED = "new", "reworded", "suppressed", "retired"


@dataclass(frozen=True)
class Change:
    """One lesson change: the old lessons (id, text) it concerns and the new lesson, if any."""

    action: str  # new | reworded | suppressed | retired
    before: tuple[tuple[str, str], ...]
    after: Lesson | None
    supersedes: tuple[bytes, ...] = ()  # records of old lessons this node published
    kept_records: tuple[tuple[bytes, str], ...] = ()  # published records left as they are, and why

    def to_json(self) -> dict:
        return {"action": self.action, "before": [{"id": lid, "text": text} for lid, text in self.before],
                "after": None if self.after is None else {"id": self.after.id, "text": self.after.text,
                                                          "scope": self.after.scope.value},
                "supersedes": [rid.hex() for rid in self.supersedes],
                "kept_records": [{"record": rid.hex(), "why": why} for rid, why in self.kept_records]}


@dataclass(frozen=True)
class Plan:
    changes: tuple[Change, ...]
    unchanged: int  # lessons made again exactly as they are
    predictions: tuple[Prediction, ...]  # the new lessons' first predictions

    def count(self, action: str) -> int:
        return sum(1 for c in self.changes if c.action == action)

    def to_json(self) -> dict:
        return {"unchanged": self.unchanged, **{a: self.count(a) for a in (NEW, REWORDED, SUPPRESSED, RETIRED)},
                "changes": [c.to_json() for c in self.changes]}


@dataclass(frozen=True)
class Applied:
    plan: Plan
    records: tuple[bytes, ...]  # the superseding records signed
    render: rendering.RenderSummary

    def to_json(self) -> dict:
        return {**self.plan.to_json(), "records_signed": [r.hex() for r in self.records],
                "render": self.render.to_json()}


async def plan(store: Store, node: NodeContext, episodes: Sequence[Episode], rederived: frozenset[str],
               now: float) -> Plan:
    """What rebuilding the lessons from ``episodes`` (the live episodes after re-reading) would
    change. ``rederived``: the uids whose transcript was read again."""
    stored = await ls.load_lessons(store)
    vetoed_ids, vetoed_keys = await ls.veto_keys(store)
    touched = await ls.episode_touches(store)
    fresh = await trio.to_thread.run_sync(partial(_fresh_night, episodes, now, node, touched))
    own = {s.lesson.id: s for s in stored if s.origin == "own" and s.lesson.episodes}
    by_uid: dict[str, list[str]] = {}
    for s in own.values():
        for uid in s.lesson.episodes:
            by_uid.setdefault(uid, []).append(s.lesson.id)
    own_keys = {ls.content_key(s.lesson.kind, s.lesson.text) for s in own.values()}
    known_ids = {s.lesson.id for s in stored}
    # Archived ones too: a lesson the fresh night lets decay may be one that confirmations kept alive.
    found = list(fresh.state.lessons)

    def overlap(n: Lesson) -> dict[str, int]:
        shared: dict[str, int] = {}
        for uid in n.episodes:
            for lid in by_uid.get(uid, ()):
                shared[lid] = shared.get(lid, 0) + 1
        return shared

    # Each old lesson is taken over by the new lesson that shares most of its episodes.
    best: dict[str, tuple[int, str]] = {}
    overlaps = {n.id: overlap(n) for n in found}
    for n in found:
        for lid, k in overlaps[n.id].items():
            if k > best.get(lid, (0, ""))[0]:
                best[lid] = (k, n.id)
    changes: list[Change] = []
    unchanged = 0
    placed: set[str] = set()
    for n in found:
        shared = overlaps[n.id]
        key = ls.content_key(n.kind, n.text)
        # A lesson's id and content key leave out its tail (what worked, the counts), so the same
        # pitfall keeps its id when a better reader finds its fix: that lesson is the one to reword.
        same = own.get(n.id) or next((own[lid] for lid in shared
                                      if ls.content_key(own[lid].lesson.kind, own[lid].lesson.text) == key), None)
        if same is not None and same.lesson.text == n.text:
            unchanged += 1
            placed.update([*shared, same.lesson.id])
            continue
        if same is None and n.id in known_ids:  # a lesson by hand or from a peer has these words
            unchanged += 1
            continue
        olds = [own[lid] for lid in shared if lid != (same and same.lesson.id)] + ([same] if same else [])
        before = tuple((s.lesson.id, s.lesson.text) for s in olds)
        if n.id in vetoed_ids or key in vetoed_keys or any(s.status == ls.VETOED for s in olds):
            changes.append(Change(SUPPRESSED, before, n))
            placed.update(s.lesson.id for s in olds)
            continue
        taken = [s for s in olds if s is same or best[s.lesson.id][1] == n.id]
        if not taken:  # new, or every lesson it touches is carried on by another new lesson
            if n.status is LessonStatus.ACTIVE:
                changes.append(Change(NEW, (), n))
            continue
        placed.update(s.lesson.id for s in taken)
        changes.append(await _reworded(store, node, n, taken, now))
    for lid, s in own.items():
        if lid in placed or s.status != "active" or not set(s.lesson.episodes) <= rederived:
            continue
        kept = ((s.record_id, "no lesson is made of its episodes now; `commons revoke` takes it down"),) \
            if s.record_id is not None else ()
        changes.append(Change(RETIRED, ((lid, s.lesson.text),), None, (), kept))
    made = {c.after.id for c in changes if c.action in (NEW, REWORDED) and c.after is not None
            and c.after.status is LessonStatus.ACTIVE}
    return Plan(tuple(changes), unchanged, tuple(p for p in fresh.state.predictions if p.lesson_id in made))


async def _reworded(store: Store, node: NodeContext, n: Lesson, taken: Sequence[ls.StoredLesson],
                    now: float) -> Change:
    """``n`` in the place of ``taken``: their strength, first creation and last use carried over;
    archived, as they were, if none of them was still active; shared if one of them was published."""
    half_life = node.sleep.half_life_days
    live = [s for s in taken if s.status == "active"]
    carried = max([n.strength_now(now, half_life) if live else 0.0]
                  + [s.lesson.strength_now(now, half_life) for s in taken])
    n = replace(n, strength=carried, strength_at=now, status=LessonStatus.ACTIVE if live else LessonStatus.ARCHIVED,
                touched=max([n.touched if live else 0.0] + [s.lesson.touched for s in taken]),
                created=min([n.created] + [s.lesson.created for s in taken]))
    supersedes, kept = await _published(store, node, taken, n, now)
    if supersedes:  # the person chose to share what it replaces: the new wording is shared too
        n = replace(n, scope=Scope.SHARED)
    return Change(REWORDED, tuple((s.lesson.id, s.lesson.text) for s in taken), n, supersedes, kept)


def _fresh_night(episodes: Sequence[Episode], now: float, node: NodeContext,
                 touched: dict[str, float]) -> SleepResult:
    """One night from an empty state, as a new home would sleep over the same episodes."""
    projects = project_aliases(e.project for e in episodes if isinstance(e, SessionEpisode) and e.project)
    return run_night(SleepState(), [e for e in episodes if e.at <= now], now, node.sleep,
                      hash_episode=node.hash_episode, write_text=node.write_text,
                      episode_touched=touched, project_names=projects)


async def _published(store: Store, node: NodeContext, olds: Sequence[ls.StoredLesson], new: Lesson,
                     now: float) -> tuple[tuple[bytes, ...], tuple[tuple[bytes, str], ...]]:
    """Which of ``olds``' records this node signed (to be superseded by ``new``'s wording), and which
    stay as they are, with why."""
    supersedes, kept = [], []
    for s in olds:
        held = await record_store.get(store, s.record_id) if s.record_id is not None else None
        if held is None or held.record.author != node.identity.author_public:
            continue  # never published, or it stands for someone else's record (content dedupe)
        made = publish.lesson_record(new, node.identity, node.config.network.key_bytes, now)
        if isinstance(made, publish.Skipped):
            kept.append((held.id, f"the new wording may not leave the node: {made.reason}"))
        else:
            supersedes.append(held.id)
    return tuple(supersedes), tuple(kept)


async def apply(store: Store, node: NodeContext, planned: Plan, now: float) -> Applied:
    """Write the plan: new and reworded lessons active, the ones they replace archived, suppressed
    ones vetoed; sign a superseding record for each published lesson reworded; render."""
    items: list[tuple[Lesson, str]] = []
    vetoes: list[tuple[str, str, str]] = []
    replaced: list[str] = []  # lessons whose open prediction the new lesson's takes over
    for c in planned.changes:
        if c.after is None:
            pass
        elif c.action in (NEW, REWORDED):
            items.append((c.after, c.after.status.value))
            replaced.append(c.after.id)
        elif c.action == SUPPRESSED:
            items.append((replace(c.after, status=LessonStatus.ARCHIVED), ls.VETOED))
            vetoes.append((c.after.id, ls.content_key(c.after.kind, c.after.text), c.after.text))
        if c.action in (REWORDED, RETIRED):
            gone = [lid for lid, _ in c.before if c.after is None or lid != c.after.id]
            items += [(replace(s.lesson, status=LessonStatus.ARCHIVED), "archived")
                      for s in await ls.load_lessons(store, ids=gone)]
            replaced += gone
    stale = await ls.open_prediction_of(store, replaced)
    vectors = embed_many([ls.recall_text(lesson) for lesson, _ in items]) if items else np.zeros((0, 256), np.float32)
    for start in range(0, max(len(items), 1), ls.CHUNK_ROWS):
        async with store.transaction():
            await ls.put_lessons(store, items[start:start + ls.CHUNK_ROWS], vectors[start:start + ls.CHUNK_ROWS], now)
    async with store.transaction():
        # An open prediction made from the old wording (its outcome the old failure line) is
        # withdrawn, not judged: the new lesson's own prediction replaces it.
        await ls.decide_predictions(store, [(p.id, "withdrawn", None, now) for p in stale.values()])
        await ls.add_predictions(store, planned.predictions)
        await ls.add_vetoes(store, vetoes, "suppressed", now)
    signed: list[bytes] = []
    for c in planned.changes:
        for rid in c.supersedes:
            signed.append(await _supersede(store, node, rid, c.after, now))
    return Applied(planned, tuple(signed), await rendering.render(store, node, now))


async def _supersede(store: Store, node: NodeContext, rid: bytes, lesson: Lesson | None, now: float) -> bytes:
    assert lesson is not None  # a reworded change always carries its new lesson
    made = publish.lesson_record(lesson, node.identity, node.config.network.key_bytes, now)
    assert isinstance(made, LessonRecord)  # checked when planned
    old = await record_store.get(store, rid)
    created = max(day_of(now), old.record.created if old is not None else 0)
    record = replace(made, created=created, supersedes=rid)
    signed = await authoring.supersede(store, node, record, lesson.id, now)
    async with store.transaction():  # the lesson (which may keep its id) now stands for the new record
        await ls.link_records(store, [(lesson.id, signed.id)])
    return signed.id
