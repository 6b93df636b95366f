"""The recall index's file, beside the database: a restart reads it instead of building again.

What is in it is the core's business (``RecallIndex.to_bytes``); here only where it lives and that
a reader never sees half a write (written to a temporary name, then renamed over the old one).
The file may lag the lessons (another process added some since): the index says what changed
when it is synced, and follows.
"""

from __future__ import annotations

import os
from pathlib import Path

from commons.store.db import Store

SUFFIX = ".recall-index"


def index_path(store: Store) -> Path:
    return store.path.with_name(store.path.name + SUFFIX)


def read_index(store: Store) -> bytes | None:
    """The kept index's bytes, or None when there is none (or it cannot be read: then it is rebuilt)."""
    try:
        return index_path(store).read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return None  # unreadable here: recall builds its own and answers all the same


def write_index(store: Store, data: bytes) -> bool:
    """Keep the index (not in a read-only home); False when it could not be written."""
    if store.readonly:
        return False
    path = index_path(store)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        return False  # a full disk costs a rebuild next time, never a recall
    return True
