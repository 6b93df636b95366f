"""The trio driver of the gossip core: it only moves bytes and calls the core's timers.

:class:`GossipDriver` owns one :class:`~commons.core.gossip.node.GossipNode` inside one trio program.
Every call into the core (a frame received, a timer, a record added, a connection opened) is
followed by :meth:`GossipDriver.after`, which hands every session's outgoing frames to that
connection's writer, passes the core's events (Accepted / Refused / SessionClosed) to the owner,
and wakes the ticker, which sleeps until ``node.next_deadline()``.

One connection (:meth:`GossipDriver.run_connection`) is two tasks over a handshaken link (in the
style of trio-websocket's reader task):

* the reader receives decrypted bytes, cuts them into frames (``FrameDecoder``) and feeds each to
  ``session.receive``; a frame header over the limit closes the session as misbehaved (the core
  itself starts a reconciliation as soon as a dialed session opens: ``GossipParams.sync_on_open``);
* the writer sends what the session queued, as length-prefixed frames, several per link write,
  and hangs up once the session is closed and its Bye has gone out.

The link is anything with ``send(bytes)``, ``receive() -> bytes`` (b"" at the end) and
``aclose()``: a :class:`~commons.net.transport.SecureLink` in the daemon, a plain trio stream in
tests. Persisting what the core accepted is the owner's business (``on_events``), so that a slow
disk never stalls the protocol; but while more records wait for it than ``max_unstored``
(``node.backlogged``) the readers stop reading, so a node far behind holds that many decoded at
most, not all a peer can push it: the bytes wait in the kernel's buffers and TCP holds the sender
back until the owner stored what it had (``node.stored``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Protocol

import trio

from commons.core.gossip import Event, GossipNode, PeerSession
from commons.core.gossip import FrameDecoder, GossipProtocolError, encode_frame
from commons.net import memory
from commons.net.transport import PeerFailed

log = logging.getLogger("commons.gossip")

WRITE_BYTES = 65536  # frames joined into one link write up to about this size
TRIM_SECONDS = 1.0  # freed memory is handed back to the system at most this often (see memory.py)
BACKLOG_POLL_SECONDS = 0.02  # how often a reader stopped by the backlog looks whether the store caught up


class Link(Protocol):
    async def send(self, payload: bytes) -> None: ...

    async def receive(self) -> bytes: ...

    async def aclose(self) -> None: ...


class StreamLink:
    """A plain trio stream as a link (no encryption): for tests and in-process pairs."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream

    async def send(self, payload: bytes) -> None:
        try:
            await self.stream.send_all(payload)
        except (trio.BrokenResourceError, OSError) as error:
            raise PeerFailed(f"the connection broke while sending: {error}") from error

    async def receive(self) -> bytes:
        try:
            return await self.stream.receive_some(65536)
        except (trio.BrokenResourceError, OSError) as error:
            raise PeerFailed(f"the connection broke: {error}") from error

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)


class _Connection:
    """What the driver keeps per connection: the frames waiting for the writer."""

    def __init__(self, session: PeerSession, link: Link) -> None:
        self.session = session
        self.link = link
        self.frames: list[bytes] = []
        self.ready = trio.Event()

    def queue(self, frames: list[bytes]) -> None:
        self.frames.extend(frames)
        self.ready.set()


