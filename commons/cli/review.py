"""`commons why`, `commons vouch`, `commons revoke`, `commons revocations`: the commons as this node sees it.

`why` answers "why is this lesson (not) common here?": its provenance, every verification held
(who, when, what it said, whether it counted and why not), and for a dead lesson the revocation
and the chain that carried it. docs/peer-review.md and docs/revocation.md show them in use.
"""

from __future__ import annotations

import argparse

from commons.cli.context import Context, add_json_flag, emit
from commons.core.policy import shown_json
from commons.core.trust import FixClaim
from commons.errors import UsageError
from commons.ingest.readers import AGENT_NAMES
from commons.node import authoring, revocation
from commons.node.why import why


def register(subparsers: argparse._SubParsersAction) -> None:
    why = subparsers.add_parser(
        "why", help="why a lesson has its status: provenance, verifications, revocation",
        description=("Show where a lesson comes from (the lessons it was derived from), every "
                     "verification this node holds of it (who, when, confirmed or failed, whether it "
                     "counted and why not), and, for a revoked lesson, the revocation and the chain "
                     "that carried it. ID: a local lesson id or a record id, or 6+ hex characters of one."))
    why.add_argument("id")
    add_json_flag(why)
    why.set_defaults(handler=cmd_why)

    vouch = subparsers.add_parser(
        "vouch", help="vouch for another node's author key",
        description=("Sign a vouch for KEY (another node's author key, from its `commons id`): under "
                     "the web-of-trust policy its verifications count here, and keys it vouches for may "
                     "count too ([trust] max_depth). Undo it with `commons revoke <vouch id> --reason …`."))
    vouch.add_argument("key", help="the author key, 64 hex characters")
    add_json_flag(vouch)
    vouch.set_defaults(handler=cmd_vouch)

    rev = subparsers.add_parser(
        "revoke", help="revoke a record or an author key, for good",
        description=("Sign a revocation: of a record (a lesson by its local or record id, a vouch, any "
                     "record) or, with --key, of an author key (everything it signed). It applies at once "
                     "here (the memory folder drops what it takes down, with every lesson derived from it) "
                     "and travels to peers whether or not publishing is on. It cannot be undone. To change "
                     "a lesson's words instead, use `commons lessons reword`."))
    rev.add_argument("id", nargs="?", help="the lesson or record id (or 6+ hex characters of it)")
    rev.add_argument("--key", metavar="AUTHOR_KEY", help="revoke this author key instead of a record")
    rev.add_argument("--reason", required=True, help="why, in a sentence (it travels with the revocation)")
    add_json_flag(rev)
    rev.set_defaults(handler=cmd_revoke)

    revs = subparsers.add_parser(
        "revocations", help="every revocation held, whether applied, and what it took down",
        description=("List the revocations this node holds (its own and its peers'), whether each is "
                     "applied here and why not ([trust] revocation_authorities, revocation_threshold), "
                     "and every record it took down."))
    add_json_flag(revs)
    revs.set_defaults(handler=cmd_revocations)


# --------------------------------------------------------------------------------------------
# why (the answer is commons.node.why's; this is its text)


