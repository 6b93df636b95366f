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
import logging
import os
import select
import subprocess
import sys
import time
from functools import partial
from typing import TYPE_CHECKING

from commons.cli.context import Context

if TYPE_CHECKING:  # the hook imports trio and the store only in the process that ingests
    from commons.integrations.session_end import SessionEnd, SessionEndOutcome

STDIN_WAIT = 2.0  # seconds to wait for the hook's input: Claude Code writes it at once
DEADLINE = 60.0  # seconds the detached ingest may take before it gives up (and logs that)
LOG_NAME = "hook.log"

log = logging.getLogger("commons.hook")


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
    handler = _log_to(ctx)
    try:
        from commons.integrations.session_end import HookInputError, parse_hook_input

        try:
            event = parse_hook_input(data)
        except HookInputError as error:
            log.warning("session end: ignored: %s", error)
            return 0
        if args.wait:
            _ingest(ctx, event, args.deadline)
        else:
            _detach(data, event, args.deadline)
    except Exception:  # the hook's own failure must not become the session's
        log.exception("session-end hook failed")
    finally:
        log.removeHandler(handler)
        handler.close()
    return 0


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


def _log_to(ctx: Context) -> logging.Handler:
    """The home's hook log; stderr (which Claude Code shows only with --debug) if it cannot be opened."""
    try:
        ctx.home.log_dir.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(ctx.home.log_dir / LOG_NAME, encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s pid %(process)d: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    return handler


def _detach(data: bytes, event: SessionEnd, deadline: float) -> None:
    """Start ``commons hook session-end --wait`` in a session of its own, its stdin the hook's
    input, and return without waiting: Claude Code may kill this process's group when it exits."""
    argv = [sys.executable, "-m", "commons", "hook", "session-end", "--wait", "--deadline", str(deadline)]
    child = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )  # fmt: skip
    assert child.stdin is not None
    child.stdin.write(data)
    child.stdin.close()
    log.info("session end %s: ingest handed to pid %d", event.session_id, child.pid)


def _ingest(ctx: Context, event: SessionEnd, deadline: float) -> None:
    from commons.runtime import run

    started = time.monotonic()
    outcome = run(_ingest_async, ctx, event, deadline)
    took = time.monotonic() - started
    if outcome is None:
        log.warning("session end %s: ingest gave up after %.0f s: %s", event.session_id, deadline, event.transcript_path)
        return
    report = outcome.report
    for bad in report.unreadable:
        log.warning("session end %s: cannot read %s: %s", event.session_id, bad.path, bad.reason)
    new = ", ".join(f"{n} {kind}" for kind, n in report.new_episodes if n) or "no new episodes"
    project = outcome.project.root if outcome.project else "unknown project"
    log.info("session end %s (%s, %s): %s in %.2f s", event.session_id, event.reason or "no reason", project, new, took)


async def _ingest_async(ctx: Context, event: SessionEnd, deadline: float) -> SessionEndOutcome | None:
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
    log.info("session end %s: nap learned %d, joined %d, %d left for the night; %s", outcome.event.session_id,
             len(report.learned), len(report.joined), report.waiting, where)
