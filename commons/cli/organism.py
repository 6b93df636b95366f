"""`commons sleep`, `commons report`, `commons recall`: the local loop's commands."""

from __future__ import annotations

import argparse
import math
import os
import sys

from commons.cli.context import Context, add_json_flag, emit, progress_line
from commons.cli.lessons import render_text
from commons.clock import format_time, parse_time
from commons.errors import UsageError
from commons.node import recall as recalling
from commons.node import sleep as night
from commons.node.lessons import LessonRefused
from commons.node.report import format_report, shown_report
from commons.store.db import writable


def register(subparsers: argparse._SubParsersAction) -> None:
    sleep = subparsers.add_parser(
        "sleep", help="run one night: decay, lessons, verify, predict; then render and report",
        description=("Run the four sleep passes over the episodes in the store (decay, lessons, verify, "
                     "predict), render the lessons into the memory folder and write the morning report "
                     "to <data>/reports/YYYY-MM-DD.md. The first sleep of a home replays the sessions "
                     "already ingested night by night in their own time, so months of history are learned "
                     "from; it says what it archived and why. Use --at to script the night's time."))
    add_json_flag(sleep)
    sleep.set_defaults(handler=cmd_sleep)

    report = subparsers.add_parser(
        "report", help="what changed since the last report",
        description=("Lessons learned, strengthened, weakened and archived; predictions confirmed, "
                     "prevented, failed and expired; vetoes; prediction accuracy. Covers the time since "
                     "you last ran `commons report`, or since --since."))
    report.add_argument("--since", metavar="ISO-TIME", help="report from this time instead")
    add_json_flag(report)
    report.set_defaults(handler=cmd_report)

    recall = subparsers.add_parser(
        "recall", help="the lessons most relevant to a situation",
        description=("Score every active lesson: 0.60·relevance + 0.25·recency + 0.15·strength "
                     "([recall] in config.toml), for the current project: lessons local to another "
                     "project are left out unless --all. Every lesson returned is touched: use keeps it alive."))
    recall.add_argument("query", nargs="+", help="words of the situation, e.g. an error line (quoted or not)")
    recall.add_argument("-k", type=int, default=5, help="how many (default 5)")
    recall.add_argument("--episodes", action="store_true", help="search the live episodes too")
    scope = recall.add_mutually_exclusive_group()
    scope.add_argument("--project", metavar="PATH",
                       help="answer for the project at PATH (its git root; default: the working directory): "
                            "its local lessons plus every shared and common lesson; a project no "
                            "session ran in gets every lesson")
    scope.add_argument("--all", action="store_true", help="every project's lessons, local ones included")
    add_json_flag(recall)
    recall.set_defaults(handler=cmd_recall)


# Why sleep archives, as the person reads it: a lesson or an episode untouched until its strength
# fell under the floor (the days it takes are said), or a lesson acted on and wrong there.
_ARCHIVE_REASONS = {"decayed": "decayed: untouched {days:.0f}+ days", "contradicted": "contradicted where acted on"}


def _reasons(counts: dict[str, int], days: float) -> str:
    return (" (" + "; ".join(f"{n} {_ARCHIVE_REASONS[reason].format(days=days)}" for reason, n in counts.items()) + ")"
            if counts else "")


def _sleep_text(result: dict, floor_days: float) -> str:
    c = result["counts"]
    archived = result["archived"]
    lines = [f"slept at {result['at']} over {result['episodes']} episodes"]
    if result["history"]:
        h = result["history"]
        lines.append(f"  first sleep: replayed {h['nights']} night(s) of the sessions already here, from {h['from']} "
                     f"to {h['to']}, in their own time; the {h['days_not_counted']:g} day(s) since did not "
                     "count toward decay")
    lines += [f"  lessons: {c['lessons_learned']} learned"
              + (f" ({result['learned_still_active']} still active)"
                 if result["learned_still_active"] != c["lessons_learned"] else "")
              + f", {c['lessons_strengthened']} strengthened, "
             f"{c['lessons_weakened']} weakened, {c['lessons_archived']} archived"
             + _reasons(archived["lessons"], floor_days)
             + (f", {c['lessons_suppressed']} not made again (vetoed)" if c["lessons_suppressed"] else ""),
             f"  predictions: {c['predictions_made']} made, {c['predictions_confirmed']} confirmed, "
             f"{c['predictions_prevented']} prevented, {c['predictions_failed']} failed, "
             f"{c['predictions_expired']} expired",
             f"  episodes archived: {c['episodes_archived']}" + _reasons(archived["episodes"], floor_days)]
    lines += [f"  + {e['lesson'][:12]} [{e['kind']}, {e['scope']}"
              + (f", {e['status']} since" if e["status"] != "active" else "") + f"] {e['text']}"
              for e in result["learned"]]
    lines += [render_text(result["render"]), f"morning report: {result['report']}"]
    return "\n".join(lines)


async def cmd_sleep(ctx: Context, args: argparse.Namespace) -> int:
    node = ctx.node
    progress = progress_line(args, "sleeping through the sessions already here")
    try:
        async with await ctx.open_store() as store:
            result = (await night.sleep(store, node, ctx.now(), progress=progress and (
                lambda done, total, at: progress(done, total, format_time(at)[:10])))).to_json()
    finally:
        if progress is not None:
            progress.close()
    emit(args, result, lambda: _sleep_text(result, node.sleep.half_life_days
                                            * math.log2(1 / node.sleep.archive_below)))
    return 0


async def cmd_report(ctx: Context, args: argparse.Namespace) -> int:
    try:
        since = parse_time(args.since) if args.since else None
    except ValueError as error:
        raise UsageError(str(error)) from None
    async with await ctx.open_store() as store:
        data = (await shown_report(store, ctx.now(), since)).to_json()
    emit(args, data, lambda: format_report(data))
    return 0


async def cmd_recall(ctx: Context, args: argparse.Namespace) -> int:
    if args.k < 1:
        raise UsageError("-k must be at least 1")
    node = ctx.node
    try:
        # Recall renews the recency of what it recalls; in a read-only home it still answers.
        async with await ctx.open_store(readonly=not writable(ctx.home.database)) as store:
            project = None if args.all else await recalling.project_for(store, args.project or os.getcwd())
            hits = [h.to_json() for h in await recalling.recall(
                store, node, " ".join(args.query), args.k, ctx.now(), episodes=args.episodes, project=project,
                progress=lambda line: print(f"commons: {line}", file=sys.stderr, flush=True))]
    except LessonRefused as error:
        raise UsageError(str(error)) from None
    emit(args, hits, lambda: "\n".join(
        f"{h['score']:.3f}  {h['id'][:12]}  (relevance {h['relevance']:.2f}, recency {h['recency']:.2f}, "
        f"strength {h['strength']:.2f})  {h['text'].splitlines()[0] if h['text'] else ''}" for h in hits)
        or "nothing recalled")
    return 0
