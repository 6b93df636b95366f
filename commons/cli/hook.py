"""`commons hook session-end`: what Claude Code runs when a session ends.

It must never hold up or fail the person's session. Claude Code gives all `SessionEnd` hooks
together 1.5 s (raised to a hook's own ``timeout``, at most 60 s) and then cancels them, so the hook
reads its input (waiting at most :data:`STDIN_WAIT` s for it), hands it to a detached copy of
itself (``--wait``) and exits; the copy ingests under a deadline and writes what happened to
``<data>/logs/hook.log``. Every failure of its own — no home, garbage input, a vanished transcript,
a locked store, a bug — is logged and exits 0; stdout stays empty, because Claude Code reads a
hook's stdout.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import time
from typing import TYPE_CHECKING

from commons.cli.context import Context

if TYPE_CHECKING:  # the hook imports trio, logging and the store only in the process that ingests
    import logging

    from commons.integrations.session_end import SessionEnd, SessionEndOutcome

STDIN_WAIT = 2.0  # seconds to wait for the hook's input: Claude Code writes it at once
DEADLINE = 60.0  # seconds the detached ingest may take before it gives up (and logs that)
LOG_NAME = "hook.log"

LOGGER = "commons.hook"


def register(subparsers: argparse._SubParsersAction) -> None:
    hook = subparsers.add_parser(
        "hook",
        help="entry points for agents' hooks (installed by `commons setup`)",
        description="Commands that agents run from their hooks. `commons setup claude-code` installs them.",
    )
    hook.set_defaults(_help=hook)
    events = hook.add_subparsers(dest="event", metavar="EVENT")
    end = events.add_parser(
        "session-end",
        help="Claude Code's SessionEnd hook: ingest the session that ended and nap on it",
        description=(
            "Read Claude Code's SessionEnd hook input (JSON with transcript_path, cwd, session_id) "
            "on stdin and ingest that transcript at once, in a detached process, so the session "
            "exits without waiting; then nap: a correction, or a failure already seen with its fix, "
            "becomes a lesson in the project's memory within seconds (the nightly sleep does the "
            "rest). Always exits 0 and prints nothing on stdout; what happened is "
            f"in <data>/logs/{LOG_NAME}."
        ),
    )
    end.add_argument(
        "--wait", action="store_true",
        help="ingest in this process and return when done (for testing the hook by hand)",
    )  # fmt: skip
    end.add_argument(
        "--deadline", type=float, default=DEADLINE, metavar="SECONDS",
        help=f"give up ingesting after this long (default {DEADLINE:g})",
    )  # fmt: skip
    end.set_defaults(handler=cmd_session_end)


def cmd_session_end(ctx: Context, args: argparse.Namespace) -> int:
    try:
        data = read_stdin(sys.stdin, STDIN_WAIT)
    except Exception as error:  # a closed or odd stdin: nothing to act on
        print(f"commons hook: cannot read stdin: {error}", file=sys.stderr)
        return 0
    from commons import identity

    if not identity.exists(ctx.home):
        # No home: nothing to ingest into, and the hook must not create one on its own.
        print(f"commons hook: no commons home at {ctx.home.data_dir} (run `commons init`); skipped", file=sys.stderr)
        return 0
    if args.wait:
        _wait(ctx, data, args.deadline)
    else:
        _hand_over(ctx, data, args.deadline)
    return 0


def _hand_over(ctx: Context, data: bytes, deadline: float) -> None:
    """The process Claude Code waits for: parse, start the ingest, note it, return. The standard
    library's lighter half only (no logging, no subprocess): this is start-up the person waits on."""
    note = _HookLog(ctx.home.log_dir / LOG_NAME)
    try:
        from commons.integrations.session_end import HookInputError, parse_hook_input

        try:
            event = parse_hook_input(data)
        except HookInputError as error:
            note.write("WARNING", f"session end: ignored: {error}")
            return
        pid = _detach(data, deadline)
        note.write("INFO", f"session end {event.session_id}: ingest handed to pid {pid}")
    except Exception:  # the hook's own failure must not become the session's
        import traceback

        note.write("ERROR", "session-end hook failed\n" + traceback.format_exc().rstrip())


def _wait(ctx: Context, data: bytes, deadline: float) -> None:
    """The detached process (or `--wait` by hand): ingest, nap, log what happened."""
    log = _log()
    handler = _log_to(ctx)
    try:
        from commons.integrations.session_end import HookInputError, parse_hook_input

        try:
            event = parse_hook_input(data)
        except HookInputError as error:
            log.warning("session end: ignored: %s", error)
            return
        _ingest(ctx, event, deadline)
    except Exception:  # the hook's own failure must not become the session's
        log.exception("session-end hook failed")
    finally:
        log.removeHandler(handler)
        handler.close()


