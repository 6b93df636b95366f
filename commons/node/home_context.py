"""A home opened for one process: its config, its clock, its keys, its store, its node context.

Both faces over the node layer (the command line, ``commons.cli``, and the MCP server,
``commons.mcp_server``) start from one: the home named by ``COMMONS_HOME`` (or the default one),
and the time to act at (``--at``, ``COMMONS_AT``, ``[clock] at``, else the real clock). Everything
heavy (the config's parsing, the keys, the store, the node context) is built on first use, so a
process that needs none of it (``commons hook session-end`` handing its input over, the MCP server
answering ``initialize``) does not pay for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from commons.clock import Clock, FixedClock, SystemClock, parse_time
from commons.errors import NotInitialized, UsageError
from commons.home import Home

if TYPE_CHECKING:
    from commons.config import Config
    from commons.identity import Identity
    from commons.node.context import NodeContext
    from commons.store.db import Store


@dataclass
class HomeContext:
    home: Home
    at: str | None  # --at, else COMMONS_AT
    # Run the store's statements on this thread (commons.store.db): for a one-shot command, whose
    # loop has nothing else to do while it waits; a server keeps them on the store's thread.
    inline_store: bool = False

    @classmethod
    def from_environment(cls, at: str | None = None) -> HomeContext:
        return cls(Home.from_environment(), at or os.environ.get("COMMONS_AT") or None)

    @cached_property
    def config(self) -> Config:
        from commons.config import load_config

        return load_config(self.home.config_file)

    @cached_property
    def clock(self) -> Clock:
        """--at, then COMMONS_AT, then [clock] at, then the real clock."""
        fixed = self.at or self.config.clock.at
        if not fixed:
            return SystemClock()
        try:
            return FixedClock(parse_time(fixed))
        except ValueError as error:
            raise UsageError(str(error)) from None

    def now(self) -> float:
        return self.clock.now()

    @cached_property
    def identity(self) -> Identity:
        from commons import identity

        return identity.load(self.home)

    @cached_property
    def node(self) -> NodeContext:
        """The node's context for the services this process calls: one per process, so they share
        one trust evaluation."""
        from commons.node.context import NodeContext

        return NodeContext.for_node(self.config, self.home, self.identity, self.clock)

    @property
    def network(self) -> bytes:
        return self.config.network.key_bytes

    def initialised(self) -> bool:
        from commons import identity

        return identity.exists(self.home)

    def require_initialised(self) -> None:
        if not self.initialised():
            raise NotInitialized(f"no keys in {self.home.keys_dir}: this home is not initialised; "
                                 "run `commons init` first")

    async def open_store(self, *, readonly: bool = False) -> Store:
        """The home's database; ``readonly`` for commands that only read (they work in a read-only
        home). Refused before `commons init`, so no process makes a database in a home without keys."""
        from commons.store.db import Store

        self.require_initialised()
        return await Store.open(self.home.database, readonly=readonly, inline=self.inline_store)
