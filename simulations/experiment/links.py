"""How the experiment's two nodes meet: real daemons on loopback through a byte-counting relay
(:class:`DaemonLink`), or the labelled export/import fallback (:class:`FileLink`)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Protocol

from simulations.experiment.homes import REPO, ExperimentError, Node

SETTLE_SECONDS = 20.0  # longest a night's exchange may take before the harness says so


# --------------------------------------------------------------------------------------------
# Links: how two homes meet at night


class Link(Protocol):
    kind: str  # "daemon" or "file (fallback)": said in every output

    def start(self, a: Node, b: Node) -> None: ...

    def exchange(self, at: str) -> None: ...

    def bytes_crossed(self) -> int: ...

    def close(self) -> None: ...


class _Relay:
    """A loopback TCP relay that counts the bytes it carries: the wire between the two daemons."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()
        self.bytes = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                conn.close()
                continue
            for src, dst in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                with self._lock:
                    self.bytes += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaemonLink:
    """Both nodes as real daemons each night, dialling each other through counting relays."""

    kind = "daemon"

    def __init__(self, publish: bool):
        self.publish = publish
        self.relays: list[_Relay] = []
        self.nodes: tuple[Node, Node] | None = None
        self.ports: dict[str, int] = {}
        self.seconds: list[float] = []

    def start(self, a: Node, b: Node) -> None:
        self.nodes = (a, b)
        ids = {n.name: n.cli("id", "--json") for n in (a, b)}
        for node in (a, b):
            self.ports[node.name] = _free_port()
        for node, other in ((a, b), (b, a)):
            relay = _Relay(("127.0.0.1", self.ports[other.name]))
            self.relays.append(relay)
            host, port = relay.address
            node.cli("peers", "add", f"{host}:{port}", ids[other.name]["transport"], "--json")
            node.cli("publish", "on" if self.publish else "off", "--json")

    def exchange(self, at: str) -> None:
        assert self.nodes is not None, "DaemonLink.exchange() before start() (API misuse)"
        started = time.monotonic()
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

    def _wait_settled(self, procs: Sequence[subprocess.Popen]) -> None:
        """Until each node holds every record the other authored (or the time is up)."""
        a, b = self.nodes
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            for proc, node in zip(procs, self.nodes):
                if proc.poll() is not None:
                    raise ExperimentError(f"node {node.name}'s daemon exited {proc.returncode}; "
                                          f"see {node.root / 'daemon.log'}")
            records = {n.name: n.records() for n in (a, b)}
            held = {name: {r["id"] for r in rs} for name, rs in records.items()}
            own = {n.name: {r["id"] for r in records[n.name] if r["record"].get("author") == n.author}
                   for n in (a, b)}
            if own[a.name] <= held[b.name] and own[b.name] <= held[a.name]:
                return
            time.sleep(0.2)
        raise ExperimentError(f"the daemons did not exchange their records within {SETTLE_SECONDS:.0f} s")

    def bytes_crossed(self) -> int:
        return sum(r.bytes for r in self.relays)

    def close(self) -> None:
        for relay in self.relays:
            relay.close()


class FileLink:
    """FALLBACK, not the experiment's wire: each node's records exported and imported by the other.

    Used only when the daemon commands are missing; the bytes counted are the exported lines.
    """

    kind = "file (fallback)"

    def __init__(self, publish: bool):
        self.publish = publish
        self.nodes: tuple[Node, Node] | None = None
        self.carried = 0
        self.seen: dict[str, set[str]] = {}

    def start(self, a: Node, b: Node) -> None:
        self.nodes = (a, b)
        for node in (a, b):
            self.seen[node.name] = set()
            node.cli("publish", "on" if self.publish else "off", "--json")

    def exchange(self, at: str) -> None:
        assert self.nodes is not None, "FileLink.exchange() before start() (API misuse)"
        for src, dst in (self.nodes, self.nodes[::-1]):
            lines = [json.dumps(r) for r in src.records() if r["id"] not in self.seen[dst.name]]
            if not lines:
                continue
            path = dst.root / "incoming.jsonl"
            path.write_text("\n".join(lines) + "\n", "utf-8")
            self.carried += path.stat().st_size
            dst.cli("import", str(path), "--json", at=at, check=False)
            path.unlink()
            self.seen[dst.name] |= {json.loads(line)["id"] for line in lines}

    def bytes_crossed(self) -> int:
        return self.carried

    def close(self) -> None:
        pass


def make_link(publish: bool, prefer: str = "daemon") -> Link:
    """The real daemons; ``prefer="file"`` for the export/import fallback (labelled as such)."""
    return DaemonLink(publish) if prefer == "daemon" else FileLink(publish)
