"""A home's stored words, scrubbed and checked: the migration of homes written before every door
scrubbed, and the check that lists what is left (docs/privacy.md, "Checking a home").

:func:`scrub_home` scrubs what earlier versions stored raw: lessons (text, gist, outcome),
predictions, episodes' derived fields, vetoes, the nights' recorded events, trust changes, the
morning report files, and the memory folder's files (rendered again from the scrubbed store). It
is idempotent (the scrubber is) and says how many of each it changed. It runs once by itself, at
the first sleep after an upgrade that changed what is scrubbed (:func:`scrub_once`, marked by
:data:`SCRUB_VERSION` in the settings), and whenever the person runs `commons store scrub`.

:func:`check_home` lists every remaining finding as where and kind, never the value. The raw
transcript stream (read in place, archived) is not scrubbed and not checked: it stays as written,
local, and nothing renders, reports or sends it. An episode's ``project`` (the working directory)
is kept as written too: it is local, never shown, and names the project's memory folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from commons.core.embedding import embed_many
from commons.core.policy import findings, scrub, scrub_json
from commons.node import rendering
from commons.node.context import NodeContext
from commons.render import memory_folder as renderer
from commons.store import lessons as ls
from commons.store import privacy as stored
from commons.store import settings
from commons.store.db import Store

# Raise it when a change to the rules means homes should be scrubbed again at the next sleep.
SCRUB_VERSION = 2  # 2: personal details (names, addresses, national ids, bank details, identities, CLI passwords)
SETTING = "privacy_scrubbed"

# The fields of a stored episode that hold transcript words (not its ids, times or project).
EPISODE_FIELDS = {
    "error": ("target", "failure", "command", "resolution"),
    "correction": ("said", "preceding", "command"),
    "session": ("asked", "ended", "calls"),
}
PLACES = ("lessons", "predictions", "episodes", "vetoes", "sleep_runs", "trust_changes", "reports", "memory_files")


@dataclass(frozen=True)
class ScrubResult:
    """How many stored items one scrub of a home changed, per place."""

    changed: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(n for _, n in self.changed)

    def to_json(self) -> dict:
        return {"changed": dict(self.changed), "total": self.total}


@dataclass(frozen=True)
class Hit:
    """One thing the scrubber would still replace: where it is and its kind (never its value)."""

    where: str  # "lessons:3f2a…:text", "reports/2026-11-03.md:12", "memory/commons-3f2a.md:4"
    kind: str

    def to_json(self) -> dict:
        return {"where": self.where, "kind": self.kind}


def _clean(table: str, key: object, column: str, value: str) -> str | None:
    """The scrubbed form of one stored value, or None when scrubbing changes nothing."""
    if (table, column) not in stored.JSON_COLUMNS:
        clean = scrub(value)
        return None if clean == value else clean
    data = json.loads(value)
    if table == "episodes":  # the kind is the key's first part ("error:toolu_…")
        fields = EPISODE_FIELDS.get(str(key).split(":", 1)[0], ())
        clean = {k: (scrub_json(v) if k in fields else v) for k, v in data.items()}
    else:
        clean = scrub_json(data)
    return None if clean == data else json.dumps(clean, ensure_ascii=False)


def _words(table: str, key: object, column: str, value: str) -> str:
    """What of a stored value is transcript words, for the check (an episode's text fields only)."""
    if table != "episodes":
        return value
    data = json.loads(value)
    fields = EPISODE_FIELDS.get(str(key).split(":", 1)[0], ())
    return json.dumps({k: data[k] for k in fields if k in data}, ensure_ascii=False)


async def _scrub_table(store: Store, table: str) -> list[object]:
    """Scrub one table's text columns; the keys of the rows that changed."""
    _, columns = stored.TEXT_COLUMNS[table]
    changed = []
    for key, values in await stored.texts(store, table):
        clean = [_clean(table, key, c, v) if isinstance(v, str) else None for c, v in zip(columns, values)]
        if any(c is not None for c in clean):
            changed.append((key, tuple(v if c is None else c for c, v in zip(clean, values))))
    async with store.transaction():
        await stored.put_texts(store, table, changed)
    return [k for k, _ in changed]


async def _refresh_lessons(store: Store, ids: list[object], now: float) -> None:
    """Lessons whose words changed: their content key (what vetoes match) and recall vector follow."""
    if not ids:
        return
    found = await ls.load_lessons(store, ids=[str(i) for i in ids])
    async with store.transaction():
        await ls.put_lessons(store, [(s.lesson, s.status) for s in found],
                             embed_many([ls.recall_text(s.lesson) for s in found]), now)
        await stored.put_veto_keys(store, [(s.lesson.id, ls.content_key(s.lesson.kind, s.lesson.text))
                                           for s in found if s.status == ls.VETOED])


def _folders(node: NodeContext, rendered: Iterable[ls.Rendered]) -> list[Path]:
    return sorted({node.memory_folder, *(Path(r.folder) for r in rendered)})


def _memory_texts(folder: Path) -> list[tuple[Path, str]]:
    """The files of a memory folder commons wrote: its lesson files and its sections of MEMORY.md.
    The person's own lines there are theirs and left alone: outside the sections only the line
    breaks are kept, so a finding's line number is still the file's."""
    out = [(p, p.read_text(encoding="utf-8", errors="replace")) for p in sorted(folder.glob("commons-*.md"))]
    index = folder / "MEMORY.md"
    if index.exists():
        text = index.read_text(encoding="utf-8", errors="replace")
        spans = []
        for layer in ("own", "common"):
            begin, end = renderer.markers(layer)
            found = re.search(re.escape(begin) + r".*?" + re.escape(end), text, re.DOTALL)
            if found:
                spans.append(found.span())
        parts, at = [], 0
        for start, stop in sorted(spans):
            parts += ["\n" * text.count("\n", at, start), text[start:stop]]
            at = stop
        parts.append("\n" * text.count("\n", at))
        out.append((index, "".join(parts)))
    return out


async def scrub_home(store: Store, node: NodeContext, now: float) -> ScrubResult:
    """Scrub every stored word of this home (see the module's docstring); idempotent."""
    counts = {}
    for table in ("lessons", "predictions", "episodes", "vetoes", "sleep_runs", "trust_changes"):
        changed = await _scrub_table(store, table)
        counts[table] = len(changed)
        if table == "lessons":
            await _refresh_lessons(store, changed, now)
    reports = 0
    for path in map(Path, await stored.report_files(store)):
        if path.exists():
            text = path.read_text(encoding="utf-8", errors="replace")
            clean = scrub(text)
            if clean != text:
                path.write_text(clean, encoding="utf-8")
                reports += 1
    counts["reports"] = reports
    # The memory folder is rendered again from the scrubbed store; the files that held something
    # before are what changed.
    dirty = [p for folder in _folders(node, await ls.rendered(store)) if folder.exists()
             for p, text in _memory_texts(folder) if findings(text)]
    if dirty or any(counts.values()):
        await rendering.render(store, node, now)
    counts["memory_files"] = len(dirty)
    await settings.put(store, SETTING, SCRUB_VERSION, now)
    return ScrubResult(tuple((place, counts.get(place, 0)) for place in PLACES))


async def scrub_once(store: Store, node: NodeContext, now: float) -> ScrubResult | None:
    """:func:`scrub_home` if this home was not yet scrubbed at :data:`SCRUB_VERSION`, else None."""
    if int(await settings.get(store, SETTING, 0) or 0) >= SCRUB_VERSION:
        return None
    return await scrub_home(store, node, now)


def _hits_in(where: str, text: str) -> list[Hit]:
    out = []
    for f in findings(text):
        line = text.count("\n", 0, f.start) + 1
        out.append(Hit(f"{where}:{line}", f.kind.name.lower()))
    return out


async def check_home(store: Store, node: NodeContext) -> tuple[Hit, ...]:
    """Every finding left in this home's stored words, report files and memory folders."""
    hits: list[Hit] = []
    for table, (_, columns) in stored.TEXT_COLUMNS.items():
        for key, values in await stored.texts(store, table):
            for column, value in zip(columns, values):
                if not isinstance(value, str):
                    continue
                value = _words(table, key, column, value)
                label = key[:16] if isinstance(key, str) else key
                hits += [Hit(f"{table}:{label}:{column}", f.kind.name.lower()) for f in findings(value)]
    for path in map(Path, await stored.report_files(store)):
        if path.exists():
            hits += _hits_in(str(path), path.read_text(encoding="utf-8", errors="replace"))
    for folder in _folders(node, await ls.rendered(store)):
        if folder.exists():
            for path, text in _memory_texts(folder):
                hits += _hits_in(str(path), text)
    return tuple(hits)
