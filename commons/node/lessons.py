"""Lessons by hand: add, forget, list and describe (`commons lesson add`, `forget`, `lessons`)."""

from __future__ import annotations

from commons.clock import format_time
from commons.core.embed import embed_many
from commons.core.lessons import DAY, Lesson, heads_in_prose, lesson_id
from commons.core.predictions import Prediction
from commons.core.records import Lesson as LessonRecord
from commons.core.records import LessonKind, Scope
from commons.core.safety import ImperativeText, observation_form
from commons.core.safety import check_observation, contains_injection
from commons.core.scope import classify
from commons.core.trust import LessonStatus as TrustStatus
from commons.node import rendering
from commons.node.context import NodeContext
from commons.render import memory_folder as renderer
from commons.store import lessons as ls
from commons.store.db import Store


class LessonRefused(ValueError):
    """The text given for a lesson is not acceptable (the input's fault); says what form is wanted."""


def check_lesson_text(text: str) -> str:
    """The first door for a lesson written by hand: an observation, nothing addressed to an agent."""
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


async def add_lesson(store: Store, node: NodeContext, text: str, kind: LessonKind, scope: Scope | None,
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


async def forget(store: Store, node: NodeContext, prefix: str, now: float) -> tuple[Lesson, rendering.RenderSummary]:
    """Veto a lesson: never made again from the same content; gone from the memory folder now."""
    lid = await ls.resolve_id(store, prefix)
    (stored,) = await ls.load_lessons(store, ids=[lid])
    async with store.transaction():
        await ls.add_vetoes(store, [(lid, ls.content_key(stored.lesson.kind, stored.lesson.text),
                                     stored.lesson.text)], "forget", now)
    # The veto took the lesson out of the render state, so rendering will not remove its file
    # (it only removes files it still lists): remove it here, then render the index without it.
    folder = node.memory_folder
    path = folder / renderer.file_name(lid)
    if path.exists():
        path.unlink()
    return stored.lesson, await rendering.render(store, node, now)


def _trust_fields(held, rid: bytes | None) -> dict:
    state = held.state(rid) if held is not None and rid is not None else None
    return {"confirmations": state.confirmations if state else 0,
            "independent": state.independent if state else 0,
            "failures": state.failures if state else 0}


def describe(stored: ls.StoredLesson, prediction: Prediction | None, now: float, node: NodeContext,
             held=None) -> dict:
    """An own lesson for `commons lessons`: its local state, and its record's standing if published.

    Its status is the local one (active, archived, vetoed), or ``revoked`` / ``superseded`` when its
    record is; ``record_id`` names the record that stands for it in the commons (its own, or the
    common lesson it duplicated: then ``represented_by`` says so).
    """
    lesson = stored.lesson
    status, rid = stored.status, stored.record_id
    me = node.identity.author_public.hex() if node.identity is not None else None
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
        "strength": round(rendering.strength_now(lesson, now, node), 4), "seen": lesson.seen, "status": status,
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


async def list_lessons(store: Store, node: NodeContext, status: str, now: float) -> list[dict]:
    """Own lessons (strongest first), then lessons received from others (most confirmed first).

    ``status``: one of :data:`LIST_STATUSES`; ``active`` lists the own lessons in use.
    """
    held = None
    if node.trust is not None:
        held = await node.trust.held(store, now)
    stored = await ls.load_lessons(store)
    predictions = await ls.open_prediction_of(store, [s.lesson.id for s in stored])
    own = sorted((describe(s, predictions.get(s.lesson.id), now, node, held) for s in stored),
                 key=lambda d: (-d["strength"], d["id"]))
    received = []
    if held is not None:
        received = sorted((describe_received(signed, held) for signed in held.received_lessons(*TrustStatus)),
                          key=lambda d: (-d["confirmations"], d["id"]))
    everything = own + received
    return everything if status == "all" else [d for d in everything if d["status"] == status]
