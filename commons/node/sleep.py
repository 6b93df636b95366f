"""The night: one sleep of a node over its store (design paper §4).

    episodes ──sleep──▶ lessons ──render──▶ memory folder ──(sessions)──▶ episodes …
                          └── recall (``commons.node.recall``: CLI, MCP) touches what it returns

The passes themselves are the pure core (``commons.core.learning.sleep``); this module loads their
inputs from the store, runs the CPU-bound part in a worker thread (``trio.to_thread``) so the
trio loop stays responsive, and applies the resulting events in chunks of a few thousand rows,
each its own transaction, so that a long night never holds the database for long.

The first night of a home that already holds months of sessions replays them night by night in
their own time before tonight's (``commons.core.learning.history``), so that history is learned
from instead of decaying away at once.

Vetoes are enforced here, around the core: a vetoed lesson is handed to the core as archived (its
episodes stay absorbed, nothing joins it), and a lesson the core makes whose id or normalised text
was vetoed is stored as vetoed at once, with none of its events applied.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import trio

from commons.clock import format_time
from commons.core.learning import ArchiveReason, EpisodeArchived, Event, LessonArchived, LessonLearned, LessonStrengthened, LessonWeakened, PredictionConfirmed, PredictionExpired, PredictionFailed, PredictionMade, PredictionPrevented, SleepState, run_night
from commons.core.embedding import embed_many
from commons.core.learning import DAY, SessionEpisode, carry_over, history_nights, sleep_through
from commons.core.learning import Lesson, LessonStatus
from commons.core.learning import Prediction, RenderedWhere
from commons.node import privacy, rendering
from commons.node.projects import project_names
from commons.node.rendering import RenderSummary
from commons.node import review
from commons.node.context import NodeContext
from commons.node.report import write_morning_report
from commons.store import episodes as episode_store
from commons.store import lessons as ls
from commons.store.db import Store


Progress = Callable[[int, int, float], None]  # (nights replayed, nights in all, the night's time)


def _event_record(event: Event) -> dict | None:
    """An event as the report reads it (episode archivals are only counted)."""
    if isinstance(event, LessonLearned):
        lesson = event.lesson
        return {"type": "learned", "lesson": lesson.id, "text": lesson.text, "kind": lesson.kind.value,
                "scope": lesson.scope.value}
    if isinstance(event, LessonStrengthened | LessonWeakened):
        return {"type": "strengthened" if isinstance(event, LessonStrengthened) else "weakened",
                "lesson": event.lesson.id, "text": event.lesson.text, "by": event.by,
                "reason": event.reason.value, "evidence": list(event.evidence)}
    if isinstance(event, LessonArchived):
        return {"type": "archived", "lesson": event.lesson.id, "text": event.lesson.text,
                "strength": round(event.strength, 4), "reason": event.reason.value}
    if isinstance(event, PredictionMade):
        p = event.prediction
        return {"type": "prediction_made", "prediction": p.id, "lesson": p.lesson_id, "says": p.describe()}
    verdicts = {PredictionConfirmed: "confirmed", PredictionPrevented: "prevented",
                PredictionFailed: "failed", PredictionExpired: "expired"}
    if type(event) in verdicts:
        p = event.prediction
        return {"type": verdicts[type(event)], "prediction": p.id, "lesson": p.lesson_id,
                "says": p.describe(), "evidence": getattr(event, "evidence", None), "at": event.at}
    return None


_COUNT_NAMES = {
    LessonLearned: "lessons_learned", LessonStrengthened: "lessons_strengthened",
    LessonWeakened: "lessons_weakened", LessonArchived: "lessons_archived",
    EpisodeArchived: "episodes_archived", PredictionMade: "predictions_made",
    PredictionConfirmed: "predictions_confirmed", PredictionPrevented: "predictions_prevented",
    PredictionFailed: "predictions_failed", PredictionExpired: "predictions_expired",
}


def _lesson_of(event: Event) -> str | None:
    if hasattr(event, "lesson"):
        return event.lesson.id
    if hasattr(event, "prediction"):
        return event.prediction.lesson_id
    return None


@dataclass(frozen=True)
class History:
    """The nights a first sleep replayed before tonight's, in the sessions' own time."""

    nights: int
    first: float  # the first replayed night
    last: float  # the last one; from then to tonight did not count toward decay
    until: float  # tonight

    def to_json(self) -> dict:
        return {"nights": self.nights, "from": format_time(self.first), "to": format_time(self.last),
                "days_not_counted": round((self.until - self.last) / DAY, 1)}


@dataclass(frozen=True)
class Night:
    """What one sleep decided, ready to be written."""

    events: tuple[Event, ...]  # without those of suppressed lessons
    lessons: tuple[tuple[Lesson, str], ...]  # changed lessons with their store status
    vectors: np.ndarray  # their recall embeddings
    suppressed: tuple[Lesson, ...]  # made again from vetoed content: stored as vetoed, nothing else
    history: History | None = None  # the nights replayed before this one, if any
    touches: tuple[tuple[str, float], ...] = ()  # episode uid → the time its decay now counts from


def _night(state: SleepState, episodes: Sequence, now: float, node: NodeContext, *,
           rendered_in: dict[str, dict[str, float]], touched: dict[str, float], vetoed_ids: set[str],
           vetoed_keys: set[str], nights: Sequence[float] = (), progress: Progress | None = None,
           elsewhere: Sequence[str] = ()) -> Night:
    """The CPU-bound part (run in a worker thread): the nights of ``nights`` (a first sleep's
    history) then tonight's, through the core's sleep, then vetoes applied.

    ``rendered_in``: lesson id → {project: since}. A prediction counts as prevented only in a
    session whose own project's memory had the lesson (the target says which project a session's
    working directory is: ``NodeContext.target.project_of``). ``elsewhere``: the failures lessons
    received from peers predict (``review.met_elsewhere``), for tonight's pass over new episodes."""
    rendered_since = RenderedWhere(rendered_in, {e.uid: node.target.project_of(e.project) for e in episodes
                                                 if isinstance(e, SessionEpisode) and e.project})
    projects = project_names(e.project for e in episodes if isinstance(e, SessionEpisode) and e.project)
    history_events: tuple[Event, ...] = ()
    moved: dict[str, float] = {}
    history = None
    if nights:
        replayed = sleep_through(state, episodes, nights, node.sleep, hash_episode=node.hash_episode,
                                 write_text=node.write_text, episode_touched=touched, project_names=projects,
                                 progress=progress)
        state, moved = carry_over(replayed.state, episodes, touched, nights[-1], now, node.sleep)
        history_events, touched = replayed.events, {**touched, **moved}
        history = History(len(nights), nights[0], nights[-1], now)
    result = run_night(state, episodes, now, node.sleep, hash_episode=node.hash_episode,
                        rendered_since=rendered_since, write_text=node.write_text,
                        episode_touched=touched, project_names=projects, elsewhere=elsewhere)
    final = {lesson.id: lesson for lesson in result.state.lessons}
    every = history_events + result.events
    suppressed = {e.lesson.id for e in every if isinstance(e, LessonLearned)
                  and (e.lesson.id in vetoed_ids or ls.content_key(e.lesson.kind, e.lesson.text) in vetoed_keys)}
    events = tuple(e for e in every if _lesson_of(e) not in suppressed)
    changed = list(dict.fromkeys(e.lesson.id for e in events if hasattr(e, "lesson")))
    # A first sleep moved every lesson of its history past the time no one worked in: all are written.
    changed += [lid for lid in final if history is not None and lid not in suppressed and lid not in changed]
    items = tuple((final[lid], final[lid].status.value) for lid in changed)
    vectors = embed_many([ls.recall_text(lesson) for lesson, _ in items]) if items else np.zeros((0, 256), np.float32)
    return Night(events, items, vectors, tuple(final[lid] for lid in suppressed), history, tuple(moved.items()))


