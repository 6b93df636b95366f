"""The gossip protocol as a compact model, for networks the real code cannot hold (10^5 nodes).

:class:`SimNetwork` (``simulations/sim.py``) runs one real :class:`~commons.core.gossip.GossipNode`
per node: about 55 KB each before a record is held (a peer table of ~95 entries, ~9 sessions with
their transfer and reconciliation parts, an ``random.Random``), so 10^5 nodes need ~6 GB. This
module runs the same protocol rules over compact state -- per node a dict of its sessions, a list
of the peers it knows, and one byte each for the records it holds and withholds (records are bit
positions, nodes integers) -- on the same event loop design (one heap of
``(time, seq, kind, src, dst, a, b)``), with the same links (``LinkModel``, drawn from the same
seed, so latencies and loss rates are the real engine's), the same bootstrap lists (memnet's draws,
reproduced) and the same per-sender loss with head-of-line waiting.

What each node does is the core's rule, re-stated here (the docstring of each handler names the
rule it follows, ``commons.core.gossip``): dial up to ``max_peers`` known peers when it ticks,
``max_sessions`` at most (beyond: Peers, then busy); Hello opens a session, the opener sends
Peers (``pex_size`` of its known peers) and the dialer reconciles at once (``sync_on_open``);
anti-entropy every ``sync_interval`` +-``sync_jitter`` with one random open session; an accepted
record is announced to ``fanout`` open sessions in one shuffled order for the batch (a revocation
to every one), skipping the peers that announced it; an announced key is asked of one peer at a
time, the others kept as fallbacks, and a "missing" hands it on (and reconciles with another peer
when none is left); a body is verified and judged at intake, a record the node's revocations take
down is refused and withheld (never announced nor served again).

Exact, not modelled: the wire sizes (every message is sized by ``commons.core.gossip.messages``'s
encoder), reconciliation (each one is the real ``commons.core.reconcile.Reconciler`` pair run on
the two nodes' key sets as they are when it starts -- its messages, their sizes, what each side
learns it needs or must push -- cached per pair of sets; each message then travels the link like
any frame), and the revocation rules (``commons.core.trust.resolve`` over the records a node holds
and the ids it refused, cached per combination).

Left out (docs/simulations.md, "The model engine"): timers other than the sync and the Hello
deadline (keepalives at 60 s, Want timeouts at 10 s, rotation at 600 s: none falls inside a
spread), evictions of idle inbound sessions (the real engine counts a few per 10,000 nodes), the
Bye of duplicate connections, per-peer rate limits (a scenario moves three records), and the
extra announcements to peers that may be pushing.
"""

from __future__ import annotations

import heapq
import math
import random
from array import array
from collections.abc import Callable, Iterable, Sequence

from commons.core import records as rec
from commons.core.gossip import GOSSIP_VERSION, Announce, Bye, GossipParams, Hello, Peers, Reconcile, ReconcilePhase
from commons.core.gossip import Records, Want, encode, network_hash, transport_key_of
from commons.core.reconcile import KeySet, Reconciler
from commons.core.trust import resolve
from simulations.sim import NOW, LinkModel

_CONNECT, _HELLO, _PEERS, _ANNOUNCE, _WANT, _RECORDS, _RECONCILE, _TICK, _SESSIONS, _PEX, _BYE, _CHECK = range(12)
_INITIATOR, _OPEN, _SYNCING, _SENT = 1, 2, 4, 8  # a session's flags, as its node sees it
RETRANSMIT = 1.0  # memnet's: a lost frame arrives this much later, the frames behind it wait


class Exchange:
    """One reconciliation of two key sets by the real reconcilers, as the model replays it.

    ``messages[k]``: (sender, wire bytes, need, push) -- sender 0 is the initiator; ``need`` and
    ``push`` are record masks: what the side reading message k learned it must fetch, and what it
    must send unasked."""

    __slots__ = ("messages",)

    def __init__(self, messages: list[tuple[int, int, int, int]]) -> None:
        self.messages = messages


