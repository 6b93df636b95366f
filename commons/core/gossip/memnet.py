"""Gossip nodes joined in memory, on a virtual clock: for tests, benchmarks and simulations.

* :class:`PeerPair` -- two :class:`GossipNode` joined by one in-memory link, stepped until quiet
  (the ``ConnectionPair`` of h11's tests).
* :class:`Network` -- N nodes, a virtual clock and a discrete-event loop: a heap of
  ``(time, seq, kind, a, b)`` tuples, nothing else per event. Links have a latency (a number, or a
  function of the two node indices) and optional loss; a lost frame is modelled as a stream
  transport would experience it -- retransmitted after ``retransmit`` seconds, frames behind it
  waiting (order is kept). Nodes dial the peers that ``peers_to_dial`` names (from bootstrap
  lists and peer exchange); a dial to a node that is not running fails and backs off. Everything
  is deterministic for a given seed.

No handshake or box-stream runs here: frames go from one session's outbox straight into the
other's ``receive`` (the benchmark measures those layers separately). Records are verified by a
:class:`SharedVerifier`, which remembers each (body, signature) verdict for all nodes at once, as
the result of verifying the same bytes cannot differ between nodes.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from blake3 import blake3

from commons.core import records as rec
from commons.core.gossip.node import Event, GossipNode, GossipParams, GossipStatistics, PeerSession

_DELIVER, _TICK, _CONNECT, HANGUP, _CHECK = range(5)  # HANGUP: a subclass cuts a link


class SharedVerifier:
    """``records.verify`` with one verdict per (body, signature, day) shared by every node."""

    def __init__(self) -> None:
        self._cache: dict[tuple[bytes, bytes, int], Any] = {}
        self.verified = 0

    def __call__(self, body: bytes, signature: bytes, *, network: bytes, today: int, claimed_id=None, body_id=None):
        key = (body, signature, today)
        verdict = self._cache.get(key)
        if verdict is None:
            self.verified += 1
            try:
                verdict = rec.verify(body, signature, network=network, today=today)
            except rec.InvalidRecord as error:
                verdict = error
            self._cache[key] = verdict
        if isinstance(verdict, rec.InvalidRecord):
            raise verdict
        if verdict.record.network != network:
            raise rec.InvalidRecord(rec.Problem.WRONG_NETWORK, "the record belongs to another network")
        return verdict


def transport_key_of(index: int, seed: int = 0) -> bytes:
    """A stable stand-in transport key for node ``index`` (no handshake runs in memory)."""
    return blake3(f"memnet/{seed}/{index}".encode()).digest()


def _salts(seed: int, index: int) -> Callable[[], int]:
    """Node ``index``'s reconcile v4 salts, from a generator seeded for it alone."""
    rng = random.Random(f"salts/{seed}/{index}")
    return lambda: rng.getrandbits(64)


class PeerPair:
    """Two nodes joined by one link; ``run(now)`` moves frames both ways until neither has any.

    A node may be in several pairs (a chain a - b - c): each session keeps its other end in
    ``context``, so frames for another pair's link are delivered there too, never dropped.
    """

    def __init__(self, a: GossipNode, b: GossipNode, now: float = 0.0) -> None:
        self.a, self.b = a, b
        self.a_session = a.open_session(b.transport_key, True, now)
        self.b_session = b.open_session(a.transport_key, False, now)
        self.a_session.context, self.b_session.context = self.b_session, self.a_session
        self.frames = 0

    def step(self, now: float) -> int:
        """Deliver what each side has queued once; returns the frames moved."""
        moved = 0
        for src in (self.a, self.b):
            for session, frames in src.drain_outboxes():
                other = session.context
                if not isinstance(other, PeerSession):
                    continue
                for frame in frames:
                    other.receive(frame, now)
                    moved += 1
        self.frames += moved
        return moved

    def run(self, now: float, max_steps: int = 100_000) -> int:
        total = 0
        for _ in range(max_steps):
            moved = self.step(now)
            if not moved:
                return total
            total += moved
        raise RuntimeError(f"no quiet after {max_steps} steps")

    def tick(self, now: float) -> None:
        self.a.tick(now)
        self.b.tick(now)


