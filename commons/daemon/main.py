"""`commons daemon`: one trio program that keeps a node in the commons, in the foreground.

Its tasks (one nursery) only move bytes and call into the cores:

* **listener** -- accepts connections, runs the Secret Handshake as server, then gossip;
* **dialer** -- dials what the gossip core's peer table says (bootstrap ``[[peers]]``, peers added
  with `commons peers add`, peers learned by exchange or LAN discovery), with its backoff;
* **ticker** -- calls ``tick`` at ``next_deadline()`` (``commons.net.peer_driver``);
* **persister** -- writes what peers sent (accepted records, policy refusals) in batches;
* **store watcher** -- notices the CLI's commits (``data_version``, about every second) and acts
  on them: new own or imported records are announced (own lessons only while publishing is on),
  publishing switched on signs the pending shared lessons, added peers are dialed;
* **ingest watcher**, **sleep scheduler** (``[sleep] at`` local time, and at start-up when a night
  was missed), **status writer** (``data/daemon.json``, read by `commons status`), **discovery**
  (only when listening beyond loopback).

SIGINT / SIGTERM cancel the nursery: a store transaction under way still commits (the store shields
COMMIT), records accepted but not yet written are written, and the process exits 0. One daemon per
home: ``data/daemon.lock`` is held with ``flock`` while it runs.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import random
import signal
from collections.abc import Sequence
from datetime import datetime, timedelta

import trio

from commons.clock import Clock, format_time
from commons.config import Config, _host_port
from commons.core import records as rec
from commons.core.trust import refused_as_dead, resolve
from commons.core.gossip import Accepted, GossipNode, Refused, SessionClosed
from commons.daemon.heap import (
    RUNNING_THRESHOLDS,
    START_UP_THRESHOLDS,
    HeapFreezer,
    collector_paused,
    memory_note,
    set_malloc_thresholds,
    trim,
)
from commons.daemon.lock import acquire_lock
from commons.errors import CommonsError, UsageError
from commons.home import Home
from commons.identity import Identity
from commons.ingest.archive import Archive, ArchiveError
from commons.ingest.ingester import discover, ingest_paths
from commons.ingest.readers import expand_root
from commons.net import discovery
from commons.net.admission import HalfOpenCaps, HalfOpenLimit
from commons.net.peer_driver import GossipDriver
from commons.net.transport import PeerFailed, dial, handshake_as_server
from commons.node import door
from commons.node import publish as publishing
from commons.node import revocation as revoking
from commons.node import sleep as night
from commons.node.context import NodeContext
from commons.store import lessons as lesson_store
from commons.store import peers as peer_store
from commons.store import records as record_store
from commons.store import settings
from commons.store.db import Store
from commons.store.record_reader import RecordReader


log = logging.getLogger("commons.daemon")

WATCH_SECONDS = 1.0  # how often the CLI's commits are looked for
STATUS_SECONDS = 2.0  # how often daemon.json and the peers table are refreshed
PERSIST_SECONDS = 0.1  # how long records received are gathered before they are stored (one batch)
# A node far behind (its readers paused until it stores what waits, GossipParams.max_unstored)
# stores each batch at once but judges the lessons they touch only when arrivals pause this long,
# or this often while they do not: each lesson once for many batches (a lesson that every batch
# touches, as a growing web of trust re-anchors its verifiers, was judged once a batch).
JUDGE_AFTER_QUIET = 1.0
JUDGE_AT_LEAST_EVERY = 30.0
DIAL_SECONDS = 0.5  # how often the peer table is asked whom to dial
SLEEP_CHECK_SECONDS = 60.0  # the sleep scheduler re-reads the clock at least this often
LAST_INGEST = "daemon.last_ingest"
LAST_SYNC = "daemon.last_sync"  # the last sync with any peer, inbound ones included (status reads it)
FIRST_STARTED = "daemon.first_started"
# Own records of these types leave the node only while publishing is on.
OPT_IN_TYPES = (rec.RecordType.LESSON, rec.RecordType.VERIFICATION)


def next_sleep(after: float, at: str) -> float:
    """The first local ``HH:MM`` strictly after ``after`` (unix seconds)."""
    hour, minute = (int(part) for part in at.split(":"))
    local = datetime.fromtimestamp(after).astimezone()
    slot = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if slot.timestamp() <= after:
        slot = (slot + timedelta(days=1)).replace(hour=hour, minute=minute)
    return slot.timestamp()


DEFAULT_PORT_TRIES = 10  # ports tried from the default one: a machine rarely holds ten homes' daemons


async def bind_listeners(host: str, port: int, tries: int, config_file) -> list:
    """Listeners on ``host:port``, or on the next free one of ``tries`` ports from it. Every one
    taken: one line saying which, and how to choose another (the person's to settle)."""
    for candidate in range(port, port + max(1, tries)) if port else (0,):
        try:
            listeners = await trio.open_tcp_listeners(candidate, host=host or None)
        except OSError as error:
            if error.errno != errno.EADDRINUSE:
                raise
            continue
        if candidate != port:
            log.warning("port %d on %s is taken (another commons home's daemon?): listening on %d instead; "
                        "set [network] listen in %s to choose", port, host or "*", candidate, config_file)
        return listeners
    taken = f"port {port}" if tries <= 1 else f"ports {port}-{port + tries - 1}"
    where = host if ":" not in host else f"[{host}]"
    raise CommonsError(f"{taken} on {host or 'every address'} {'is' if tries <= 1 else 'are'} taken (by another "
                       f"commons daemon or another program): choose a free one with `[network] listen = "
                       f"\"{where}:{port + max(1, tries)}\"` in {config_file}, or `commons daemon --listen "
                       f"{where}:{port + max(1, tries)}`")


def _remote_address(stream: trio.SocketStream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]
    except (OSError, ValueError):
        return "unknown address"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class Daemon:
    def __init__(self, home: Home, config: Config, me: Identity, clock: Clock, listen: str, port_tries: int = 1,
                 *, inline_store: bool = False, rng: random.Random | None = None) -> None:
        """``port_tries``: how many ports from the one asked for to try when it is taken (1: that
        one alone; the command line gives more when the port is the default, not one chosen).
        ``inline_store``: its SQLite statements on the loop's thread (``commons.store.db``), for a
        process that runs many daemons in one loop (the experiment's nights); ``commons daemon``
        keeps them on the store's thread, so that a long statement never stalls its gossip.
        ``rng``: the gossip core's randomness (whom to dial and sync with, jitter, reconciliation
        salts), for a simulation that must run the same twice; None: a fresh one, and salts from
        ``os.urandom`` that nobody can foresee."""
        self.home, self.config, self.me, self.clock = home, config, me, clock
        self.port_tries = port_tries
        self.inline_store = inline_store
        try:
            self.host, self.port = _host_port(listen)
        except ValueError as error:
            raise UsageError(f"--listen {listen!r}: expected {error}") from None
        self.network = config.network.key_bytes
        self.started = clock.now()
        self.publishing = False
        self.last_seq = 0
        self.listen_address = ""
        self._links: dict[bytes, tuple[str, str]] = {}  # peer key -> (address, "inbound" | "outbound"), while open
        self._saved_sync: float | None = None
        self._pending: list = []
        self._pending_ready = trio.Event()
        self._dial_now = trio.Event()
        self._revocations = resolve(())  # until _load: the death certificates held
        self.node: GossipNode | None = None
        self.driver: GossipDriver | None = None
        self.context = NodeContext.for_node(config, home, me, clock)
        self._added: set[bytes] = set()  # peers the person added with `commons peers add`
        self._judged_at = float("-inf")  # when statuses last followed what arrived (daemon clock)
        self._heap = HeapFreezer()  # keeps the collector off the records held (daemon/heap.py)
        self._rng = rng

    def now(self) -> float:
        return self.clock.now()

    def _note(self, step: str) -> None:
        """Log the memory held after a start-up step (only with ``COMMONS_TRACE_MEMORY`` set)."""
        note = memory_note(step)
        if note is not None:
            log.info("start-up memory after %s", note)

    # -- start -------------------------------------------------------------------------------------

    async def run(self) -> int:
        fd = acquire_lock(self.home)
        set_malloc_thresholds(START_UP_THRESHOLDS)  # start-up's big transients handed back (daemon/heap.py)
        try:
            async with await Store.open(self.home.database, inline=self.inline_store) as store:
                self.store = store
                return await self._serve(store)
        finally:
            try:
                self.home.daemon_file.unlink()
            except FileNotFoundError:
                pass
            os.close(fd)

    async def _serve(self, store: Store) -> int:
        listeners = await bind_listeners(self.host, self.port, self.port_tries, self.home.config_file)
        bound = listeners[0].socket.getsockname()
        self.port = bound[1]
        self.listen_address = f"{self.host}:{self.port}" if ":" not in self.host else f"[{self.host}]:{self.port}"
        hello_address = None if self.host in ("", "0.0.0.0", "::") else self.listen_address
        if hello_address is None:
            advertised = discovery.advertised_addresses(self.host)
            hello_address = f"{advertised[0]}:{self.port}" if advertised else None
        # Records once stored are served from the store, not held decoded in memory (issue #18).
        self._reader = RecordReader(self.home.database)
        rng = self._rng or random.Random()
        self.node = GossipNode(self.network, self.me.transport_public, rng, params=self.config.gossip.params(),
                               listen=hello_address, admit=door.policy, is_dead=self._is_dead, now=self.now(),
                               read_stored=self._reader.get_wire,
                               salts=(lambda: rng.getrandbits(64)) if self._rng else None)
        self.driver = GossipDriver(self.node, self.now, self._on_events)
        self.half_open = HalfOpenLimit(HalfOpenCaps(self.config.gossip.max_half_open,
                                                    self.config.gossip.max_half_open_per_address))
        self._note("opening")
        await self._load(store)
        self._heap.freeze(self.now())
        set_malloc_thresholds(RUNNING_THRESHOLDS)  # what glibc would come to: intake maps no block on its own
        self._note("freezing")
        log.info("listening on %s (transport key %s); publishing %s; %d records held",
                 self.listen_address, self.me.transport_public.hex(), "on" if self.publishing else "off",
                 self.node.statistics().records_held)  # counted, not a set of every key made
        self._write_status()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._signals, nursery.cancel_scope)
                nursery.start_soon(trio.serve_listeners, self._inbound, listeners)
                nursery.start_soon(self.driver.run_ticker)
                nursery.start_soon(self._dialer, nursery)
                nursery.start_soon(self._persister)
                nursery.start_soon(self._watch_store)
                nursery.start_soon(self._watch_ingest)
                nursery.start_soon(self._sleep_scheduler)
                nursery.start_soon(self._status_writer)
                if self.config.gossip.discovery and discovery.beyond_loopback(self.host):
                    nursery.start_soon(self._discovery)
        finally:
            with trio.CancelScope(shield=True):
                await self._persist()
                if self.node.last_sync() not in (None, self._saved_sync):
                    await settings.put(store, LAST_SYNC, self.node.last_sync(), self.now())
                await peer_store.disconnect_all(store)
                self._reader.close()
        log.info("stopped")
        return 0

    async def _load(self, store: Store) -> None:
        self.publishing = await publishing.is_on(store)
        if await settings.get(store, FIRST_STARTED) is None:
            await settings.put(store, FIRST_STARTED, self.now(), self.now())
        self.last_seq = await record_store.last_seq(store)
        own = await record_store.own_keys(store)
        # The key and day of each record served, side by side: a (key, day) tuple each would be
        # ~60 MB more of 10^6 held while the key set is built; one int object per day, not per record.
        keys: list[bytes] = []
        days: list[int] = []
        day_of_record: dict[int, int] = {}

        def serve(chunk: list[rec.SignedRecord]) -> None:
            for signed in chunk:
                if signed.key not in own or self._may_leave(signed):
                    keys.append(signed.key)
                    created = signed.record.created
                    days.append(day_of_record.setdefault(created, created))

        # One pass over the store: trust keeps the facts of each chunk read, the key set its keys.
        await self.context.trust.read(store, self.now(), each_chunk=serve)
        self._note("reading the records held")
        self.node.load_stored(zip(keys, days), await record_store.refused_keys(store))
        del keys, days
        trim()  # the key set's sort and the chunks read: let go before the evaluation is made
        self._note("loading the key set")
        await self._resolve_revocations()  # makes the evaluation of the facts read, once
        self._note("evaluating trust")
        for entry in self.config.peers:
            self.node.add_peer(bytes.fromhex(entry.transport_key), entry.address, "bootstrap")
        for row in await peer_store.all_peers(store):
            if row.address:
                self.node.add_peer(row.transport_key, row.address, row.source)
        self._added = {row.transport_key for row in await peer_store.added(store)}

    def _may_leave(self, signed: rec.SignedRecord) -> bool:
        """Whether one of this node's own records may be served to peers now."""
        return self.publishing or signed.type not in OPT_IN_TYPES

    def _is_dead(self, signed: rec.SignedRecord) -> bool:
        known = self._revocations  # asked of every record a peer sends: nothing dead is the common case
        if not (known.dead_ids or known.dead_keys or known.pending):
            return False
        return known.refusal(signed) is not None

    # -- connections -------------------------------------------------------------------------------

    async def _inbound(self, stream: trio.SocketStream) -> None:
        try:
            link = await handshake_as_server(stream, network_key=self.network, seed=self.me.transport_seed,
                                             half_open=self.half_open)
        except PeerFailed as error:
            log.debug("inbound connection refused: %s", error)
            return
        if link.remote_key == self.me.transport_public:
            await link.aclose()
            return
        await self._converse(link, link.remote_key, _remote_address(stream), initiator=False)

    async def _converse(self, link, key: bytes, address: str, *, initiator: bool) -> None:
        """Gossip over a handshaken link until it ends, logging who connected and who left."""
        direction = "outbound" if initiator else "inbound"
        log.info("peer %s connected %s %s (%s)", key.hex()[:12], "at" if initiator else "from", address, direction)
        self._links[key] = (address, direction)
        try:
            reason = await self.driver.run_connection(link, key, initiator)
        finally:
            self._links.pop(key, None)
        log.info("peer %s (%s, %s) left: %s", key.hex()[:12], direction, address, reason)

    async def _dialer(self, nursery: trio.Nursery) -> None:
        while True:
            for info in self.node.peers_to_dial(self.now()):
                nursery.start_soon(self._dial_one, info.transport_key, info.address)
            with trio.move_on_after(DIAL_SECONDS):
                await self._dial_now.wait()
            self._dial_now = trio.Event()

    async def _dial_one(self, key: bytes, address: str) -> None:
        try:
            host, port = _host_port(address)
            with trio.fail_after(self.node.params.dial_timeout):
                link = await dial(host, port, network_key=self.network, seed=self.me.transport_seed, server_key=key)
        except (PeerFailed, ValueError, trio.TooSlowError) as error:
            log.debug("dial %s (%s) failed: %s", address, key.hex()[:12], error)
            self.node.dial_failed(key, self.now())
            self.driver.after()
            return
        await self._converse(link, key, address, initiator=True)

    async def _discovery(self) -> None:
        def found(peer: discovery.Found) -> None:
            if self.node.peer(peer.transport_key) is None:
                log.info("discovered %s (%s) on the LAN", peer.address, peer.transport_key.hex()[:12])
            self.node.add_peer(peer.transport_key, peer.address, "discovery")
            self._dial_now.set()

        try:
            await discovery.run_discovery(self.host, self.port, self.me.transport_public, self.network, found)
        except OSError as error:
            log.warning("LAN discovery is off: %s", error)

    # -- records from peers -----------------------------------------------------------------------

    def _on_events(self, events: list) -> None:
        for event in events:
            if isinstance(event, SessionClosed) and event.misbehaved:
                log.warning("peer %s cut off: %s", event.peer_key.hex()[:12], event.reason)
        self._pending.extend(e for e in events if isinstance(e, Accepted | Refused))
        self._pending_ready.set()

    async def _persister(self) -> None:
        while True:
            if self.context.trust is not None and self.context.trust.pending:
                with trio.move_on_after(JUDGE_AFTER_QUIET):
                    await self._pending_ready.wait()
                if not self._pending_ready.is_set():  # arrivals paused: judge what was taken in
                    with collector_paused():
                        await self._follow_statuses(self.now())
                    continue
            await self._pending_ready.wait()
            # Records come a frame at a time, a few per frame while a node catches up: gathering
            # them for a moment pays a batch's fixed cost (a transaction, the trust catch-up, the
            # status log) once per PERSIST_SECONDS instead of once per frame.
            await trio.sleep(PERSIST_SECONDS)
            self._pending_ready = trio.Event()
            with collector_paused():  # what a batch makes outlives it: the freezer collects after
                await self._persist()

    async def _persist(self) -> None:
        pending, self._pending = self._pending, []
        received = [r for e in pending if isinstance(e, Accepted) for r in e.records]
        refused = [(e.key, e.reason) for e in pending if isinstance(e, Refused)]
        now = self.now()
        behind = self.node.backlogged  # the readers wait for this batch to be stored: more is coming
        # The batch is out of _pending now: cancelled before its commit (SIGTERM while the persister
        # waits on the store), it would be lost, though the node served it and its peers count it
        # delivered. Storing it is not cut short; what follows it may be.
        with trio.CancelScope(shield=True):
            if received:
                before, after = await record_store.add_received(self.store, received, now)
                # pick_up() announces what the CLI committed after last_seq: skip past this batch only
                # when nothing was committed between (a sleep signing verifications meanwhile).
                if before == self.last_seq:
                    self.last_seq = after
                self.node.stored(r.key for r in received)
                log.info("received %d records", len(received))
            if refused:
                await record_store.add_refused(self.store, refused, now)
                log.info("refused %d records by local policy", len(refused))
        # A revocation, or a newly dead id (it kills what was derived from it, even what came
        # first), changes the death certificates.
        died = any(refused_as_dead(reason) for _, reason in refused)
        revoking_now = died or any(r.type is rec.RecordType.REVOCATION for r in received)
        if revoking_now:
            await self._resolve_revocations()
        behind = behind or bool(self._pending)  # or more arrived while this batch was stored
        if behind and not revoking_now and now - self._judged_at < JUDGE_AT_LEAST_EVERY:
            await revoking.take_in_unjudged(self.store, self.context, now, received)
        elif received or died:
            # Statuses may change (a promotion, a revocation): the memory folder follows at once.
            await self._follow_statuses(now, received, died)
        if received:  # after trust took them in: what it holds of them is frozen with the rest
            self._heap.took_in(len(received), now)

    async def _follow_statuses(self, now: float, received: Sequence[rec.SignedRecord] = (), died: bool = False) -> None:
        """Statuses follow what was stored (and what was taken in unjudged before it), the memory
        folder with them; the changes are logged."""
        effect = await revoking.after_intake(self.store, self.context, now, received, refused_dead=died)
        for change in effect.status_changes:
            log.info("lesson %s: %s -> %s (%s)", change.record_id.hex()[:12], change.before, change.after, change.why)
        self._judged_at = now

    async def _resolve_revocations(self) -> None:
        """The death certificates, from the evaluation peer review keeps of every record held (the
        records and the ids refused as dead): one evaluation serves both, and it is cached."""
        held = await self.context.trust.held(self.store, self.now())
        self._revocations = held.view.revocations

    # -- what the CLI changed ---------------------------------------------------------------------

    async def _watch_store(self) -> None:
        version = await self.store.data_version()
        while True:
            await trio.sleep(WATCH_SECONDS)
            now_version = await self.store.data_version()
            if now_version != version:
                version = now_version
                await self.pick_up()

    async def pick_up(self) -> None:
        """Act on the CLI's commits: publishing, new records, added and removed peers."""
        store = self.store
        was = self.publishing
        self.publishing = await publishing.is_on(store)
        if self.publishing != was:
            log.info("publishing switched %s", "on" if self.publishing else "off")
        if was and not self.publishing:
            own = await record_store.own_records(store)
            withdrawn = self.node.withdraw(r.key for r in own if not self._may_leave(r))
            log.info("stopped serving %d of this node's own records", withdrawn)
        if self.publishing:
            made = await publishing.publish_pending(store, self.context, self.now())
            if made.records:
                log.info("published %d records (lessons and verifications)", len(made.records))
        last, fresh = await record_store.since(store, self.last_seq, ("own", "import"))
        self.last_seq = last
        if self.publishing and not was:
            fresh = await record_store.own_records(store) + fresh
        share = [r for r in fresh if self._may_leave(r)]
        if share:
            added = self.driver.add_local(*share)
            self.node.stored(r.key for r in share)  # they came from the store
            if added:
                log.info("announcing %d new records", added)
        if any(r.type is rec.RecordType.REVOCATION for r in fresh):
            await self._resolve_revocations()
        added = await peer_store.added(store)
        for row in added:
            info = self.node.peer(row.transport_key)
            if info is None or info.address != row.address:
                log.info("peer added: %s (%s)", row.address, row.transport_key.hex()[:12])
                self.node.add_peer(row.transport_key, row.address, peer_store.ADDED)
                self._dial_now.set()
        for key in self._added - {row.transport_key for row in added}:
            log.info("peer removed: %s", key.hex()[:12])
            self.node.remove_peer(key, self.now())
        self._added = {row.transport_key for row in added}

    # -- the local loop ---------------------------------------------------------------------------

    async def _watch_ingest(self) -> None:
        roots = [str(expand_root(r)) for r in self.config.ingest.roots]
        while True:
            try:
                paths = await trio.to_thread.run_sync(discover, roots)
                if paths:
                    archive = await trio.to_thread.run_sync(Archive, self.home.archive_dir)
                    report = await ingest_paths(self.store, archive, paths, self.now())
                    if report.bytes_read:
                        await settings.put(self.store, LAST_INGEST, self.now(), self.now())
                        new = sum(report.episodes.values())
                        log.info("ingested %d new episodes from %d transcripts", new, report.transcripts)
            except (ArchiveError, OSError, CommonsError) as error:
                log.warning("ingest failed: %s", error)
            await trio.sleep(self.config.ingest.poll_seconds)

    async def _sleep_scheduler(self) -> None:
        node = self.context
        while True:
            last = await lesson_store.last_sleep_at(self.store)
            reference = last if last is not None else await settings.get(self.store, FIRST_STARTED, self.started)
            due = next_sleep(reference, self.config.sleep.at)
            now = self.now()
            if now < due:
                await trio.sleep(min(due - now, SLEEP_CHECK_SECONDS))
                continue
            log.info("sleeping (the night of %s)", format_time(due))
            try:
                result = await night.sleep(self.store, node, now)
                log.info("slept: %s", result.count)
            except CommonsError as error:
                log.warning("sleep failed: %s", error)
                await trio.sleep(SLEEP_CHECK_SECONDS)
                continue
            if self.publishing:
                await self.pick_up()

    # -- status -----------------------------------------------------------------------------------

    def status(self) -> dict:
        stats = self.node.statistics()
        last_sync = self.node.last_sync()
        open_sessions = [s for s in self.node.sessions() if not s.closed]
        return {
            "pid": os.getpid(),
            "listen": self.listen_address,
            "transport_key": self.me.transport_public.hex(),
            "started": format_time(self.started),
            "updated": format_time(self.now()),
            "publishing": self.publishing,
            "connected": sorted(s.peer_key.hex() for s in open_sessions),
            "sessions": sorted(({"key": s.peer_key.hex(), "direction": "outbound" if s.initiator else "inbound",
                                 "address": self._links.get(s.peer_key, (None,))[0]} for s in open_sessions),
                               key=lambda entry: entry["key"]),
            "last_sync": format_time(last_sync) if last_sync is not None else None,
            "gossip": {name: getattr(stats, name) for name in stats.__dataclass_fields__},
        }

    def _write_status(self) -> None:
        path = self.home.daemon_file
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.status(), indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, path)

    async def _status_writer(self) -> None:
        while True:
            self._write_status()
            sessions = {s.peer_key: s for s in self.node.sessions()}
            rows = [peer_store.PeerRow(p.transport_key, p.address, peer_store.SOURCE_WORDS.get(p.source, p.source),
                                       0.0, sessions[p.transport_key].score if p.transport_key in sessions
                                       else -float(p.strikes), p.last_sync, p.connected)
                    for p in self.node.known_peers()]
            await peer_store.record_seen(self.store, rows, self.now())
            last_sync = self.node.last_sync()
            if last_sync is not None and last_sync != self._saved_sync:  # for status once the daemon is gone
                await settings.put(self.store, LAST_SYNC, last_sync, self.now())
                self._saved_sync = last_sync
            await trio.sleep(STATUS_SECONDS)

    async def _signals(self, scope: trio.CancelScope) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            async for number in received:
                log.info("%s: finishing the current transaction and stopping", signal.Signals(number).name)
                scope.cancel()
                return
