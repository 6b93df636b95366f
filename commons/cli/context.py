"""What every command handler gets: the home, its config, the clock, keys and the store."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

from commons import identity
from commons.clock import Clock, FixedClock, SystemClock, parse_time
from commons.config import Config, load_config
from commons.errors import NotInitialized, UsageError
from commons.home import Home
from commons.node.context import NodeContext
from commons.store.db import Store


@dataclass
class Context:
    home: Home
    at: str | None  # --at, else COMMONS_AT

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "Context":
        return cls(Home.from_environment(), getattr(args, "at", None) or os.environ.get("COMMONS_AT") or None)

    @cached_property
    def config(self) -> Config:
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
    def identity(self) -> identity.Identity:
        return identity.load(self.home)

    @cached_property
    def node(self) -> NodeContext:
        """The node's context for the services this command calls: one per command, so they share
        one trust evaluation."""

        return NodeContext.for_node(self.config, self.home, self.identity, self.clock)

    @property
    def network(self) -> bytes:
        return self.config.network.key_bytes

    def require_initialised(self) -> None:
        if not identity.exists(self.home):
            raise NotInitialized(f"no keys in {self.home.keys_dir}: this home is not initialised; "
                                 "run `commons init` first")

    async def open_store(self, *, readonly: bool = False):
        """The home's database; ``readonly`` for commands that only read (they work in a read-only
        home). Refused before `commons init`, so no command makes a database in a home without keys."""
        if not identity.exists(self.home):
            raise NotInitialized(f"no keys in {self.home.keys_dir}: this home is not initialised; "
                                 "run `commons init` first")
        return await Store.open(self.home.database, readonly=readonly)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def emit(args: argparse.Namespace, data: Any, text: str | Callable[[], str]) -> None:
    """Print ``data`` as JSON with --json, else the human text."""
    if getattr(args, "json", False):
        json.dump(data, sys.stdout, indent=2, sort_keys=False, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write((text() if callable(text) else text).rstrip("\n") + "\n")


class ProgressLine:
    """Progress of long work on stderr, one line redrawn with ``\\r`` (a terminal only: the caller
    checks, and shows none with --json)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.shown = False

    def __call__(self, done: int, total: int, note: str = "") -> None:
        sys.stderr.write(f"\r{self.label}: {done}/{total} ({100 * done // max(total, 1)}%){' ' + note if note else ''}")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")


def progress_line(args: argparse.Namespace, label: str) -> ProgressLine | None:
    """A progress line for long work: on a terminal, and not when the output is --json."""
    return ProgressLine(label) if sys.stderr.isatty() and not getattr(args, "json", False) else None
