"""`commons mcp`: the agent's door to its memory, as MCP tools over stdio (design paper §4.4).

Mid-task an agent asks "have I met this before?" (``recall``), lists what it has learned
(``lessons``), asks why a lesson stands where it does (``why``), records what it just observed
(``remember``) and vetoes a lesson that is wrong (``forget``). Every tool answers with a JSON
object described by its output schema (``structuredContent``, with the same JSON as text for
clients that read only text); every parameter has a description and fixed values are enums; a
refusal or a bad argument comes back as ``isError`` with commons' own words, which the agent can
act on. Tools answer for the project the server runs in (Claude Code starts it in the session's
working directory), or the ``project`` argument, as ``commons recall`` does.

**How it runs.** The MCP SDK is written against anyio, which runs on trio as well as on asyncio.
commons processes are trio programs with one trio-asyncio loop open at the top, through which
aiosqlite (an asyncio library) is reached (``commons.runtime``). So the server is run by
``commons.runtime.run`` like every other command: anyio detects trio and the SDK's stdio transport
and session run as trio tasks, while the :class:`~commons.store.db.Store` keeps reaching SQLite
through the one bridge. The store is opened once for the server's life; each tool call reads what
is committed at that moment, so lessons a concurrent `commons sleep` or nap writes are seen by the
next call.

**How it starts.** The agent waits for the answers to ``initialize`` and ``tools/list`` (and the
prompts and resources lists) before its first model request, so they are given by
:mod:`commons.mcp_server.handshake` from the standard library alone; the SDK, the store and the node layer (:mod:`commons.mcp_server.tools`) load while
the client talks to its model, and take the connection over at its first other message. The
process's own stdin and stdout are pointed at the null device and stderr as it starts, so that
nothing but the server ever writes on the wire.

This package is the MCP face over the node layer, as ``commons.cli`` is the command line's; neither
imports the other (tests/test_layers.py), and :mod:`commons.launch` picks one.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback

from commons.errors import CommonsError


def _claim_stdio() -> tuple[int, int]:
    """The wire's descriptors, private; fd 0 then reads the null device and fd 1 writes to stderr."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _load_tools() -> None:
    import commons.mcp_server.tools  # noqa: F401  (the SDK and the node layer, while the client waits on its model)


def main(at: str | None = None, verbose: bool = False) -> int:
    """`commons mcp`: serve on stdin/stdout until the client closes the connection."""
    from commons.mcp_server.handshake import LineReader, answer_handshake
    from commons.node.home_context import HomeContext

    ctx = HomeContext.from_environment(at)
    try:
        ctx.require_initialised()  # before a word is answered: a home without keys serves nothing
        wire_in, wire_out = _claim_stdio()
        reader = LineReader(wire_in)
        loading = threading.Thread(target=_load_tools, name="commons-mcp-load", daemon=True)
        shook = answer_handshake(reader, wire_out, on_initialized=loading.start)
        if shook.pending is None:
            return 0  # the client left (during the handshake or before a word): nothing more to serve
        from commons.mcp_server.tools import serve
        from commons.runtime import run

        run(serve, ctx, shook, reader, wire_out)
        return 0
    except CommonsError as error:
        if verbose:
            traceback.print_exc()
        print(f"commons: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    except OSError as error:
        if verbose:
            traceback.print_exc()
        print(f"commons: error: the MCP server stopped: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # a bug in commons, not the person's fault
        if verbose:
            traceback.print_exception(error)
        print(f"commons: internal error: {type(error).__name__}: {error} (run with -v for the traceback)",
              file=sys.stderr)
        return 1
