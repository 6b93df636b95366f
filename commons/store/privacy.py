"""The stored words the privacy migration scrubs and `commons store check --privacy` reads.

Every column that holds text derived from a transcript, by table, as plain rows: the node's
privacy service (``commons.node.privacy``) decides what the clean words are; this module only reads
and writes them. Lessons themselves go through ``commons.store.lessons.put_lessons`` (their content
key and recall vector follow their text); their gist and outcome, which it leaves alone, come here.
"""

from __future__ import annotations

from collections.abc import Sequence

from commons.store.db import Store

# table: (key column, text columns). JSON columns hold a structure whose strings are the text.
TEXT_COLUMNS: dict[str, tuple[str, tuple[str, ...]]] = {
    "lessons": ("id", ("text", "gist", "outcome")),
    "predictions": ("id", ("situation", "outcome")),
    "vetoes": ("lesson_id", ("text",)),
    "trust_changes": ("id", ("text", "why")),
    "sleep_runs": ("id", ("events",)),
    "episodes": ("key", ("data",)),
}
JSON_COLUMNS = frozenset({("sleep_runs", "events"), ("episodes", "data")})


async def texts(store: Store, table: str) -> list[tuple[object, tuple[str, ...]]]:
    """(key, the text columns' values) of every row of ``table``."""
    key, columns = TEXT_COLUMNS[table]
    rows = await store.fetchall(f"SELECT {key}, {', '.join(columns)} FROM {table} ORDER BY {key}")
    return [(row[0], tuple(row[1:])) for row in rows]


async def put_texts(store: Store, table: str, rows: Sequence[tuple[object, tuple[str, ...]]]) -> None:
    """Overwrite the text columns of some rows (inside the caller's transaction)."""
    key, columns = TEXT_COLUMNS[table]
    if rows:
        await store.executemany(
            f"UPDATE {table} SET {', '.join(f'{c} = ?' for c in columns)} WHERE {key} = ?",
            [(*values, k) for k, values in rows])


async def put_veto_keys(store: Store, rows: Sequence[tuple[str, str]]) -> None:
    """(lesson id, content key) of vetoes whose text was scrubbed: the key follows the text, so
    the lesson made again from scrubbed episodes is still the vetoed one."""
    if rows:
        await store.executemany("UPDATE vetoes SET content_key = ? WHERE lesson_id = ?",
                                [(k, lid) for lid, k in rows])


async def report_files(store: Store) -> list[str]:
    """The morning report files the store knows it wrote."""
    return [r[0] for r in await store.fetchall("SELECT DISTINCT path FROM reports WHERE path IS NOT NULL")]