@dataclass(frozen=True)
class NetworkStatistics:
    nodes: int
    now: float
    events: int
    frames: int
    connections: int


class Network:
    """N gossip nodes on a virtual clock. Nodes run once started (``start``); see the module doc."""

    def __init__(
        self,
        size: int,
        *,
        seed: int = 0,
        params: GossipParams | None = None,
        network: bytes = b"\x01" * 32,
        latency: float | Callable[[int, int], float] = 0.05,
        loss: float = 0.0,
        retransmit: float = 1.0,
        start_time: float = 1_800_000_000.0,
        node_factory: Callable[..., GossipNode] = GossipNode,
        admit: Callable[[int], Callable[[rec.SignedRecord], str | None] | None] | None = None,
        observer: Callable[[int, Event, float], None] | None = None,
    ) -> None:
        self.now = start_time
        self.params = params or GossipParams()
        self.network = network
        self.seed = seed
        self._rng = random.Random(seed)
        self._latency = latency
        self._loss = loss
        self._retransmit = retransmit
        self.verifier = SharedVerifier()
        self._observer = observer
        self.keys = [transport_key_of(i, seed) for i in range(size)]
        self._index = {k: i for i, k in enumerate(self.keys)}
        self.nodes: list[GossipNode] = [
            node_factory(
                network,
                self.keys[i],
                random.Random(seed * 1_000_003 + i),
                params=self.params,
                listen=f"mem:{i}",
                admit=admit(i) if admit else None,
                verify=self.verifier,
                now=start_time,
                # Reconcile v4 salts from a generator of their own: the nodes' draws stay as they were.
                salts=_salts(seed, i),
            )
            for i in range(size)
        ]
        self.running = [False] * size
        self._tick_at = [math.inf] * size
        self._queue: list[tuple] = []
        self._seq = 0
        self.events = 0
        self.frames = 0
        self.connections = 0

    # -- building ---------------------------------------------------------------------------------

    def bootstrap(self, index: int, peers: Iterable[int]) -> None:
        for j in peers:
            if j != index:
                self.nodes[index].add_peer(self.keys[j], f"mem:{j}", "bootstrap")

    def random_bootstrap(self, degree: int, among: Iterable[int] | None = None) -> None:
        """Give every node (of ``among``) ``degree`` random bootstrap peers; a ring keeps it connected."""
        ids = list(range(len(self.nodes))) if among is None else list(among)
        for pos, i in enumerate(ids):
            others = self._rng.sample(ids, min(degree, len(ids) - 1) + 1)
            self.bootstrap(i, [ids[(pos + 1) % len(ids)], *[j for j in others if j != i][: degree - 1]])

    def start(self, indices: Iterable[int] | None = None) -> None:
        """Let nodes run: they tick, dial and accept connections from now on."""
        for i in range(len(self.nodes)) if indices is None else indices:
            self.running[i] = True
            self._dial(i)
            self._reschedule(i)

    def connect(self, i: int, j: int, delay: float = 0.0) -> None:
        """Dial a link from node i to node j (after ``delay``)."""
        self._push(self.now + delay, _CONNECT, i, j)

    def publish(self, index: int, *signed: rec.SignedRecord) -> int:
        """Node ``index`` makes these records (they leave together); returns how many were new."""
        added = self.nodes[index].add_local(*signed)
        self._flush(index)
        self._reschedule(index)
        return added

    # -- running ----------------------------------------------------------------------------------

    def run(self, until: float, stop: Callable[[Network], bool] | None = None, check_every: float = 1.0) -> bool:
        """Process events up to virtual time ``until``; True if ``stop`` held at a check (or, without
        ``stop``, if the queue ran dry)."""
        if stop is not None:
            self._push(self.now, _CHECK, None, None)
        queue = self._queue
        while queue:
            t, _, kind, a, b = queue[0]
            if t > until:
                break
            heapq.heappop(queue)
            self.now = t
            self.events += 1
            if kind == _DELIVER:
                session: PeerSession = a
                if not session.closed:
                    self.frames += 1
                    session.receive(b, t)
                    self._after(session.node)
            elif kind == _TICK:
                if self._tick_at[a] == t:
                    self._tick_at[a] = math.inf
                    self.nodes[a].tick(t)
                    self._dial(a)
                    self._after(self.nodes[a], a)
            elif kind == _CONNECT:
                self._connected(a, b)
            elif kind == HANGUP:
                if not a.closed:
                    a.connection_lost(t)
                    self._after(a.node)
            elif stop(self):
                self._queue = [e for e in queue if e[2] != _CHECK]
                heapq.heapify(self._queue)
                return True
            else:
                self._push(t + check_every, _CHECK, None, None)
        self.now = max(self.now, until)
        self._queue = [e for e in self._queue if e[2] != _CHECK]
        heapq.heapify(self._queue)
        return stop is None and not self._queue

    def quiet(self) -> bool:
        """No frame is in flight (use as ``run(until, stop=Network.quiet)``)."""
        return not any(event[2] == _DELIVER for event in self._queue)

    def converged(self, indices: Iterable[int] | None = None) -> bool:
        """Every node (of ``indices``) holds the same record keys."""
        nodes = self.nodes if indices is None else [self.nodes[i] for i in indices]
        first = nodes[0].keyset
        return all(len(n.keyset) == len(first) and list(n.keyset) == list(first) for n in nodes[1:])

    def statistics(self) -> NetworkStatistics:
        return NetworkStatistics(len(self.nodes), self.now, self.events, self.frames, self.connections)

    def node_statistics(self) -> list[GossipStatistics]:
        return [n.statistics() for n in self.nodes]

    # -- inside -----------------------------------------------------------------------------------

    def _push(self, t: float, kind: int, a: Any, b: Any) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (t, self._seq, kind, a, b))

    def _link_latency(self, i: int, j: int) -> float:
        return self._latency(i, j) if callable(self._latency) else self._latency

    def _connected(self, i: int, j: int) -> None:
        ni, nj = self.nodes[i], self.nodes[j]
        if not self.running[i]:
            return
        if not self.running[j]:
            ni.dial_failed(self.keys[j], self.now)
            self._reschedule(i)
            return
        self.connections += 1
        si = ni.open_session(self.keys[j], True, self.now)
        sj = nj.open_session(self.keys[i], False, self.now)
        si.context = [j, sj, self.now]
        sj.context = [i, si, self.now]
        self._after(ni, i)
        self._after(nj, j)

    def _after(self, node: GossipNode, index: int | None = None) -> None:
        i = self._index[node.transport_key] if index is None else index
        self._flush(i)
        events = node.events()  # drained either way: a simulation keeps no per-node event log
        if self._observer is not None:
            for event in events:
                self._observer(i, event, self.now)
        self._reschedule(i)

    def _flush(self, i: int) -> None:
        for session, frames in self.nodes[i].drain_outboxes():
            link = session.context
            if link is None:
                continue
            j, other, last = link
            latency = self._link_latency(i, j)
            for frame in frames:
                t = self.now + latency
                if self._loss and self._rng.random() < self._loss:
                    t += self._retransmit
                last = max(last, t)
                self._push(last, _DELIVER, other, frame)
            if session.closed:
                self._push(max(last, self.now + latency), HANGUP, other, None)
                session.context = None
            else:
                link[2] = last

    def _reschedule(self, i: int) -> None:
        if not self.running[i]:
            return
        deadline = self.nodes[i].next_deadline()
        if deadline is not None and deadline < self._tick_at[i]:
            deadline = max(deadline, self.now)
            self._tick_at[i] = deadline
            self._push(deadline, _TICK, i, None)

    def _dial(self, i: int) -> None:
        for info in self.nodes[i].peers_to_dial(self.now):
            j = self._index.get(info.transport_key)
            if j is None:
                self.nodes[i].dial_failed(info.transport_key, self.now)
            else:
                self._push(self.now + 2 * self._link_latency(i, j), _CONNECT, i, j)
