"""`commons store check`: SQLite's integrity check and the record invariants."""

from __future__ import annotations

import argparse

from commons.cli.context import Context, add_json_flag, emit
from commons.errors import CommonsError
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
    add_json_flag(check)
    check.set_defaults(handler=cmd_check)
    parser.set_defaults(handler=None, _help=parser)


async def cmd_check(ctx: Context, args: argparse.Namespace) -> int:
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
