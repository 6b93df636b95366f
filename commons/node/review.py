"""Peer review: received lessons judged against this node's own sessions; the commons as this node sees it.

    peers ──▶ received lessons ──verify against MY later sessions──▶ signed verifications ──▶ peers
    every record held ──trust.evaluate──▶ status: own | candidate | common | superseded | revoked
                                          └──▶ the `common` layer of the memory folder

What runs where:

* **At sleep** (:func:`after_sleep`, called by ``commons.node.sleep.sleep`` before it renders):
  1. *content dedupe*: an own, shared, unpublished lesson (or a local one, by a common lesson
     naming the same fix only: it is shown once, with the day any node last met its failure)
     whose founding surprise meets the prediction of a **common** lesson, or of a **candidate**
     naming the same fix (and not judged failed here), is marked as represented by that record
     (``lessons.record_id``), so publishing never signs a duplicate; the lesson stays local
     (rendered in the own layer until the record it is represented by is common), and the node
     corroborates that record (``naive=False``) when its surprise came before receipt — or, when
     its own sessions proved the very fix the record names, confirms that fix (``fix-confirmed``);
  2. *verification*: each received lesson still alive is judged, by the core's own matcher
     (``commons.core.learning.predictions.verify``), against this node's episodes **after receipt**
     (``records.received_at``): the outcome met → confirmed; the situation arose while the lesson
     was rendered without the outcome → confirmed (prevented: never a failure); the situation arose
     unwarned without the outcome → failed; no situation → nothing. One judgement per lesson per
     night, each night starting after the last deciding episode. A node that had met the surprise
     before receipt (an earlier surprise meets the same prediction) reports ``naive=False``;
  3. *publishing*: with `commons publish on`, pending lessons (``commons.node.publish``) and pending
     judgements are signed and stored as own records, which the daemon gossips;
  4. *status*: recomputed, and changes (promoted, faded, revoked) logged for the morning report.
* **On demand**: :func:`load` evaluates every record held (``commons.core.trust.evaluation.evaluate``), cached
  by the records table's high-water mark; :func:`refresh` logs status changes after an import, a
  revocation or records from a peer (``commons.node.revocation.after_intake``).

Trust itself (what counts, what is common, what is dead) is the core's: docs/trust.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

import trio

from commons.clock import format_day
from commons.core.learning import Call, Cause, Evidence, Prediction, PredictionStatus, meeting_outcome, too_generic, verify
from commons.core.learning import command_head, runs_fix
from commons.core.learning import CorrectionEpisode, ErrorEpisode, SessionEpisode
from commons.core.learning import fix_named_in_text, fix_outcome, is_proven
from commons.core.learning import Lesson as LocalLesson
from commons.core.learning import lesson_cluster_text
from commons.core.records import Fix, Lesson, LessonKind, Outcome, Scope, SignedRecord, Verification, day_of
from commons.core.trust import LessonStatus
from commons.node import publish
from commons.node import trust
from commons.node.context import NodeContext
from commons.render.memory_folder import RenderItem
from commons.store import episodes as episode_store
from commons.store import lessons as ls
from commons.store import reviews as review_store
from commons.store.db import Store


PREVENTED = "prevented"
CORROBORATED = "corroborated"
FIX_FAILED = "fix-failed"  # failed because the fix the lesson names failed here (signed as `failed`)
FIX_CONFIRMED = "fix-confirmed"  # the fix the lesson names ran here, and the failing step then succeeded
OTHER_FIX = "other-fix"  # the failure was met here and resolved another way (that fix is our own lesson)
FAILED_HOWS = frozenset({"failed", FIX_FAILED})


# --------------------------------------------------------------------------------------------
# Matching received lessons: the core's matcher, fed a stand-in for the received lesson


def triggers_of(situation: str) -> tuple[str, ...]:
    """Command heads a published situation names ("pip install / uv add"), else none.

    Publishing joins a lesson's triggers with " / "; a situation that is a sentence or an episode
    line has no exact heads, and is matched by similarity alone.
    """
    parts = [p.strip() for p in situation.split(" / ")]
    if all(p and len(p.split()) <= 3 and not any(c in p for c in ".:,;!?'\"`()") for p in parts):
        return tuple(p.lower() for p in parts)
    return ()


def stand_in(signed: SignedRecord) -> LocalLesson:
    """A received lesson as the core's matcher reads it (text, situation, triggers, outcome)."""
    record: Lesson = signed.record
    situation = record.prediction.situation
    return LocalLesson(
        id=signed.id.hex(), kind=record.kind, text=record.text, scope=record.scope, topics=record.topics,
        gist=situation, triggers=triggers_of(situation), outcome=record.prediction.outcome, episodes=(),
        provenance=(), strength=1.0, strength_at=0.0, touched=0.0, seen=1, created=0.0)