def why_text(d: dict) -> str:
    ident = d["record_id"] or d["local_id"]
    lines = [f"{d.get('type', 'lesson')} {ident}", f"  {d.get('text') or ''}".rstrip()]
    if "fix" in d:
        fix = d["fix"]
        lines.append("  fix: no fix was seen in its sessions" if fix is None else
                     f"  fix: {fix['step']} ({fix['evidence']}, {fix['sessions']} session{'s' * (fix['sessions'] != 1)}, "
                     f"confidence {fix['confidence']})")
        if d.get("fix_refuted"):
            lines.append("  refuted (the same failure came again after): " + "; ".join(d["fix_refuted"]))
        danger = fix.get("danger") if fix else None
        if danger:
            lines.append(f"  dangerous: {danger['kind']} (rule {danger['rule']}): {danger['risk']}; "
                         "never published, and its text names no fix")
    claim = d.get("fix_claim")
    if claim == FixClaim.CHECKABLE.value:
        named = d.get("named_fix") or {}
        step = f"`{named['step']}` for `{named['failed']}`" if named else "the fix its text names"
        lines.append(f"  names a fix: {step}; it counts as confirmed only where that fix ran and the step then "
                     "succeeded (fix-confirmed)")
    elif claim == FixClaim.UNCHECKABLE.value:
        lines.append("  quotes a step beside its fix that no verifier checks: no verification confirms it")
    if d.get("agents"):
        lines.append("  learned from: " + ", ".join(
            f"{n} {AGENT_NAMES.get(a, a)} episode{'s' * (n != 1)}" for a, n in d["agents"].items()))
    if not d.get("published"):
        lines.append(f"  status: {d.get('status')} (local only: never published, so no peer can verify it)")
        return "\n".join(lines)
    lines.append(f"  status: {d['status']}" + (f" — {d['why_status']}" if d.get("why_status") else ""))
    lines.append(f"  author: {d['author'][:16]}…{' (this node)' if d['mine'] else ''}, created {d['created']}, "
                 f"held since {d['received']} ({d['origin']})")
    if d.get("represented_by"):
        lines.append(f"  this node's own lesson {d['local_id'][:12]} duplicates it: not published again")
    if d.get("supersedes"):
        lines.append(f"  supersedes {d['supersedes'][:12]}")
    if d.get("superseded_by"):
        lines.append(f"  superseded by {d['superseded_by'][:12]} (its derived lessons stay alive)")
    if d["provenance"]:
        lines.append("  derived from:")
        lines += [f"    {'  ' * (p['depth'] - 1)}{p['id'][:12]} [{p['status'] or 'not held'}] {p['text'] or ''}"
                  for p in d["provenance"]]
    if "verifications" in d and d.get("type") == "lesson":
        lines.append(f"  verifications: {len(d['verifications'])} held, {d.get('confirmations', 0)} confirmation(s) "
                     f"and {d.get('failures', 0)} failure(s) counted ({d.get('independent', 0)} independent)")
        for v in d["verifications"]:
            counted = "counted" if v["counted"] else f"not counted: {v['why_not']}"
            said = f"{v['outcome']}, {v['fix']}" if v.get("fix") else v["outcome"]
            lines.append(f"    {v['verifier'][:12]}{' (me)' if v['mine'] else ''} {said} on {v['observed']} "
                         f"(received {v['received']}, {'naive' if v['naive'] else 'corroboration'}) — {counted}")
    rev = d.get("revocation")
    if rev:
        lines.append(f"  REVOKED: {rev['why']}")
        for r in rev["revocations"]:
            lines.append(f"    revocation {r['id'][:12]} by {r['signer'][:12]} ({r['ruling']}): {r['reason']}")
        if rev["chain"]:
            lines.append("    chain: " + " → ".join(f"{c['id'][:12]}" for c in rev["chain"]) + f" → {ident[:12]}")
    return "\n".join(lines)


async def cmd_why(ctx: Context, args: argparse.Namespace) -> int:
    node = ctx.node
    async with await ctx.open_store(readonly=True) as store:
        data = shown_json(await why(store, node, args.id, ctx.now()))  # the door policy, a last pass
    emit(args, data, lambda: why_text(data))
    return 0


# --------------------------------------------------------------------------------------------
# vouch, revoke, revocations


async def cmd_vouch(ctx: Context, args: argparse.Namespace) -> int:
    node = ctx.node
    async with await ctx.open_store() as store:
        data = (await authoring.vouch(store, node, args.key, ctx.now())).to_json()
    emit(args, data, f"vouched for {data['subject'][:16]}… (vouch {data['id'][:16]}; undo: {data['undo']})")
    return 0


def _revocation_text(r: dict) -> str:
    what = f"key {r['target'][:16]}…" if r["target_kind"] == "key" else f"record {r['target'][:12]}"
    state = "applied" if r["applied"] else f"not applied ({r['why_not']})"
    lines = [f"{r['id'][:12]} by {r['signer'][:12]}{' (me)' if r['mine'] else ''}: {what} — {state}",
             f"    reason: {r['reason']}"]
    for down in r["took_down"]:
        how = "" if down["cause"] == "revoked" else f" ({down['cause']}" + (
            f" via {' → '.join(c[:12] for c in down['chain'])})" if down["chain"] else ")")
        lines.append(f"    took down {down['type'] or 'record'} {down['id'][:12]}{how} {down['text'] or ''}".rstrip())
    return "\n".join(lines)


async def cmd_revoke(ctx: Context, args: argparse.Namespace) -> int:
    if args.id is None and args.key is None:
        raise UsageError("name what to revoke: an id, or --key AUTHOR_KEY")
    if args.id is not None and args.key is not None:
        raise UsageError("revoke either a record (ID) or a key (--key), not both")
    node = ctx.node
    async with await ctx.open_store() as store:
        revoked = await revocation.revoke(store, node, reason=args.reason, now=ctx.now(), target=args.id, key=args.key)
    data = revoked.to_json()
    emit(args, data, lambda: "signed revocation " + _revocation_text(data)
         + (f"\n(memory folder re-rendered: {data['render']['folder']})" if data.get("render") else ""))
    return 0


async def cmd_revocations(ctx: Context, args: argparse.Namespace) -> int:
    async with await ctx.open_store(readonly=True) as store:
        found = [r.to_json() for r in await revocation.revocations(store, ctx.node, ctx.now())]
    emit(args, found, lambda: "\n".join(_revocation_text(r) for r in found) if found else "no revocations held")
    return 0
