"""One daemon per home: ``data/daemon.lock``, held with ``flock`` while a daemon runs."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from commons.errors import CommonsError
from commons.home import Home


class DaemonRunning(CommonsError):
    """Another daemon holds this home's lock."""


def lock_file(home: Home) -> Path:
    return home.data_dir / "daemon.lock"


def acquire_lock(home: Home) -> int:
    """Hold the home's daemon lock (returns its fd) or raise DaemonRunning naming the holder."""
    home.data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file(home), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise DaemonRunning(f"another commons daemon (pid {pid}) is running for this home") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def running_pid(home: Home) -> int | None:
    """The pid of the daemon running for this home, or None (the lock is free)."""
    try:
        fd = os.open(lock_file(home), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        return int(text) if text.isdigit() else -1
    finally:
        os.close(fd)
    return None
