"""Lessons by hand: add, forget, list and describe (`commons lesson add`, `forget`, `lessons`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from commons.clock import format_time
from commons.core.embedding import embed_many
from commons.core.learning import DAY, Lesson, heads_in_prose, lesson_id
from commons.core.learning import Prediction
from commons.core.records import Lesson as LessonRecord
from commons.core.records import LessonKind, Scope, SignedRecord
from commons.core.policy import ImperativeText, observation_form
from commons.core.policy import WITHHELD, Admitted, admit, admitted, one_line, shown
from commons.core.learning import classify
from commons.core.policy import scrub, scrub_json
from commons.core.trust import LessonStatus as TrustStatus
from commons.node import rendering, trust
from commons.node.context import NodeContext
from commons.render import memory_folder as renderer
from commons.store import lessons as ls
from commons.store.db import Store


class LessonRefused(ValueError):
    """The text given for a lesson is not acceptable (the input's fault); says what form is wanted."""


def check_lesson_text(text: str) -> str:
    """The first door for a lesson written by hand (`commons lesson add`, MCP `remember`): the door
    policy (``commons.core.policy.admit``: an observation, nothing addressed to an agent, visible
    characters only), scrubbed like every lesson (a token pasted into it becomes ``<github-token>``)."""
    verdict = admit(text)
    if isinstance(verdict, Admitted):
        return verdict.text
    if verdict.rule == "instruction":
        try:
            suggestion = observation_form(scrub(one_line(text)))
        except ImperativeText as error:
            raise LessonRefused(f"a lesson is an observation, never an instruction: {error}") from None
        if admitted(suggestion):
            raise LessonRefused(
                "a lesson is an observation of what happened, never an instruction; written as one it "
                f"could read: {suggestion!r}")
    raise LessonRefused(verdict.reason)


async def add_lesson(store: Store, node: NodeContext, text: str, kind: LessonKind, scope: Scope | None,
                     now: float, *, project: str = "") -> tuple[Lesson, bool]:
    """A lesson the person (or the agent, through MCP) wrote: (lesson, whether it was new). Lifts a
    veto on the same content. ``project``: the root of the project it was written in, if any."""
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
        if project:
            await ls.set_project(store, lid, project)
    return lesson, True


async def forget(store: Store, node: NodeContext, prefix: str, now: float) -> tuple[Lesson, rendering.RenderSummary]:
    """Veto a lesson: never made again from the same content; gone from the memory folder now."""
    lid = await ls.resolve_id(store, prefix)
    (stored,) = await ls.load_lessons(store, ids=[lid])
    shown_in = [Path(r.folder) / r.file for r in await ls.rendered(store) if r.lesson_id == lid]
    async with store.transaction():
        await ls.add_vetoes(store, [(lid, ls.content_key(stored.lesson.kind, stored.lesson.text),
                                     stored.lesson.text)], "forget", now)
    # The veto took the lesson out of the render state, so rendering will not remove its file
    # (it only removes files it still lists): remove it here, then render the index without it.
    for path in {*shown_in, node.memory_folder / renderer.file_name(lid)}:
        if path.exists():
            path.unlink()
    return stored.lesson, await rendering.render(store, node, now)


@dataclass(frozen=True)
class LessonView:
    """A lesson as `commons lessons` (and the MCP server) lists it: own or received."""

    id: str
    text: str
    kind: str
    scope: str
    strength: float | None  # now, after decay; None for a received lesson (it has no local strength)
    seen: int | None
    status: str
    created: str
    origin: str  # own | peer | import
    author: str | None
    record_id: str | None
    confirmations: int
    independent: int
    failures: int
    prediction: dict | None  # {situation, outcome}
    represented_by: str | None = None  # an own lesson a common record stands for
    received: str | None = None  # when a received lesson arrived
    fix: dict | None = None  # an own error lesson's fix and its evidence (LessonFix.to_json), None: none seen
    fix_refuted: tuple[str, ...] = ()  # steps its sessions took before the same failure came again

    @property
    def withheld(self) -> bool:
        """The door policy refused its text: ``text`` says so instead (commons.core.policy.shown)."""
        return self.text.startswith(WITHHELD.split("{")[0])

    def to_json(self) -> dict:
        data = {"id": self.id, "text": self.text, "kind": self.kind, "scope": self.scope, "strength": self.strength,
                "seen": self.seen, "status": self.status, "created": self.created, "origin": self.origin,
                "author": self.author, "record_id": self.record_id, "confirmations": self.confirmations,
                "independent": self.independent, "failures": self.failures}
        if self.represented_by is not None:
            data["represented_by"] = self.represented_by
        if self.received is not None:
            data["received"] = self.received
        data["prediction"] = self.prediction
        if self.kind == LessonKind.ERROR.value and self.origin != "peer" and self.strength is not None:
            # `null` when the sessions proved no fix; the refuted steps apart, never inside `fix`.
            data["fix"] = self.fix
            data["fix_refuted"] = list(self.fix_refuted)
        return data


def _counts(held: trust.Held | None, rid: bytes | None) -> tuple[int, int, int]:
    """(confirmations, independent, failures) of a record, zeros when it has no standing here."""
    state = held.state(rid) if held is not None and rid is not None else None
    return (state.confirmations, state.independent, state.failures) if state else (0, 0, 0)


def describe(stored: ls.StoredLesson, prediction: Prediction | None, now: float, node: NodeContext,
             held: trust.Held | None = None) -> LessonView:
    """An own lesson for `commons lessons`: its local state, and its record's standing if published.

    Its status is the local one (active, archived, vetoed), or ``revoked`` / ``superseded`` when its
    record is; ``record_id`` names the record that stands for it in the commons (its own, or the
    common lesson it duplicated: then ``represented_by`` says so).
    """
    lesson = stored.lesson
    status, rid = stored.status, stored.record_id
    me = node.identity.author_public.hex() if node.identity is not None else None
    represented_by = None
    if held is not None and rid is not None:
        state = held.state(rid)
        if rid in held.view.dead_ids:
            status = "revoked"
        elif state is not None and state.status.value == "superseded":
            status = "superseded"
        author = held.records[rid].record.author if rid in held.records else None
        if author is not None and author != held.me:
            represented_by = rid.hex()
    return LessonView(
        lesson.id, shown(lesson.text), lesson.kind.value, lesson.scope.value,
        round(rendering.strength_now(lesson, now, node), 4), lesson.seen, status, format_time(lesson.created),
        stored.origin, me, rid.hex() if rid else None, *_counts(held, rid),
        scrub_json({"situation": prediction.situation, "outcome": prediction.outcome}) if prediction else None,
        represented_by=represented_by, fix=scrub_json(lesson.fix.to_json()) if lesson.fix is not None else None,
        fix_refuted=tuple(scrub(s) for s in lesson.fix_refuted))


def describe_received(signed: SignedRecord, held: trust.Held) -> LessonView:
    """A lesson received from another node, as `commons lessons` lists it (its record is its id)."""
    record: LessonRecord = signed.record
    state = held.state(signed.id)
    return LessonView(
        signed.id.hex(), shown(record.text), record.kind.value, record.scope.value, None, None, state.status.value,
        format_time(record.created * DAY), held.origin.get(signed.id, "peer"), record.author.hex(),
        signed.id.hex(), *_counts(held, signed.id),
        scrub_json({"situation": record.prediction.situation, "outcome": record.prediction.outcome}),
        received=format_time(held.received[signed.id]))


LIST_STATUSES = ("active", "archived", "vetoed", "candidate", "common", "superseded", "revoked", "all")


async def list_lessons(store: Store, node: NodeContext, status: str, now: float) -> list[LessonView]:
    """Own lessons (strongest first), then lessons received from others (most confirmed first).

    ``status``: one of :data:`LIST_STATUSES`; ``active`` lists the own lessons in use.
    """
    held = None
    if node.trust is not None:
        held = await node.trust.held(store, now)
    stored = await ls.load_lessons(store)
    predictions = await ls.open_prediction_of(store, [s.lesson.id for s in stored])
    own = sorted((describe(s, predictions.get(s.lesson.id), now, node, held) for s in stored),
                 key=lambda v: (-v.strength, v.id))
    received = []
    if held is not None:
        received = sorted((describe_received(signed, held) for signed in held.received_lessons(*TrustStatus)),
                          key=lambda v: (-v.confirmations, v.id))
    everything = own + received
    return everything if status == "all" else [v for v in everything if v.status == status]
