"""Crash safety (issue #19, item 8): kill -9, again and again, while a daemon receives records from
a second daemon, ingests a transcript that keeps growing, and `commons sleep` runs beside it.

After every kill: SQLite's integrity check passes, nothing another process had seen committed is
gone (records, episodes, sleep runs), and the daemon starts again (a fresh ``daemon.json`` with the
new pid: the lock of the killed one does not outlive it). At the end a last start catches up, every
tool failure appended to the transcript is an episode exactly once, the daemon stops with exit 0 on
SIGTERM, and `commons store check` passes.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.daemons import Node, wait_for
from tests.transcripts import pip_fails, session

KILLS = 20
RECORDS = 3_000  # at the 200 records/s per peer rate limit, enough to be receiving through most kills


def snapshot(node: Node) -> dict[str, set]:
    """What is committed to the node's store, read as another process reads it."""
    db = sqlite3.connect(f"file:{node.home.database}?mode=ro", uri=True, timeout=10)
    try:
        return {
            "records": {row[0] for row in db.execute("SELECT key FROM records")},
            "episodes": {row[0] for row in db.execute("SELECT key FROM episodes")},
            "sleeps": {row[0] for row in db.execute("SELECT id FROM sleep_runs")},
        }
    finally:
        db.close()


def integrity(node: Node) -> list[str]:
    db = sqlite3.connect(f"file:{node.home.database}?mode=ro", uri=True, timeout=10)
    try:
        return [row[0] for row in db.execute("PRAGMA integrity_check")]
    finally:
        db.close()


def error_episodes(node: Node) -> int:
    db = sqlite3.connect(f"file:{node.home.database}?mode=ro", uri=True, timeout=10)
    try:
        return db.execute("SELECT count(*) FROM episodes WHERE kind = 'error'").fetchone()[0]
    finally:
        db.close()


class GrowingTranscript:
    """One Claude Code session that gains a failed `pip install` now and then, appended as the
    agent appends to its transcript (whole lines, the file never rewritten)."""

    def __init__(self, folder: Path) -> None:
        self.session = session(folder, 7, "growing")
        self.session.path.parent.mkdir(parents=True, exist_ok=True)
        self.session.user("set the project up")
        self.written = 0
        self.failures = 0

    def grow(self) -> None:
        pip_fails(self.session, f"package-{self.failures}")
        self.failures += 1
        new = self.session.lines[self.written:]
        with open(self.session.path, "a", encoding="utf-8") as out:
            out.write("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in new))
        self.written = len(self.session.lines)


def start(node: Node) -> subprocess.Popen:
    """Start the node's daemon and wait for *its* daemon.json (a killed one leaves its own behind)."""
    node.log = open(node.path / "daemon.stderr", "ab")
    argv = [sys.executable, "-m", "commons", "daemon", "--listen", "127.0.0.1:0"]
    process = subprocess.Popen(argv, env=node.env, stdout=node.log, stderr=node.log)
    node.process = process
    wait_for(lambda: (node.daemon_info() or {}).get("pid") == process.pid or process.poll() is not None,
             30, f"{node.name}'s daemon to start")
    assert process.poll() is None, node.stderr()[-2000:]
    return process


@pytest.mark.slow
@pytest.mark.timeout(600)  # about 60 s on an idle two-core machine, 160 s under a load of 10
def test_kill_9_over_and_over_loses_nothing_committed_and_the_daemon_always_restarts(tmp_path):
    rng = random.Random(19)
    source, sink = Node(tmp_path, "source"), Node(tmp_path, "sink")
    transcripts = GrowingTranscript(tmp_path / "transcripts")
    config = sink.home.config_file.read_text().replace(
        "[ingest]\nroots = []\npoll_seconds = 5.0",
        f"[ingest]\nroots = [{json.dumps(str(tmp_path / 'transcripts'))}]\npoll_seconds = 0.2")
    assert "poll_seconds = 0.2" in config
    sink.home.config_file.write_text(config)
    signed = {r.key for r in source.sign_lessons(RECORDS)}
    source.cli("publish", "on")
    sleeper = None
    try:
        start(source)
        sink.cli("peers", "add", source.address, source.transport)
        for kill in range(KILLS):
            transcripts.grow()
            daemon = start(sink)  # raises unless it comes up after every kill
            sleeper = subprocess.Popen([sys.executable, "-m", "commons", "sleep"], env=sink.env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.2, 0.8))
            if kill >= KILLS // 2 and not snapshot(sink)["records"]:
                # A loaded machine can take longer than the window to connect and sync: from half-way
                # on, a kill waits for the first records, so some kills land while they arrive.
                wait_for(lambda: snapshot(sink)["records"], 60, "the sink to begin receiving")
                time.sleep(rng.uniform(0.0, 0.3))
            before = snapshot(sink)
            daemon.kill()
            sleeper.kill()
            daemon.wait(timeout=20)
            sleeper.wait(timeout=20)
            sink.log.close()
            assert integrity(sink) == ["ok"], f"after kill {kill + 1}"
            after = snapshot(sink)
            for what in before:
                lost = before[what] - after[what]
                assert not lost, f"kill {kill + 1} lost {len(lost)} committed {what}"
        assert snapshot(sink)["records"], sink.stderr()[-2000:]
        start(sink)
        wait_for(lambda: error_episodes(sink) == transcripts.failures, 30,
                 f"all {transcripts.failures} failures of the transcript to be episodes")
        wait_for(lambda: snapshot(sink)["records"] >= signed, 60, "the sink to hold every record of the source")
        assert sink.stop(signal.SIGTERM) == 0, sink.stderr()[-2000:]
        assert error_episodes(sink) == transcripts.failures  # each failure once: no line read twice
        check = json.loads(sink.cli("store", "check", "--json").stdout)
        assert check["ok"] is True, check
    finally:
        for process in (source.process, sink.process, sleeper):
            if process is not None and process.poll() is None:
                process.kill()
