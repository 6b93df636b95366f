"""`commons store check`: SQLite's integrity check and the record invariants; `--privacy`: what the
scrubber would still replace. `commons store scrub`: scrub a home written before every door did."""

from __future__ import annotations

import argparse

from commons.cli.context import Context, add_json_flag, emit
from commons.errors import CommonsError
from commons.node import privacy
from commons.node.revocation import dead_but_present
from commons.store import records as record_store


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("store", help="inspect the database", description="Inspect the node's database.")
    commands = parser.add_subparsers(dest="store_command", metavar="SUBCOMMAND")
    check = commands.add_parser(
        "check",
        help="check the database and every record",
        description=(
            "Run SQLite's integrity check, then check that every stored record's id matches its "
            "body, that its body is canonical and that its signature verifies, and that nothing a stored "
            "revocation kills is still live (held though it arrived after its revocation, or still "
            "rendered). Exits 1 on any problem."
        ),
    )
    check.add_argument("--privacy", action="store_true",
                       help="instead, list every secret or personal detail the scrubber would still replace "
                            "in the stored lessons, predictions, episodes, reports and memory files (where and "
                            "kind, never the value); exits 1 if there is one (`commons store scrub` cleans them)")
    add_json_flag(check)
    check.set_defaults(handler=cmd_check)
    scrub = commands.add_parser(
        "scrub", help="scrub the secrets and personal details out of what this home stored",
        description=("Scrub every stored word derived from transcripts (lessons, predictions, episodes, vetoes, "
                     "the nights' records, trust changes), the morning report files and the memory folder, "
                     "as every door does now; prints how many of each changed. Runs once by itself at the "
                     "first sleep after an upgrade; safe to run again. The raw transcripts are not touched."))
    add_json_flag(scrub)
    scrub.set_defaults(handler=cmd_scrub)
    parser.set_defaults(handler=None, _help=parser)


async def cmd_check(ctx: Context, args: argparse.Namespace) -> int:
    if args.privacy:
        return await cmd_check_privacy(ctx, args)
    async with await ctx.open_store(readonly=True) as store:
        sqlite_problems = await store.integrity_problems()
        checked, record_problems = await record_store.check_invariants(store)
        death_problems = []
        try:
            me = ctx.identity.author_public
        except CommonsError:  # no keys yet: nothing of this node's was ever rendered
            me = None
        if me is not None:

            death_problems = await dead_but_present(store, ctx.node, ctx.now())
    problems = sqlite_problems + record_problems + death_problems
    data = {"ok": not problems, "database": str(ctx.home.database), "records_checked": checked, "problems": problems}
    emit(
        args,
        data,
        lambda: f"{ctx.home.database}: {'ok' if not problems else 'PROBLEMS'} ({checked} records checked)"
        + "".join(f"\n  {p}" for p in problems),
    )
    return 0 if not problems else 1


async def cmd_check_privacy(ctx: Context, args: argparse.Namespace) -> int:
    async with await ctx.open_store(readonly=True) as store:
        hits = await privacy.check_home(store, ctx.node)
    data = {"ok": not hits, "hits": [h.to_json() for h in hits]}
    emit(args, data, lambda: "\n".join(f"{h.where} {h.kind}" for h in hits)
         + (f"\n{len(hits)} remaining; `commons store scrub` replaces them"
            + (" (a signed record's words cannot change: `commons revoke RECORD_ID` takes it down)"
               if any(h.where.startswith("records:") for h in hits) else "")
            if hits else "no secret or personal detail left in this home's lessons, episodes, reports, memory "
            "files or records"))
    return 0 if not hits else 1


async def cmd_scrub(ctx: Context, args: argparse.Namespace) -> int:
    async with await ctx.open_store() as store:
        result = await privacy.scrub_home(store, ctx.node, ctx.now())
    data = result.to_json()
    emit(args, data, lambda: f"scrubbed {result.total} stored item(s): "
         + ", ".join(f"{n} {place.replace('_', ' ')}" for place, n in result.changed))
    return 0
