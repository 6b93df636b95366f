"""Recall through the store's index (forced on for a small store) answers as the scan does, follows
the lessons, and removes the file an earlier version kept beside the database."""

from __future__ import annotations

import random

from commons.config import Config
from commons.core.embedding.hashed import embed_many
from commons.core.learning.lessons import DAY, Lesson
from commons.core.recall.index import IndexParams
from commons.core.records import LessonKind, Scope
from commons.home import Home
from commons.node import recall as recalling
from commons.node.context import NodeContext
from commons.store import lessons as ls
from commons.store import recall_file
from commons.store.db import Store

NOW = 1_790_000_000.0
TOOLS = "pip npm cargo pytest make docker git uv go mypy ruff tsc kubectl terraform helm poetry".split()
WORDS = ("error failed permission denied module missing timeout refused build install test lint deploy cache "
         "config schema router worker queue auth token version lockfile wheel").split()
# The index from 200 lessons: a store of 600 goes through it.
FORCED = IndexParams(scan_below=200)
SCAN = IndexParams(scan_below=10**9)


def lesson(i: int, text: str, rng: random.Random) -> Lesson:
    at = NOW - rng.random() * 200 * DAY
    return Lesson(id=f"{i:064x}", kind=LessonKind.ERROR, text=text, scope=Scope.SHARED, topics=(), gist=text[:40],
                  triggers=(), outcome="", episodes=(), provenance=(), strength=1.0 + rng.random() * 3,
                  strength_at=at, touched=at, seen=2, created=at)


def texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"`{rng.choice(TOOLS)} {rng.choice(WORDS)}` failed: {' '.join(rng.choices(WORDS + TOOLS, k=rng.randint(3, 9)))} "
            f"{rng.choice(TOOLS)}{rng.randint(0, 40)}" for _ in range(count)]


async def put(store: Store, lessons: list[Lesson], status: str = "active") -> None:
    async with store.transaction():
        await ls.put_lessons(store, [(x, status) for x in lessons], embed_many([ls.recall_text(x) for x in lessons]), NOW)


async def fill(path, count: int = 600) -> list[Lesson]:
    rng = random.Random(1)
    lessons = [lesson(i, text, rng) for i, text in enumerate(texts(count, 2))]
    async with await Store.open(path) as store:
        await put(store, lessons)
    return lessons


def node_for(tmp_path) -> NodeContext:
    return NodeContext.local(Config(), Home(tmp_path / "config", tmp_path / "data"), b"\0" * 32)


async def ids(store, node, query, index_params, **kw) -> list[str]:
    return [h.id for h in await recalling.recall(store, node, query, 10, NOW, index_params=index_params, **kw)]


async def test_recall_through_the_index_equals_the_scan_on_a_fixed_set(aio, tmp_path):
    await fill(tmp_path / "c.db")
    node = node_for(tmp_path)
    queries = texts(40, 3)
    async with await Store.open(tmp_path / "c.db", readonly=True) as store:  # read-only: recall touches nothing
        through = [await ids(store, node, q, FORCED) for q in queries]
        assert not recalling._INDEXES[store].index.scanning
        scanned = [await ids(store, node, q, SCAN) for q in queries]
    assert through == scanned


async def test_an_added_lesson_and_a_removed_one_are_seen_by_the_next_recall(aio, tmp_path):
    lessons = await fill(tmp_path / "c.db")
    node = node_for(tmp_path)
    query = "terraform apply failed: the state lock is held by another run"
    async with await Store.open(tmp_path / "c.db") as store:
        before = await ids(store, node, query, FORCED)
        assert not recalling._INDEXES[store].index.scanning
        new = lesson(10**6, query, random.Random(5))
        await put(store, [new])
        assert (await ids(store, node, query, FORCED))[0] == new.id
        await put(store, [new], status="archived")  # faded, or revoked: no longer offered
        after = await ids(store, node, query, FORCED)
        assert new.id not in after
        gone = lessons[int(before[0], 16)]
        await put(store, [gone], status="vetoed")
        assert gone.id not in await ids(store, node, query, FORCED)


async def test_the_file_an_earlier_version_kept_is_removed_and_a_new_process_answers_as_the_scan(aio, tmp_path):
    lessons = await fill(tmp_path / "c.db")
    node = node_for(tmp_path)
    query = "docker build failed: permission denied on the cache"
    async with await Store.open(tmp_path / "c.db") as store:
        path = recall_file.index_path(store)
        path.write_bytes(b"a faiss index of format 1")
        heard: list[str] = []
        await ids(store, node, query, FORCED, progress=heard.append)
        assert not path.exists() and not heard  # a build of 600 lessons is not worth a line
    # While no process held it, lessons came and went.
    rng = random.Random(6)
    async with await Store.open(tmp_path / "c.db") as other:
        await put(other, [lesson(10**6 + i, t, rng) for i, t in enumerate(texts(30, 7))])
        await put(other, lessons[:20], status="archived")
    async with await Store.open(tmp_path / "c.db", readonly=True) as store:
        through = await ids(store, node, query, FORCED)
        assert recalling._INDEXES[store].index.indexed == 610
        assert through == await ids(store, node, query, SCAN)
        assert not {x.id for x in lessons[:20]} & set(through)


async def test_a_small_store_scans_and_keeps_no_file(aio, tmp_path):
    await fill(tmp_path / "c.db", count=50)
    async with await Store.open(tmp_path / "c.db") as store:
        await ids(store, node_for(tmp_path), "pip install failed", IndexParams())
        assert recalling._INDEXES[store].index.scanning
        assert not recall_file.index_path(store).exists()


async def test_common_lessons_are_embedded_once_per_process(aio, tmp_path, monkeypatch):
    embedded: list[str] = []

    def counting(texts):
        embedded.extend(texts)
        return embed_many(texts)

    monkeypatch.setattr(recalling, "embed_many", counting)
    common = [(f"{i:064x}", f"npm ci failed: lockfile {i} out of date", NOW, 3) for i in range(5)]
    async with await Store.open(tmp_path / "c.db") as store:
        first = await recalling._common_vectors(store, common)
        again = await recalling._common_vectors(store, common[1:] + [(f"{9:064x}", "cargo build failed: linker", NOW, 3)])
    assert embedded == [c[1] for c in common] + ["cargo build failed: linker"]  # only the new one, once
    assert (again[:4] == first[1:]).all() and (again[4] == embed_many(["cargo build failed: linker"])[0]).all()
