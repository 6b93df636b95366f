"""Gossip throughput and spread: one real link, and a 1,000-node in-memory network.

    .venv/bin/python tests/benchmarks/bench_gossip.py [--records N] [--nodes N] [--json]

* **link**: two PeerSessions joined by a real Secret Handshake and box-stream (in memory, no
  sockets), frames cut by FrameDecoder. Node A holds ``--records`` signed lessons, node B none;
  B reconciles with A and fetches everything (rate limits lifted). Reported: records/s delivered
  and verified, and the split of time between verification and the rest.
* **spread**: ``--nodes`` nodes (default 1,000) on the memnet virtual clock, 50 ms links, each
  bootstrapped with 4 random peers. Once connected, one node publishes ``--spread-records``
  records; reported: virtual seconds to full coverage, hops (each takes Announce + Want + Records,
  three link latencies), gossip bytes sent per node during the spread, duplicate bodies and
  duplicate announcements per node. Then the network idles for ``--idle`` virtual seconds of
  anti-entropy to measure simulation speed in node-rounds per second (a node-round is one node's
  sync_interval: one reconciliation with a random peer plus everything else it did meanwhile).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

import nacl.signing

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from commons.core import records as rec  # noqa: E402
from commons.core.transport.boxstream import BoxStreamDecoder, BoxStreamEncoder  # noqa: E402
from commons.core.gossip.node import GossipNode, GossipParams  # noqa: E402
from commons.core.gossip.messages import FrameDecoder, encode_frame  # noqa: E402
from commons.core.gossip.memnet import Network  # noqa: E402
from commons.core.transport.handshake import ClientHandshake, ServerHandshake  # noqa: E402

NETWORK = b"\x01" * 32
NOW = 1_800_000_000.0
FAST = GossipParams(records_per_second=1e9, records_burst=10**9, max_outstanding=1024)


def make_lessons(count: int) -> list[rec.SignedRecord]:
    key = nacl.signing.SigningKey(b"\x05" * 32)
    return [
        rec.sign(
            rec.Lesson(
                network=NETWORK,
                author=bytes(key.verify_key),
                created=rec.day_of(NOW),
                kind=rec.LessonKind.ERROR,
                text=f"uv sync fails when the lock file was written by an older uv; case {i}",
                scope=rec.Scope.SHARED,
                topics=("python", "uv"),
                prediction=rec.Prediction("running uv sync", f"lock file version error {i}"),
            ),
            key,
        )
        for i in range(count)
    ]


class _End:
    """One side of a link: a session, box-stream both ways, a frame decoder."""

    def __init__(self, node: GossipNode, session, outcome) -> None:
        self.node, self.session = node, session
        self.encoder = BoxStreamEncoder(outcome.encrypt_key, outcome.encrypt_nonce)
        self.decoder = BoxStreamDecoder(outcome.decrypt_key, outcome.decrypt_nonce)
        self.frames = FrameDecoder(node.params.max_frame_bytes)

    def send(self) -> bytes:
        frames = [f for _, out in self.node.drain_outboxes() for f in out]
        return self.encoder.encode(b"".join(encode_frame(f) for f in frames)) if frames else b""

    def take(self, wire: bytes, now: float) -> None:
        for body in self.decoder.feed(wire):
            for frame in self.frames.feed(body):
                self.session.receive(frame, now)


def bench_link(count: int) -> dict[str, float]:
    lessons = make_lessons(count)
    a_seed, b_seed = b"\x0a" * 32, b"\x0b" * 32
    client = ClientHandshake(NETWORK, a_seed, nacl.signing.SigningKey(b_seed).verify_key.encode())
    server = ServerHandshake(NETWORK, b_seed)
    msg4 = server.receive_client_auth(client.receive_server_hello(server.receive_client_hello(client.start())))
    a_out, b_out = client.receive_server_accept(msg4), server.outcome

    verify_time = [0.0]

    def timed_verify(*args, **kwargs):
        t = time.perf_counter()
        try:
            return rec.verify(*args, **kwargs)
        finally:
            verify_time[0] += time.perf_counter() - t

    a = GossipNode(NETWORK, a_out.remote_public_key, random.Random(1), params=FAST, now=NOW)
    b = GossipNode(NETWORK, b_out.remote_public_key, random.Random(2), params=FAST, now=NOW, verify=timed_verify)
    a.load(lessons)
    ends = (_End(a, a.open_session(b.transport_key, True, NOW), a_out),
            _End(b, b.open_session(a.transport_key, False, NOW), b_out))
    start = time.perf_counter()
    wire_bytes = 0
    started = False
    while len(b.record_keys()) < count:
        if not started and ends[1].session.state.value == "open":
            ends[1].session.start_sync(NOW)
            started = True
        moved = 0
        for src, dst in ((ends[0], ends[1]), (ends[1], ends[0])):
            wire = src.send()
            if wire:
                dst.take(wire, NOW)
                wire_bytes += len(wire)
                moved += 1
        if not moved and started and not ends[1].session.syncing:
            break
    elapsed = time.perf_counter() - start
    assert len(b.record_keys()) == count, "link benchmark did not deliver everything"
    return {
        "link_records": count,
        "link_records_per_s": count / elapsed,
        "link_verify_share": verify_time[0] / elapsed,
        "link_wire_bytes_per_record": wire_bytes / count,
    }


def bench_spread(nodes: int, records: int, idle: float) -> dict[str, float]:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    latency = 0.05
    net = Network(nodes, seed=42, start_time=NOW, latency=latency)
    net.random_bootstrap(4)
    net.start()
    net.run(NOW + 5)
    before = [s.bytes_out for s in net.node_statistics()]
    lessons = make_lessons(records)
    publish_at = net.now
    net.publish(0, *lessons)
    t0 = time.perf_counter()

    def covered(n: Network) -> bool:
        return all(len(node.keyset) == records for node in n.nodes)

    done = net.run(publish_at + 600, stop=covered, check_every=latency)
    spread_wall = time.perf_counter() - t0
    stats = net.node_statistics()
    spread_time = net.now - publish_at
    figures = {
        "spread_nodes": nodes,
        "spread_records": records,
        "spread_complete": done,
        "spread_virtual_s": spread_time,
        "spread_hops": spread_time / (3 * latency),
        "spread_bytes_per_node": sum(s.bytes_out for s in stats) / nodes - sum(before) / nodes,
        "spread_duplicate_bodies_per_node": sum(s.duplicate_bodies for s in stats) / nodes,
        "spread_duplicate_announced_keys_per_node": sum(s.duplicate_announced_keys for s in stats) / nodes,
        "spread_sessions_per_node": sum(s.sessions for s in stats) / nodes,
        "spread_wall_s": spread_wall,
    }
    events_before = net.events
    t0 = time.perf_counter()
    net.run(net.now + idle)
    wall = time.perf_counter() - t0
    figures["idle_node_rounds_per_s"] = nodes * idle / net.params.sync_interval / wall
    figures["idle_events_per_s"] = (net.events - events_before) / wall
    figures["max_rss_mb"] = max(rss_before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Gossip link throughput and in-memory spread.")
    parser.add_argument("--records", type=int, default=5000, help="records sent over the real link")
    parser.add_argument("--nodes", type=int, default=1000, help="nodes in the spread")
    parser.add_argument("--spread-records", type=int, default=10, help="records published for the spread")
    parser.add_argument("--idle", type=float, default=300.0, help="virtual seconds of anti-entropy to time")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args(argv)

    figures = {**bench_link(args.records), **bench_spread(args.nodes, args.spread_records, args.idle)}
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"link (shs + box-stream + frames), {figures['link_records']} records:")
    print(f"  delivered and verified  {figures['link_records_per_s']:>10,.0f} records/s")
    print(f"  time in verify()        {figures['link_verify_share']:>10.0%}")
    print(f"  wire bytes per record   {figures['link_wire_bytes_per_record']:>10,.0f}")
    print(f"spread over {figures['spread_nodes']} nodes, {figures['spread_records']} records from one node:")
    print(f"  complete                {figures['spread_complete']!s:>10}")
    print(f"  virtual time            {figures['spread_virtual_s']:>10.2f} s ({figures['spread_hops']:.1f} hops)")
    print(f"  bytes sent per node     {figures['spread_bytes_per_node']:>10,.0f}")
    print(f"  duplicate bodies/node   {figures['spread_duplicate_bodies_per_node']:>10.3f}")
    print(f"  dup. announced keys/node{figures['spread_duplicate_announced_keys_per_node']:>10.1f}")
    print(f"  sessions per node       {figures['spread_sessions_per_node']:>10.1f}")
    print(f"  wall time               {figures['spread_wall_s']:>10.2f} s")
    print("simulation speed (anti-entropy idle):")
    print(f"  node-rounds per second  {figures['idle_node_rounds_per_s']:>10,.0f}")
    print(f"  events per second       {figures['idle_events_per_s']:>10,.0f}")
    print(f"  max RSS                 {figures['max_rss_mb']:>10,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
