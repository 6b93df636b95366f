"""The daemon's logs (issue #19, item 7): journal-friendly lines when stderr is systemd's journal,
timestamped lines otherwise, and a daemon.log rotated by size."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys

import pytest

from commons.config import LogConfig, parse_config
from commons.daemon.logs import setup_logging
from commons.errors import ConfigError
from commons.home import Home
from tests.daemons import Node, wait_for

STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ")


@pytest.fixture
def logged(tmp_path):
    """Call setup_logging, and take its handlers off the `commons` logger afterwards."""
    added: list[logging.Handler] = []

    def setup(*args, **kwargs):
        added.extend(setup_logging(*args, **kwargs))

    yield setup
    root = logging.getLogger("commons")
    for handler in added:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(logging.NOTSET)


def journal_of(path) -> dict[str, str]:
    status = os.stat(path)
    return {"JOURNAL_STREAM": f"{status.st_dev}:{status.st_ino}"}


def test_under_the_journal_lines_carry_a_syslog_priority_and_no_timestamp(tmp_path, logged):
    home = Home(tmp_path, tmp_path / "data")
    with open(tmp_path / "stderr", "w", encoding="utf-8") as stream:
        logged(home, True, stream=stream, environ=journal_of(tmp_path / "stderr"))
        log = logging.getLogger("commons.daemon")
        log.debug("dial 1 failed")
        log.info("listening")
        log.warning("peer cut off:\nsecond line")
        log.error("sleep failed")
    lines = (tmp_path / "stderr").read_text().splitlines()
    assert lines == ["<7>commons.daemon: dial 1 failed", "<6>commons.daemon: listening",
                     "<4>commons.daemon: peer cut off:", "<4>second line", "<3>commons.daemon: sleep failed"]
    # daemon.log keeps its own timestamps: nobody else stamps it
    assert all(STAMP.match(line) for line in (home.log_dir / "daemon.log").read_text().splitlines()[:1])


def test_a_journal_stream_that_is_not_our_stderr_keeps_the_timestamps(tmp_path, logged):
    home = Home(tmp_path, tmp_path / "data")
    (tmp_path / "elsewhere").write_text("")
    with open(tmp_path / "stderr", "w", encoding="utf-8") as stream:  # a child whose stderr was redirected
        logged(home, False, stream=stream, environ=journal_of(tmp_path / "elsewhere"))
        logging.getLogger("commons.daemon").info("listening")
    (line,) = (tmp_path / "stderr").read_text().splitlines()
    assert STAMP.match(line) and line.endswith("INFO commons.daemon: listening") and "<6>" not in line


def test_daemon_log_is_rotated_at_max_bytes_keeping_backups_files(tmp_path, logged):
    home = Home(tmp_path, tmp_path / "data")
    with open(os.devnull, "w", encoding="utf-8") as stream:
        logged(home, False, LogConfig(max_bytes=2_000, backups=2), stream=stream, environ={})
        log = logging.getLogger("commons.daemon")
        for i in range(300):
            log.info("received %d records from a peer that keeps sending", i)
    files = sorted(p.name for p in home.log_dir.iterdir())
    assert files == ["daemon.log", "daemon.log.1", "daemon.log.2"]
    assert all((home.log_dir / name).stat().st_size <= 2_000 for name in files)
    assert "received 299 records" in (home.log_dir / "daemon.log").read_text()


def test_log_keys_are_checked_like_every_other_key():
    assert parse_config("[log]\nmax_bytes = 1000\nbackups = 5\n").log == LogConfig(1000, 5)
    with pytest.raises(ConfigError, match="backups"):
        parse_config("[log]\nbackups = 0\n")


def test_a_daemon_under_systemd_writes_priorities_and_exits_zero_on_sigterm(tmp_path):
    node = Node(tmp_path, "journal")
    stderr = node.path / "daemon.stderr"
    stderr.write_text("")
    node.env.update(journal_of(stderr))  # as systemd sets it for a unit whose stderr is the journal
    node.start()
    try:
        wait_for(lambda: "listening on" in node.stderr(), 20, "the daemon to log")
        assert node.stop(signal.SIGTERM) == 0
    finally:
        if node.process.poll() is None:
            node.stop(signal.SIGKILL)
    lines = [line for line in node.stderr().splitlines() if line]
    assert lines and all(re.match(r"^<[0-7]>", line) for line in lines), lines
    assert any(line.startswith("<6>commons.daemon: listening on") for line in lines)
    assert not any(STAMP.match(line[3:]) for line in lines)


def test_commons_daemon_help_says_where_the_logs_go():
    done = subprocess.run([sys.executable, "-m", "commons", "daemon", "--help"], capture_output=True, text=True)
    assert "journal" in done.stdout and "[log] max_bytes" in done.stdout
