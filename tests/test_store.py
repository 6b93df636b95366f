import nacl.signing
import pytest
import trio

from commons.core.records import Lesson, LessonKind, Prediction, Scope, Vouch, day_of, sign
from commons.errors import StoreError
from commons.store import records as record_store
from commons.store import settings
from commons.store.db import Store

NETWORK = bytes(32)
NOW = 20_000 * 86400.0


def lesson(key: nacl.signing.SigningKey, text: str):
    return sign(
        Lesson(
            network=NETWORK,
            author=bytes(key.verify_key),
            created=day_of(NOW),
            kind=LessonKind.ERROR,
            text=text,
            scope=Scope.SHARED,
            topics=("pip",),
            prediction=Prediction("pip install", "externally-managed-environment"),
        ),
        key,
    )


@pytest.fixture(params=[False, True], ids=["threaded", "inline"])
async def store(aio, tmp_path, request):
    """Every test over both ways to reach SQLite: aiosqlite's thread (the daemon's) and inline
    (a command's): the same statements, the same results."""
    opened = await Store.open(tmp_path / "commons.db", inline=request.param)
    yield opened
    await opened.close()


KEY = nacl.signing.SigningKey(bytes(range(32)))


async def test_intake_stores_valid_records_once(store):
    batch = [lesson(KEY, f"pip install fails, variant {i}") for i in range(5)]
    pairs = [(s.body, s.signature) for s in batch]
    first = await record_store.intake(store, pairs, network=NETWORK, now=NOW, origin="peer")
    again = await record_store.intake(store, pairs + pairs[:1], network=NETWORK, now=NOW, origin="peer")
    assert len(first.accepted) == 5 and first.duplicates == 0
    assert again.accepted == () and again.duplicates == 6
    assert (await record_store.counts_by_type(store))["lesson"] == 5


async def test_intake_refuses_bad_signatures_and_keeps_the_rest(store):
    good, bad = lesson(KEY, "good one"), lesson(KEY, "bad one")
    forged = bytes([bad.signature[0] ^ 1]) + bad.signature[1:]
    report = await record_store.intake(
        store, [(good.body, good.signature), (bad.body, forged)], network=NETWORK, now=NOW, origin="peer"
    )
    assert [s.id for s in report.accepted] == [good.id]
    assert report.invalid == 1 and "signature" in report.refusals[0].reason


async def test_local_policy_refusal_is_remembered_so_it_is_not_fetched_again(store):
    refused = lesson(KEY, "refused by policy")
    report = await record_store.intake(
        store, [(refused.body, refused.signature)], network=NETWORK, now=NOW, origin="peer", admit=lambda s: "no"
    )
    assert report.refusals[0].invalid is False
    assert await record_store.known_ids(store, [refused.id]) == {refused.id}
    assert refused.key in await record_store.keys(store)


async def test_records_come_back_in_key_order_revocations_first(store):
    other = nacl.signing.SigningKey(bytes(32))
    vouch = sign(Vouch(network=NETWORK, author=bytes(KEY.verify_key), created=day_of(NOW), subject=bytes(other.verify_key)), KEY)
    await record_store.add_own(store, [lesson(KEY, "a lesson"), vouch], NOW)
    types = [s.type.value for s in await record_store.all_records(store)]
    assert types == ["vouch", "lesson"]


async def test_check_finds_a_record_whose_body_was_altered(store):
    signed = lesson(KEY, "pip install fails")
    await record_store.add_own(store, [signed], NOW)
    assert await record_store.check_invariants(store) == (1, [])
    altered = signed.body.replace(b"fails", b"works")
    async with store.transaction():
        await store.execute("UPDATE records SET body = ? WHERE key = ?", (altered, signed.key))
    checked, problems = await record_store.check_invariants(store)
    assert checked == 1 and "does not match" in problems[0]


async def test_writes_outside_a_transaction_are_refused(store):
    with pytest.raises(RuntimeError, match="transaction"):
        await store.execute("DELETE FROM records")


async def test_failed_transaction_leaves_nothing_behind(store):
    with pytest.raises(ValueError):
        async with store.transaction():
            await store.execute("INSERT INTO settings VALUES ('x', '1', 0)")
            raise ValueError("boom")
    assert await settings.get(store, "x") is None


async def test_another_connection_commit_is_noticed(store, tmp_path):
    version = await store.data_version()
    other = await Store.open(tmp_path / "commons.db")
    await settings.put(other, "publish", True, NOW)
    await other.close()
    with trio.fail_after(5):
        assert await store.wait_changed(version, poll_interval=0.01) != version
    assert await settings.get(store, "publish") is True


async def test_reopening_keeps_data_and_schema(aio, tmp_path):
    path = tmp_path / "commons.db"
    async with await Store.open(path) as first:
        await record_store.add_own(first, [lesson(KEY, "kept")], NOW)
    async with await Store.open(path) as second:
        assert (await record_store.counts_by_type(second))["lesson"] == 1


async def test_a_read_only_inline_store_reads_what_the_threaded_one_wrote_and_refuses_writes(aio, tmp_path):
    path = tmp_path / "commons.db"
    async with await Store.open(path) as writer:
        await record_store.add_own(writer, [lesson(KEY, "kept")], NOW)
    async with await Store.open(path, readonly=True, inline=True) as reader:
        assert reader.readonly and (await record_store.counts_by_type(reader))["lesson"] == 1
        with pytest.raises(StoreError, match="read-only"):
            await reader.write("DELETE FROM records")


def test_a_command_runs_its_store_inline_and_a_server_context_does_not(tmp_path, monkeypatch):
    import argparse

    from commons.cli.context import Context
    from commons.node.home_context import HomeContext

    monkeypatch.setenv("COMMONS_HOME", str(tmp_path))
    assert Context.from_args(argparse.Namespace(at=None)).inline_store
    assert not HomeContext.from_environment().inline_store


async def test_database_from_a_newer_commons_is_refused(aio, tmp_path):
    path = tmp_path / "commons.db"
    async with await Store.open(path) as store:
        await store.write("UPDATE schema_versions SET version = 99 WHERE component = 'records'")
    with pytest.raises(StoreError, match="newer than this commons knows"):
        await Store.open(path)


async def test_a_file_that_is_not_a_database_is_refused(aio, tmp_path):
    path = tmp_path / "commons.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not usable"):
        await Store.open(path)


async def test_a_writing_store_checkpoints_its_wal_only_after_many_pages(store):
    from commons.store.db import WAL_CHECKPOINT_PAGES

    assert await store.scalar("PRAGMA wal_autocheckpoint") == WAL_CHECKPOINT_PAGES > 1000  # SQLite's default
