"""A node far behind stores each batch at once and judges the lessons they touched once, when
arrivals pause (issue #18: a bounded backlog made batches small, and each batch re-judged the
lessons a growing web of trust had re-anchored)."""

from __future__ import annotations

from commons.config import Config
from commons.core.trust.evaluation import evaluate
from commons.home import Home
from commons.identity import Identity
from commons.node.context import NodeContext
from commons.node.revocation import after_intake, take_in_unjudged
from commons.store import records as record_store
from commons.store.db import Store
from tests.test_intake_scale import DAY, NOW, holdings, lesson, verification


def node_at(tmp_path) -> tuple[NodeContext, Identity]:
    me = Identity(bytes(range(32)), bytes(range(1, 33)), bytes(32))
    return NodeContext.for_node(Config(), Home(tmp_path / "config", tmp_path / "data"), me), me


async def test_batches_taken_in_unjudged_wait_for_one_judging_that_equals_the_full_evaluation(aio, tmp_path):
    node, me = node_at(tmp_path)
    async with await Store.open(tmp_path / "commons.db") as store:
        first = holdings(40)
        await record_store.add_received(store, first, NOW)
        await after_intake(store, node, NOW, first)
        judged = dict((await node.trust.held(store, NOW)).view.lessons)
        batches = [[lesson(700 + 10 * b + n) for n in range(5)] + [verification(700 + 10 * b + n, first[n])
                                                                    for n in range(5)] for b in range(3)]
        for at, batch in enumerate(batches, start=1):
            await record_store.add_received(store, batch, NOW + at)
            await take_in_unjudged(store, node, NOW + at, batch)
            assert node.trust.pending
        assert dict(node.trust._trust.view.lessons) == judged  # nothing judged meanwhile

        await after_intake(store, node, NOW + 10)  # arrivals paused: nothing new, what waits is judged
        assert not node.trust.pending
        everything = first + [r for batch in batches for r in batch]
        view = (await node.trust.held(store, NOW + 10)).view
        assert view == evaluate(everything, me=me.author_public, policy=node.trust.policy, today=DAY)
        assert set(view.lessons) - set(judged) == {r.id for batch in batches for r in batch[:5]}


async def test_with_nothing_waiting_an_intake_of_nothing_does_nothing(aio, tmp_path):
    node, _ = node_at(tmp_path)
    async with await Store.open(tmp_path / "commons.db") as store:
        effect = await after_intake(store, node, NOW)
        assert effect.status_changes == () and effect.render is None and not node.trust.pending
