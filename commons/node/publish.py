"""Publishing: this node's shared lessons, signed as records, only when the person opted in.

`commons publish on|off` keeps the choice in the store's settings (off by default). With it on,
:func:`publish_pending` signs every active, own, **shared**-scope lesson that has no record yet
(and every judgement of a received lesson not yet signed, ``commons.node.review``),
after scrubbing secrets, paths, e-mail addresses and host names from its words
(``commons.core.policy.observation.scrub``). A lesson whose text still looks private after scrubbing, or no
longer reads as an observation (peers would refuse it), is not published and says why; nor is one
whose words name a dangerous step (``commons.core.policy.danger``) as what worked, whatever its scope
says; a lesson whose mined fix is dangerous (its text says only what kind of step it was) is
published as the failure alone, with no fix.

Only the keyed hashes of a lesson's episodes leave the node (``commons.core.records.hashing``), never the
episodes. Local and private lessons never do.
"""

from __future__ import annotations

import unicodedata

import trio
from dataclasses import dataclass

from commons.core import records as rec
from commons.core.records import episode_hash, evidence_hash
from commons.core.records import Lesson as LessonRecord
from commons.core.records import Fix, FixSeen, Outcome, Prediction, Scope, SignedRecord, Verification, day_of, sign
from commons.core.policy import Admitted, admit, dangerous_advice, looks_private, refusal_as_is, scrub
from commons.core.policy import ScrubbedTextRequired
from commons.core.learning import names_project
from commons.identity import Identity
from commons.node import door
from commons.node.context import NodeContext
from commons.node.projects import project_names
from commons.store import episodes as episode_store
from commons.store import lessons as ls
from commons.store import records as record_store
from commons.store import reviews as review_store
from commons.store import settings
from commons.store.db import Store


SETTING = "publish"


async def is_on(store: Store) -> bool:
    return bool(await settings.get(store, SETTING, False))


async def set_on(store: Store, on: bool, now: float) -> None:
    await settings.put(store, SETTING, bool(on), now)


@dataclass(frozen=True)
class Skipped:
    lesson_id: str
    reason: str


@dataclass(frozen=True)
class Published:
    """What one pass of publishing signed: lessons, verifications, and the lessons it kept back."""

    lessons: tuple[SignedRecord, ...]
    verifications: tuple[SignedRecord, ...]
    skipped: tuple[Skipped, ...]

    @property
    def records(self) -> tuple[SignedRecord, ...]:
        return self.lessons + self.verifications


def _fit(text: str, max_bytes: int) -> str:
    """``text`` cut at a word boundary to at most ``max_bytes`` of UTF-8 (with an ellipsis if cut)."""
    text = unicodedata.normalize("NFC", " ".join(text.split()))
    if len(text.encode()) <= max_bytes:
        return text
    cut = text.encode()[: max_bytes - 3].decode("utf-8", "ignore")
    cut = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return unicodedata.normalize("NFC", cut.rstrip() + "…")


@dataclass(frozen=True)
class Words:
    """Exactly the words a lesson's record would carry to every peer (`lessons scope … shared` shows them)."""

    lesson_id: str
    text: str
    situation: str
    outcome: str
    topics: tuple[str, ...]
    fix: Fix | None = None  # the fix it names (a version 2 record), scrubbed like the text

    def to_json(self) -> dict:
        fix = None if self.fix is None else {"tool": self.fix.tool, "failed": self.fix.failed, "step": self.fix.step}
        return {"lesson": self.lesson_id, "text": self.text, "prediction": {"situation": self.situation,
                "outcome": self.outcome}, "topics": list(self.topics), "fix": fix}


