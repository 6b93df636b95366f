"""`commons lessons`, `commons lessons add|scope`, `commons forget`, `commons render`.

What the node has learned, as the person sees and steers it: list the lessons, write one by hand
(an observation, never an instruction), re-scope one, veto one (`forget`), and render them into
the agent's memory folder.
"""

from __future__ import annotations

import argparse
import os
import sys

from commons.node import recall as recalling
from commons.cli.context import Context, add_json_flag, emit
from commons.core.records import LessonKind, Scope
from commons.errors import CommonsError, UsageError
from commons.node import authoring, publish
from commons.node import lessons, rendering
from commons.store import lessons as ls


STATUS_CHOICES = lessons.LIST_STATUSES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lessons", help="list, add and re-scope what the agent has learned",
        description=("List the lessons sleep learned from your agent's sessions (strongest first), "
                     "or add one by hand. A lesson reports what happened; it never gives an instruction."))
    parser.add_argument("--status", choices=STATUS_CHOICES, default="active",
                        help="which lessons to list (default: active, this node's own lessons in use); "
                             "candidate and common are lessons received from other nodes, as this node "
                             "judges them; revoked and superseded, of either")
    add_json_flag(parser)
    parser.set_defaults(handler=cmd_list)
    commands = parser.add_subparsers(dest="lessons_command", metavar="SUBCOMMAND")

    add = commands.add_parser(
        "add", help="write a lesson by hand",
        description=("Add a lesson in your own words. It must be an observation of what happened "
                     "(\"The person prefers uv over pip in this project.\"), not an instruction "
                     "(\"Always use uv\"); an instruction is refused with the observation it could be."))
    add.add_argument("text", help="one or two sentences")
    add.add_argument("--kind", choices=[k.value for k in LessonKind], default=LessonKind.INSIGHT.value)
    add.add_argument("--scope", choices=[s.value for s in Scope],
                     help="local (about you or this project) or shared (about a tool anyone may meet); "
                          "default: decided from the text")
    add.add_argument("--derived-from", metavar="ID", action="append", default=[],
                     help="a lesson this one was derived from (local or record id; repeatable): the lesson "
                          "is published at once with it as a parent, so revoking the parent takes it down "
                          "too (needs `commons publish on`)")
    add_json_flag(add)
    add.set_defaults(handler=cmd_add)

    reword = commands.add_parser(
        "reword", help="publish a new wording of a lesson (supersedes the old; not a revocation)",
        description=("Change a lesson's words. A published lesson gets a new version that supersedes the "
                     "old one; lessons derived from the old one stay alive (to take a wrong lesson down "
                     "with everything derived from it, use `commons revoke`)."))
    reword.add_argument("id", help="the lesson's id, or its first 6+ hex characters")
    reword.add_argument("text", help="the new words: one or two sentences saying what happened")
    add_json_flag(reword)
    reword.set_defaults(handler=cmd_reword)

    scope = commands.add_parser(
        "scope", help="re-scope a lesson: local or shared",
        description=("Set a lesson's scope. Only shared lessons can ever be published. Making one shared "
                     "prints the exact words its record would carry to every peer (scrubbed) and asks "
                     "you to confirm; a script passes --yes."))
    scope.add_argument("id", help="the lesson's id, or its first 6+ hex characters")
    scope.add_argument("scope", choices=[s.value for s in Scope])
    scope.add_argument("--yes", action="store_true",
                       help="make it shared without asking (for scripts: the words are still printed)")
    add_json_flag(scope)
    scope.set_defaults(handler=cmd_scope)

    forget = subparsers.add_parser(
        "forget", help="veto a lesson: removed now, never made again",
        description=("Veto a lesson: its file leaves the memory folder at once, and sleep never makes "
                     "it again from the same content. (Deleting the lesson's file does the same.)"))
    forget.add_argument("id", help="the lesson's id, or its first 6+ hex characters")
    add_json_flag(forget)
    forget.set_defaults(handler=cmd_forget)

    render = subparsers.add_parser(
        "render", help="write the lessons into the agent's memory folder now",
        description=("Render the active lessons into the memory folder ([render] folder; default "
                     "<data>/memory): one commons-<id>.md file each and a managed section of MEMORY.md. "
                     "Nothing else in the folder is touched. Sleep does this at its end."))
    add_json_flag(render)
    render.set_defaults(handler=cmd_render)