class _HookLog:
    """Lines in hook.log in the form the logging module writes there (FORMAT), or on stderr (which
    Claude Code shows only with --debug) when the file cannot be opened."""

    def __init__(self, path) -> None:
        self.path = path

    def write(self, level: str, message: str) -> None:
        now = time.time()
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)) + f",{int(now % 1 * 1000):03d}"
        line = f"{stamp} {level} pid {os.getpid()}: {message}\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(line)
        except OSError:
            sys.stderr.write(line)


def read_stdin(stream, wait: float) -> bytes:
    """All of ``stream``, waiting at most ``wait`` seconds for data to come (a terminal or a pipe
    that never closes gives what arrived)."""
    if stream is None or stream.isatty():
        return b""
    fd = stream.fileno()
    chunks: list[bytes] = []
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        if os.name == "posix":
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


FORMAT = "%(asctime)s %(levelname)s pid %(process)d: %(message)s"


def _log() -> logging.Logger:
    import logging

    return logging.getLogger(LOGGER)


def _log_to(ctx: Context) -> logging.Handler:
    """The home's hook log; stderr (which Claude Code shows only with --debug) if it cannot be opened."""
    import logging

    log = _log()
    try:
        ctx.home.log_dir.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(ctx.home.log_dir / LOG_NAME, encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    return handler


def _detach(data: bytes, deadline: float) -> int:
    """Start ``commons hook session-end --wait`` in a session of its own, its stdin the hook's
    input, and return its pid without waiting: Claude Code may kill this process's group when it
    exits. A bare fork and exec (subprocess would cost the hook a quarter of its start-up)."""
    argv = [sys.executable, "-m", "commons", "hook", "session-end", "--wait", "--deadline", str(deadline)]
    if not hasattr(os, "fork"):
        import subprocess

        child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 close_fds=True)
        assert child.stdin is not None
        child.stdin.write(data)
        child.stdin.close()
        return child.pid
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own session, the input on stdin, nothing on stdout or stderr
        try:
            os.setsid()
            os.close(write_end)
            os.dup2(read_end, 0)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execv(sys.executable, argv)  # every other descriptor is closed on exec (PEP 446)
        finally:
            os._exit(127)
    os.close(read_end)
    with open(write_end, "wb") as pipe:
        pipe.write(data)
    return pid


def _ingest(ctx: Context, event: SessionEnd, deadline: float) -> None:
    from commons.runtime import run

    started = time.monotonic()
    outcome = run(_ingest_async, ctx, event, deadline)
    took = time.monotonic() - started
    if outcome is None:
        _log().warning("session end %s: ingest gave up after %.0f s: %s", event.session_id, deadline, event.transcript_path)
        return
    report = outcome.report
    for bad in report.unreadable:
        _log().warning("session end %s: cannot read %s: %s", event.session_id, bad.path, bad.reason)
    new = ", ".join(f"{n} {kind}" for kind, n in report.new_episodes if n) or "no new episodes"
    project = outcome.project.root if outcome.project else "unknown project"
    _log().info("session end %s (%s, %s): %s in %.2f s", event.session_id, event.reason or "no reason", project, new, took)


async def _ingest_async(ctx: Context, event: SessionEnd, deadline: float) -> SessionEndOutcome | None:
    from functools import partial

    import trio

    from commons.ingest.archive import Archive
    from commons.integrations.session_end import ingest_session_end

    with trio.move_on_after(deadline):
        archive = await trio.to_thread.run_sync(Archive, ctx.home.archive_dir)
        async with await ctx.open_store() as store:
            return await ingest_session_end(store, archive, event, ctx.now(), nap=partial(_nap, ctx, store))
    return None


async def _nap(ctx: Context, store, outcome: SessionEndOutcome) -> None:
    """Learn now what needs no night (a correction, a failure already seen with its fix) and
    render it, so the next session of the day reads it; the night does the rest."""
    from commons.node.nap import nap

    if not any(n for kind, n in outcome.report.new_episodes if kind != "session"):
        return  # nothing surprising arrived: nothing to learn before the night
    report = await nap(store, ctx.node, ctx.now())
    where = ", ".join(str(f.folder) for f in report.render.folders) if report.render else "nothing rendered"
    _log().info("session end %s: nap learned %d, joined %d, %d left for the night; %s", outcome.event.session_id,
             len(report.learned), len(report.joined), report.waiting, where)