def published_words(lesson) -> Words | Skipped:
    """The words of a local lesson as its record would carry them, or why it may not leave the node."""
    # Words with no mined fix behind them (written by hand, or by a model) are read for the steps
    # they name: one that names a dangerous step as what worked stays on this node. A mined fix
    # that is dangerous (classed on the steps as run) is never named in the deterministic text, so
    # the lesson leaves as the failure alone: its record carries no fix (`published_fix`).
    unnamed = lesson.fix is None or lesson.by_model or lesson.fix.danger is not None
    danger = dangerous_advice(lesson.text) if unnamed else None
    if danger is not None:
        return Skipped(lesson.id, f"its fix is a dangerous step (rule {danger.rule}, {danger.kind.value}: "
                                  f"{danger.risk}); it stays on this node")
    verdict = admit(lesson.text)
    if not isinstance(verdict, Admitted):
        return Skipped(lesson.id, f"the door policy refuses its text: {verdict.reason}")
    text = _fit(verdict.text, rec.MAX_TEXT_BYTES)
    if looks_private(text):
        return Skipped(lesson.id, "its text still looks private after scrubbing")
    # What every peer's door would refuse: the text policy (commons.core.records.text_refusal), then
    # a dangerous step named in the words alone (commons.node.door).
    if (refused := refusal_as_is(text) or door.words_name_dangerous_fix(text)) is not None:
        return Skipped(lesson.id, f"its text, as published, would be refused: {refused}")
    situation = " / ".join(lesson.triggers) if lesson.triggers else lesson.gist
    situation = _fit(scrub(situation or lesson.kind.value), rec.MAX_PREDICTION_PART_BYTES)
    outcome = _fit(scrub(lesson.outcome or lesson.text), rec.MAX_PREDICTION_PART_BYTES)
    if looks_private(situation) or looks_private(outcome):
        return Skipped(lesson.id, "its prediction still looks private after scrubbing")
    topics = sorted({t for t in lesson.topics if 0 < len(t.encode()) <= rec.MAX_TOPIC_BYTES})[: rec.MAX_TOPICS]
    return Words(lesson.id, text, situation or "-", outcome or "-", tuple(topics), published_fix(lesson))


def published_fix(lesson) -> Fix | None:
    """The fix an own error lesson names, as its record carries it (issue #26): the step the
    sessions proved, and the failing step it fixed (the prediction's command head, or the founding
    surprise's generalised command), scrubbed like the text; None when the
    lesson names none, or a dangerous one (it never leaves the node: the record is the failure
    alone), or when what is left after scrubbing still looks private."""
    if lesson.fix is None or lesson.fix.danger is not None:
        return None
    tool, _, failed = (lesson.gist.splitlines() or [""])[0].partition(" ")
    # The command head the lesson's prediction names ("pip install"), which any package's retry
    # tries again; the founding command itself names one package.
    tool, failed = tool.strip(), (lesson.triggers[0] if lesson.triggers else failed.strip())
    step = _fit(scrub(lesson.fix.step), rec.MAX_FIX_STEP_BYTES)
    failed = _fit(scrub(failed), rec.MAX_FIX_STEP_BYTES)
    tool = _fit(scrub(tool), rec.MAX_FIX_TOOL_BYTES)
    if not (tool and failed and step) or any(looks_private(part) for part in (tool, failed, step)):
        return None
    return Fix(tool, failed, step)


def lesson_record(lesson, identity: Identity, network: bytes, now: float) -> LessonRecord | Skipped:
    """The signed-record form of a local lesson, or why it may not leave the node."""
    words = published_words(lesson)
    if isinstance(words, Skipped):
        return words
    episodes = sorted({episode_hash(identity.hash_secret, uid) for uid in lesson.episodes})[: rec.MAX_EPISODES]
    return LessonRecord(
        network=network,
        author=identity.author_public,
        created=min(day_of(lesson.created), day_of(now)),
        kind=lesson.kind,
        text=words.text,
        scope=Scope.SHARED,
        topics=words.topics,
        prediction=Prediction(words.situation, words.outcome),
        episodes=tuple(episodes),
        fix=words.fix,
    )


