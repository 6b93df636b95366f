"""`commons rebuild`: re-derive episodes and lessons from the archived transcripts with today's reader."""

from __future__ import annotations

import argparse
import os
import sys

import trio

from commons.cli.context import Context, add_json_flag, emit, progress_line
from commons.daemon.lock import DaemonRunning, acquire_lock
from commons.errors import CommonsError
from commons.ingest import rederive
from commons.ingest.archive import Archive, ArchiveError
from commons.node import rebuild

_LABELS = {rebuild.SUPPRESSED: "kept vetoed (new words, still vetoed)"}
BEFORE_AFTER_SHOWN = 20  # changes whose texts the dry run prints in full (all of them with --json)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rebuild",
        help="re-derive episodes and lessons from the archived transcripts",
        description=(
            "Read every transcript in the archive again with this version's reader and learn the "
            "lessons again from the episodes, as a fresh home would, then fold them into this one: "
            "lessons you vetoed (`commons forget`, a deleted file) stay vetoed under their new "
            "wording; a lesson you published is superseded by a new signed record, never changed "
            "in place; lessons written by hand or received from peers are left alone. Run it after "
            "upgrading commons so that lessons made by an older reader say what worked. "
            "--dry-run shows what would change (counts, and each lesson's text before and after) "
            "and writes nothing."
        ),
    )
    parser.add_argument("--dry-run", action="store_true", help="show what would change; write nothing")
    add_json_flag(parser)
    parser.set_defaults(handler=cmd_rebuild)


async def cmd_rebuild(ctx: Context, args: argparse.Namespace) -> int:
    folder = ctx.home.archive_dir
    if not folder.exists():
        raise CommonsError(f"no archive in {folder}: nothing to rebuild from (run `commons ingest` first)")
    now = ctx.now()
    # A running daemon ingests as transcripts grow: it would write episodes and reading positions
    # while rebuild replaces them. Holding its lock keeps one from starting meanwhile.
    held = None if args.dry_run else _daemon_lock(ctx)
    progress = progress_line(args, "reading transcripts")
    try:
        archive = await trio.to_thread.run_sync(Archive, folder)
        async with await ctx.open_store() as store:
            episodes = await rederive.plan(store, archive, progress=progress)
            lessons = await rebuild.plan(store, ctx.node, episodes.live_after, episodes.rederived_uids, now)
            applied = None
            if not args.dry_run:
                await rederive.apply(store, episodes, now)
                applied = await rebuild.apply(store, ctx.node, lessons, now)
    except ArchiveError as error:
        raise CommonsError(f"archive: {error}") from None
    finally:
        if progress is not None:
            progress.close()
        if held is not None:
            os.close(held)
    for skipped in episodes.not_reread:
        print(f"commons: not read again: {skipped.key}: {skipped.reason}", file=sys.stderr)
    data = {"dry_run": args.dry_run, "episodes": episodes.to_json(),
            "lessons": applied.to_json() if applied is not None else lessons.to_json()}
    emit(args, data, lambda: _text(episodes, lessons, applied, args.dry_run))
    return 0


def _daemon_lock(ctx: Context) -> int:
    try:
        return acquire_lock(ctx.home)
    except DaemonRunning as error:
        raise CommonsError(f"{error}: it reads transcripts while rebuild rewrites what was read from them; "
                           "stop it, run `commons rebuild`, then start it again") from None


def _text(episodes: rederive.EpisodeChanges, lessons: rebuild.Plan, applied: rebuild.Applied | None,
          dry_run: bool) -> str:
    verb = "would change" if dry_run else "changed"
    e = episodes.to_json()
    lines = [
        f"read {episodes.transcripts} archived transcripts again; episodes {verb}: "
        f"{_kinds(e['added'])} added, {_kinds(e['changed'])} changed, {_kinds(e['removed'])} removed, "
        f"{episodes.unchanged} unchanged",
        f"lessons {verb}: {lessons.count(rebuild.REWORDED)} reworded, {lessons.count(rebuild.NEW)} new, "
        f"{lessons.count(rebuild.RETIRED)} retired, {lessons.count(rebuild.SUPPRESSED)} kept vetoed, "
        f"{lessons.unchanged} unchanged",
    ]
    if applied is not None and applied.records:
        lines.append(f"signed {len(applied.records)} records superseding published lessons")
    for change in lessons.changes[:BEFORE_AFTER_SHOWN]:
        lines.append("")
        lines.append(f"{_LABELS.get(change.action, change.action)}:")
        lines += [f"  before {lid[:12]}  {text}" for lid, text in change.before]
        if change.after is not None:
            lines.append(f"  after  {change.after.id[:12]}  {change.after.text}")
        if change.supersedes:
            lines.append(f"  a new signed record supersedes {', '.join(r.hex()[:16] for r in change.supersedes)}")
        lines += [f"  record {rid.hex()[:16]} kept: {why}" for rid, why in change.kept_records]
    if len(lessons.changes) > BEFORE_AFTER_SHOWN:
        lines.append(f"\n… and {len(lessons.changes) - BEFORE_AFTER_SHOWN} more (all of them with --json)")
    if dry_run:
        lines.append("\nnothing was written (--dry-run)")
    return "\n".join(lines)


def _kinds(counts: dict[str, int]) -> str:
    total = sum(counts.values())
    parts = [f"{n} {kind}" for kind, n in counts.items() if n]
    return f"{total}" + (f" ({', '.join(parts)})" if parts else "")
