"""The trio gossip driver over in-memory streams: records flow, bad peers are cut off, time is virtual."""

from __future__ import annotations

import dataclasses
import random

import nacl.signing
import trio
import trio.testing

from commons.core import records as rec
from commons.core.gossip.node import Accepted, GossipNode, GossipParams, SessionClosed
from commons.core.gossip.messages import encode_frame
from commons.net.peer_driver import GossipDriver, StreamLink
from commons.net.transport import handshake_as_client, handshake_as_server

NET = b"\x05" * 32
START = 1_800_000_000.0
DAY = rec.day_of(START)
PARAMS = GossipParams(sync_interval=5.0)


def clock() -> float:
    return START + trio.current_time()


def lesson(i: int) -> rec.SignedRecord:
    key = nacl.signing.SigningKey(b"\x07" * 32)
    return rec.sign(rec.Lesson(network=NET, author=bytes(key.verify_key), created=DAY, kind=rec.LessonKind.ERROR,
                               text=f"pip install fails on Python 3.13 without a wheel, case {i}",
                               scope=rec.Scope.SHARED, topics=("pip",),
                               prediction=rec.Prediction("running pip install", f"build error {i}")), key)


class Side:
    def __init__(self, n: int) -> None:
        self.key = bytes([n]) * 32
        self.events: list = []
        self.node = GossipNode(NET, self.key, random.Random(n), params=PARAMS, now=clock())
        self.driver = GossipDriver(self.node, clock, self.events.extend)

    def accepted(self) -> set[bytes]:
        return {r.key for e in self.events if isinstance(e, Accepted) for r in e.records}


async def test_records_flow_both_ways_over_a_memory_stream(autojump_clock):
    a, b = Side(1), Side(2)
    a.node.add_local(lesson(1), lesson(2))
    left, right = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.driver.run_ticker)
        nursery.start_soon(b.driver.run_ticker)
        nursery.start_soon(a.driver.run_connection, StreamLink(left), b.key, True)
        nursery.start_soon(b.driver.run_connection, StreamLink(right), a.key, False)
        await trio.sleep(1)
        b.driver.add_local(lesson(3))
        await trio.sleep(10)  # one anti-entropy round at most
        assert b.accepted() == {lesson(1).key, lesson(2).key}
        assert a.accepted() == {lesson(3).key}
        assert a.node.record_keys() == b.node.record_keys()
        nursery.cancel_scope.cancel()


async def test_a_late_record_arrives_by_announcement_without_waiting_for_sync(autojump_clock):
    a, b = Side(1), Side(2)
    left, right = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.driver.run_connection, StreamLink(left), b.key, True)
        nursery.start_soon(b.driver.run_connection, StreamLink(right), a.key, False)
        await trio.sleep(0.5)
        a.driver.add_local(lesson(9))  # no ticker runs: only the announce / want / records exchange
        await trio.sleep(0.5)
        assert b.accepted() == {lesson(9).key}
        nursery.cancel_scope.cancel()


async def test_an_oversize_frame_header_cuts_the_peer_off_as_misbehaved(autojump_clock):
    a = Side(1)
    left, right = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.driver.run_connection, StreamLink(left), b"\x02" * 32, False)
        await right.send_all((10**9).to_bytes(4, "big") + b"junk")
        with trio.fail_after(5):
            while not any(isinstance(e, SessionClosed) for e in a.events):
                await trio.sleep(0.1)
        closed = [e for e in a.events if isinstance(e, SessionClosed)][0]
        assert closed.misbehaved
        assert a.driver.connections == {}
        nursery.cancel_scope.cancel()


async def test_garbage_frames_lower_the_score_until_the_session_closes(autojump_clock):
    a = Side(1)
    left, right = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.driver.run_connection, StreamLink(left), b"\x02" * 32, False)
        await right.send_all(b"".join(encode_frame(b"\xc1not msgpack") for _ in range(10)))
        with trio.fail_after(5):
            while a.driver.connections:
                await trio.sleep(0.1)
        assert any(isinstance(e, SessionClosed) and e.misbehaved for e in a.events)
        nursery.cancel_scope.cancel()


async def test_a_peer_hanging_up_closes_the_session_and_frees_the_connection(autojump_clock):
    a = Side(1)
    left, right = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.driver.run_connection, StreamLink(left), b"\x02" * 32, False)
        await trio.sleep(0.1)
        await right.aclose()
        with trio.fail_after(5):
            while a.driver.connections:
                await trio.sleep(0.1)
        assert [e for e in a.events if isinstance(e, SessionClosed)][0].misbehaved is False
        nursery.cancel_scope.cancel()