async def _sign_lessons(store: Store, identity: Identity, network: bytes,
                        now: float) -> tuple[list[SignedRecord], list[Skipped]]:
    """Sign and store (origin ``own``) the shared lessons not yet published; link each to its record."""
    pending = [s.lesson for s in await ls.load_lessons(store, statuses=["active"])
               if s.origin == "own" and s.record_id is None and s.lesson.scope is Scope.SHARED]
    signed: list[tuple[str, SignedRecord]] = []
    skipped: list[Skipped] = []
    # A project's own names never leave it, even in a lesson classified shared before the name
    # was known (a module added since, a manifest's package name).
    names = await trio.to_thread.run_sync(project_names, await episode_store.session_workdirs(store)) if pending else ()
    for lesson in pending:
        if names_project(" ".join((lesson.text, lesson.gist, lesson.outcome, *lesson.triggers)), names):
            skipped.append(Skipped(lesson.id, "it names one of your projects; a project's names never leave it"))
            continue
        try:
            made = lesson_record(lesson, identity, network, now)
            if isinstance(made, Skipped):
                skipped.append(made)
                continue
            signed.append((lesson.id, sign(made, identity.author_key)))
        except rec.InvalidRecord as error:  # a field our mapping could not fit: say so, publish the rest
            skipped.append(Skipped(lesson.id, f"it does not make a valid record: {error}"))
        except ScrubbedTextRequired as refused:  # the signing gate: kinds and positions, never values
            skipped.append(Skipped(lesson.id, f"the signing gate refused lesson {lesson.id[:12]}: {refused}"))
    if signed:
        await record_store.add_own(store, [s for _, s in signed], now)
        async with store.transaction():
            await ls.link_records(store, [(lid, s.id) for lid, s in signed])
    return [s for _, s in signed], skipped


# What a judgement (``review.how``) says of the fix the lesson names; the others say nothing of it
# and are signed as version 1 verifications, of the prediction alone.
_FIX_SEEN = {"fix-confirmed": FixSeen.CONFIRMED, "fix-failed": FixSeen.FAILED, "other-fix": FixSeen.OTHER}


async def sign_reviews(store: Store, node: NodeContext, now: float) -> list[SignedRecord]:
    """Sign every judgement not yet signed as a Verification and store it (origin own)."""
    pending = await review_store.reviews(store, unsigned=True)
    if not pending:
        return []
    identity, network = node.identity, node.config.network.key_bytes
    held = await node.trust.held(store, now)
    today = day_of(now)
    made: list[tuple[review_store.Review, SignedRecord]] = []
    for review in pending:
        if review.lesson in held.view.dead_ids:
            continue  # a verification of a dead lesson would count for nothing
        if review.how == "prevented":  # review.PREVENTED (review imports this module)
            # The agent followed the lesson and met nothing: what it would see were the lesson
            # stale too (the old fix still works after an upstream fix). Kept here, not signed:
            # a signed confirmation says the failure was seen (``observed`` is when), and that
            # date is what tells every node how long ago the lesson last held.
            continue
        received = day_of(review.received)
        observed = max(day_of(review.observed), received)
        record = Verification(
            network=network, author=identity.author_public, created=max(today, observed), lesson=review.lesson,
            outcome=Outcome.FAILED if review.how in ("failed", "fix-failed") else Outcome.CONFIRMED,
            evidence=evidence_hash(identity.hash_secret, review.lesson, review.evidence),
            received=received, observed=observed, naive=review.naive, fix=_FIX_SEEN.get(review.how))
        made.append((review, sign(record, identity.author_key)))
    if made:
        await record_store.add_own(store, [s for _, s in made], now)
        async with store.transaction():
            await review_store.sign_reviews(store, [(r.lesson, r.evidence, s.id) for r, s in made])
    return [s for _, s in made]


async def publish_pending(store: Store, node: NodeContext, now: float) -> Published:
    """With publishing on: the pending own shared lessons, then the pending judgements, signed.

    Does nothing unless publishing is on. The daemon announces the new records to its peers.
    """
    if not await is_on(store):
        return Published((), (), ())
    lessons, skipped = await _sign_lessons(store, node.identity, node.config.network.key_bytes, now)
    return Published(tuple(lessons), tuple(await sign_reviews(store, node, now)), tuple(skipped))
