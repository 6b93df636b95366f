"""Where the daemon's log lines go, and in what form.

Every line goes to stderr and to ``<data>/logs/daemon.log``. The file is rotated by size
(``[log] max_bytes``, ``[log] backups``), so a daemon that runs for months does not fill the disk.
Under systemd, stderr is the journal: it stamps each line itself and reads its priority from a
syslog ``<N>`` prefix, so there the daemon writes no timestamp of its own and prefixes every line
with its priority (``journalctl -p warning`` then shows the warnings). systemd says that stderr is
the journal by setting ``JOURNAL_STREAM`` to the device and inode of that stream; a stderr
redirected elsewhere (a child process, a shell's ``2>file``) has other numbers and keeps timestamps.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from collections.abc import Mapping
from typing import TextIO

from commons.config import LogConfig
from commons.home import Home

LOG_FILE = "daemon.log"
FILE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
JOURNAL_FORMAT = "%(name)s: %(message)s"  # the journal adds time, host and unit

# syslog priorities (sd-daemon(3)): what the journal files a line under.
PRIORITIES = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3, logging.CRITICAL: 2}


class JournalFormatter(logging.Formatter):
    """``<N>name: message``, every line of a multi-line message prefixed (the journal splits them)."""

    def __init__(self) -> None:
        super().__init__(JOURNAL_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        priority = PRIORITIES.get(record.levelno, 7 if record.levelno < logging.INFO else 3)
        return "\n".join(f"<{priority}>{line}" for line in super().format(record).splitlines() or [""])


def stderr_is_the_journal(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Whether ``stream`` is the journal stream systemd announced in ``JOURNAL_STREAM`` (dev:inode)."""
    announced = environ.get("JOURNAL_STREAM", "")
    device, _, inode = announced.partition(":")
    if not (device.isdigit() and inode.isdigit()):
        return False
    try:
        status = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):  # a stream with no file behind it
        return False
    return (status.st_dev, status.st_ino) == (int(device), int(inode))


def setup_logging(home: Home, verbose: bool, config: LogConfig | None = None, *,
                  stream: TextIO | None = None, environ: Mapping[str, str] | None = None) -> list[logging.Handler]:
    """Send the ``commons`` loggers to stderr (journal-friendly under systemd) and to the rotated
    daemon.log; returns the handlers it added."""
    config = config or LogConfig()
    stream = sys.stderr if stream is None else stream
    environ = os.environ if environ is None else environ
    home.log_dir.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger("commons")
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    console = logging.StreamHandler(stream)
    console.setFormatter(JournalFormatter() if stderr_is_the_journal(stream, environ)
                         else logging.Formatter(FILE_FORMAT))
    # maxBytes=0 never rolls over: an unbounded file is what `max_bytes = 0` asks for.
    file = logging.handlers.RotatingFileHandler(home.log_dir / LOG_FILE, maxBytes=config.max_bytes,
                                                backupCount=config.backups, encoding="utf-8")
    file.setFormatter(logging.Formatter(FILE_FORMAT))
    for handler in (console, file):
        root.addHandler(handler)
    return [console, file]
