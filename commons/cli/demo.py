"""`commons demo`: the demonstration `make demo` runs."""

from __future__ import annotations

import argparse
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


def cmd_demo(ctx: Context, args: argparse.Namespace) -> int:
    summary = run_demo(args.dir, as_json=args.json)
    emit(args, summary, lambda: f"\ndemo homes kept in {summary['root']}")
    return 0