class Tracked:
    """When and at which hop each node first took each tracked record (the real engine's Tracker)."""

    def __init__(self, keys: Sequence[bytes], size: int) -> None:
        self.bit = {key: 1 << r for r, key in enumerate(keys)}
        self.hops = [array("h", [-1]) * size for _ in keys]
        self.times = [array("d", [math.inf]) * size for _ in keys]

    def node_hop(self, keys: Iterable[bytes], index: int) -> int:
        worst = 0
        for key in keys:
            hop = self.hops[self.bit[key].bit_length() - 1][index]
            if hop < 0:
                return -1
            worst = max(worst, hop)
        return worst

    def node_time(self, keys: Iterable[bytes], index: int) -> float:
        return max(self.times[self.bit[key].bit_length() - 1][index] for key in keys)


class ModelNetwork:
    """``size`` modelled nodes and the records they may hold (see the module doc).

    ``records``: every record the scenario will publish, known up front so that each is a bit
    (in key order: revocations first, as on the wire). ``revocations``: intake refuses what the
    node's revocations take down (``SimNode(revocations=True)``)."""

    def __init__(self, size: int, *, seed: int, records: Sequence[rec.SignedRecord],
                 params: GossipParams | None = None, mean_loss: float = 0.01, revocations: bool = False,
                 bootstrap_degree: int = 4) -> None:
        if len(records) > 8:
            raise ValueError(f"the model tracks at most 8 records (one byte a node), not {len(records)}")
        self.params = p = params or GossipParams()
        self.size = size
        self.now = NOW
        self.links = LinkModel.draw(size, random.Random(f"links/{seed}"), mean_loss)
        self._latency = self.links.latency_function()
        self._loss = self.links.loss
        self._rng = random.Random(f"model/{seed}")
        self.records = sorted(records, key=lambda r: r.key)
        self.keys = [r.key for r in self.records]
        self._revocation_mask = sum(1 << r for r, s in enumerate(self.records)
                                    if s.type is rec.RecordType.REVOCATION)
        self._revocations = revocations
        self.tracker = Tracked(self.keys, size)
        self.have = bytearray(size)  # records held and served, a bit each
        self.withheld = bytearray(size)  # records refused at intake (in the key set, never sent)
        self.sessions: list[dict[int, int]] = [{} for _ in range(size)]  # peer -> flags, in opening order
        self.known: list[list[int]] = [[] for _ in range(size)]  # peers with an address (the peer table)
        self._dialing: list[set[int] | None] = [None] * size
        self._backoff: dict[int, dict[int, float]] = {}  # node -> peer -> not dialed before (after a close)
        self._next_rotation = array("d", [NOW + p.rotate_interval if p.rotate_interval else math.inf]) * size
        self.running = [False] * size
        self._tick_at = array("d", [math.inf]) * size
        self._next_sync = array("d", (NOW + p.sync_interval * random.Random(seed * 1_000_003 + i).random()
                                      for i in range(size)))  # a GossipNode's first draw
        self._fetching: dict[int, dict[int, int]] = {}  # node -> record -> the peer it is asked of
        self._sources: dict[int, dict[int, list[int]]] = {}  # node -> record -> peers that announced it
        self._resynced: dict[tuple[int, int], float] = {}
        self._last = {}  # (sender * size + receiver) -> when its last frame arrives (order is kept)
        self._timers_at = array("d", [math.inf]) * size  # a node's next round of keepalives
        self._opened: dict[int, float] = {}  # (node * size + peer) -> when that session opened
        self.bytes_out = array("q", [0]) * size
        self.bodies_received = array("q", [0]) * size
        self.duplicate_bodies = 0
        self.refused = 0
        self._queue: list[tuple] = []
        self._seq = 0
        self.events = 0
        self._exchanges: dict[tuple[int, int, int, int, bool, bool], Exchange] = {}
        self._refusals: dict[tuple[int, int, int], bool] = {}
        self._takedowns: dict[tuple[int, int], frozenset[bytes]] = {}
        self._sizes = _WireSizes(self.records, size)
        self._bootstrap(random.Random(seed), bootstrap_degree)

    # -- building and driving (SimNetwork's surface) ------------------------------------------------

    def _bootstrap(self, rng: random.Random, degree: int) -> None:
        """memnet's ``random_bootstrap``, draw for draw: the ring neighbour and degree - 1 random peers."""
        ids = list(range(self.size))
        for pos, i in enumerate(ids):
            others = rng.sample(ids, min(degree, len(ids) - 1) + 1)
            for j in [ids[(pos + 1) % len(ids)], *[j for j in others if j != i][: degree - 1]]:
                if j != i and j not in self.known[i]:
                    self.known[i].append(j)

    def start(self) -> None:
        for i in range(self.size):
            self.running[i] = True
            self._dial(i)
            self._schedule_tick(i, min(self._next_sync[i], self._next_rotation[i]))

    def run(self, until: float, stop: Callable[[ModelNetwork], bool] | None = None, check_every: float = 1.0) -> bool:
        if stop is not None:
            self._push(self.now, _CHECK, 0, 0, 0, 0)
        queue, handlers = self._queue, self._handlers()
        stopped = False
        while queue and queue[0][0] <= until:
            t, _, kind, src, dst, a, b = heapq.heappop(queue)
            self.now = t
            self.events += 1
            if kind == _CHECK:
                if stop(self):
                    stopped = True
                    break
                self._push(t + check_every, _CHECK, 0, 0, 0, 0)
            else:
                handlers[kind](src, dst, a, b)
        self.now = max(self.now, until) if not stopped else self.now
        self._queue = [e for e in self._queue if e[2] != _CHECK]
        heapq.heapify(self._queue)
        return stopped

    def publish_tracked(self, index: int, *signed: rec.SignedRecord) -> None:
        """``GossipNode.add_local``: the node holds them and announces them together."""
        mask = 0
        for record in signed:
            bit = self.tracker.bit[record.key]
            r = bit.bit_length() - 1
            self.tracker.hops[r][index] = 0
            self.tracker.times[r][index] = self.now
            mask |= bit
        mask &= ~(self.have[index] | self.withheld[index])
        self.have[index] |= mask
        self._announce(index, [(r, ()) for r in _bits(mask)])

    # -- what the scenarios read (SimNetwork's surface) ----------------------------------------------

    def holds(self, i: int, key: bytes) -> bool:
        """The key is in node i's key set (held, or refused and withheld)."""
        return bool((self.have[i] | self.withheld[i]) & self.tracker.bit[key])

    def serves(self, i: int, key: bytes) -> bool:
        return bool(self.have[i] & self.tracker.bit[key])

    def is_withheld(self, i: int, key: bytes) -> bool:
        return bool(self.withheld[i] & self.tracker.bit[key])

    def takedowns(self, i: int) -> frozenset[bytes]:
        """Ids node i's revocations take down (``resolve`` over what it holds and refused)."""
        state = (self.have[i], self.withheld[i])
        dead = self._takedowns.get(state)
        if dead is None:
            dead = frozenset(self._resolve(*state).takedowns)
            self._takedowns[state] = dead
        return dead

    def traffic_counters(self) -> tuple[Sequence[int], Sequence[int]]:
        """(bodies received, gossip bytes sent) per node, so far."""
        return array("q", self.bodies_received), array("q", self.bytes_out)

    def open_sessions(self) -> int:
        return sum(1 for s in self.sessions for flags in s.values() if flags & _OPEN)

    def live(self) -> list[int]:
        return [i for i, up in enumerate(self.running) if up]

    # -- the event loop's inside ------------------------------------------------------------------

    def _handlers(self) -> dict[int, Callable[[int, int, int, int], None]]:
        return {_CONNECT: self._on_connect, _HELLO: self._on_hello, _PEERS: self._on_peers,
                _ANNOUNCE: self._on_announce, _WANT: self._on_want, _RECORDS: self._on_records,
                _RECONCILE: self._on_reconcile, _TICK: self._on_tick, _SESSIONS: self._on_keepalives, _PEX: self._on_pex,
                _BYE: self._on_bye}

    def _push(self, t: float, kind: int, src: int, dst: int, a, b) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (t, self._seq, kind, src, dst, a, b))

    def _send(self, src: int, dst: int, kind: int, a, b, nbytes: int) -> None:
        """A frame from src to dst: its latency, lost and retransmitted with src's rate, in order."""
        self.bytes_out[src] += nbytes
        flags = self.sessions[src].get(dst)
        if flags is not None:
            self.sessions[src][dst] = flags | _SENT
        t = self.now + self._latency(src, dst)
        if self._loss[src] and self._rng.random() < self._loss[src]:
            t += RETRANSMIT
        link = src * self.size + dst
        last = self._last.get(link, 0.0)
        if last > t:
            t = last
        self._last[link] = t
        self._push(t, kind, src, dst, a, b)

    def _schedule_tick(self, i: int, t: float) -> None:
        if t < self._tick_at[i]:
            t = max(t, self.now)
            self._tick_at[i] = t
            self._push(t, _TICK, i, i, 0, 0)

    def _dial(self, i: int) -> None:
        """``peers_to_dial``: up to ``max_peers`` sessions, among known peers not connected nor dialed."""
        sessions = self.sessions[i]
        room = self.params.max_peers - len(sessions)
        if room <= 0:
            return
        dialing, backoff, now = self._dialing[i], self._backoff.get(i), self.now
        candidates = [j for j in self.known[i] if j not in sessions and (dialing is None or j not in dialing)
                      and (backoff is None or backoff.get(j, 0.0) <= now)]
        if len(candidates) > room:
            candidates = self._rng.sample(candidates, room)
        if candidates and dialing is None:
            dialing = self._dialing[i] = set()
        for j in candidates:
            dialing.add(j)
            self._push(self.now + 2 * self._latency(i, j), _CONNECT, i, j, 0, 0)

    def _on_tick(self, i: int, _dst: int, _a, _b) -> None:
        """``GossipNode.tick`` then memnet's dial: an anti-entropy round when due, then dial."""
        if self._tick_at[i] != self.now:
            return
        self._tick_at[i] = math.inf
        p = self.params
        if self.now >= self._next_sync[i]:
            self._next_sync[i] = self.now + p.sync_interval * (1 + p.sync_jitter * (2 * self._rng.random() - 1))
            ready = [j for j, flags in self.sessions[i].items() if flags & _OPEN and not flags & _SYNCING]
            if ready:
                self._start_sync(i, self._rng.choice(ready))
        if self.now >= self._next_rotation[i]:
            self._next_rotation[i] = self.now + p.rotate_interval
            self._rotate(i)
        self._dial(i)
        self._schedule_tick(i, min(self._next_sync[i], self._next_rotation[i]))

    def _rotate(self, i: int) -> None:
        """``GossipNode._rotate``: with every slot taken, close one session this node dialed."""
        sessions = self.sessions[i]
        dialed = [j for j, flags in sessions.items() if flags & _INITIATOR and flags & _OPEN]
        if len(sessions) >= self.params.max_peers and dialed and len(self.known[i]) > len(sessions):
            j = self._rng.choice(dialed)
            self._send(i, j, _BYE, 0, 0, self._sizes.bye_rotation)
            self._closed(i, j)

    def _on_bye(self, src: int, dst: int, _a, _b) -> None:
        if src in self.sessions[dst]:
            self._closed(dst, src)

    def _closed(self, i: int, j: int) -> None:
        """``GossipNode.session_closed`` after a clean end: its keys go to other peers, and the peer
        is not redialed for ``backoff_base`` seconds."""
        del self.sessions[i][j]
        self._opened.pop(i * self.size + j, None)
        self._backoff.setdefault(i, {})[j] = self.now + self.params.backoff_base
        fetching = self._fetching.get(i)
        for r in [r for r, peer in fetching.items() if peer == j] if fetching else ():
            self._release(i, j, r)

    def _on_keepalives(self, i: int, _dst: int, _a, _b) -> None:
        """``PeerSession.tick`` on the keepalive deadlines: an empty Announce on every session that
        sent nothing for ``keepalive_interval``; then the node dials, as after any tick. One timer
        a node, every ``keepalive_interval`` from its first session (the core's deadlines are per
        session; a node's sessions open within about a second of each other, and a later one's
        keepalive is then checked up to that much early -- sent only if it sent nothing since)."""
        sessions, keepalive = self.sessions[i], self._sizes.announce(0)
        self._timers_at[i] = math.inf
        for j, flags in list(sessions.items()):
            if not flags & _SENT:
                self._keepalive(i, j, keepalive)
            sessions[j] = flags & ~_SENT
        if sessions:
            self._schedule_timers(i)
        self._dial(i)

    def _on_pex(self, i: int, j: int, opened: float, _b) -> None:
        """``PeerSession.tick`` on its peer-exchange deadline: Peers every ``pex_interval`` from
        its opening (``opened`` tells this session from a later one with the same peer)."""
        if self.sessions[i].get(j) is None or self._opened.get(i * self.size + j) != opened:
            return
        entries = self._peers_for(i, j)
        if entries:
            self._send(i, j, _PEERS, entries, 0, self._sizes.peers(entries))
        self._push(self.now + self.params.pex_interval, _PEX, i, j, opened, 0)
        self._dial(i)

    def _schedule_timers(self, i: int) -> None:
        if self.params.keepalive_interval and self._timers_at[i] == math.inf:
            self._timers_at[i] = self.now + self.params.keepalive_interval
            self._push(self._timers_at[i], _SESSIONS, i, i, 0, 0)

    def _keepalive(self, i: int, j: int, nbytes: int) -> None:
        """An empty Announce: counted and kept in the link's order, but never delivered, as the
        model keeps no idle timeout for it to reset."""
        self.bytes_out[i] += nbytes
        link = i * self.size + j
        t = self.now + self._latency(i, j)
        if self._loss[i] and self._rng.random() < self._loss[i]:
            t += RETRANSMIT
        self._last[link] = max(self._last.get(link, 0.0), t)

    def _on_connect(self, i: int, j: int, _a, _b) -> None:
        """A dial completed: both ends open a session and send Hello; beyond ``max_sessions`` the
        answering node sends Peers and ends it ("busy")."""
        dialing = self._dialing[i]
        if dialing is not None:
            dialing.discard(j)
        if not (self.running[i] and self.running[j]) or j in self.sessions[i]:
            return  # a duplicate connection: one of the two is closed, the pair stays joined once
        hello = self._sizes.hello
        if len(self.sessions[j]) >= self.params.max_sessions:
            self.bytes_out[j] += hello(j) + self._sizes.peers(self._peers_for(j, i)) + self._sizes.bye_busy
            self.bytes_out[i] += hello(i)
            self._backoff.setdefault(i, {})[j] = self.now + self.params.backoff_base
            return
        self.sessions[i][j] = _INITIATOR
        self.sessions[j][i] = 0
        p = self.params
        for a, b in ((i, j), (j, i)):
            self._schedule_tick(a, self.now + p.hello_timeout)
            self._opened[a * self.size + b] = self.now
            self._push(self.now + p.pex_interval, _PEX, a, b, self.now, 0)
            self._schedule_timers(a)
            self._send(a, b, _HELLO, 0, 0, hello(a))

    def _on_hello(self, src: int, dst: int, _a, _b) -> None:
        """``session_opened``: the peer is known by its address, gets Peers, and the dialer reconciles."""
        flags = self.sessions[dst].get(src)
        if flags is None:
            return
        self.sessions[dst][src] = flags | _OPEN
        self._learn_peer(dst, src)
        entries = self._peers_for(dst, src)
        if entries:
            self._send(dst, src, _PEERS, entries, 0, self._sizes.peers(entries))
        if flags & _INITIATOR and self.params.sync_on_open:
            self._start_sync(dst, src)

    def _peers_for(self, i: int, exclude: int) -> list[int]:
        good = [j for j in self.known[i] if j != exclude]
        size = self.params.pex_size
        return self._rng.sample(good, size) if len(good) > size else good

    def _learn_peer(self, i: int, j: int) -> None:
        known = self.known[i]
        if len(known) < self.params.max_known_peers and j != i and j not in known:
            known.append(j)

    def _on_peers(self, src: int, dst: int, entries: list[int], _b) -> None:
        for j in entries:
            self._learn_peer(dst, j)

    # -- records ------------------------------------------------------------------------------------

    def _announce(self, i: int, batch: list[tuple[int, Iterable[int]]]) -> None:
        """``RecordIntake.announce``: one shuffled order of the open sessions for the batch; each
        record to ``fanout`` of them (a revocation to all) other than those that announced it."""
        sessions = [j for j, flags in self.sessions[i].items() if flags & _OPEN]
        fanout = self.params.fanout
        if len(sessions) > fanout:
            self._rng.shuffle(sessions)
        to: dict[int, int] = {}
        for r, skip in batch:
            skip = set(skip)
            limit = len(sessions) if self._revocation_mask >> r & 1 else fanout
            sent = 0
            for j in sessions:
                if j not in skip:
                    to[j] = to.get(j, 0) | 1 << r
                    sent += 1
                    if sent == limit:
                        break
        for j, mask in to.items():
            self._send(i, j, _ANNOUNCE, mask, 0, self._sizes.announce(mask))

    def _on_announce(self, src: int, dst: int, mask: int, _b) -> None:
        """``FetchBook.learn``: a key lacked is asked of this peer unless another is asked for it."""
        if src not in self.sessions[dst]:
            return
        self._learn(dst, src, mask & ~(self.have[dst] | self.withheld[dst]))

    def _learn(self, i: int, src: int, mask: int) -> None:
        if not mask:
            return
        sources = self._sources.setdefault(i, {})
        fetching = self._fetching.setdefault(i, {})
        want = 0
        for r in _bits(mask):
            peers = sources.setdefault(r, [])
            if src not in peers:
                peers.append(src)
            if r not in fetching:
                fetching[r] = src
                want |= 1 << r
        if want:
            self._send(i, src, _WANT, want, 0, self._sizes.want(want))

    def _on_want(self, src: int, dst: int, mask: int, _b) -> None:
        """``SessionTransfer``: what is held and served goes in Records, the rest is named missing."""
        if src not in self.sessions[dst]:
            return
        found = mask & self.have[dst]
        self._send(dst, src, _RECORDS, found, mask & ~found, self._sizes.records(found, mask & ~found))

    def _on_records(self, src: int, dst: int, found: int, missing: int) -> None:
        """``RecordIntake.take`` for bodies (in key order), ``FetchBook.release`` for missing keys."""
        if src not in self.sessions[dst]:
            return
        for r in _bits(missing):
            self._release(dst, src, r)
        if found:
            self._take(dst, src, found)

    def _take(self, i: int, src: int, found: int) -> None:
        relay: list[tuple[int, tuple[int, ...]]] = []
        hops, times = self.tracker.hops, self.tracker.times
        for r in _bits(found):
            self.bodies_received[i] += 1
            bit = 1 << r
            announced = self._forget(i, r)
            if (self.have[i] | self.withheld[i]) & bit:
                self.duplicate_bodies += 1
                continue
            if hops[r][i] < 0:  # the Tracker: first take, accepted or refused
                hops[r][i] = hops[r][src] + 1 if hops[r][src] >= 0 else 1
                times[r][i] = self.now
            if self._revocations and not self._revocation_mask & bit and self._refuses(i, r):
                self.withheld[i] |= bit
                self.refused += 1
                continue
            self.have[i] |= bit
            relay.append((r, (src, *announced)))
        if relay:
            self._announce(i, relay)

    def _forget(self, i: int, r: int) -> list[int]:
        fetching, sources = self._fetching.get(i), self._sources.get(i)
        if fetching is not None:
            fetching.pop(r, None)
        return sources.pop(r, []) if sources is not None else []

    def _release(self, i: int, src: int, r: int) -> None:
        """The peer will not send it: ask the next that announced it; with none left, reconcile
        with another open session (once per key per ``sync_interval``)."""
        fetching, sources = self._fetching.get(i, {}), self._sources.get(i, {})
        if fetching.get(r) == src:
            del fetching[r]
        peers = [j for j in sources.get(r, ()) if j != src and j in self.sessions[i]]
        if peers:
            sources[r] = peers
            if r not in fetching:
                fetching[r] = peers[0]
                self._send(i, peers[0], _WANT, 1 << r, 0, self._sizes.want(1 << r))
            return
        sources.pop(r, None)
        fetching.pop(r, None)
        if (self.have[i] | self.withheld[i]) >> r & 1:
            return
        if self.now - self._resynced.get((i, r), -math.inf) < self.params.sync_interval:
            return
        ready = [j for j, flags in self.sessions[i].items() if j != src and flags & _OPEN and not flags & _SYNCING]
        if ready:
            self._resynced[(i, r)] = self.now
            self._start_sync(i, self._rng.choice(ready))

    def _refuses(self, i: int, r: int) -> bool:
        """``SimNode._dead``: the node's revocations (over what it holds and refused) refuse r."""
        state = (self.have[i], self.withheld[i], r)
        verdict = self._refusals.get(state)
        if verdict is None:
            verdict = self._resolve(self.have[i], self.withheld[i]).refusal(self.records[r]) is not None
            self._refusals[state] = verdict
        return verdict

    def _resolve(self, have: int, withheld: int):
        return resolve([self.records[r] for r in _bits(have)], refused={self.records[r].id for r in _bits(withheld)})

    # -- reconciliation -----------------------------------------------------------------------------

    def _start_sync(self, i: int, j: int) -> None:
        """``SessionSync.start``: the real reconcilers' exchange over the two key sets as they are."""
        self.sessions[i][j] |= _SYNCING
        exchange = self._exchange(i, j)
        sender_bytes = exchange.messages[0][1]
        self._send(i, j, _RECONCILE, exchange, 0, sender_bytes)

    def _on_reconcile(self, src: int, dst: int, exchange: Exchange, k: int) -> None:
        """Message k of an exchange arrives: the reader fetches what it needs, pushes what it must,
        and sends message k + 1; the last one ends the initiator's reconciliation."""
        if src not in self.sessions[dst]:
            return
        _, _, need, push = exchange.messages[k]
        if push:
            self._push_records(dst, src, push)
        if need:
            self._learn_named(dst, src, need)
        if k + 1 < len(exchange.messages):
            self._send(dst, src, _RECONCILE, exchange, k + 1, exchange.messages[k + 1][1])
        else:
            initiator, other = (src, dst) if exchange.messages[k][0] == 0 else (dst, src)
            flags = self.sessions[initiator].get(other)
            if flags is not None:
                self.sessions[initiator][other] = flags & ~_SYNCING

    def _push_records(self, i: int, j: int, mask: int) -> None:
        found = mask & self.have[i]
        if found:
            self._send(i, j, _RECORDS, found, 0, self._sizes.records(found, 0))

    def _learn_named(self, i: int, src: int, mask: int) -> None:
        """Keys a reconciliation named: fetched from that peer unless held or asked of another."""
        self._learn(i, src, mask & ~(self.have[i] | self.withheld[i]))

    def _exchange(self, i: int, j: int) -> Exchange:
        """The initiator i's and responder j's reconcilers run against each other (cached per
        pair of key sets and whether each may ask for pushes: ``push_welcome``)."""
        pushes = (not self._fetching.get(i), not self._fetching.get(j))
        state = (self.have[i], self.withheld[i], self.have[j], self.withheld[j], *pushes)
        exchange = self._exchanges.get(state)
        if exchange is None:
            exchange = self._exchanges[state] = self._run_reconcilers(*state)
        return exchange

    def _run_reconcilers(self, have_i: int, withheld_i: int, have_j: int, withheld_j: int,
                         push_i: bool, push_j: bool) -> Exchange:
        frame = self.params.reconcile_frame_bytes

        def side(have: int, withheld: int, ask_push: bool) -> Reconciler:
            entries = [(self.keys[r], self.records[r].record.created) for r in _bits(have)]
            refused = [(self.keys[r], self.records[r].record.created) for r in _bits(withheld)]
            return Reconciler(KeySet(entries, refused), frame_size_limit=frame, ask_push=ask_push)

        sides = (side(have_i, withheld_i, push_i), side(have_j, withheld_j, push_j))
        bit = {key: 1 << r for r, key in enumerate(self.keys)}
        messages: list[tuple[int, int, int, int]] = []
        message: bytes | None = sides[0].initiate()
        sender = 0
        while message is not None:
            phase = ReconcilePhase.START if not messages else (
                ReconcilePhase.INITIATOR if sender == 0 else ReconcilePhase.RESPONDER)
            step = sides[1 - sender].reconcile(message)
            need = sum(bit[k] for k in step.need)
            push = sum(bit[k] for k in step.push)
            messages.append((sender, len(encode(Reconcile(phase, message))), need, push))
            message = step.reply
            sender = 1 - sender
            if len(messages) > 100:
                raise RuntimeError("a reconciliation of a few keys did not end in 100 messages")
        return Exchange(messages)