async def met_elsewhere(store: Store, node: NodeContext, now: float) -> tuple[str, ...]:
    """The failures the error lessons received from peers predict, candidate or common, as the
    core's sleep clusters a failure (``lesson_cluster_text``): the commons met each elsewhere, so
    one meeting here is a repeat (``commons.core.learning.sleep``, pass 2). None without an identity."""
    if node.trust is None:
        return ()
    held = await node.trust.held(store, now)
    return tuple(dict.fromkeys(lesson_cluster_text(stand_in(signed))
                               for signed in held.received_lessons(LessonStatus.CANDIDATE, LessonStatus.COMMON)
                               if signed.record.kind is LessonKind.ERROR))


def _prediction(lesson: LocalLesson, made: float, expires: float) -> Prediction:
    return Prediction(id=f"review/{lesson.id}/{made!r}", lesson_id=lesson.id, situation=lesson.gist,
                         triggers=lesson.triggers, outcome=lesson.outcome, made=made, expires=expires)


def first_meetings(lessons: Sequence[LocalLesson], surprises: Sequence[ErrorEpisode | CorrectionEpisode],
                   *, cosine: float) -> dict[str, ErrorEpisode | CorrectionEpisode]:
    """For each lesson, the first of ``surprises`` that meets its predicted outcome (same polarity)."""
    if not lessons or not surprises:
        return {}
    by_uid = {s.uid: s for s in surprises}
    start = min(s.at for s in surprises) - 1.0
    verdicts = verify([_prediction(lesson, start, math.inf) for lesson in lessons],
                         {lesson.id: lesson for lesson in lessons}, list(surprises), math.inf,
                         rendered_since={}, cosine_min=cosine)
    return {v.prediction.lesson_id: by_uid[v.evidence] for v in verdicts
            if v.status is PredictionStatus.CONFIRMED and v.evidence in by_uid}


@dataclass(frozen=True)
class Judgement:
    lesson: bytes
    evidence: str
    how: str  # confirmed | prevented | failed
    observed: float


def judge_received(items: Sequence[tuple[SignedRecord, float]], episodes: Sequence, now: float, *,
                   rendered_since: Mapping[str, float], verify_cosine: float, situation_cosine: float,
                   generic_max_fraction: float, generic_min_sample: int,
                   generic_sample: int) -> list[Judgement]:
    """Each received lesson (with the time after which to judge it) against later episodes.

    Pure and CPU-bound: run in a worker thread. A prediction whose situation would arise in most
    recent sessions tests nothing and is not judged (the core's generic check).
    """
    stands = [stand_in(signed) for signed, _ in items]
    preds = [_prediction(lesson, since, math.inf) for lesson, (_, since) in zip(stands, items)]
    sessions = sorted((e for e in episodes if isinstance(e, SessionEpisode) and e.at <= now),
                      key=lambda e: (e.at, e.uid))[-generic_sample:]
    generic = too_generic(preds, [s.text() for s in sessions], cosine_min=situation_cosine,
                             max_fraction=generic_max_fraction, min_sample=generic_min_sample)
    preds = [p for p, bad in zip(preds, generic) if not bad]
    verdicts = verify(preds, {lesson.id: lesson for lesson in stands}, [e for e in episodes if e.at <= now],
                         now, rendered_since=rendered_since, cosine_min=verify_cosine,
                         situation_cosine=situation_cosine)
    hows = {PredictionStatus.CONFIRMED: "confirmed", PredictionStatus.PREVENTED: PREVENTED,
            PredictionStatus.FAILED: "failed"}
    judged = [Judgement(bytes.fromhex(v.prediction.lesson_id), v.evidence,
                        FIX_FAILED if v.cause is Cause.FIX_FAILED else hows[v.status], v.at)
              for v in verdicts if v.status in hows and v.evidence is not None]
    fixes = {signed.id: (fix, since) for signed, since in items if (fix := lesson_fix(signed.record)) is not None}
    if not fixes:
        return judged
    by_session = sessions_by_uid(episodes, now)
    by_id = {lesson.id: lesson for lesson in stands}

    def elsewhere(lesson_id: bytes, fix: Fix, found: SessionCalls) -> bool:
        """The session met, on the lesson's command, only failures other than the one it predicts."""
        head = command_head(fix.tool, fix.failed)
        lesson = by_id[lesson_id.hex()]
        mine = [e for e in found.errors if command_head(e.tool, e.failed) == head and not runs_fix(fix.step, e.failed)]
        return bool(mine) and not meeting_outcome(lesson, lesson.outcome, mine, verify_cosine)

    return [fix_judgement(j, *fixes[j.lesson], by_session, partial(elsewhere, j.lesson, fixes[j.lesson][0]))
            if j.lesson in fixes else j for j in judged]


