"""Which peer fetches which key: a node's bookkeeping of the keys it lacks (sans-I/O).

:class:`FetchBook` is the part of a :class:`~commons.core.gossip.node.GossipNode` that turns what
peers say they hold into Wants, and owns that state: per key lacked, the sessions that announced
or named it and, while it is asked of one, which (a key is asked of one peer at a time, the others
kept as fallbacks); handing a key to the next source when one will not deliver it; a
reconciliation with another peer when none is left; and whether a session may ask its peer to
push (``push_welcome``). It reads the node's key set and session table and calls only the public
methods of sessions (:class:`FetchSession`), so a test builds one on fake sessions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from commons.core.gossip.state import SessionState

if TYPE_CHECKING:
    from commons.core.gossip.peers import GossipParams
    from commons.core.reconcile import KeySet

_RESYNC_MEMORY = 4096


class FetchSession(Protocol):
    """What the book asks of a session (``PeerSession`` is one)."""

    state: SessionState

    @property
    def closed(self) -> bool: ...
    @property
    def fetching(self) -> bool: ...  # waiting for records asked of its peer
    @property
    def push_pending(self) -> bool: ...  # its peer may be pushing us records
    @property
    def awaiting_pushes(self) -> bool: ...  # records its peer announced it pushes have not all come
    @property
    def syncing(self) -> bool: ...
    def queue_want(self, key: bytes, spill: bool = False) -> bool: ...
    def pump(self, now: float) -> None: ...
    def asked(self, key: bytes) -> bool: ...
    def may_push(self, item: bytes) -> bool: ...
    def start_sync(self, now: float) -> bool: ...
    def drop_wants(self) -> list[bytes]: ...
    def drop_spill(self) -> bool: ...


class FetchBook:
    """Sources and fetches of the keys a node lacks."""

    __slots__ = ("_keyset", "_sessions", "_params", "_rng", "_sources", "_fetching", "_resynced",
                 "announced_keys_received", "duplicate_announced_keys")

    def __init__(self, keyset: KeySet, sessions: Mapping[bytes, FetchSession], params: GossipParams,
                 rng: random.Random) -> None:
        """``keyset``: what the node holds; ``sessions``: its open sessions by peer (both read only,
        kept up to date by the node); ``rng``: the node's, for the peer a resync goes to."""
        self._keyset, self._sessions, self._params, self._rng = keyset, sessions, params, rng
        # Keys some peer announced and this node lacks. Per key: the sessions that announced it (one
        # session, or a list once there are several: no allocation per key in the common case, as a
        # flood holds up to max_queued_wants keys per session) and, while it is asked of one of them,
        # which. Only keys an announcing session's queue took are here, so both are bounded.
        self._sources: dict[bytes, FetchSession | list[FetchSession]] = {}
        self._fetching: dict[bytes, FetchSession] = {}
        self._resynced: dict[int, float] = {}  # key tag -> when a lost want last started a reconciliation
        self.announced_keys_received = 0  # keys peers announced to us (statistics)
        self.duplicate_announced_keys = 0  # of those, keys we held already

    @property
    def wanted(self) -> int:
        """Keys some open session announced and the node lacks (bounded by the per-peer queues)."""
        return len(self._sources)

    def learn(self, keys: Iterable[bytes], session: FetchSession, count: bool = True) -> None:
        """The peer holds these keys (announced, or learned by reconciliation): fetch those we lack."""
        held, sources = self._keyset, self._sources
        for key in keys:
            if count:
                self.announced_keys_received += 1
            if key in held:
                if count:
                    self.duplicate_announced_keys += 1
                continue
            entry = sources.get(key)
            if entry is session or (type(entry) is list and session in entry):
                continue
            # Only what the peer's own queue can take is remembered at all: a key recorded here
            # but dropped by a full queue would be owned by no session, released by none, and
            # kept for ever (announcement floods grew the daemon by 150 MB that way). A key
            # beyond the bound is forgotten; a later reconciliation brings it up again.
            if not session.queue_want(key, spill=not count):  # what a reconciliation named may wait
                continue
            if entry is None:
                sources[key] = session
            elif type(entry) is list:
                entry.append(session)
            else:
                sources[key] = [entry, session]

    def claim(self, key: bytes, session: FetchSession) -> bool:
        """Whether ``session`` should ask its peer for ``key`` now (and if so, it is its to fetch):
        not if the key was taken or forgotten meanwhile, nor while another peer is asked for it."""
        if key not in self._sources:
            return False
        owner = self._fetching.get(key)
        if owner is not None and owner is not session and owner.asked(key):
            return False  # being fetched from another peer (this one stays a fallback)
        self._fetching[key] = session
        return True

    def release(self, key: bytes, session: FetchSession, now: float, resync: bool = True) -> bool:
        """``session`` will not deliver ``key``: hand it to another peer that announced it.

        Returns False when no peer is left to ask (then, with ``resync``, a reconciliation with
        another peer starts: ``_resync``)."""
        if self._fetching.get(key) is session:
            del self._fetching[key]
        entry = self._sources.get(key)
        if entry is None:
            return True
        sources = [s for s in (entry if type(entry) is list else (entry,)) if s is not session and not s.closed]
        fetching = key in self._fetching
        if not fetching:  # the next source asks for it; one whose queue is full is no source
            while sources and not sources[0].queue_want(key):
                sources.pop(0)
        if not sources:
            del self._sources[key]
            self._fetching.pop(key, None)
            if resync:
                self._resync(key, session, now)
            return False
        self._sources[key] = sources if len(sources) > 1 else sources[0]
        if not fetching:
            sources[0].pump(now)
        return True

    def forget(self, key: bytes) -> tuple[FetchSession, ...]:
        """The key arrived: stop tracking it; returns the sessions that had announced it."""
        self._fetching.pop(key, None)
        entry = self._sources.pop(key, ())
        return tuple(entry) if type(entry) is list else (entry,) if entry else ()

    def session_closed(self, session: FetchSession, now: float) -> None:
        """Hand the keys of a session that ended to other peers; a key only it had is looked for
        by one reconciliation with another peer (for all such keys at once)."""
        # A key it was only a fallback source for (popped from its queue while another peer
        # fetched it) keeps a reference to it until that fetch ends, within want_timeout;
        # release() drops closed sources then.
        lost = session.drop_spill()
        for key in session.drop_wants():
            lost |= not self.release(key, session, now, resync=False)
        if lost:
            self._start_resync(session, now)
        # Python's dicts never shrink as entries go: after a flood, copy them down to their size.
        self._sources = dict(self._sources)
        self._fetching = dict(self._fetching)

    # -- pushes: what a reconciliation asks of the other sessions ----------------------------------

    def push_welcome(self, session: FetchSession) -> bool:
        """Whether ``session`` may ask its peer to push the records it lacks (reconcile.md, Pushed
        records): not while another session's peer may be pushing us (two pushes of one range
        both arrive), nor while any session waits for records it asked for (a record asked for
        and pushed at once arrives twice). Other sessions may reconcile meanwhile: what their
        peers name inside a range pushed to us waits until the push is over (``pushed_elsewhere``),
        and what arrives is announced to the pusher (``RecordIntake.announce``), which then does
        not send it."""
        return not any(s.fetching or (s is not session and s.push_pending) for s in self._sessions.values())

    def push_awaited(self) -> bool:
        """Whether any session awaits records its peer announced it pushes."""
        return any(s.awaiting_pushes for s in self._sessions.values())

    def pushed_elsewhere(self, item: bytes) -> bool:
        """Whether a record at ``item`` may still arrive as a push some peer announced."""
        return any(s.may_push(item) for s in self._sessions.values())

    def pushes_settled(self, now: float) -> None:
        """A session awaits no more pushes: sessions holding back keys for them may fetch them now."""
        for session in list(self._sessions.values()):
            session.pump(now)

    # -- inside ------------------------------------------------------------------------------------

    def _resync(self, key: bytes, failed: FetchSession, now: float) -> None:
        """No peer is left to ask for ``key`` (the one that had it answered "missing", or went
        away): reconcile now with another peer rather than waiting for the next round, so a key
        learned from a peer that will not serve it (a free rider, one over its rate) arrives from
        another. At most once per key per ``sync_interval``, so peers that all refuse cannot make
        it a loop."""
        # Remembered by 64 bits of the id, not the key itself: a key is an object of the frame it
        # came in, and a few such objects kept long after a flood pin the allocator's arenas (and
        # the daemon's RSS) that all the flood's other keys were freed from.
        tag = int.from_bytes(key[1:9], "big")
        if key in self._keyset or now - self._resynced.get(tag, -math.inf) < self._params.sync_interval:
            return
        if self._start_resync(failed, now):
            self._resynced[tag] = now
            if len(self._resynced) > _RESYNC_MEMORY:  # forget the oldest: a guard, not a record
                del self._resynced[next(iter(self._resynced))]

    def _start_resync(self, failed: FetchSession, now: float) -> bool:
        """Reconcile at once with a random open session other than ``failed``; False if none can."""
        ready = [s for s in self._sessions.values()
                 if s is not failed and s.state is SessionState.OPEN and not s.syncing]
        if not ready:
            return False
        self._rng.choice(ready).start_sync(now)
        return True
