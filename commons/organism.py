"""The organism: the local loop of one node, wired to the store (design paper §4).

    episodes ──sleep──▶ lessons ──render──▶ memory folder ──(sessions)──▶ episodes …
                          └── recall (``commons.recall``: CLI, MCP) touches what it returns

The passes themselves are the pure core (``commons.core.sleep``); this module loads their
inputs from the store, runs the CPU-bound part in a worker thread (``trio.to_thread``) so the
trio loop stays responsive, and applies the resulting events in chunks of a few thousand rows,
each its own transaction, so that a long night never holds the database for long.

Vetoes are enforced here, around the core: a vetoed lesson is handed to the core as archived (its
episodes stay absorbed, nothing joins it), and a lesson the core makes whose id or normalised text
was vetoed is stored as vetoed at once, with none of its events applied.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import trio

from commons.clock import format_time
from commons.config import Config
from commons.core import sleep as core
from commons.core.embed import embed_many
from commons.core.episode import SessionEpisode
from commons.core.hashing import episode_hash
from commons.core.generalise import project_aliases
from commons.core.lessons import DAY, Lesson, WriteText, heads_in_prose, lesson_id
from commons.model import model_hook
from commons.core.predictions import Prediction
from commons.core.recall import RecallParams
from commons.core.records import Lesson as LessonRecord
from commons.core.records import LessonKind, Scope
from commons.core.safety import check_observation, contains_injection
from commons.core.scope import classify
from commons.home import Home
from commons.identity import Identity
from commons import render as renderer
from commons.store import episodes as episode_store
from commons.store import records as record_store
from commons.store import lessons as ls
from commons.store.db import Store

MODEL_TIMEOUT = 10.0  # seconds a local model may take per lesson before sleep writes its own text


@dataclass(frozen=True)
class Setup:
    """What the loop needs from a home: thresholds, folders, the hashing secret, the model hook."""

    sleep: core.SleepParams
    recall: RecallParams
    memory_folder: Path
    reports_dir: Path
    hash_secret: bytes
    write_text: WriteText | None = None
    # The node itself, for the commons side (peer review, the common layer, signing); without it
    # the loop is the local one alone.
    identity: Identity | None = None
    config: Config | None = None

    @classmethod
    def for_node(cls, config: Config, home: Home, identity: Identity) -> "Setup":
        """The full setup of a node: the local loop and its commons side."""
        return cls.from_config(config, home, identity.hash_secret, identity=identity)

    @classmethod
    def from_config(cls, config: Config, home: Home, hash_secret: bytes,
                    identity: Identity | None = None) -> "Setup":
        s = config.sleep
        params = core.SleepParams(
            half_life_days=s.half_life_days, archive_below=s.archive_below, join_cosine=s.join_cosine,
            verify_cosine=s.confirm_cosine, window_days=s.prediction_window_days,
            predict_min_strength=s.predict_at_strength)
        r = config.recall
        recall = RecallParams(relevance_weight=r.relevance, recency_weight=r.recency,
                              strength_weight=r.strength, recency_half_life_days=r.recency_half_life_days)
        folder = Path(config.render.folder).expanduser() if config.render.folder else home.data_dir / "memory"
        hook = model_hook(config.model.endpoint, config.model.name) if config.model.endpoint else None
        return cls(params, recall, folder, home.reports_dir, hash_secret, hook, identity,
                   config if identity is not None else None)

    def hash_episode(self, uid: str) -> bytes:
        return episode_hash(self.hash_secret, uid)


# --------------------------------------------------------------------------------------------
# Sleep


def _event_record(event: core.Event) -> dict | None:
    """An event as the report reads it (episode archivals are only counted)."""
    if isinstance(event, core.LessonLearned):
        lesson = event.lesson
        return {"type": "learned", "lesson": lesson.id, "text": lesson.text, "kind": lesson.kind.value,
                "scope": lesson.scope.value}
    if isinstance(event, core.LessonStrengthened | core.LessonWeakened):
        return {"type": "strengthened" if isinstance(event, core.LessonStrengthened) else "weakened",
                "lesson": event.lesson.id, "text": event.lesson.text, "by": event.by,
                "reason": event.reason.value, "evidence": list(event.evidence)}
    if isinstance(event, core.LessonArchived):
        return {"type": "archived", "lesson": event.lesson.id, "text": event.lesson.text,
                "strength": round(event.strength, 4)}
    if isinstance(event, core.PredictionMade):
        p = event.prediction
        return {"type": "prediction_made", "prediction": p.id, "lesson": p.lesson_id, "says": p.describe()}
    verdicts = {core.PredictionConfirmed: "confirmed", core.PredictionPrevented: "prevented",
                core.PredictionFailed: "failed", core.PredictionExpired: "expired"}
    if type(event) in verdicts:
        p = event.prediction
        return {"type": verdicts[type(event)], "prediction": p.id, "lesson": p.lesson_id,
                "says": p.describe(), "evidence": getattr(event, "evidence", None), "at": event.at}
    return None


_COUNT_NAMES = {
    core.LessonLearned: "lessons_learned", core.LessonStrengthened: "lessons_strengthened",
    core.LessonWeakened: "lessons_weakened", core.LessonArchived: "lessons_archived",
    core.EpisodeArchived: "episodes_archived", core.PredictionMade: "predictions_made",
    core.PredictionConfirmed: "predictions_confirmed", core.PredictionPrevented: "predictions_prevented",
    core.PredictionFailed: "predictions_failed", core.PredictionExpired: "predictions_expired",
}


def _lesson_of(event: core.Event) -> str | None:
    if hasattr(event, "lesson"):
        return event.lesson.id
    if hasattr(event, "prediction"):
        return event.prediction.lesson_id
    return None


@dataclass(frozen=True)
class Night:
    """What one sleep decided, ready to be written."""

    events: tuple[core.Event, ...]  # without those of suppressed lessons
    lessons: tuple[tuple[Lesson, str], ...]  # changed lessons with their store status
    vectors: np.ndarray  # their recall embeddings
    suppressed: tuple[Lesson, ...]  # made again from vetoed content: stored as vetoed, nothing else


def _night(state: core.SleepState, episodes: Sequence, now: float, setup: Setup, *,
           rendered_since: dict[str, float], touched: dict[str, float], vetoed_ids: set[str],
           vetoed_keys: set[str]) -> Night:
    """The CPU-bound part (run in a worker thread): the core's sleep, then vetoes applied."""
    projects = project_aliases(e.project for e in episodes if isinstance(e, SessionEpisode) and e.project)
    result = core.sleep(state, episodes, now, setup.sleep, hash_episode=setup.hash_episode,
                        rendered_since=rendered_since, write_text=setup.write_text,
                        episode_touched=touched, project_names=projects)
    final = {lesson.id: lesson for lesson in result.state.lessons}
    suppressed = {e.lesson.id for e in result.events if isinstance(e, core.LessonLearned)
                  and (e.lesson.id in vetoed_ids or ls.content_key(e.lesson.kind, e.lesson.text) in vetoed_keys)}
    events = tuple(e for e in result.events if _lesson_of(e) not in suppressed)
    changed = list(dict.fromkeys(e.lesson.id for e in events if hasattr(e, "lesson")))
    items = tuple((final[lid], final[lid].status.value) for lid in changed)
    vectors = embed_many([ls.recall_text(lesson) for lesson, _ in items]) if items else np.zeros((0, 256), np.float32)
    return Night(events, items, vectors, tuple(final[lid] for lid in suppressed))