def _line(d: dict) -> str:
    pred = f"\n      predicts: {(d['prediction']['situation'].splitlines() or [''])[0][:80]} → " \
           f"{d['prediction']['outcome'][:80]}" if d["prediction"] else ""
    if d["strength"] is None:  # received: its standing is the confirmations, not a strength
        head = f"{d['id'][:12]}  by {d['author'][:8]}  {d['confirmations']} confirmed, {d['failures']} failed"
        return f"{head}  {d['kind']:<10} {d['status']:<10} {d['text']}{pred}"
    return (f"{d['id'][:12]}  {d['strength']:5.2f}  seen {d['seen']:<3} {d['kind']:<10} {d['scope']:<6} "
            f"{d['status']:<8} {d['text']}{pred}")


async def cmd_list(ctx: Context, args: argparse.Namespace) -> int:
    node = ctx.node
    async with await ctx.open_store(readonly=True) as store:
        found = [v.to_json() for v in await lessons.list_lessons(store, node, args.status, ctx.now())]
    emit(args, found, lambda: "\n".join(_line(d) for d in found) if found else _none_listed(args.status))
    return 0


def _none_listed(status: str) -> str:
    """What an empty listing says: "no lessons" for every status, "no active lessons" for one."""
    return "no lessons yet" if status == "all" else f"no {status} lessons"


async def cmd_add(ctx: Context, args: argparse.Namespace) -> int:
    node = ctx.node
    scope = Scope(args.scope) if args.scope else None
    try:
        async with await ctx.open_store() as store:
            # Written here, it belongs to the project of the folder it was written in.
            lesson, new = await lessons.add_lesson(store, node, args.text, LessonKind(args.kind), scope, ctx.now(),
                                                   project=recalling.project_key(os.getcwd()))
            if args.derived_from:

                await authoring.derive(store, node, lesson.id, args.derived_from, ctx.now())
            prediction = (await ls.open_prediction_of(store, [lesson.id])).get(lesson.id)
            (stored,) = await ls.load_lessons(store, ids=[lesson.id])
            data = dict(lessons.describe(stored, prediction, ctx.now(), node).to_json(), new=new)
            if args.derived_from:
                data["parents"] = args.derived_from
    except lessons.LessonRefused as refused:
        raise CommonsError(str(refused)) from None
    emit(args, data, f"{'added' if new else 'already known'}: {lesson.id[:12]} [{data['kind']}, {data['scope']}] {lesson.text}")
    return 0


async def cmd_reword(ctx: Context, args: argparse.Namespace) -> int:
    node = ctx.node
    try:
        async with await ctx.open_store() as store:
            await _resolve(store, args.id)
            data = (await authoring.reword(store, node, args.id, args.text, ctx.now())).to_json()
    except lessons.LessonRefused as refused:
        raise CommonsError(str(refused)) from None
    emit(args, data, lambda: (f"reworded as {data['id'][:12]}: {data['text']}"
                              + (f"\n(new record {data['record_id'][:12]} supersedes {data['supersedes'][:12]}; "
                                 "lessons derived from the old one stay)" if data["published"] else
                                 "\n(never published: changed locally)")))
    return 0


async def _resolve(store, prefix: str) -> str:
    try:
        return await ls.resolve_id(store, prefix)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _words_text(words: publish.Words) -> str:
    fix = f"\n  fix:      {words.fix.step} (fixed {words.fix.tool} {words.fix.failed})" if words.fix else ""
    return (f"  text:     {words.text}\n  predicts: {words.situation} → {words.outcome}\n"
            f"  topics:   {', '.join(words.topics) or '-'}{fix}")