# --------------------------------------------------------------------------------------------
# What this node's sessions show of the fix a received lesson names (issue #26)


def lesson_fix(record: Lesson) -> Fix | None:
    """The fix a received lesson names, for this node's sessions to be judged by: its ``fix``
    field, or for a version 1 lesson the fix its text names in the miner's phrase, the failing step
    being the situation's first command."""
    if record.fix is not None:
        return record.fix
    step = fix_named_in_text(record.text)
    if not step:
        return None
    heads = triggers_of(record.prediction.situation)
    return Fix("Bash", heads[0] if heads else record.prediction.situation, step)


@dataclass(frozen=True)
class SessionCalls:
    """One session's calls in order, each with whether it succeeded, and the errors it met."""

    session: SessionEpisode
    calls: tuple[Call, ...]
    errors: tuple[ErrorEpisode, ...]


def sessions_by_uid(episodes: Sequence, now: float) -> list[SessionCalls]:
    """The sessions up to ``now``, oldest first, with their calls: a call failed when an error
    episode of the session names its target (the first calls of that target, as many as failed)."""
    errors: dict[str, list[ErrorEpisode]] = {}
    for e in episodes:
        if isinstance(e, ErrorEpisode) and e.at <= now:
            errors.setdefault(e.session, []).append(e)
    out = []
    for session in sorted((e for e in episodes if isinstance(e, SessionEpisode) and e.at <= now),
                          key=lambda e: (e.at, e.uid)):
        met = sorted(errors.get(session.session, ()), key=lambda e: e.at)
        failing: dict[str, int] = {}
        for e in met:
            failing[e.target] = failing.get(e.target, 0) + 1
        calls = []
        for call in session.calls:
            left = failing.get(call.target, 0)
            if left:
                failing[call.target] = left - 1
            calls.append(Call(call.tool, call.target, ok=not left))
        out.append(SessionCalls(session, tuple(calls), tuple(met)))
    return out


def _past_transient(found: SessionCalls) -> tuple[Call, ...]:
    """The session's calls, a call that failed and then passed when run again unchanged counted as
    passing: a transient failure (a download the network dropped) says nothing of whether a fix
    works. A flaky ``npm install clsx`` in a session that never ran ``npm ci`` was judged the failure
    of every received lesson whose fix is ``npm install``, and kept them from ever being common."""
    transient = {e.target for e in found.errors if e.resolution is not None and e.resolution.evidence is Evidence.RERUN}
    return tuple(replace(c, ok=True) if not c.ok and c.target in transient else c for c in found.calls)


