"""A morning of the demo's federation: one daemon per node on loopback, started, joined, stopped.

The demo scripts its days with ``--at``. A daemon's clock starts at the time it is given and runs
at real speed, so the demo runs the federation in *mornings*: every node's daemon starts at that
morning's time, the nodes are joined (each dials the first node and its predecessor), records
flow until what the demo waits for has happened, and the daemons stop (SIGTERM: each finishes its
transaction and exits 0). Between mornings the demo works through the CLI, as a person would.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

from commons.errors import CommonsError

WAIT_SECONDS = 45
# Timers for loopback, where a round trip takes a millisecond: anti-entropy every half second and
# a failed dial retried at once (the defaults are made for the internet, and the demo would wait
# them out).
GOSSIP_SETTINGS = "\n[gossip]\nsync_interval = 0.5\nbackoff_base = 0.2\nbackoff_cap = 1.0\n"


class Federation:
    """``with Federation(demo, nodes, at) as fed: fed.wait_until(...)``."""

    def __init__(self, demo, nodes: Sequence, at: str):
        self.demo, self.nodes, self.at = demo, list(nodes), at
        self.processes: list[subprocess.Popen] = []
        self.addresses: dict[str, str] = {}

    def __enter__(self) -> "Federation":
        say = self.demo.say
        for node in self.nodes:
            config = node.home / "config.toml"
            if "[gossip]" not in config.read_text(encoding="utf-8"):
                say(f"$ printf {GOSSIP_SETTINGS.strip()!r} >> {config}")
                with open(config, "a", encoding="utf-8") as handle:
                    handle.write(GOSSIP_SETTINGS)
        try:
            for node in self.nodes:  # all start at once: each spends a second importing commons
                say(f"$ COMMONS_HOME={node.home} commons --at {self.at} daemon --listen 127.0.0.1:0 &")
                with open(node.home / "daemon.stderr", "ab") as log:
                    self.processes.append(subprocess.Popen(
                        [sys.executable, "-m", "commons", "--at", self.at, "daemon", "--listen", "127.0.0.1:0"],
                        env=node.env(), stdout=log, stderr=log))
            for node, process in zip(self.nodes, self.processes):
                self.addresses[node.name] = self._wait_listening(node, process)
            self._join()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _join(self) -> None:
        """Each node dials the first node and the one before it (addresses change every morning)."""
        transport = {node.name: self.demo.node_json(node, "id", show=False)["transport"] for node in self.nodes}
        first = self.nodes[0]
        for index, node in enumerate(self.nodes[1:], start=1):
            for other in {first.name: first, self.nodes[index - 1].name: self.nodes[index - 1]}.values():
                self.demo.commons(node, "peers", "add", self.addresses[other.name], transport[other.name], show=False)

    def wait_until(self, done: Callable[[], bool], what: str) -> float:
        """Poll ``done`` until it holds (bounded); returns the seconds it took."""
        started = time.monotonic()
        while time.monotonic() - started < WAIT_SECONDS:
            if done():
                took = time.monotonic() - started
                self.demo.say(f"  {what}: after {took:.1f} s")
                return took
            time.sleep(0.1)
        raise CommonsError(f"the federation did not get there within {WAIT_SECONDS} s: {what} "
                           f"(see each home's daemon.stderr)")

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.processes:
            self.demo.say("$ kill -TERM <each daemon>  # each finishes its transaction and exits 0")
        self.processes.clear()

    def _wait_listening(self, node, process: subprocess.Popen) -> str:
        daemon_file = node.home / "data" / "daemon.json"
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            try:
                info = json.loads(daemon_file.read_text(encoding="utf-8"))
                if info.get("pid") == process.pid:
                    return info["listen"]
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.1)
        raise CommonsError(f"{node.name}'s daemon did not start (see {node.home / 'daemon.stderr'})")


def export_ids(demo, node, rtype: str) -> set[str]:
    """The ids of a node's records of one type, read with `commons export` while its daemon runs."""
    code, out, err = demo.run_cli(node, ["export", "--type", rtype])
    if code != 0:
        raise CommonsError(f"commons export failed for {node.name}: {err.strip()}")
    return {json.loads(line)["id"] for line in out.splitlines() if line.strip()}
