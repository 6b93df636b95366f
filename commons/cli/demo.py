"""`commons demo`: the demonstration `make demo` runs."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path

from commons.cli.context import Context, add_json_flag, emit
from commons.demo.run import run_demo


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="run the demonstration: several nodes on this machine",
        description=(
            "Run the demonstration with its nodes' homes in DIR (a fresh temporary folder by default; "
            "kept either way, so you can inspect each node with COMMONS_HOME=<home> commons ...)."
        ),
    )
    parser.add_argument("--dir", type=Path, metavar="DIR", help="where the nodes' homes go (kept)")
    add_json_flag(parser)
    parser.set_defaults(handler=cmd_demo)


def commons_command() -> str:
    """How a person runs this very `commons` from their shell: ``commons`` when that is what their
    PATH finds, else its path (after `make demo`, ``.venv/bin/commons``, which no PATH holds)."""
    beside = Path(sys.executable).parent / "commons"
    if not beside.is_file():
        return f"{shlex.quote(sys.executable)} -m commons"
    found = shutil.which("commons")
    if found and Path(found).resolve() == beside.resolve():
        return "commons"
    try:
        return shlex.quote(os.path.relpath(beside)) if not os.path.relpath(beside).startswith("..") else str(beside)
    except ValueError:  # another drive
        return str(beside)


def cmd_demo(ctx: Context, args: argparse.Namespace) -> int:
    summary = run_demo(args.dir, as_json=args.json)
    command = commons_command()

    def text() -> str:
        first = summary["nodes"][0]
        return "\n".join([
            f"\ndemo homes kept in {summary['root']}",
            f"to go on with a node, give its home (the commands above wrote `commons` for {command}):",
            f"  COMMONS_HOME={shlex.quote(first['home'])} {command} lessons",
            f"  COMMONS_HOME={shlex.quote(first['home'])} {command} status",
        ])

    emit(args, {**summary, "command": command}, text)
    return 0
