"""The `commons` program: which face a command line reaches, before either is loaded.

`commons mcp` (with at most the global ``-v`` and ``--at``) is the MCP server
(``commons.mcp_server``); every other command line is the command line's (``commons.cli``).
The two faces stand side by side over the node layer and neither imports the other.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def mcp_options(argv: Sequence[str]) -> dict | None:
    """``commons mcp``'s global options (``at``, ``verbose``) when ``argv`` asks for the MCP
    server, else None (help, extra words and typing mistakes are the command line's to answer)."""
    at, verbose, words = None, False, list(argv)
    while words and words[0] != "mcp":
        word = words.pop(0)
        if word in ("-v", "--verbose"):
            verbose = True
        elif word == "--at" and words:
            at = words.pop(0)
        elif word.startswith("--at="):
            at = word.removeprefix("--at=")
        else:
            return None
    return {"at": at, "verbose": verbose} if words == ["mcp"] else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    options = mcp_options(argv)
    if options is not None:
        from commons.mcp_server import main as serve

        return serve(**options)
    from commons.cli import main as command_line

    return command_line(argv)


def run_console() -> None:
    sys.exit(main())
