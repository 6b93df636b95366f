"""The `commons` command line.

Each concept keeps its subcommands in a module of this package with a ``register(subparsers)``
function; ``COMMAND_MODULES`` lists them in the order `commons --help` shows them. A handler takes
``(ctx, args)``, may be async, and returns an exit code (None is 0). Errors map to exit codes in
one place (:func:`main`): 0 success, 1 failure, 2 usage error; one clear line on stderr, the
traceback only with ``-v``.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import traceback
from collections.abc import Sequence

from commons import __version__
from commons.cli.context import Context
from commons.errors import CommonsError, UsageError, explain_os_error
from commons.runtime import run


COMMAND_MODULES = (
    "commons.cli.identity",  # init, id, config
    "commons.cli.ingest",  # ingest, archive, episodes
    "commons.cli.rebuild",  # rebuild
    "commons.cli.organism",  # sleep, report, recall, mcp
    "commons.cli.lessons",  # lessons, forget, render
    "commons.cli.review",  # why, vouch, revoke, revocations
    "commons.cli.daemon",  # daemon, status, peers, publish, service
    "commons.cli.records",  # export, import
    "commons.cli.store",  # store check
    "commons.cli.demo",
    "commons.cli.setup",  # setup claude-code
    "commons.cli.hook",  # hook session-end
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 by itself; keep our one-line form
        self.print_usage(sys.stderr)
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="commons",
        description=(
            "A memory for your coding agent that learns from its mistakes, and a commons through "
            "which agents share what they learned. Homes: COMMONS_HOME=DIR keeps keys, config and "
            "data in DIR (default: ~/.config/commons and ~/.local/share/commons)."
        ),
        epilog="Run `commons COMMAND --help` for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"commons {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="show tracebacks and debug logs")
    parser.add_argument(
        "--at",
        metavar="ISO-TIME",
        help="act as if it were this time (e.g. 2026-11-29T03:00Z); also COMMONS_AT or [clock] at",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "handler", None):
            getattr(args, "_help", parser).print_help()
            return 2
        ctx = Context.from_args(args)
        handler = args.handler
        if inspect.iscoroutinefunction(handler):
            code = run(handler, ctx, args)
        else:
            code = handler(ctx, args)
        return 0 if code is None else int(code)
    except CommonsError as error:
        if args is not None and args.verbose:
            traceback.print_exc()
        print(f"commons: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("commons: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except OSError as error:
        explained = explain_os_error(error)  # a full disk, a read-only home: not a bug
        if explained is None:
            return _internal(error, args)
        if args is not None and args.verbose:
            traceback.print_exc()
        print(f"commons: error: {explained}", file=sys.stderr)
        return 1
    except Exception as error:  # a bug in commons, not the person's fault
        return _internal(error, args)


def _internal(error: BaseException, args: argparse.Namespace | None) -> int:
    if args is not None and args.verbose:
        traceback.print_exception(error)
    print(
        f"commons: internal error: {type(error).__name__}: {error} (run with -v for the traceback)",
        file=sys.stderr,
    )
    return 1


def run_console() -> None:
    sys.exit(main())