def fix_judgement(judgement: Judgement, fix: Fix, since: float, sessions: Sequence[SessionCalls],
                  another_pitfall: Callable[[SessionCalls], bool] = lambda found: False) -> Judgement:
    """``judgement`` of a lesson naming ``fix``, with what this node's sessions show of that fix by
    the miner's evidence rules (`fix_outcome`). Where the judgement met the failure, its session
    says: the fix ran and the step then succeeded (fix-confirmed) or failed again (fix-failed), or
    the failure was resolved another way (other-fix: never a confirmation of this fix; the miner
    makes that fix this node's own lesson). Otherwise, a session after ``since`` in which the fix
    ran and the step still failed makes it fix-failed — unless ``another_pitfall`` says the step
    failed there only otherwise than the lesson predicts (it was followed where another pitfall of
    the same command was due). Anything else leaves the judgement as it is: the prediction alone
    (a prevention stays unsigned: a stale lesson would look the same)."""
    for found in sessions:
        if found.session.at <= since:
            continue
        seen = fix_outcome(_past_transient(found), fix.tool, fix.failed, fix.step)
        met = [e for e in found.errors if e.uid == judgement.evidence]
        if met and judgement.how == "confirmed":
            if seen is not None:
                return replace(judgement, how=FIX_CONFIRMED if seen else FIX_FAILED)
            if is_proven(met[0].resolution):
                return replace(judgement, how=OTHER_FIX)
            return judgement
        if seen is False and judgement.how not in FAILED_HOWS and not another_pitfall(found):
            return Judgement(judgement.lesson, found.session.uid, FIX_FAILED,
                             max(judgement.observed, found.session.ended_at))
    return judgement


# --------------------------------------------------------------------------------------------
# The sleep step


@dataclass(frozen=True)
class ReviewResult:
    judged: tuple[review_store.Review, ...]  # new judgements of received lessons
    represented: tuple[tuple[str, bytes], ...]  # (own lesson id, common record id): not published twice
    signed: tuple[SignedRecord, ...]  # records signed tonight (lessons and verifications)
    changes: tuple[review_store.TrustChange, ...]

    def to_json(self) -> dict:
        return {
            "judged": [{"lesson": r.lesson.hex(), "how": r.how, "naive": r.naive} for r in self.judged],
            "represented": [{"lesson": lid, "by": rid.hex()} for lid, rid in self.represented],
            "signed": [{"type": s.type.value, "id": s.id.hex()} for s in self.signed],
            "status_changes": [trust.change_dict(c) for c in self.changes],
        }


def _surprises(episodes: Iterable) -> list[ErrorEpisode | CorrectionEpisode]:
    return [e for e in episodes if isinstance(e, ErrorEpisode | CorrectionEpisode)]


async def after_sleep(store: Store, node: NodeContext, now: float) -> ReviewResult:
    """Dedupe, judge received lessons, sign what publishing allows, recompute statuses.

    Without an identity (``node.trust`` is None) there is no commons to review and nothing happens.
    """
    if node.trust is None:
        return ReviewResult((), (), (), ())
    params = node.sleep
    held = await node.trust.held(store, now)
    alive = held.received_lessons(LessonStatus.CANDIDATE, LessonStatus.COMMON)
    if not alive:  # nothing received to judge, or to dedupe against: leave the episodes unread
        published = await publish.publish_pending(store, node, now)
        return ReviewResult((), (), published.records, tuple(await trust.refresh(store, node.trust, now)))
    stored = [s for s in await episode_store.load_episodes(store, include_archived=True) if s.episode.at <= now]
    every = [s.episode for s in stored]
    live = [s.episode for s in stored if s.archived_at is None]
    previous = await review_store.reviews(store)

    represented, corroborations = await _dedupe(store, held, every, previous, params.verify_cosine, now)
    judgements = await _judge(store, node, held, alive, previous, live, now)
    # A node that saw a lesson's fix fail does not confirm it by meeting the error again: its signed
    # failure stands (a later verification by the same key would replace it) until the fix works here.
    wrong_here = fix_failed(previous)
    judgements = [j for j in judgements if not (j.lesson in wrong_here and j.how == "confirmed")]
    # Naivety: did an earlier surprise of this node already meet the lesson's prediction?
    judged_ids = {j.lesson for j in judgements}
    met = await trio.to_thread.run_sync(partial(
        _met_before, [s for s in alive if s.id in judged_ids], held.received, _surprises(every),
        params.verify_cosine))
    new = [review_store.Review(j.lesson, j.evidence, j.how, j.lesson not in met, j.observed, held.received[j.lesson], now)
           for j in judgements] + corroborations
    if new or represented:
        async with store.transaction():
            await review_store.add_reviews(store, new)
            await ls.mark_represented(store, represented, now)
    published = await publish.publish_pending(store, node, now)
    changes = await trust.refresh(store, node.trust, now)
    return ReviewResult(tuple(new), tuple(represented), published.records, tuple(changes))