async def test_records_flow_over_the_secure_link_after_a_handshake(autojump_clock):
    seeds = [b"\x11" * 32, b"\x22" * 32]
    publics = [bytes(nacl.signing.SigningKey(s).verify_key) for s in seeds]
    a, b = Side(1), Side(2)
    a.node = GossipNode(NET, publics[0], random.Random(1), params=PARAMS, now=clock())
    b.node = GossipNode(NET, publics[1], random.Random(2), params=PARAMS, now=clock())
    a.driver = GossipDriver(a.node, clock, a.events.extend)
    b.driver = GossipDriver(b.node, clock, b.events.extend)
    a.node.add_local(*[lesson(i) for i in range(50)])
    left, right = trio.testing.memory_stream_pair()
    links = {}

    async def client() -> None:
        links["a"] = await handshake_as_client(left, network_key=NET, seed=seeds[0], server_key=publics[1])

    async def server() -> None:
        links["b"] = await handshake_as_server(right, network_key=NET, seed=seeds[1])

    async with trio.open_nursery() as nursery:
        nursery.start_soon(client)
        nursery.start_soon(server)
    assert links["b"].remote_key == publics[0]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.driver.run_connection, links["a"], publics[1], True)
        nursery.start_soon(b.driver.run_connection, links["b"], publics[0], False)
        nursery.start_soon(a.driver.run_ticker)
        nursery.start_soon(b.driver.run_ticker)
        await trio.sleep(10)
        assert b.node.record_keys() == a.node.record_keys()
        assert len(b.accepted()) == 50
        nursery.cancel_scope.cancel()


async def test_the_dialer_reconciles_as_soon_as_the_session_opens(autojump_clock):
    a, b = Side(1), Side(2)
    a.node.load([lesson(i) for i in range(5)])  # held from an earlier run: never announced
    left, right = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(b.driver.run_connection, StreamLink(left), a.key, True)
        nursery.start_soon(a.driver.run_connection, StreamLink(right), b.key, False)
        await trio.sleep(0.5)  # far less than sync_interval, and no ticker runs
        assert len(b.accepted()) == 5
        nursery.cancel_scope.cancel()


async def test_a_reader_stops_while_records_wait_for_the_store_and_resumes_as_it_drains(autojump_clock):
    # b is far behind and its owner stores slowly: what a pushes must wait in the link, not
    # decoded in b's memory (one read of the link, at most 64 KiB of frames, may go past the bound).
    limit = 40
    held = [lesson(i) for i in range(600)]
    fast = dataclasses.replace(PARAMS, records_per_second=1e6, records_burst=10_000)  # a catch-up, unthrottled
    a_node = GossipNode(NET, bytes([1]) * 32, random.Random(1), params=fast, now=clock())
    a_node.load(held)
    stored: dict[bytes, rec.SignedRecord] = {}
    events: list = []
    b_node = GossipNode(NET, bytes([2]) * 32, random.Random(2), params=dataclasses.replace(fast, max_unstored=limit),
                        now=clock(), read_stored=stored.get)
    peak = 0

    def on_events(new: list) -> None:
        nonlocal peak
        events.extend(new)
        peak = max(peak, b_node.unstored)

    def arrived() -> list[rec.SignedRecord]:
        return [r for e in events if isinstance(e, Accepted) for r in e.records]

    a_driver, b_driver = GossipDriver(a_node, clock), GossipDriver(b_node, clock, on_events)
    per_read = 65536 // min(len(r.body) for r in held) + 1
    left, right = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a_driver.run_ticker)
        nursery.start_soon(b_driver.run_ticker)
        nursery.start_soon(a_driver.run_connection, StreamLink(left), b_node.transport_key, False)
        nursery.start_soon(b_driver.run_connection, StreamLink(right), a_node.transport_key, True)
        await trio.sleep(5)  # nothing is stored yet: b stopped reading
        assert limit < len(arrived()) <= limit + per_read and b_node.unstored == len(arrived())
        while len(stored) < len(held):  # the owner stores what arrived, a batch at a time
            await trio.sleep(0.1)
            fresh = [r for r in arrived() if r.key not in stored]
            stored.update((r.key, r) for r in fresh)
            b_node.stored(r.key for r in fresh)
            assert trio.current_time() < 60, f"stuck at {len(stored)} of {len(held)}"
        nursery.cancel_scope.cancel()
    assert set(stored) == {r.key for r in held} and peak <= limit + per_read
