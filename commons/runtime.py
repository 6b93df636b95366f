"""Running async code: trio everywhere, with one asyncio bridge for the asyncio-only libraries.

aiosqlite (and zeroconf's async API) are asyncio libraries. Every commons process runs one trio
program and opens exactly one trio-asyncio loop at its top, through which those libraries are
reached (``trio_asyncio.aio_as_trio``). Never a second bridge in the same process.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio
import trio_asyncio

T = TypeVar("T")


def run(async_fn: Callable[..., Awaitable[T]], *args: Any, bridge: bool = True,
        clock: trio.abc.Clock | None = None) -> T:
    """Run ``async_fn(*args)`` in trio, with the asyncio bridge open; ``bridge=False`` for a
    program that reaches no asyncio library (a command whose store runs inline: opening the bridge
    is two thirds of an empty trio program's start). ``clock``: the loop's clock (None: the real
    one; a simulation's nights run under ``trio.testing.MockClock``, in virtual time)."""

    async def main() -> T:
        async with trio_asyncio.open_loop():
            return await async_fn(*args)

    try:
        return trio.run(main, clock=clock) if bridge else trio.run(async_fn, *args, clock=clock)
    except BaseExceptionGroup as group:
        raise _single(group) from None


def _single(group: BaseExceptionGroup) -> BaseException:
    """The one error inside nested nursery groups, so callers see it as it was raised."""
    while len(group.exceptions) == 1 and isinstance(group.exceptions[0], BaseExceptionGroup):
        group = group.exceptions[0]
    if len(group.exceptions) == 1:
        return group.exceptions[0]
    return group
