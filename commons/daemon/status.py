"""What a running daemon says of itself: ``data/daemon.json``, read by `commons status`."""

from __future__ import annotations

import json

from commons.daemon.lock import running_pid
from commons.home import Home


def read_daemon_file(home: Home) -> dict | None:
    """What the running daemon last wrote of itself, or None when no daemon runs."""
    if running_pid(home) is None:
        return None
    try:
        return json.loads(home.daemon_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