async def _judge(store: Store, node: NodeContext, held: trust.Held, alive: Sequence[SignedRecord],
                 previous: Sequence[review_store.Review], live: Sequence, now: float) -> list[Judgement]:
    """Each of ``alive`` judged against this node's episodes after receipt and after its last judgement."""
    params = node.sleep
    cursor: dict[bytes, float] = {}
    for review in previous:
        cursor[review.lesson] = max(cursor.get(review.lesson, 0.0), review.observed)
    items = [(s, max(held.received[s.id], cursor.get(s.id, 0.0))) for s in alive]
    rendered_since = ls.rendered_since(await ls.rendered(store))
    return await trio.to_thread.run_sync(partial(
        judge_received, items, live, now, rendered_since=rendered_since, verify_cosine=params.verify_cosine,
        situation_cosine=params.situation_cosine, generic_max_fraction=params.generic_max_fraction,
        generic_min_sample=params.generic_min_sample, generic_sample=params.generic_sample))


async def after_nap(store: Store, node: NodeContext, now: float) -> tuple[review_store.Review, ...]:
    """At a session's end: the common lessons this node renders that the session just proved wrong
    (the fix it names failed, or its failing command worked), judged failed now so that the next
    session of the day no longer reads them. Only failures: confirmations wait for the night, which
    judges, signs and publishes as usual (the failure recorded here is signed then)."""
    if node.trust is None:
        return ()
    held = await node.trust.held(store, now)
    alive = held.received_lessons(LessonStatus.COMMON)
    if not alive:
        return ()
    live = [s.episode for s in await episode_store.load_episodes(store) if s.episode.at <= now]
    previous = await review_store.reviews(store)
    failed = [j for j in await _judge(store, node, held, alive, previous, live, now) if j.how in FAILED_HOWS]
    if not failed:
        return ()
    surprises = _surprises(s.episode for s in await episode_store.load_episodes(store, include_archived=True))
    met = await trio.to_thread.run_sync(partial(
        _met_before, [s for s in alive if s.id in {j.lesson for j in failed}], held.received, surprises,
        node.sleep.verify_cosine))
    # The night's judgement of this lesson starts after this one's evidence, as after any other.
    new = [review_store.Review(j.lesson, j.evidence, j.how, j.lesson not in met, j.observed, held.received[j.lesson], now)
           for j in failed]
    async with store.transaction():
        await review_store.add_reviews(store, new)
    return tuple(new)


def _met_before(lessons: Sequence[SignedRecord], received: Mapping[bytes, float],
                surprises: Sequence[ErrorEpisode | CorrectionEpisode], cosine: float) -> set[bytes]:
    found = set()
    for signed in lessons:
        earlier = [s for s in surprises if s.at < received[signed.id]]
        if first_meetings([stand_in(signed)], earlier, cosine=cosine):
            found.add(signed.id)
    return found