@dataclass(frozen=True)
class NightReport:
    """What one night did: its counts, the lessons it learned, peer review, the render, the report."""

    at: float
    episodes: int  # episodes the night read
    counts: tuple[tuple[str, int], ...]  # every event kind, in a fixed order, with zeros
    learned: tuple[dict, ...]  # the "learned" events as the morning report records them
    review: review.ReviewResult
    render: RenderSummary
    report: Path  # the morning report file
    seconds: tuple[tuple[str, float], ...]  # wall time of each phase
    privacy: privacy.ScrubResult | None = None  # the once-per-upgrade scrub of the home, if it ran
    archived: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()  # "lessons"/"episodes" → (reason, count)
    history: History | None = None  # a first sleep's replay of the sessions before it
    still_active: int = 0  # of the lessons learned, those still active after the night

    @property
    def count(self) -> dict[str, int]:
        return dict(self.counts)

    def to_json(self) -> dict:
        return {"at": format_time(self.at), "episodes": self.episodes, "counts": dict(self.counts),
                "archived": {what: dict(reasons) for what, reasons in self.archived},
                "history": self.history.to_json() if self.history is not None else None,
                "learned": list(self.learned), "learned_still_active": self.still_active,
                "review": self.review.to_json(), "render": self.render.to_json(),
                "report": str(self.report), "seconds": dict(self.seconds),
                **({"privacy_scrubbed": self.privacy.to_json()} if self.privacy is not None else {})}


def _archived_by_reason(events: Sequence[Event]) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
    """What the night archived, counted by why: lessons decayed or contradicted, episodes decayed."""
    lessons = Counter(e.reason.value for e in events if isinstance(e, LessonArchived))
    episodes = Counter(ArchiveReason.DECAYED.value for e in events if isinstance(e, EpisodeArchived))
    return (("lessons", tuple(sorted(lessons.items()))), ("episodes", tuple(sorted(episodes.items()))))