def _confirmed(words: publish.Words) -> bool:
    """Ask on the terminal whether these words may leave the machine."""
    sys.stderr.write(f"Made shared, lesson {words.lesson_id[:12]} is published (with `commons publish on`) "
                     f"as exactly:\n{_words_text(words)}\nMake it shared? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


async def cmd_scope(ctx: Context, args: argparse.Namespace) -> int:
    async with await ctx.open_store() as store:
        lid = await _resolve(store, args.id)
        words = None
        if args.scope == Scope.SHARED.value:
            (stored,) = await ls.load_lessons(store, ids=[lid])
            words = publish.published_words(stored.lesson)
            if isinstance(words, publish.Skipped):
                raise CommonsError(f"lesson {lid[:12]} cannot be shared: {words.reason}; reword it "
                                   "(`commons lessons reword`) or keep it local")
            if not args.yes:
                if not sys.stdin.isatty():
                    raise UsageError(f"making lesson {lid[:12]} shared needs confirmation: run it on a terminal, "
                                     "or pass --yes to accept the words it would publish")
                if not _confirmed(words):
                    sys.stderr.write(f"{lid[:12]} left as it was\n")
                    return 1
        await ls.set_scope(store, lid, Scope(args.scope), ctx.now())
    data = {"id": lid, "scope": args.scope, **({"published_words": words.to_json()} if words else {})}
    emit(args, data, f"{lid[:12]} is now {args.scope}" + (f"; its record would carry:\n{_words_text(words)}"
                                                           if words else ""))
    return 0


async def cmd_forget(ctx: Context, args: argparse.Namespace) -> int:
    node = ctx.node
    async with await ctx.open_store() as store:
        lid = await _resolve(store, args.id)
        lesson, rendered = await lessons.forget(store, node, lid, ctx.now())
    emit(args, {"id": lesson.id, "text": lesson.text, "vetoed": True, "render": rendered.to_json()},
         f"vetoed {lesson.id[:12]}: {lesson.text}\n(removed from the memory it was rendered in; it will not be made again)")
    return 0


def render_text(r: dict) -> str:
    if not r["folders"]:
        lines = [f"rendered nothing: no project has a memory folder for the {r['target']} target yet "
                 "(Claude Code has not run in a project commons has sessions of, or its auto memory is off)"]
    else:
        lines = [f"rendered {r['rendered']} lesson file(s) into {len(r['folders'])} folder(s) ({r['target']}):"]
    for f in r["folders"]:
        lines.append(f"  {f['folder']}: {sum(f['rendered'].values())} lesson(s), "
                     f"MEMORY.md {f['memory_lines']} lines, {f['memory_bytes']} bytes")
    if any(r["left_out"].values()):
        lines.append("left out over budget: " + ", ".join(f"{k}: {v}" for k, v in r["left_out"].items() if v))
    if r["unsafe_skipped"]:
        lines.append(f"skipped {len(r['unsafe_skipped'])} text(s) that read as instructions: "
                     + ", ".join(i[:12] for i in r["unsafe_skipped"]))
    if r["vetoed_deleted_files"]:
        lines.append("vetoed (their files were deleted): " + ", ".join(i[:12] for i in r["vetoed_deleted_files"]))
    if r["removed"]:
        lines.append("removed: " + ", ".join(r["removed"]))
    lines += list(r.get("repaired", ()))
    for a in r.get("agent_files", ()):  # Codex's AGENTS.md, Gemini's GEMINI.md (`commons setup`)
        if "error" in a:
            lines.append(f"{a['agent']}: not written: {a['error']}")
        else:
            lines.append(f"{a['agent']}: {a['written']} shared lesson(s) in {a['path']} ({a['bytes']} bytes"
                         + (f", {a['left_out']} left out over budget" if a["left_out"] else "") + ")")
    return "\n".join(lines)


async def cmd_render(ctx: Context, args: argparse.Namespace) -> int:
    node = ctx.node
    async with await ctx.open_store() as store:
        result = (await rendering.render(store, node, ctx.now())).to_json()
    emit(args, result, lambda: render_text(result))
    return 0
