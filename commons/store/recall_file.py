"""The recall index's file beside the database, which this version no longer keeps.

Until 2026-12-02 the recall index (a faiss IVF index, 36 CPU-s to build at 10^6 lessons) was kept in
``<database>.recall-index`` so that a restart read it instead of building it. The index is now the
lessons' columns, made by one transpose of the recall matrix (about a second at 10^6), so there is
nothing worth a file of a gigabyte: a process that finds the old one removes it.
"""

from __future__ import annotations

from pathlib import Path

from commons.store.db import Store

SUFFIX = ".recall-index"


def index_path(store: Store) -> Path:
    return store.path.with_name(store.path.name + SUFFIX)


def remove_kept_index(store: Store) -> bool:
    """Remove the file an earlier version kept (not in a read-only home); True when one went."""
    if store.readonly:
        return False
    try:
        index_path(store).unlink()
    except OSError:  # none there (the usual case), or not ours to remove: it only takes room
        return False
    return True
