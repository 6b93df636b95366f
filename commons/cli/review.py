"""`commons why`, `commons vouch`, `commons revoke`, `commons revocations`: the commons as this node sees it.

`why` answers "why is this lesson (not) common here?": its provenance, every verification held
(who, when, what it said, whether it counted and why not), and for a dead lesson the revocation
and the chain that carried it. docs/peer-review.md and docs/revocation.md show them in use.
"""

from __future__ import annotations

import argparse

from commons.cli.context import Context, add_json_flag, emit
from commons.clock import format_time
from commons.core.records import SECONDS_PER_DAY, Lesson, LessonKind, Revocation, SignedRecord, Verification, as_plain
from commons.core.policy import scrub_json
from commons.core.trust import FixClaim, fix_claim
from commons.errors import UsageError
from commons.node import authoring, revocation, trust
from commons.node.context import NodeContext
from commons.ingest.readers import AGENT_NAMES, agent_of_key
from commons.store import episodes as episode_store
from commons.store import lessons as ls


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
# why


def _day(day: int | None) -> str | None:
    return None if day is None else format_time(day * SECONDS_PER_DAY)[:10]


def _verification(held: trust.Held, signed: SignedRecord) -> dict:
    record: Verification = signed.record
    verdict = held.view.verifications.get(signed.id)
    return {
        "id": signed.id.hex(), "verifier": record.author.hex(), "mine": record.author == held.me,
        "outcome": record.outcome.value, "fix": record.fix.value if record.fix else None,
        "counts_as": verdict.outcome.value if verdict and verdict.counted else None,
        "naive": record.naive, "received": _day(record.received),
        "observed": _day(record.observed), "created": _day(record.created),
        "counted": bool(verdict and verdict.counted), "recent": bool(verdict and verdict.recent),
        "why_not": verdict.reason.value if verdict and verdict.reason else None,
        "anchor": verdict.anchor.hex() if verdict and verdict.anchor else None,
    }


def _provenance(held: trust.Held, lesson: Lesson) -> list[dict]:
    """Every ancestor over ``parents``, nearest first (breadth-first; cycles and repeats cut)."""
    out, seen, layer, depth = [], set(), list(lesson.parents), 1
    while layer:
        following = []
        for rid in sorted(layer):
            if rid in seen:
                continue
            seen.add(rid)
            parent = held.lesson(rid)
            state = held.state(rid)
            out.append({"id": rid.hex(), "depth": depth, "held": parent is not None,
                        "text": parent.text if parent else None, "author": parent.author.hex() if parent else None,
                        "status": state.status.value if state else None})
            if parent is not None:
                following += list(parent.parents)
        layer, depth = following, depth + 1
    return out


def _revocation(held: trust.Held, rid: bytes) -> dict | None:
    takedown = held.view.revoked.get(rid)
    if takedown is None:
        return None
    return {
        "cause": takedown.cause.value, "why": trust.describe_takedown(held, rid),
        "key": takedown.key.hex() if takedown.key else None,
        "revocations": [revocation.describe_revocation(held, held.records[r]).to_json() for r in takedown.revocations
                        if r in held.records],
        "chain": [{"id": c.hex(), "text": getattr(held.records[c].record, "text", None) if c in held.records else None}
                  for c in takedown.chain],
    }


async def why(store, node: NodeContext, text: str, now: float) -> dict:
    held = await node.trust.held(store, now)
    local = None
    try:
        lid = await ls.resolve_id(store, text)
        (local,) = await ls.load_lessons(store, ids=[lid])
    except ValueError:
        pass
    rid = local.record_id if local is not None else await revocation.resolve_record(store, text)
    signed = held.records.get(rid) if rid is not None else None
    data: dict = {"local_id": local.lesson.id if local else None, "record_id": rid.hex() if rid else None}
    if local is not None:
        data.update(text=local.lesson.text, kind=local.lesson.kind.value, local_status=local.status,
                    origin=local.origin, seen=local.lesson.seen, episodes=len(local.lesson.episodes),
                    agents=await _agents(store, local.lesson.episodes))
        if local.lesson.kind is LessonKind.ERROR:
            # What the sessions proved fixed it (null: no fix seen), and steps they refuted.
            data.update(fix=local.lesson.fix.to_json() if local.lesson.fix is not None else None,
                        fix_refuted=list(local.lesson.fix_refuted))
    if signed is None:
        data.update(type="lesson", status=local.status if local else None, published=False, provenance=[],
                    verifications=[], revocation=None)
        return data
    record = signed.record
    data.update(type=signed.type.value, author=record.author.hex(), mine=record.author == held.me,
                origin=data.get("origin") or held.origin.get(rid), received=format_time(held.received[rid]),
                created=_day(record.created), published=True, record=as_plain(record))
    if record.author != held.me and local is not None:
        data["represented_by"] = rid.hex()  # an own lesson a common one stands for (content dedupe)
    if isinstance(record, Lesson):
        state = held.state(rid)
        data.update(text=record.text, kind=record.kind.value, status=state.status.value,
                    why_status=trust.status_why(held, state), confirmations=state.confirmations,
                    independent=state.independent, failures=state.failures,
                    supersedes=record.supersedes.hex() if record.supersedes else None,
                    superseded_by=state.superseded_by.hex() if state.superseded_by else None,
                    provenance=_provenance(held, record),
                    verifications=[_verification(held, held.records[v.id]) for v in state.verdicts],
                    named_fix=as_plain(record)["fix"], fix_claim=fix_claim(record).value)
    else:
        data.update(status="revoked" if rid in held.view.dead_ids else "live", provenance=[], verifications=[])
    data["revocation"] = _revocation(held, rid)
    if isinstance(record, Revocation):
        data["ruling"] = revocation.describe_revocation(held, signed).to_json()
    return data


async def _agents(store, uids: tuple[str, ...]) -> dict[str, int]:
    """How many of a lesson's episodes came from each agent (this node's knowledge only: the
    published record names no agent)."""
    counts: dict[str, int] = {}
    for key in (await episode_store.transcripts_of(store, list(uids))).values():
        agent = agent_of_key(key) or "unknown"
        counts[agent] = counts.get(agent, 0) + 1
    return dict(sorted(counts.items()))


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
        data = scrub_json(await why(store, node, args.id, ctx.now()))  # the last privacy pass
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
