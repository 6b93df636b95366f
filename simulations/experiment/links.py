"""How the experiment's nodes meet at night: real daemons on loopback, each behind a byte-counting
relay (:class:`Network`).

By default the night's N daemons run in this one process, in one trio loop: each is the very
``commons.daemon.main.Daemon`` that ``commons daemon`` runs (its own home, lock, store, identity and
``--at`` clock, its own TCP listener and dialer through the relays), so the bytes on the wire and
what crosses are the same; what is saved is starting N Python processes every night (about a
second of CPU each, on 2 cores the largest part of a night). The loop runs in virtual time
(``trio.testing.MockClock``: when every task waits, the clock jumps to the next timer), so gossip
intervals, quiet rounds and timeouts cost no real sleeping, and a night takes the CPU it needs and
no more; the relays are tasks of the same loop and each daemon's gossip draws from a generator
seeded by the run's seed, the night and the node. ``processes=True`` starts one ``commons daemon``
process per node instead, in real time."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import trio
import trio.testing

from commons import identity, runtime
from commons.clock import parse_time
from commons.config import load_config
from commons.daemon.main import Daemon
from simulations.experiment.homes import REPO, ExperimentError, Node
from simulations.experiment.inline import threads_inline
from simulations.experiment.relay import Relay

SETTLE_SECONDS = 60.0  # longest a night's exchange may take before the harness says so
QUIET_SECONDS = 1.0  # key sets unchanged this long (at sync_interval 0.2 s: ~5 rounds per session) = settled
# In process, the quiet is counted in syncs, not seconds: settled once every daemon has finished
# this many syncs since the key sets last changed (on a loaded machine a second may hold no round;
# on an idle one five rounds moved nothing after the second).
QUIET_SYNCS = 2
POLL_SECONDS = 0.1  # how often the harness looks whether the night has settled


@dataclass(frozen=True)
class LoopClock:
    """The daemons' clock on a night in process: starts at ``at`` and runs at the trio loop's time
    (virtual under ``MockClock``), so "now" moves exactly as far as the timers the daemons wait on.
    Made inside the loop."""

    at: float
    started: float = field(default_factory=trio.current_time)

    def now(self) -> float:
        return self.at + (trio.current_time() - self.started)


def _bindable(port: int, reuse: bool = False) -> bool:
    """Whether ``port`` on 127.0.0.1 is free; with ``reuse``, as a listener binds it (SO_REUSEADDR:
    the connections a node's own daemon closed last night, in TIME_WAIT there, do not count)."""
    with socket.socket() as s:
        if reuse:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port() -> int:
    """A port for one node's daemon for the whole run (it listens there each night). Drawn below
    Linux's ephemeral range (32768-60999): an ephemeral port is free now, but between nights any
    outgoing connection (a relay's, another seed's process) may be given it."""
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(20000, 32768)
        if _bindable(port):
            return port
    raise ExperimentError("no free port below 32768 on 127.0.0.1 for the night's daemons")


def everywhere(served: Sequence[frozenset], known: Sequence[frozenset]) -> bool:
    """Every record a node serves is known to every node: held, or refused (a refused or dead key
    stays in a node's key set, withheld). A new own record that has not crossed yet counts too: a
    lesson signed at sleep must reach every node the night it is made, not when two quiet rounds
    happened to pass it by (seed 1: a lesson reached two nodes the night it was made, the others
    one to five nights later)."""
    return frozenset().union(*served) <= frozenset.intersection(*known)


def _synced(node: Node, pid: int) -> bool:
    """This night's daemon of ``node`` is up and has synced with a peer at least once."""
    try:
        status = json.loads((node.home / "data" / "daemon.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return status.get("pid") == pid and status.get("last_sync") is not None


class Network:
    """N nodes as real daemons each night on loopback, each reachable only through its counting
    relay, joined in a ring of bootstrap peers (node i knows node i+1): everything else they learn
    by peer exchange. Not a full mesh."""

    kind = "daemon"

    def __init__(self, nodes: Sequence[Node], publish: bool, processes: bool = False, seed: int | str = 0):
        """``seed``: what the daemons' gossip randomness is drawn from, each night and node its own
        (in process; a daemon in a process of its own draws from the system)."""
        self.nodes = list(nodes)
        self.publish = publish
        self.processes = processes
        self.seed = seed
        self.ports = {n.name: _free_port() for n in self.nodes}
        self.relays = {n.name: Relay(("127.0.0.1", self.ports[n.name])) for n in self.nodes}
        self.seconds: list[float] = []
        ids = {n.name: n.cli("id", "--json") for n in self.nodes}
        for i, node in enumerate(self.nodes):
            if len(self.nodes) > 1:
                other = self.nodes[(i + 1) % len(self.nodes)]
                host, port = self.relays[other.name].address
                node.cli("peers", "add", f"{host}:{port}", ids[other.name]["transport"], "--json")
            node.cli("publish", "on" if publish else "off", "--json")

    def exchange(self, at: str) -> None:
        """Start every daemon ``--at`` the night, let them gossip until nothing moves, stop them."""
        # Between nights another run's daemon on this machine may have drawn a node's port and be
        # listening there ("port … is taken": the whole seed lost): such a node moves to a new port
        # (its relay with it; peers that learnt its old address by exchange find it through its relay).
        for name, port in self.ports.items():
            if not _bindable(port, reuse=True):
                self.ports[name] = _free_port()
                self.relays[name].target = ("127.0.0.1", self.ports[name])
        if not self.processes:
            started = time.monotonic()
            # N daemons in one loop each open a receiver for SIGINT/SIGTERM; closed in whatever
            # order they are cancelled, the handlers left behind can be a finished run's: put back
            # the ones this process had.
            saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                with threads_inline():  # as the commands do (simulations.experiment.inline)
                    runtime.run(self._exchange_in_process, at, bridge=False,
                                clock=trio.testing.MockClock(autojump_threshold=0))
            finally:
                for sig, handler in saved.items():
                    signal.signal(sig, handler)
            self.seconds.append(time.monotonic() - started)
            return
        started = time.monotonic()
        for relay in self.relays.values():
            relay.start_threads()
        procs = []
        try:
            for node in self.nodes:
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "commons", "--at", at, "daemon", "--listen",
                     f"127.0.0.1:{self.ports[node.name]}"], cwd=REPO,
                    env=dict(os.environ, COMMONS_HOME=str(node.home)),
                    stdout=subprocess.DEVNULL, stderr=open(node.root / "daemon.log", "ab")))
            self._wait_settled(procs)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self.seconds.append(time.monotonic() - started)

    async def _exchange_in_process(self, at: str) -> None:
        # trio runs a batch of ready tasks in a random order (so that no code comes to depend on
        # one); its generator is the one Hypothesis seeds to replay a run, and so is it here.
        trio._core._run._r.seed(f"{self.seed}/{at}")
        clock = LoopClock(parse_time(at))
        daemons = []
        for node in self.nodes:
            home = node.paths
            # Their statements run inline: the loop is theirs alone, and a night is short.
            daemons.append(Daemon(home, load_config(home.config_file), identity.load(home), clock,
                                  f"127.0.0.1:{self.ports[node.name]}", inline_store=True,
                                  rng=random.Random(f"{self.seed}/{at}/{node.name}")))
        async with trio.open_nursery() as nursery:
            for relay in self.relays.values():
                nursery.start_soon(relay.serve)
            for daemon in daemons:
                nursery.start_soon(daemon.run)
            await self._settle_in_process(daemons)
            nursery.cancel_scope.cancel()  # each daemon stores what it received and closes (as on SIGTERM)

    async def _settle_in_process(self, daemons: Sequence[Daemon]) -> None:
        """:meth:`_wait_settled`, read from the daemons themselves instead of their files."""
        deadline = trio.current_time() + SETTLE_SECONDS
        last, marks, syncs = None, [], []
        while trio.current_time() < deadline:
            await trio.sleep(POLL_SECONDS)
            if not all(d.node is not None and any(p.last_sync is not None for p in d.node.known_peers())
                       for d in daemons):
                continue
            held = [frozenset(d.node.record_keys()) for d in daemons]
            now = [d.node.last_sync() for d in daemons]
            if held != last:
                last, marks, syncs = held, now, [0] * len(daemons)
                continue
            for i, at in enumerate(now):
                if at != marks[i]:
                    marks[i], syncs[i] = at, syncs[i] + 1
            if everywhere(held, [frozenset(d.node.keys()) for d in daemons]) and min(syncs) >= QUIET_SYNCS:
                return
        raise ExperimentError(f"the daemons did not settle within {SETTLE_SECONDS:.0f} s")

    def _wait_settled(self, procs: Sequence[subprocess.Popen]) -> None:
        """:meth:`_settle_in_process`'s rule, read from the nodes' stores: every daemon has synced
        with a peer (its ``daemon.json`` says so), every record a node serves is known to every node
        (:func:`everywhere`), and the key sets stayed the same for ``QUIET_SECONDS``."""
        deadline = time.monotonic() + SETTLE_SECONDS
        last, quiet_since = None, time.monotonic()
        while time.monotonic() < deadline:
            for proc, node in zip(procs, self.nodes):
                if proc.poll() is not None:
                    raise ExperimentError(f"node {node.name}'s daemon exited {proc.returncode}; "
                                          f"see {node.root / 'daemon.log'}")
            if not all(_synced(node, proc.pid) for node, proc in zip(self.nodes, procs)):
                time.sleep(POLL_SECONDS)
                continue
            held = [frozenset(n.keys()) for n in self.nodes]
            if held != last:
                last, quiet_since = held, time.monotonic()
            elif (time.monotonic() - quiet_since >= QUIET_SECONDS
                  and everywhere([frozenset(n.served(self.publish)) for n in self.nodes],
                                 [frozenset(n.known()) for n in self.nodes])):
                return
            time.sleep(POLL_SECONDS)
        raise ExperimentError(f"the daemons did not settle within {SETTLE_SECONDS:.0f} s")

    def bytes_crossed(self) -> int:
        return sum(r.bytes for r in self.relays.values())

    def connections(self) -> int:
        return sum(r.connections for r in self.relays.values())

    def close(self) -> None:
        for relay in self.relays.values():
            relay.close()
