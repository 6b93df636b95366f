"""`commons mcp` in the command line's help. The server is the MCP face (``commons.mcp_server``),
which :mod:`commons.launch` starts before the command line is loaded; this module only describes it."""

from __future__ import annotations

import argparse

from commons.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    mcp = subparsers.add_parser(
        "mcp", help="serve recall, lessons, why, remember and forget as MCP tools over stdio",
        description=("Serve `recall`, `lessons`, `why`, `remember` and `forget` as Model Context Protocol "
                     "tools on stdin/stdout, for an agent to use mid-task; they answer for the project of "
                     "the working directory. `commons setup claude-code` registers it with Claude Code."))
    mcp.set_defaults(handler=cmd_mcp)


def cmd_mcp(ctx, args: argparse.Namespace) -> int:
    # The `commons` program hands `commons mcp` to the MCP face before the command line is loaded;
    # this runs only for a caller of commons.cli.main, or a `commons` script from an older install.
    raise UsageError("`commons mcp` is started by the `commons` program (commons.launch:run_console), "
                     "and this one is the command line alone: `python -m commons mcp` works, and "
                     "`make install` (or installing commons again) makes the `commons` script anew")