def standing_for(own: LocalLesson, common: Sequence[SignedRecord], candidates: Sequence[SignedRecord],
                 failed: frozenset[bytes]) -> list[SignedRecord]:
    """The received lessons that may stand for the own lesson ``own`` (content dedupe): every common
    one, and each candidate that names the fix ``own`` would be published with and has not been
    judged failed here. A candidate saying the same would otherwise meet its duplicate on every
    node that learns the pitfall before the first is common (seed 1 of the experiment: seven
    lessons for one `git commit` pitfall, the later ones unconfirmable, since every verifier had
    met it before receiving them), and the duplicate, rendered in its author's own layer beside the
    common lesson, keeps its author's older "last seen" day. A candidate naming another fix is a
    rival, not a duplicate: the own lesson is published and the two are judged apart."""
    fix = publish.published_fix(own)
    if own.scope is not Scope.SHARED:
        # A local lesson is never published, so nothing is duplicated: a common lesson stands for
        # it only where it says the same, so the folder shows it once, with the confirmations and
        # the latest day any node met its failure (its own file knows only this node's meetings,
        # and an agent that finds that day old gives the command a plain try).
        return [s for s in common if own.kind is LessonKind.ERROR and fix is not None
                and s.id not in failed and lesson_fix(s.record) == fix]
    # A common lesson naming no fix (the failure alone, as a lesson whose only fix was dangerous is
    # published) does not stand for one that names a fix: that one says what the other lacks.
    common = [s for s in common if fix is None or lesson_fix(s.record) is not None]
    return [*common, *(s for s in candidates if s.id not in failed and lesson_fix(s.record) == fix)]


async def _dedupe(store: Store, held: trust.Held, episodes: Sequence, previous: Sequence[review_store.Review],
                  cosine: float, now: float) -> tuple[list[tuple[str, bytes]], list[review_store.Review]]:
    """Own unpublished lessons (shared, or local and naming the same fix as a common one) that a
    received lesson already stands for (:func:`standing_for`), and corroborations."""
    common = held.received_lessons(LessonStatus.COMMON)
    candidates = held.received_lessons(LessonStatus.CANDIDATE)
    if not common and not candidates:
        return [], []
    own = [s.lesson for s in await ls.load_lessons(store, statuses=["active"])
           if s.origin == "own" and s.record_id is None]
    by_uid = {e.uid: e for e in _surprises(episodes)}
    failed = failed_in(previous)
    reviewed = {r.lesson for r in previous}
    common_ids = {s.id.hex() for s in common}
    represented: list[tuple[str, bytes]] = []
    corroborations: list[review_store.Review] = []
    for lesson in own:
        stands = [stand_in(s) for s in standing_for(lesson, common, candidates, failed)]
        surprises = [by_uid[uid] for uid in lesson.episodes if uid in by_uid]
        if not stands or not surprises:
            continue
        meetings = await trio.to_thread.run_sync(partial(first_meetings, stands, surprises, cosine=cosine))
        if not meetings:
            continue
        # A common lesson first (it is rendered), then the one met first.
        hit = min(meetings, key=lambda lid: (lid not in common_ids, meetings[lid].at, lid))
        rid, episode = bytes.fromhex(hit), meetings[hit]
        represented.append((lesson.id, rid))
        received = held.received[rid]
        if episode.at < received and rid not in reviewed:  # met before receipt: a corroboration
            reviewed.add(rid)
            # Its own sessions ran the very fix the received lesson names and saw the failing step
            # then succeed (what made its own lesson name it): a test of that fix, which counts
            # whatever the node knew before (docs/peer-review.md, "Naivety and the fix"), found
            # independently. Met and fixed another way, or naming no fix: a corroboration only.
            own_fix = publish.published_fix(lesson) if lesson.fix is not None else None
            tested = own_fix is not None and lesson_fix(held.records[rid].record) == own_fix
            corroborations.append(review_store.Review(rid, episode.uid, FIX_CONFIRMED if tested else CORROBORATED,
                                                      False, received, received, now))
    return represented, corroborations


# --------------------------------------------------------------------------------------------
# The common layer


async def failed_here(store: Store) -> frozenset[bytes]:
    """Received lessons this node's own judgements say are wrong here: not rendered here, common or
    not, so the person meets the wrong advice once, not every session until enough other nodes
    have said so. A lesson whose failing command just worked (stale, or not so here) comes back when
    a later judgement confirms it (the error is back); one whose named fix failed here stays out
    until that fix is seen working here: meeting the error again proves nothing about the fix."""
    return failed_in(await review_store.reviews(store))


def failed_in(reviews: Sequence[review_store.Review]) -> frozenset[bytes]:
    """:func:`failed_here` of these reviews (in the order judged)."""
    latest: dict[bytes, str] = {}
    for r in reviews:
        if r.how != CORROBORATED:
            latest[r.lesson] = r.how
    return frozenset(lid for lid, how in latest.items() if how in FAILED_HOWS) | fix_failed(reviews)


