"""What every command handler gets: the home opened for this command (the node layer's
:class:`~commons.node.home_context.HomeContext`), plus the command line's own helpers."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from commons.node.home_context import HomeContext


class Context(HomeContext):
    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Context:
        """A command's context: its store's statements run inline (it is one short task; the
        daemon, started by `commons daemon`, opens its own store on a thread)."""
        ctx = cls.from_environment(getattr(args, "at", None))
        ctx.inline_store = True
        return ctx


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