class _WireSizes:
    """Bytes of each message as ``commons.core.gossip.messages.encode`` writes it (cached per shape)."""

    def __init__(self, records: Sequence[rec.SignedRecord], size: int) -> None:
        self._records = records
        self._cache: dict[tuple, int] = {}
        self._key = transport_key_of(0)
        self._hello = len(encode(Hello(GOSSIP_VERSION, network_hash(b"\x01" * 32), "")))
        self._digits = [len(f"mem:{i}") for i in range(size)]
        self.bye_busy = len(encode(Bye("busy")))
        self.bye_rotation = len(encode(Bye("rotation: making room to meet other peers")))

    def hello(self, i: int) -> int:
        return self._hello + self._digits[i]  # "mem:i" is a fixstr: one header byte whatever its length

    def peers(self, entries: list[int]) -> int:
        count = len(entries)
        base = self._cache.get(("peers", count))
        if base is None:
            base = self._cache[("peers", count)] = len(encode(Peers(tuple(("", self._key) for _ in range(count)))))
        return base + sum(self._digits[j] for j in entries)

    def announce(self, mask: int) -> int:
        return self._sized(("announce", mask), lambda: Announce(tuple(self._records[r].key for r in _bits(mask))))

    def want(self, mask: int) -> int:
        return self._sized(("want", mask), lambda: Want(tuple(self._records[r].key for r in _bits(mask))))

    def records(self, found: int, missing: int) -> int:
        return self._sized(("records", found, missing), lambda: Records(
            tuple((self._records[r].body, self._records[r].signature) for r in _bits(found)),
            tuple(self._records[r].key for r in _bits(missing))))

    def _sized(self, shape: tuple, message: Callable[[], object]) -> int:
        size = self._cache.get(shape)
        if size is None:
            size = self._cache[shape] = len(encode(message()))
        return size


def _bits(mask: int) -> list[int]:
    """The set bits of a record mask, lowest first (key order)."""
    out = []
    r = 0
    while mask:
        if mask & 1:
            out.append(r)
        mask >>= 1
        r += 1
    return out
