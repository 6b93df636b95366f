"""Stopping in the middle of a write (SIGTERM cancels the daemon's tasks): the transaction under way
either commits or rolls back, and the store takes the next one, never "a transaction within a
transaction" (issue #19: a daemon under load exited 1 on SIGTERM that way)."""

from __future__ import annotations

import pytest
import trio

from commons.store.db import Store


@pytest.mark.parametrize("yields", range(6))
async def test_a_write_cancelled_at_any_await_leaves_the_store_ready_for_the_next(aio, tmp_path, yields):
    async with await Store.open(tmp_path / "commons.db") as store:
        async with store.transaction():
            await store.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")

        async def write(scope_holder: list) -> None:
            with trio.CancelScope() as scope:
                scope_holder.append(scope)
                async with store.transaction():
                    await store.execute("INSERT INTO t VALUES (1)")
                    await store.execute("INSERT INTO t VALUES (2)")

        async def cancel_later(scope_holder: list) -> None:
            for _ in range(yields):  # let the writer get this far into its transaction
                await trio.lowlevel.cancel_shielded_checkpoint()
            scope_holder[0].cancel()

        holder: list = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(write, holder)
            await trio.lowlevel.checkpoint()
            nursery.start_soon(cancel_later, holder)
        async with store.transaction():  # the next write is never inside a left-over transaction
            await store.execute("INSERT INTO t VALUES (3)")
        rows = [r[0] for r in await store.fetchall("SELECT x FROM t ORDER BY x")]
        assert rows in ([3], [1, 2, 3])  # all or nothing of the cancelled one


@pytest.fixture
def initialised(home, capsys):
    from commons.cli import main

    assert main(["init", "--json"]) == 0
    capsys.readouterr()
    return home


async def test_a_batch_of_records_the_daemon_took_to_store_is_stored_when_it_is_stopped_meanwhile(aio, initialised):
    """SIGTERM while the persister waits on the store: the records it took from what peers sent are
    written, not dropped (the node served them, and its peers count them delivered; in the N-agent
    experiment a lesson reached a node one to five nights late this way)."""
    import sqlite3

    import nacl.signing

    from commons import identity
    from commons.clock import ShiftedClock, parse_time
    from commons.config import load_config
    from commons.core.gossip import Accepted
    from commons.core.records import Lesson, LessonKind, Prediction, Scope, sign
    from commons.daemon.main import Daemon

    home = initialised
    daemon = Daemon(home, load_config(home.config_file), identity.load(home),
                    ShiftedClock(parse_time("2026-11-05T03:30:00Z")), "127.0.0.1:0")
    peer = nacl.signing.SigningKey(bytes([9]) * 32)
    signed = sign(Lesson(network=daemon.network, author=bytes(peer.verify_key), created=20761, kind=LessonKind.ERROR,
                         text="`pip install` failed with \"error: externally-managed-environment\"; `uv add <package>` "
                              "succeeded after it (2 of 2 sessions).", scope=Scope.SHARED, topics=("pip",),
                         prediction=Prediction("pip install", "error: externally-managed-environment")), peer)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(daemon.run)
        with trio.fail_after(30):
            while not home.daemon_file.exists():  # started: the store is open and the key set loaded
                await trio.sleep(0.05)
        daemon._pending.append(Accepted((signed,), bytes(32)))
        with trio.CancelScope() as scope:
            scope.cancel()  # stopped at the batch's first wait on the store
            await daemon._persist()
        nursery.cancel_scope.cancel()
    db = sqlite3.connect(home.database)
    try:
        assert db.execute("SELECT count(*) FROM records WHERE key = ?", (signed.key,)).fetchone() == (1,)
    finally:
        db.close()
