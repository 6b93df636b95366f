"""A daemon's start-up reads the store once (issue #18: 10^6 records held, start-up included, ≤ 1 GB):
each record decoded once for trust's facts, its arrival and the key it serves, then judged once."""

from __future__ import annotations

from commons.config import Config
from commons.core.trust.evaluation import evaluate
from commons.daemon import heap
from commons.daemon.heap import RUNNING_THRESHOLDS, START_UP_THRESHOLDS, TRACE_ENV, memory_note, set_malloc_thresholds
from commons.home import Home
from commons.identity import Identity
from commons.node import trust as node_trust
from commons.node.context import NodeContext
from commons.store import records as record_store
from commons.store.db import Store
from tests.test_intake_scale import DAY, NOW, Counting, holdings, lesson


async def test_a_start_up_read_hands_every_record_over_once_and_the_next_look_judges_them_without_reading_again(
        aio, tmp_path, monkeypatch):
    monkeypatch.setattr(node_trust, "READ_CHUNK", 7)  # many chunks out of a small store
    me = Identity(bytes(range(32)), bytes(range(1, 33)), bytes(32))
    node = NodeContext.for_node(Config(), Home(tmp_path / "config", tmp_path / "data"), me)
    async with await Store.open(tmp_path / "commons.db") as store:
        early, late = holdings(60), [lesson(500 + n) for n in range(5)]
        await record_store.add_received(store, early, NOW)
        await record_store.add_received(store, late, NOW + 30, origin="import")
        seen: list = []
        await node.trust.read(store, NOW + 60, each_chunk=seen.extend)
        assert sorted(s.id for s in seen) == sorted(s.id for s in early + late)  # each once

        counter = Counting(store)
        held = await node.trust.held(store, NOW + 60)
        assert counter.rows < 10  # the watermark: nothing read again
        assert held.view == evaluate(early + late, me=me.author_public, policy=node.trust.policy, today=DAY)
        assert {rid: held.received[rid] for rid in held.received} == (
            {s.id: NOW for s in early} | {s.id: NOW + 30 for s in late})
        assert held.origin[late[0].id] == "import" and held.origin[early[0].id] == "peer"
        assert held.records[early[3].id] == early[3]  # read from the store when asked for


async def test_records_stored_after_the_start_up_read_are_taken_in_by_the_next_look(aio, tmp_path):
    me = Identity(bytes(range(32)), bytes(range(1, 33)), bytes(32))
    node = NodeContext.for_node(Config(), Home(tmp_path / "config", tmp_path / "data"), me)
    async with await Store.open(tmp_path / "commons.db") as store:
        first, more = holdings(40), [lesson(900 + n) for n in range(3)]
        await record_store.add_received(store, first, NOW)
        await node.trust.read(store, NOW)
        await record_store.add_received(store, more, NOW + 5)  # the CLI wrote meanwhile
        held = await node.trust.held(store, NOW + 5)
        assert held.view == evaluate(first + more, me=me.author_public, policy=node.trust.policy, today=DAY)
        assert held.received[more[0].id] == NOW + 5


def test_the_memory_of_a_start_up_step_is_noted_only_when_asked_for(monkeypatch):
    monkeypatch.delenv(TRACE_ENV, raising=False)
    assert memory_note("reading") is None
    monkeypatch.setenv(TRACE_ENV, "1")
    note = memory_note("reading")
    assert note.step == "reading" and 0 < note.rss_mb <= note.peak_mb and note.cpu_s > 0
    assert str(note).startswith("reading: RSS ")


def test_the_c_heap_thresholds_are_set_where_glibc_is_the_allocator():
    # Low, they hand a big transient back once freed (glibc's dynamic ones kept 41 MB of 10^6
    # records' start-up counted at the peak); elsewhere there is nothing to set.
    glibc = heap._TRIM is not None
    try:
        assert set_malloc_thresholds(START_UP_THRESHOLDS) is glibc
    finally:
        assert set_malloc_thresholds(RUNNING_THRESHOLDS) is glibc