def fix_failed(reviews: Sequence[review_store.Review]) -> frozenset[bytes]:
    """Lessons whose named fix failed here and has not been seen working here since."""
    found: set[bytes] = set()
    for r in reviews:  # in the order judged
        if r.how == FIX_FAILED:
            found.add(r.lesson)
        elif r.how in (PREVENTED, FIX_CONFIRMED):  # the fix it names worked here
            found.discard(r.lesson)
    return frozenset(found)


def common_layer(held: trust.Held, vetoed_ids: set[str], vetoed_keys: set[str],
                 failed: frozenset[bytes] = frozenset()):
    """Render items of the lessons common at this node (never candidates, never one that
    ``failed`` here), with their confirmations."""
    items = []
    seen_failing = last_seen_failing(held)
    for signed in held.received_lessons(LessonStatus.COMMON):
        record: Lesson = signed.record
        rid = signed.id.hex()
        if rid in vetoed_ids or ls.content_key(record.kind, record.text) in vetoed_keys or signed.id in failed:
            continue
        state = held.view.lessons[signed.id]
        last = format_day(seen_failing.get(signed.id, record.created))
        items.append(RenderItem(
            id=rid, text=record.text, kind=record.kind.value, scope=record.scope.value, strength=1.0,
            seen=1, prediction={"situation": record.prediction.situation, "outcome": record.prediction.outcome},
            confirmations=state.confirmations, failures=state.failures,
            detail=(f"Written on {format_day(record.created)}; confirmed by {state.confirmations} other "
                    f"agent{'s' if state.confirmations != 1 else ''}; its failure last seen on {last}.",)))
    return items


def _last_failure_day(held: trust.Held, state) -> int:
    days = [held.records[v.id].record.observed for v in state.verdicts
            if v.counted and v.outcome is Outcome.FAILED and v.id in held.records]
    return max(days, default=-1)


def last_seen_failing(held: trust.Held) -> dict[bytes, int]:
    """Lesson id → the latest day its failure is known to have been met: the day it was written,
    or the ``observed`` day of a confirmation held (a prevention is never signed, so a confirmation
    always means the failure was seen). An agent can tell from it how old the evidence is."""
    days: dict[bytes, int] = {}
    for signed in held.records.values():
        record = signed.record
        if isinstance(record, Lesson):
            days[signed.id] = max(days.get(signed.id, 0), record.created)
        elif isinstance(record, Verification) and record.outcome is Outcome.CONFIRMED:
            days[record.lesson] = max(days.get(record.lesson, 0), record.observed)
    return days


def hidden_own(held: trust.Held, own_record_ids: Mapping[str, bytes | None],
               failed: frozenset[bytes] = frozenset(), required: int | None = None,
               touched: Mapping[str, float] | None = None) -> set[str]:
    """Own lessons left out of the own layer: their record is dead or superseded, or a common
    lesson stands for them (it is rendered in the common layer, with its confirmations) and has not
    ``failed`` here (then this node's own lesson is what it knows), or — given ``required`` — other
    nodes' counted failures of its published record outnumber their confirmations by ``required``:
    the margin that takes a trusted author's lesson out of the commons takes it out of its author's
    folder too (an upstream fix the author has not met again), unless the author's own sessions used
    the lesson (``touched``: joined, confirmed, prevented) after the latest of those failures, as on
    the one machine where a quirky fix does work."""
    hidden = set()
    for lid, rid in own_record_ids.items():
        if rid is None:
            continue
        state = held.view.lessons.get(rid)
        standing = (LessonStatus.SUPERSEDED, LessonStatus.REVOKED) + (() if rid in failed else (LessonStatus.COMMON,))
        refuted = (required is not None and state is not None and state.status is LessonStatus.OWN
                   and state.recent_failures - state.recent_confirmations >= required
                   and _last_failure_day(held, state) > day_of((touched or {}).get(lid, 0.0)))
        if refuted or rid in held.view.dead_ids or (state is not None and state.status in standing):
            hidden.add(lid)
    return hidden