async def sleep(store: Store, node: NodeContext, now: float, *, progress: Progress | None = None) -> NightReport:
    """One night over the store: vetoes from deleted files, the four passes, render, report. The
    first night of a home replays the days of sessions it already holds first (see the module
    docstring); ``progress`` is told each replayed night, from a worker thread."""
    started = time.perf_counter()
    vetoed_now = await rendering.detect_deleted(store, node, now)
    # A home written before every door scrubbed is scrubbed once, before the night reads it.
    scrubbed = await privacy.scrub_once(store, node, now)
    stored = await ls.load_lessons(store)
    state = SleepState(lessons=tuple(s.lesson for s in stored),
                            predictions=tuple(await ls.open_predictions(store)))
    # Episodes stamped after the night's time have not happened yet as far as this night knows
    # (a scripted --at night over transcripts ingested ahead of it).
    loaded = [s for s in await episode_store.load_episodes(store) if s.episode.at <= now]
    keys: dict[str, list[str]] = {}
    for s in loaded:
        keys.setdefault(s.episode.uid, []).append(s.key)
    rendered_in: dict[str, dict[str, float]] = {}
    for row in await ls.rendered(store):
        places = rendered_in.setdefault(row.lesson_id, {})
        places[row.project] = min(places.get(row.project, row.since), row.since)
    vetoed_ids, vetoed_keys = await ls.veto_keys(store)
    touched = await ls.episode_touches(store)
    first = await ls.last_sleep_at(store) is None
    nights = history_nights([s.episode.at for s in loaded], now) if first else []
    elsewhere = await review.met_elsewhere(store, node, now)
    loaded_at = time.perf_counter()
    night = await trio.to_thread.run_sync(partial(
        _night, state, [s.episode for s in loaded], now, node, rendered_in=rendered_in,
        touched=touched, vetoed_ids=vetoed_ids, vetoed_keys=vetoed_keys, nights=nights, progress=progress,
        elsewhere=elsewhere))
    slept_at = time.perf_counter()
    await _apply(store, night, keys, now)
    counts = Counter(_COUNT_NAMES[type(e)] for e in night.events)
    counts["lessons_suppressed"] = len(night.suppressed)
    counts["vetoes_from_deleted_files"] = len(vetoed_now)
    records = [r for r in map(_event_record, night.events) if r is not None]
    await ls.add_sleep_run(store, now, dict(counts), records)
    reviewed = await review.after_sleep(store, node, now)
    applied_at = time.perf_counter()
    rendered = await rendering.render(store, node, now)
    report_path = await write_morning_report(store, node.reports_dir, now)
    final = {lesson.id: status for lesson, status in night.lessons}
    # Each lesson learned with its status after the night: a first sleep's history may have
    # learned one and seen it decay away since.
    learned = tuple({**r, "status": final.get(r["lesson"], LessonStatus.ACTIVE.value)}
                    for r in records if r["type"] == "learned")
    return NightReport(
        at=now, episodes=len(loaded), archived=_archived_by_reason(night.events), history=night.history,
        still_active=sum(r["status"] == LessonStatus.ACTIVE.value for r in learned),
        counts=tuple((name, counts.get(name, 0)) for name in [*_COUNT_NAMES.values(), "lessons_suppressed",
                                                                "vetoes_from_deleted_files"]),
        learned=learned, review=reviewed, render=rendered,
        report=report_path, privacy=scrubbed,
        seconds=(("load", round(loaded_at - started, 3)), ("passes", round(slept_at - loaded_at, 3)),
                 ("apply", round(applied_at - slept_at, 3)),
                 ("render_and_report", round(time.perf_counter() - applied_at, 3))))


async def _apply(store: Store, night: Night, keys: dict[str, list[str]], now: float) -> None:
    """Write a night's results, a chunk per transaction; lessons and verdicts first (see below)."""
    verdicts = []
    made: list[Prediction] = []
    archived_keys: list[str] = []
    for e in night.events:
        if isinstance(e, PredictionMade):
            made.append(e.prediction)
        elif isinstance(e, PredictionConfirmed | PredictionPrevented | PredictionFailed):
            status = {PredictionConfirmed: "confirmed", PredictionPrevented: "prevented",
                      PredictionFailed: "failed"}[type(e)]
            verdicts.append((e.prediction.id, status, e.evidence, e.at))
        elif isinstance(e, PredictionExpired):
            verdicts.append((e.prediction.id, "expired", None, e.at))
        elif isinstance(e, EpisodeArchived):
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
                # Added before deciding: a replayed history makes predictions and decides them.
                await ls.add_predictions(store, made)
                await ls.decide_predictions(store, verdicts)
                first = False
    for start in range(0, len(archived_keys), step):
        async with store.transaction():
            await episode_store.mark_archived(store, archived_keys[start:start + step], now)
    touches = [(key, uid, at) for uid, at in night.touches for key in keys.get(uid, [])]
    for start in range(0, len(touches), step):
        async with store.transaction():
            await ls.touch_episodes_at(store, touches[start:start + step])

