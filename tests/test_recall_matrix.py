"""The recall matrix a long-lived process keeps in memory, and when it reloads."""

from commons.core.embedding.hashed import embed_many
from commons.core.learning.episode import ErrorEpisode
from commons.core.learning.lessons import new_lesson
from commons.core.records import LessonKind
from commons.store import lessons as ls
from commons.store.db import Store

NOW = 1_790_000_000.0


def lesson(n: int):
    errors = [ErrorEpisode(session=f"s{n}", uid=f"toolu_{n}_{i}", at=NOW - 100 + i, tool="Bash",
                           target=f"tool{n} build", failure=f"tool{n}: error E{n} in the build")
              for i in range(2)]
    return new_lesson(LessonKind.ERROR, errors, NOW, strength=1.0, hash_episode=lambda uid: uid.encode().ljust(32)[:32])


async def put(store: Store, *lessons) -> None:
    async with store.transaction():
        await ls.put_lessons(store, [(x, "active") for x in lessons], embed_many([ls.recall_text(x) for x in lessons]), NOW)


async def test_the_matrix_is_kept_while_no_lesson_changes(aio, tmp_path):
    async with await Store.open(tmp_path / "c.db") as store:
        await put(store, lesson(1), lesson(2))
        first = await ls.recall_matrix(store)
        assert await ls.recall_matrix(store) is first
        assert len(first.ids) == 2


async def test_a_lesson_written_by_another_process_is_seen_at_the_next_recall(aio, tmp_path):
    async with await Store.open(tmp_path / "c.db") as store:
        await put(store, lesson(1))
        before = await ls.recall_matrix(store)
        async with await Store.open(tmp_path / "c.db") as other:
            await put(other, lesson(2))
        after = await ls.recall_matrix(store)
        assert after is not before and len(after.ids) == 2 and lesson(2).id in after.ids


async def test_recall_touches_update_the_kept_matrix_in_place(aio, tmp_path):
    async with await Store.open(tmp_path / "c.db") as store:
        one = lesson(1)
        await put(store, one, lesson(2))
        matrix = await ls.recall_matrix(store)
        async with store.transaction():
            await ls.touch_lessons(store, [(3.0, NOW + 50, NOW + 50, one.id)])
        again = await ls.recall_matrix(store)
        row = again.rows[one.id]
        assert again is matrix and again.touched[row] == NOW + 50 and again.strength[row] == 3.0
