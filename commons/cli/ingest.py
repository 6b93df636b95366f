"""`commons ingest`, `commons archive`, `commons episodes`: transcripts in, what was kept, what was learned from."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import trio

from commons.cli.context import Context, add_json_flag, emit, progress_line
from commons.clock import format_time
from commons.core.learning import CorrectionEpisode, Episode, EpisodeKind, ErrorEpisode, SessionEpisode
from commons.errors import CommonsError, UsageError, explain_os_error
from commons.ingest.archive import Archive, ArchiveError
from commons.ingest.ingester import discover, ingest_paths
from commons.ingest.readers import AGENT_NAMES, agent_of_key
from commons.store import episodes as episode_store


PROGRESS_FROM = 20  # transcripts: fewer are read too fast for a progress line to help
DEFAULT_LIMIT = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    ingest = subparsers.add_parser(
        "ingest",
        help="read agent transcripts into episodes",
        description=(
            "Read agent transcripts (Claude Code, Codex CLI, Gemini CLI; see docs/agents.md) into "
            "episodes: one per session, one per failed tool call, one per correction by the person. "
            "Each PATH is a transcript or a folder searched for every agent's session files; without "
            "PATH, the [ingest] roots of the config (default $CLAUDE_CONFIG_DIR/projects, "
            "$CODEX_HOME/sessions, $GEMINI_CLI_HOME/.gemini/tmp, each variable standing for ~/.claude, "
            "~/.codex and ~ when unset). Reading again adds nothing; a transcript that grew is read from "
            "where the last read stopped. Every transcript is archived, compressed, in the data "
            "folder (see `commons archive`). A file that is no agent's transcript is named and left "
            "alone. Exits 1 if a file could not be read or is no transcript (the others are read), "
            "or if the home has no keys yet (run `commons init` first)."
        ),
    )
    ingest.add_argument("paths", nargs="*", metavar="PATH", help="a transcript or a folder of them")
    add_json_flag(ingest)
    ingest.set_defaults(handler=cmd_ingest)

    archive = subparsers.add_parser(
        "archive",
        help="list the archived transcripts",
        description=(
            "List the transcripts kept in the data folder's archive: key, original path, bytes, "
            "bytes stored after compression and chunks, with totals."
        ),
    )
    add_json_flag(archive)
    archive.set_defaults(handler=cmd_archive)

    episodes = subparsers.add_parser(
        "episodes",
        help="list the episodes taken from transcripts",
        description="List the most recent episodes (oldest of them first): sessions, errors, corrections.",
    )
    episodes.add_argument("--kind", choices=[k.value for k in EpisodeKind], help="only episodes of this kind")
    episodes.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, metavar="N",
        help=f"show the N most recent (default {DEFAULT_LIMIT}; 0 shows all)",
    )  # fmt: skip
    add_json_flag(episodes)
    episodes.set_defaults(handler=cmd_episodes)


# -- ingest ---------------------------------------------------------------------------------------


async def cmd_ingest(ctx: Context, args: argparse.Namespace) -> int:
    ctx.require_initialised()  # before the archive folder is made
    roots = args.paths or list(ctx.config.ingest.roots)
    paths = discover(roots)
    # A PATH named on the command line that is not there is reported like any unreadable file.
    paths += [Path(p) for p in args.paths if not Path(p).expanduser().exists()]
    progress = progress_line(args, "reading transcripts") if len(paths) >= PROGRESS_FROM else None
    now = ctx.now()
    try:
        archive = await trio.to_thread.run_sync(Archive, ctx.home.archive_dir)
        async with await ctx.open_store() as store:
            report = await ingest_paths(store, archive, paths, now, progress=progress)
    except ArchiveError as error:
        cause = error.__cause__
        explained = explain_os_error(cause, ctx.home.archive_dir) if isinstance(cause, OSError) else None
        raise CommonsError(f"archive: {explained or error}") from None  # a full disk, a read-only folder
    finally:
        if progress is not None:
            progress.close()
    for bad in report.unreadable:
        print(f"commons: cannot read {bad.path}: {bad.reason}", file=sys.stderr)
    for path in report.unknown:
        print(f"commons: {path} is not a transcript of Claude Code, Codex or Gemini CLI; not read", file=sys.stderr)
    if not paths and not args.paths:
        print(f"commons: no transcripts found under {', '.join(roots)}", file=sys.stderr)

    def text() -> str:
        new = report.episodes
        if not any(new.values()) and not report.rewritten:
            # Read again, a transcript adds nothing: say so, rather than a line of zeros.
            line = (f"nothing new: {_count(report.transcripts, 'transcript')} read, no new session, error or "
                    "correction" + ("" if report.transcripts else " (no transcript found)"))
            if report.skipped_lines:
                line += f"; {_count(report.skipped_lines, 'malformed line')} skipped"
            return line
        line = (
            f"read {_count(report.transcripts, 'transcript')} ({_size(report.bytes_read)} new): "
            f"{_count(new['session'], 'new session')}, {_count(new['error'], 'error')}, "
            f"{_count(new['correction'], 'correction')}"
        )
        if report.skipped_lines:
            line += f"; {_count(report.skipped_lines, 'malformed line')} skipped"
        if report.rewritten:
            line += f"; {len(report.rewritten)} rewritten in place, read again"
        return line

    emit(args, report.to_json(), text)
    return 1 if report.unreadable or report.unknown else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} KB"


# -- archive --------------------------------------------------------------------------------------


def cmd_archive(ctx: Context, args: argparse.Namespace) -> int:
    folder = ctx.home.archive_dir
    try:
        entries = Archive(folder).entries() if folder.exists() else []
    except ArchiveError as error:
        cause = error.__cause__
        explained = explain_os_error(cause, ctx.home.archive_dir) if isinstance(cause, OSError) else None
        raise CommonsError(f"archive: {explained or error}") from None  # a full disk, a read-only folder
    rows = [
        {
            "key": e.key, "original_path": e.original_path, "bytes": e.size, "stored_bytes": e.stored_size,
            "chunks": len(e.chunks), "generations": e.generations,
        }  # fmt: skip
        for e in entries
    ]
    totals = {
        "transcripts": len(rows),
        "bytes": sum(r["bytes"] for r in rows),
        "stored_bytes": sum(r["stored_bytes"] for r in rows),
        "chunks": sum(r["chunks"] for r in rows),
    }

    def text() -> str:
        lines = [f"{r['bytes']:>12,} {r['stored_bytes']:>11,} {r['chunks']:>4}  {r['key']}" for r in rows]
        ratio = totals["bytes"] / totals["stored_bytes"] if totals["stored_bytes"] else 0
        lines.append(
            f"{totals['transcripts']} transcripts, {totals['bytes']:,} bytes kept in {totals['stored_bytes']:,} "
            f"({ratio:.1f}x smaller), {totals['chunks']} chunks, in {folder}"
        )
        return "\n".join(["       bytes      stored chunks key", *lines] if rows else lines)

    emit(args, {"folder": str(folder), "transcripts": rows, "totals": totals}, text)
    return 0


# -- episodes -------------------------------------------------------------------------------------


async def cmd_episodes(ctx: Context, args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise UsageError(f"--limit {args.limit}: expected 0 (all) or a positive number")
    kinds = [EpisodeKind(args.kind)] if args.kind else None
    async with await ctx.open_store(readonly=True) as store:
        since = await episode_store.live_cutoff(store, args.kind, args.limit) if args.limit else None
        stored = await episode_store.load_episodes(store, kinds=kinds, since=since)
    if args.limit:
        stored = stored[-args.limit :]
    data = []
    for item in stored:
        fields = episode_store.episode_to_json(item.episode)
        fields["at"] = format_time(item.episode.at)
        if isinstance(item.episode, SessionEpisode):
            fields["ended_at"] = format_time(item.episode.ended_at)
        data.append({"kind": item.episode.kind.value, **fields, "transcript": item.transcript,
                     "agent": agent_of_key(item.transcript)})
    emit(
        args,
        {"episodes": data},
        lambda: "\n".join(_line(s.episode, agent_of_key(s.transcript)) for s in stored)
        or "no episodes yet: run `commons ingest`",
    )
    return 0


def _line(episode: Episode, agent: str) -> str:
    if isinstance(episode, ErrorEpisode):
        what = f"{episode.tool} {_clip(episode.target, 50)}: {episode.failure}"
    elif isinstance(episode, CorrectionEpisode):
        what = f'"{_clip(episode.said, 80)}"' + (" (rejecting a tool call)" if episode.via_rejection else "")
    else:
        calls = sum(n for _, n in episode.tool_counts)
        asked = episode.asked[0] if episode.asked else "(no request)"
        what = f'"{_clip(asked, 70)}", {calls} tool calls' + (", subagent" if episode.sidechain else "")
    return f"{format_time(episode.at)}  {episode.kind.value:<10}  {AGENT_NAMES.get(agent, agent):<11}  {_clip(what, 140)}"


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
