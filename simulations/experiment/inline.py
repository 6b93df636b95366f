"""The product's worker-thread calls run in the calling thread, for the harness's commands and nights.

A command or a daemon hands slow synchronous work (a night's passes, trust's judging, file writes)
to ``trio.to_thread.run_sync`` so that its loop stays free. In the harness nothing else waits on
that loop: the hop to a worker thread only costs its wake-ups (about 20 a command, 25,000 an arm;
on a loaded machine each one waits for the scheduler), and in virtual time it would make a night
differ from run to run (the clock jumps whenever every task waits, a task waiting on a thread
included: by how far depends on how long the thread took).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import trio
import trio.to_thread


@contextlib.contextmanager
def threads_inline() -> Iterator[None]:
    """Meanwhile ``trio.to_thread.run_sync`` calls its function in the loop's own thread, after a
    checkpoint (it is still a point where the task may be cancelled, as the hop to a thread is)."""
    async def inline(fn, *args, **_options):
        await trio.lowlevel.checkpoint()
        return fn(*args)

    threaded = trio.to_thread.run_sync
    trio.to_thread.run_sync = inline
    try:
        yield
    finally:
        trio.to_thread.run_sync = threaded
