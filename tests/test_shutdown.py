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
