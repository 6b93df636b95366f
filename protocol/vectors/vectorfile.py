"""What every vector generator shares: write the file, or check that it is up to date.

Each ``generate_*.py`` builds its vectors deterministically and ends with
``sys.exit(regenerate(argv, path=..., render=...))``; the conformance tests load the generator
and compare its output with the committed file, naming the command that regenerates it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def command(generator: Path) -> str:
    """The command a person runs, from the repository root, to regenerate a vector file."""
    return f".venv/bin/python protocol/vectors/{generator.name}"


def regenerate(argv: Sequence[str] | None, *, generator: Path, path: Path, render: Callable[[], str]) -> int:
    parser = argparse.ArgumentParser(description=f"Regenerate {path.name}.")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {path.name} is out of date, write nothing")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{path} is out of date; run: {command(generator)}", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