async def sleep(store: Store, setup: Setup, now: float) -> dict:
    """One night over the store: vetoes from deleted files, the four passes, render, report."""
    started = time.perf_counter()
    vetoed_now = await detect_deleted(store, setup, now)
    stored = await ls.load_lessons(store)
    state = core.SleepState(lessons=tuple(s.lesson for s in stored),
                            predictions=tuple(await ls.open_predictions(store)))
    # Episodes stamped after the night's time have not happened yet as far as this night knows
    # (a scripted --at night over transcripts ingested ahead of it).
    loaded = [s for s in await episode_store.load_episodes(store) if s.episode.at <= now]
    keys: dict[str, list[str]] = {}
    for s in loaded:
        keys.setdefault(s.episode.uid, []).append(s.key)
    rendered_since = {r.lesson_id: r.since for r in await ls.rendered(store)}
    vetoed_ids, vetoed_keys = await ls.veto_keys(store)
    touched = await ls.episode_touches(store)
    loaded_at = time.perf_counter()
    night = await trio.to_thread.run_sync(partial(
        _night, state, [s.episode for s in loaded], now, setup, rendered_since=rendered_since,
        touched=touched, vetoed_ids=vetoed_ids, vetoed_keys=vetoed_keys))
    slept_at = time.perf_counter()
    await _apply(store, night, keys, now)
    counts = Counter(_COUNT_NAMES[type(e)] for e in night.events)
    counts["lessons_suppressed"] = len(night.suppressed)
    counts["vetoes_from_deleted_files"] = len(vetoed_now)
    records = [r for r in map(_event_record, night.events) if r is not None]
    await ls.add_sleep_run(store, now, dict(counts), records)
    from commons import review

    reviewed = await review.after_sleep(store, setup, now)
    applied_at = time.perf_counter()
    rendered = await render(store, setup, now)
    from commons.report import write_morning_report

    report_path = await write_morning_report(store, setup.reports_dir, now)
    return {
        "at": format_time(now),
        "episodes": len(loaded),
        "counts": {name: counts.get(name, 0) for name in [*_COUNT_NAMES.values(), "lessons_suppressed",
                                                          "vetoes_from_deleted_files"]},
        "learned": [r for r in records if r["type"] == "learned"],
        "review": reviewed.as_dict(),
        "render": rendered,
        "report": str(report_path),
        "seconds": {"load": round(loaded_at - started, 3), "passes": round(slept_at - loaded_at, 3),
                    "apply": round(applied_at - slept_at, 3),
                    "render_and_report": round(time.perf_counter() - applied_at, 3)},
    }


