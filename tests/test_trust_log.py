"""The status log a node keeps as records arrive (node.trust.log_changes): every lesson's status is
remembered, but only the changes the morning report lists are logged with their text and reason;
a node catching up on thousands of candidates logs none of them."""

from __future__ import annotations

import dataclasses

from commons.config import Config
from commons.core.trust.evaluation import Policy
from commons.home import Home
from commons.identity import Identity
from commons.node.context import NodeContext
from commons.node.revocation import after_intake
from commons.store import records as record_store
from commons.store import reviews as review_store
from commons.store.db import Store
from tests.test_intake_scale import NOW, lesson, verification


async def test_a_lesson_arriving_as_a_candidate_is_remembered_silently_and_its_promotion_is_logged(aio, tmp_path):
    me = Identity(bytes(range(32)), bytes(range(1, 33)), bytes(32))
    node = NodeContext.for_node(Config(), Home(tmp_path / "config", tmp_path / "data"), me)
    node.trust.policy = dataclasses.replace(node.trust.policy, policy=Policy.OPEN, required=2)
    target, other = lesson(1), lesson(2)
    async with await Store.open(tmp_path / "commons.db") as store:
        await record_store.add_received(store, [target, other], NOW)
        first = await after_intake(store, node, NOW, [target, other])
        assert first.status_changes == () and first.render is None
        assert await review_store.trust_statuses(store) == {target.id: "candidate", other.id: "candidate"}
        assert await review_store.trust_changes(store, 0, NOW + 1) == []  # nothing for the report

        confirmations = [verification(n, target) for n in (4, 5)]  # two keys other than its author's
        await record_store.add_received(store, confirmations, NOW + 60)
        second = await after_intake(store, node, NOW + 60, confirmations)
        (change,) = second.status_changes
        assert (change.record_id, change.before, change.after) == (target.id, "candidate", "common")
        assert change.text == target.record.text and "2 confirmation(s)" in change.why
        assert second.render is not None  # a common lesson is shown: the folder follows at once
        assert await review_store.trust_changes(store, 0, NOW + 61) == [change]
        assert (await review_store.trust_statuses(store))[target.id] == "common"
