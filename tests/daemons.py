"""Real `commons daemon` processes in temporary homes, for the daemon and discovery tests."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import nacl.signing

from commons import identity
from commons.core import records as rec
from commons.home import Home

FAST_CONFIG = """
[gossip]
sync_interval = 1.0
backoff_base = 0.3
backoff_cap = 2.0

[ingest]
roots = []
poll_seconds = 5.0
"""


def wait_for(condition, timeout: float = 20.0, what: str = "condition") -> None:
    """Poll a condition on real processes, bounded in time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


class Node:
    def __init__(self, root: Path, name: str, network_key: str | None = None) -> None:
        self.name = name
        self.path = root / name
        self.home = Home(config_dir=self.path, data_dir=self.path / "data")
        self.env = dict(os.environ, COMMONS_HOME=str(self.path))
        self.process: subprocess.Popen | None = None
        self.cli("init", *(["--network-key", network_key] if network_key else []))
        with open(self.home.config_file, "a", encoding="utf-8") as handle:
            handle.write(FAST_CONFIG)
        self.me = identity.load(self.home)
        self.transport = self.me.transport_public.hex()

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "commons", *args], env=self.env, capture_output=True,
                              text=True, timeout=60)
        if check and done.returncode != 0:
            raise AssertionError(f"{self.name}: commons {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done

    def start(self, listen: str = "127.0.0.1:0", netns: str | None = None, timeout: float = 20.0) -> None:
        argv = [sys.executable, "-m", "commons", "daemon", "--listen", listen]
        if netns:
            argv = ["ip", "netns", "exec", netns, *argv]
        self.log = open(self.path / "daemon.stderr", "ab")
        self.process = subprocess.Popen(argv, env=self.env, stdout=self.log, stderr=self.log)
        wait_for(lambda: self.daemon_info() is not None or self.process.poll() is not None, timeout,
                 f"{self.name} to start")
        assert self.process.poll() is None, self.stderr()

    def daemon_info(self) -> dict | None:
        try:
            return json.loads(self.home.daemon_file.read_text())
        except (OSError, ValueError):
            return None

    @property
    def address(self) -> str:
        return self.daemon_info()["listen"]

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=20)
        self.log.close()
        return code

    def stderr(self) -> str:
        return (self.path / "daemon.stderr").read_text(errors="replace")

    def keys(self, rtype: str | None = None, origin: str | None = None) -> set[bytes]:
        """Record keys committed to this node's store (read straight from SQLite, as another process);
        ``origin``: only those it made (``own``) or received (``peer``)."""
        db = sqlite3.connect(f"file:{self.home.database}?mode=ro", uri=True, timeout=10)
        try:
            wheres = [(column, value) for column, value in (("type", rtype), ("origin", origin)) if value]
            sql = "SELECT key FROM records" + "".join(
                f"{' AND' if i else ' WHERE'} {column} = ?" for i, (column, _) in enumerate(wheres))
            return {row[0] for row in db.execute(sql, tuple(value for _, value in wheres))}
        finally:
            db.close()

    def sign_lessons(self, count: int, start: int = 0, words: str = "fails",
                     texts: list[str] | None = None) -> list[rec.SignedRecord]:
        """Own lesson records, signed with this node's author key and stored as `own` (``texts``:
        these words, one lesson each, in place of ``count`` made-up ones)."""
        from commons.config import load_config
        from commons.runtime import run
        from commons.store import records as record_store
        from commons.store.db import Store

        network = load_config(self.home.config_file).network.key_bytes
        key: nacl.signing.SigningKey = self.me.author_key
        now = time.time()
        signed = [rec.sign(rec.Lesson(
            network=network, author=self.me.author_public, created=rec.day_of(now), kind=rec.LessonKind.ERROR,
            text=texts[i - start] if texts else f"`tool{i}` {words} on {self.name}'s machine with exit code {i % 7 + 1}.",
            scope=rec.Scope.SHARED, topics=("tools",),
            prediction=rec.Prediction(f"running tool{i}", f"exit code {i % 7 + 1}")), key)
            for i in range(start, start + (len(texts) if texts else count))]

        async def store_them() -> None:
            async with await Store.open(self.home.database) as store:
                await record_store.add_own(store, signed, now)

        run(store_them)
        return signed