async def _apply(store: Store, night: Night, keys: dict[str, list[str]], now: float) -> None:
    """Write a night's results, a chunk per transaction; lessons and verdicts first (see below)."""
    verdicts = []
    made: list[Prediction] = []
    archived_keys: list[str] = []
    for e in night.events:
        if isinstance(e, core.PredictionMade):
            made.append(e.prediction)
        elif isinstance(e, core.PredictionConfirmed | core.PredictionPrevented | core.PredictionFailed):
            status = {core.PredictionConfirmed: "confirmed", core.PredictionPrevented: "prevented",
                      core.PredictionFailed: "failed"}[type(e)]
            verdicts.append((e.prediction.id, status, e.evidence, e.at))
        elif isinstance(e, core.PredictionExpired):
            verdicts.append((e.prediction.id, "expired", None, e.at))
        elif isinstance(e, core.EpisodeArchived):
            archived_keys += keys.get(e.uid, [])
    suppressed = [(lesson, ls.VETOED) for lesson in night.suppressed]
    sup_vecs = embed_many([ls.recall_text(l) for l, _ in suppressed]) if suppressed else np.zeros((0, 256), np.float32)
    # A lesson's strength change and the verdict that caused it go in the same transaction when
    # they fit in one chunk (the usual night), so a crash cannot apply one without the other.
    # Episode archivals are idempotent and may be many: they follow, chunked.
    items = list(night.lessons) + suppressed
    vectors = np.concatenate([night.vectors, sup_vecs]) if len(items) else night.vectors
    step = ls.CHUNK_ROWS
    first = True
    for start in range(0, max(len(items), 1), step):
        async with store.transaction():
            await ls.put_lessons(store, items[start:start + step], vectors[start:start + step], now)
            if first:
                await ls.decide_predictions(store, verdicts)
                await ls.add_predictions(store, made)
                first = False
    for start in range(0, len(archived_keys), step):
        async with store.transaction():
            await episode_store.mark_archived(store, archived_keys[start:start + step], now)


# --------------------------------------------------------------------------------------------
# Render


async def detect_deleted(store: Store, setup: Setup, now: float) -> list[str]:
    """Record a veto for every rendered lesson file the person deleted; returns their ids."""
    folder = setup.memory_folder
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


