"""Intake stays in proportion to what arrived (issue #18): a batch from a peer costs the same
store reads whether the node holds hundreds of records or thousands, and what it concludes is
what a full evaluation of everything held concludes."""

from __future__ import annotations

import nacl.signing
from blake3 import blake3

from commons.config import Config
from commons.core.records import Lesson, LessonKind, Outcome, Prediction, Scope, Verification, day_of, sign
from commons.core.trust import evaluate
from commons.home import Home
from commons.identity import Identity
from commons.node.context import NodeContext
from commons.node.revocation import after_intake
from commons.store import records as record_store
from commons.store.db import Store

NETWORK = Config().network.key_bytes
NOW = 20_000 * 86400.0
DAY = day_of(NOW)
AUTHORS = [nacl.signing.SigningKey(blake3(b"intake-author" + bytes([n])).digest()) for n in range(12)]


def lesson(n: int) -> object:
    key = AUTHORS[n % len(AUTHORS)]
    return sign(Lesson(network=NETWORK, author=bytes(key.verify_key), created=DAY, kind=LessonKind.ERROR,
                       text=f"pip install {n} fails behind the proxy.", scope=Scope.SHARED, topics=("pip",),
                       prediction=Prediction(f"installing {n}", f"error {n}")), key)


def verification(n: int, target) -> object:
    key = AUTHORS[(n * 7 + 3) % len(AUTHORS)]
    return sign(Verification(network=NETWORK, author=bytes(key.verify_key), created=DAY, lesson=target.id,
                             outcome=Outcome.CONFIRMED, evidence=blake3(b"evidence%d" % n).digest(),
                             received=DAY, observed=DAY, naive=True), key)


def holdings(size: int) -> list:
    lessons = [lesson(n) for n in range(size // 2)]
    return lessons + [verification(n, lessons[n % len(lessons)]) for n in range(size - len(lessons))]


class Counting:
    """Counts the rows a store hands back (every query goes through fetchall or fetchone)."""

    def __init__(self, store: Store) -> None:
        self.rows = 0
        fetchall, fetchone = store.fetchall, store.fetchone

        async def counted_all(sql, params=()):
            rows = await fetchall(sql, params)
            self.rows += len(rows)
            return rows

        async def counted_one(sql, params=()):
            row = await fetchone(sql, params)
            self.rows += row is not None
            return row

        store.fetchall, store.fetchone = counted_all, counted_one


async def reads_for_one_batch(tmp_path, size: int) -> tuple[int, object]:
    me = Identity(bytes(range(32)), bytes(range(1, 33)), bytes(32))
    node = NodeContext.for_node(Config(), Home(tmp_path / "config", tmp_path / "data"), me)
    async with await Store.open(tmp_path / "commons.db") as store:
        held = holdings(size)
        await record_store.add_received(store, held, NOW)
        await after_intake(store, node, NOW, held)  # the first look reads everything, once
        fresh = [lesson(10_000 + n) for n in range(10)] + [verification(10_000 + n, held[n]) for n in range(10)]
        await record_store.add_received(store, fresh, NOW + 60)
        counter = Counting(store)
        effect = await after_intake(store, node, NOW + 60, fresh)
        view = (await node.trust.held(store, NOW + 60)).view
        assert view == evaluate(held + fresh, me=me.author_public, policy=node.trust.policy, today=DAY)
        return counter.rows, effect


async def test_store_reads_per_received_batch_do_not_grow_with_the_store(aio, tmp_path):
    small, small_effect = await reads_for_one_batch(tmp_path / "small", 200)
    large, large_effect = await reads_for_one_batch(tmp_path / "large", 3000)
    assert small == large and small < 100
    assert small_effect.render is None and large_effect.render is None  # no status shown changed
