"""Why a lesson or record stands where it does: its provenance, the verifications held and how each
counted, a revocation that took it down, what the sessions proved fixed it.

The one answer both faces give: `commons why` prints it (``commons.cli.review.why_text``), the MCP
server's ``why`` tool returns it as JSON.
"""

from __future__ import annotations

from commons.clock import format_time
from commons.core.records import SECONDS_PER_DAY, Lesson, LessonKind, Revocation, SignedRecord, Verification, as_plain
from commons.core.trust import fix_claim
from commons.ingest.readers import agent_of_key
from commons.node import revocation, trust
from commons.node.context import NodeContext
from commons.store import episodes as episode_store
from commons.store import lessons as ls

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