def strength_now(lesson: Lesson, now: float, setup: Setup) -> float:
    return lesson.strength_now(now, setup.sleep.half_life_days)


async def render(store: Store, setup: Setup, now: float) -> dict:
    """Render the memory folder now: the ``own`` layer (this node's active lessons) and, for a node
    that knows its identity, the ``common`` layer (lessons common at this node, never candidates).

    An own lesson whose record is revoked or superseded is left out; one that a common lesson
    stands for (content dedupe) is shown once, in the common layer, with its confirmations.
    """
    vetoed = await detect_deleted(store, setup, now)
    folder = setup.memory_folder
    own = [s for s in await ls.load_lessons(store, statuses=["active"]) if s.origin == "own"]
    hidden: set[str] = set()
    common: list[renderer.RenderItem] = []
    if setup.identity is not None and setup.config is not None:
        from commons import review

        held = await review.load(store, setup.config, setup.identity.author_public, now)
        hidden = review.hidden_own(held, {s.lesson.id: s.record_id for s in own})
        vetoed_ids, vetoed_keys = await ls.veto_keys(store)
        common = review.common_layer(held, vetoed_ids, vetoed_keys)
    active = [s.lesson for s in own if s.lesson.id not in hidden]
    predictions = await ls.open_prediction_of(store, [lesson.id for lesson in active])
    items = [renderer.RenderItem(
        id=lesson.id, text=lesson.text, kind=lesson.kind.value, scope=lesson.scope.value,
        strength=strength_now(lesson, now, setup), seen=lesson.seen,
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
    return {"folder": str(folder), "rendered": len(result.written), "removed": list(result.removed),
            "unsafe_skipped": list(result.unsafe), "left_out": dict(result.left_out),
            "vetoed_deleted_files": vetoed, "memory_lines": result.lines, "memory_bytes": result.bytes}


# --------------------------------------------------------------------------------------------
# Lessons by hand, forget, scope


class LessonRefused(ValueError):
    """The text given for a lesson is not acceptable (the input's fault); says what form is wanted."""


def check_lesson_text(text: str) -> str:
    """The first door for a lesson written by hand: an observation, nothing addressed to an agent."""
    from commons.core.safety import ImperativeText, observation_form

    text = " ".join(text.split())
    if not text:
        raise LessonRefused("a lesson needs a text: one or two sentences saying what happened")
    if contains_injection(text):
        raise LessonRefused("the text speaks to an AI agent; a lesson reports what happened, to be read as data")
    try:
        return check_observation(text)
    except ImperativeText:
        try:
            suggestion = observation_form(text)
        except ImperativeText as error:
            raise LessonRefused(f"a lesson is an observation, never an instruction: {error}") from None
        raise LessonRefused(
            "a lesson is an observation of what happened, never an instruction; written as one it "
            f"could read: {suggestion!r}") from None


async def add_lesson(store: Store, setup: Setup, text: str, kind: LessonKind, scope: Scope | None,
                     now: float) -> tuple[Lesson, bool]:
    """A lesson the person wrote: (lesson, whether it was new). Lifts a veto on the same content."""
    text = check_lesson_text(text)
    decision = classify(text)
    lid = lesson_id(kind, text, "by-hand")
    existing = await ls.load_lessons(store, ids=[lid])
    if existing and existing[0].status != ls.VETOED:
        return existing[0].lesson, False
    lesson = Lesson(id=lid, kind=kind, text=text, scope=scope or decision.scope, topics=decision.topics,
                    gist=text, triggers=heads_in_prose(text), outcome=text, episodes=(), provenance=(), strength=1.0,
                    strength_at=now, touched=now, seen=1, created=now)
    async with store.transaction():
        await ls.lift_veto(store, lid, ls.content_key(kind, text))
        await ls.put_lessons(store, [(lesson, "active")], embed_many([ls.recall_text(lesson)]), now)
    return lesson, True


async def forget(store: Store, setup: Setup, prefix: str, now: float) -> tuple[Lesson, dict]:
    """Veto a lesson: never made again from the same content; gone from the memory folder now."""
    lid = await ls.resolve_id(store, prefix)
    (stored,) = await ls.load_lessons(store, ids=[lid])
    async with store.transaction():
        await ls.add_vetoes(store, [(lid, ls.content_key(stored.lesson.kind, stored.lesson.text),
                                     stored.lesson.text)], "forget", now)
    # The veto took the lesson out of the render state, so rendering will not remove its file
    # (it only removes files it still lists): remove it here, then render the index without it.
    folder = setup.memory_folder
    path = folder / renderer.file_name(lid)
    if path.exists():
        path.unlink()
    return stored.lesson, await render(store, setup, now)


def _trust_fields(held, rid: bytes | None) -> dict:
    state = held.state(rid) if held is not None and rid is not None else None
    return {"confirmations": state.confirmations if state else 0,
            "independent": state.independent if state else 0,
            "failures": state.failures if state else 0}


def describe(stored: ls.StoredLesson, prediction: Prediction | None, now: float, setup: Setup,
             held=None) -> dict:
    """An own lesson for `commons lessons`: its local state, and its record's standing if published.

    Its status is the local one (active, archived, vetoed), or ``revoked`` / ``superseded`` when its
    record is; ``record_id`` names the record that stands for it in the commons (its own, or the
    common lesson it duplicated: then ``represented_by`` says so).
    """
    lesson = stored.lesson
    status, rid = stored.status, stored.record_id
    me = setup.identity.author_public.hex() if setup.identity is not None else None
    extra: dict = {}
    if held is not None and rid is not None:
        state = held.state(rid)
        if rid in held.view.dead_ids:
            status = "revoked"
        elif state is not None and state.status.value == "superseded":
            status = "superseded"
        author = held.records[rid].record.author if rid in held.records else None
        if author is not None and author != held.me:
            extra["represented_by"] = rid.hex()
    return {
        "id": lesson.id, "text": lesson.text, "kind": lesson.kind.value, "scope": lesson.scope.value,
        "strength": round(strength_now(lesson, now, setup), 4), "seen": lesson.seen, "status": status,
        "created": format_time(lesson.created), "origin": stored.origin, "author": me,
        "record_id": rid.hex() if rid else None, **_trust_fields(held, rid), **extra,
        "prediction": {"situation": prediction.situation, "outcome": prediction.outcome} if prediction else None,
    }


def describe_received(signed, held) -> dict:
    """A lesson received from another node, as `commons lessons` lists it (its record is its id)."""
    record: LessonRecord = signed.record
    state = held.state(signed.id)
    return {
        "id": signed.id.hex(), "text": record.text, "kind": record.kind.value, "scope": record.scope.value,
        "strength": None, "seen": None, "status": state.status.value,
        "created": format_time(record.created * DAY), "origin": held.origin.get(signed.id, "peer"),
        "author": record.author.hex(), "record_id": signed.id.hex(), **_trust_fields(held, signed.id),
        "received": format_time(held.received[signed.id]),
        "prediction": {"situation": record.prediction.situation, "outcome": record.prediction.outcome},
    }


LIST_STATUSES = ("active", "archived", "vetoed", "candidate", "common", "superseded", "revoked", "all")


async def list_lessons(store: Store, setup: Setup, status: str, now: float) -> list[dict]:
    """Own lessons (strongest first), then lessons received from others (most confirmed first).

    ``status``: one of :data:`LIST_STATUSES`; ``active`` lists the own lessons in use.
    """
    held = None
    if setup.identity is not None and setup.config is not None:
        from commons import review

        held = await review.load(store, setup.config, setup.identity.author_public, now)
    stored = await ls.load_lessons(store)
    predictions = await ls.open_prediction_of(store, [s.lesson.id for s in stored])
    own = sorted((describe(s, predictions.get(s.lesson.id), now, setup, held) for s in stored),
                 key=lambda d: (-d["strength"], d["id"]))
    received = []
    if held is not None:
        from commons.core.trust import LessonStatus as TrustStatus

        received = sorted((describe_received(signed, held) for signed in held.received_lessons(*TrustStatus)),
                          key=lambda d: (-d["confirmations"], d["id"]))
    everything = own + received
    return everything if status == "all" else [d for d in everything if d["status"] == status]