class GossipDriver:
    """Runs a GossipNode: its connections, its timers; see the module doc."""

    def __init__(
        self,
        node: GossipNode,
        clock: Callable[[], float],
        on_events: Callable[[list[Event]], None] | None = None,
    ) -> None:
        self.node = node
        self.now = clock
        self._on_events = on_events
        self._wake = trio.Event()
        self.connections: dict[bytes, int] = {}  # peer transport key -> open connections
        self._trim_due = False  # a session ended since memory was last handed back
        self._trimmed_at = -math.inf

    def after(self) -> None:
        """Call after every call into the core: frames to writers, events to the owner, the ticker woken."""
        for session, frames in self.node.drain_outboxes():
            connection = session.context
            if isinstance(connection, _Connection):
                connection.queue(frames)
        events = self.node.events()
        if events and self._on_events is not None:
            self._on_events(events)
        self._wake.set()

    def add_local(self, *signed) -> int:
        added = self.node.add_local(*signed)
        self.after()
        return added

    async def run_ticker(self) -> None:
        """Call ``tick`` whenever the core's next deadline comes; forever."""
        while True:
            deadline = self.node.next_deadline()
            wait = math.inf if deadline is None else max(0.0, deadline - self.now())
            if self._trim_due:
                wait = min(wait, max(0.0, self._trimmed_at + TRIM_SECONDS - trio.current_time()))
            with trio.move_on_after(wait):
                await self._wake.wait()
            self.node.tick(self.now())
            self.after()
            if self._trim_due and trio.current_time() >= self._trimmed_at + TRIM_SECONDS:
                # What a closed session held (up to max_queued_wants keys) goes back to the system.
                self._trim_due = False
                self._trimmed_at = trio.current_time()
                memory.trim()
            self._wake = trio.Event()  # after() woke us for our own tick: nothing new to wait for

    async def run_connection(self, link: Link, peer_key: bytes, initiator: bool) -> str:
        """Speak gossip over a handshaken link until either side ends it; returns why it ended."""
        session = self.node.open_session(peer_key, initiator, self.now())
        connection = _Connection(session, link)
        session.context = connection
        self.connections[peer_key] = self.connections.get(peer_key, 0) + 1
        self.after()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._read, connection, nursery.cancel_scope)
                await self._write(connection)
                nursery.cancel_scope.cancel()
        finally:
            self.connections[peer_key] -= 1
            if not self.connections[peer_key]:
                del self.connections[peer_key]
            if not session.closed:  # cancelled from outside (the daemon stops): no Bye can go now
                session.connection_lost(self.now())
            session.context = None
            self._trim_due = True
            self.after()
            with trio.CancelScope(shield=True):
                await link.aclose()
        return session.close_reason or "closed"

    async def _read(self, connection: _Connection, scope: trio.CancelScope) -> None:
        try:
            await self._read_frames(connection)
        finally:
            connection.ready.set()  # the writer sends the Bye, if any, and hangs up

    async def _read_frames(self, connection: _Connection) -> None:
        session, link = connection.session, connection.link
        decoder = FrameDecoder(self.node.params.max_frame_bytes)
        while not session.closed:
            while self.node.backlogged and not session.closed:
                await trio.sleep(BACKLOG_POLL_SECONDS)  # the owner stores what it has: no hook needed
            if session.closed:
                break
            try:
                data = await link.receive()
            except PeerFailed as error:
                log.debug("peer %s: %s", session.peer_key.hex()[:12], error)
                data = b""
            if not data:
                session.connection_lost(self.now())
                self.after()
                return
            try:
                frames = decoder.feed(data)
            except GossipProtocolError as error:
                # A header over the limit: the stream cannot be followed any further.
                session.penalise(math.inf, f"frame over the limit: {error}", self.now())
                self.after()
                return
            now = self.now()
            for frame in frames:
                session.receive(frame, now)
                if session.closed:
                    break
            self.after()

    async def _write(self, connection: _Connection) -> None:
        session, link = connection.session, connection.link
        while True:
            await connection.ready.wait()
            connection.ready = trio.Event()
            while connection.frames:
                chunk, taken = bytearray(), 0
                for frame in connection.frames:
                    chunk += encode_frame(frame)
                    taken += 1
                    if len(chunk) >= WRITE_BYTES:
                        break
                del connection.frames[:taken]
                try:
                    await link.send(bytes(chunk))
                except PeerFailed as error:
                    log.debug("peer %s: %s", session.peer_key.hex()[:12], error)
                    if not session.closed:
                        session.connection_lost(self.now())
                        self.after()
                    return
            if session.closed:
                return
