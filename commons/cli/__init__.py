"""The `commons` command line.

Each concept keeps its subcommands in a module of this package with a ``register(subparsers)``
function; ``COMMAND_MODULES`` lists them, with the commands each registers, in the order `commons
--help` shows them. A command line imports only the module of the command it names (all of them
for `commons --help`, none for `commons --version`): a command pays for nothing it does not use.
`commons mcp` is not run from here but by :mod:`commons.launch`, which picks the face (this
command line or the MCP server) before either is imported. A handler takes
``(ctx, args)``, may be async, and returns an exit code (None is 0). Errors map to exit codes in
one place (:func:`main`): 0 success, 1 failure, 2 usage error; one clear line on stderr, the
traceback only with ``-v``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from commons import __version__
from commons.errors import CommonsError, UsageError, explain_os_error

if TYPE_CHECKING:
    from commons.cli.context import Context


# Each module, with the commands its ``register`` adds (tests/test_startup.py holds the table true).
COMMAND_MODULES = {
    "commons.cli.identity": ("init", "id", "config"),
    "commons.cli.ingest": ("ingest", "archive", "episodes"),
    "commons.cli.rebuild": ("rebuild",),
    "commons.cli.organism": ("sleep", "report", "recall"),
    "commons.cli.mcp": ("mcp",),
    "commons.cli.lessons": ("lessons", "forget", "render"),
    "commons.cli.review": ("why", "vouch", "revoke", "revocations"),
    "commons.cli.daemon": ("daemon", "status", "peers", "publish", "service"),
    "commons.cli.records": ("export", "import"),
    "commons.cli.store": ("store",),
    "commons.cli.demo": ("demo",),
    "commons.cli.setup": ("setup",),
    "commons.cli.hook": ("hook",),
}
GLOBAL_WITH_VALUE = ("--at",)  # the global options that take a value (the word after them is no command)


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not a global option), or None."""
    words = iter(argv)
    for word in words:
        if word in GLOBAL_WITH_VALUE:
            next(words, None)
        elif word == "--":
            return next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def modules_for(argv: Sequence[str] | None) -> tuple[str, ...]:
    """The command modules a command line needs: its command's, none for a bare --version, else all
    (`commons --help`, or a word that is no command, which argparse then names with the choices)."""
    if argv is None:
        return tuple(COMMAND_MODULES)
    command = command_of(argv)
    owner = [module for module, commands in COMMAND_MODULES.items() if command in commands]
    if owner:
        return tuple(owner)
    if command is None and "--version" in argv and not {"-h", "--help"} & set(argv):
        return ()
    return tuple(COMMAND_MODULES)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 by itself; keep our one-line form
        self.print_usage(sys.stderr)
        raise UsageError(message)


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every option of ``parser`` and of the subcommands below it."""
    found: set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _option_strings(sub)
    return found


def unknown_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """The words of ``argv`` that look like options but are none of the parser's (nor a prefix of
    one, which argparse takes as that option). argparse, meeting one, may blame the word after it
    (`commons lessons --stauts all`: "invalid choice: 'all'"); the misspelled flag is the fault."""
    known = _option_strings(parser)
    unknown = []
    for word in argv:
        if word == "--":
            break
        flag = word.split("=", 1)[0]
        if not flag.startswith("-") or flag == "-" or flag.lstrip("-").replace(".", "").isdigit():
            continue
        if flag not in known and not (flag.startswith("--") and any(k.startswith(flag) for k in known)):
            unknown.append(flag)
    return unknown


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    try:
        return parser.parse_args(argv)
    except UsageError as error:
        unknown = unknown_options(parser, argv)
        if not unknown or unknown[0] in str(error):
            raise
        import difflib  # only for a command line that went wrong

        close = difflib.get_close_matches(unknown[0], sorted(_option_strings(parser)), n=1)
        raise UsageError(f"unrecognized option {unknown[0]}" + (f" (did you mean {close[0]}?)" if close else "")
                         ) from None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv``: with only the command modules it needs (every one when None)."""
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
    for name in modules_for(argv):
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None, *,
         context: Callable[[argparse.Namespace], Context] | None = None) -> int:
    """Run one command line; its exit code. ``context``: what makes the handler's context from the
    parsed arguments (default :meth:`Context.from_args`, the home opened afresh); a program that runs
    many commands in one home keeps one context across them (the experiment's harness)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = None
    try:
        args = _parse(parser, argv)
        if not getattr(args, "handler", None):
            getattr(args, "_help", parser).print_help()
            return 2
        if context is None:
            from commons.cli.context import Context  # after parsing: `commons --version` needs no home

            context = Context.from_args
        ctx = context(args)
        handler = args.handler
        if _is_async(handler):
            from commons.runtime import run  # trio: only for the commands that run async

            # A command's store runs inline (cli.context); only a command that says it reaches an
            # asyncio library (the daemon: its store's thread, zeroconf) gets the bridge.
            code = run(handler, ctx, args, bridge=getattr(args, "asyncio_bridge", False))
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


def _is_async(handler) -> bool:
    # inspect.iscoroutinefunction, without importing inspect (a fifth of the hook's start-up)
    return bool(getattr(getattr(handler, "__code__", None), "co_flags", 0) & 0x80)  # inspect.CO_COROUTINE


def _internal(error: BaseException, args: argparse.Namespace | None) -> int:
    if args is not None and args.verbose:
        traceback.print_exception(error)
    print(
        f"commons: internal error: {type(error).__name__}: {error} (run with -v for the traceback)",
        file=sys.stderr,
    )
    return 1


def run_console() -> None:
    """What a `commons` script made before :mod:`commons.launch` was the program still calls
    (an editable install not made again since): the command line, `commons mcp` excepted
    (:mod:`commons.cli.mcp` says how to make the script again)."""
    sys.exit(main())
