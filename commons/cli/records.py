"""`commons export` and `commons import`: records as JSON lines, validated on the way in."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import IO

from commons.cli.context import Context, add_json_flag, emit
from commons.core.records import RecordType, as_plain
from commons.core.trust import refused_as_dead
from commons.errors import UsageError
from commons.node import door, revocation
from commons.store import records as record_store


IMPORT_BATCH = 1000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write records as JSON lines to stdout",
        description=(
            "Write every record this node holds as JSON lines (type, id, body, signature, and the "
            "decoded record for reading). A backup: `commons export > backup.jsonl`. A record the door "
            "policy refuses (as `commons import` and every peer would) is withheld, and stderr says by "
            "which rule; revocations always go out."
        ),
    )
    parser.add_argument("--type", choices=[t.value for t in RecordType], help="only records of this type")
    parser.set_defaults(handler=cmd_export)

    parser = subparsers.add_parser(
        "import",
        help="read records from JSON lines, validated as if from a peer",
        description=(
            "Read records written by `commons export` (FILE, or - for stdin). Each is checked exactly "
            "as a record from a peer: canonical form, id, signature, network, date; and against the "
            "death certificates this node holds: a revoked record, anything by a revoked key, a lesson "
            "derived from a revoked one is refused for good (restoring an old backup cannot bring it "
            "back); and against the door policy the daemon applies to peers: a lesson that instructs "
            "an agent instead of reporting what happened is refused. Exits 1 when any line was "
            "refused, and says why."
        ),
    )
    parser.add_argument("file", metavar="FILE")
    add_json_flag(parser)
    parser.set_defaults(handler=cmd_import)


def export_line(signed) -> str:
    return json.dumps(
        {
            "type": signed.type.value,
            "id": signed.id.hex(),
            "body": signed.body.hex(),
            "signature": signed.signature.hex(),
            "record": as_plain(signed.record),
        },
        ensure_ascii=False,
    )


def withheld_from_export(signed) -> str | None:
    """Why ``commons export`` withholds a stored record, or None to hand it on: the door policy
    of intake (:func:`commons.node.door.policy`), so no file it writes holds what `commons import`
    and every peer would refuse. A revocation always travels: it only takes records away."""
    if signed.type is RecordType.REVOCATION:
        return None
    return door.policy(signed)


async def cmd_export(ctx: Context, args: argparse.Namespace) -> int:
    rtype = RecordType(args.type) if args.type else None
    withheld: Counter[str] = Counter()  # by the rule that withheld them
    async with await ctx.open_store(readonly=True) as store:
        for signed in await record_store.all_records(store, rtype):
            reason = withheld_from_export(signed)
            if reason is not None:
                rule = door.rule_of(reason)
                withheld[rule[0] if rule else reason] += 1
                continue
            sys.stdout.write(export_line(signed) + "\n")
    if withheld:
        by_rule = ", ".join(f"{count} by the rule '{name}'" for name, count in sorted(withheld.items()))
        print(f"commons export: {withheld.total()} record(s) withheld ({by_rule}): the door policy "
              "refuses them (`commons import` and every peer would refuse them too)", file=sys.stderr)
    return 0


def _parse_line(line: str) -> tuple[bytes, bytes, bytes]:
    entry = json.loads(line)
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    try:
        return bytes.fromhex(entry["body"]), bytes.fromhex(entry["signature"]), bytes.fromhex(entry["id"])
    except KeyError as missing:
        raise ValueError(f"no {missing} field") from None
    except (TypeError, AttributeError):
        raise ValueError("body, signature and id must be hex strings") from None


def _open(path: str) -> IO[str]:
    if path == "-":
        return sys.stdin
    try:
        return open(path, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror}") from None


def _refused(line: int, reason: str) -> dict:
    entry = {"line": line, "reason": reason}
    rule = door.rule_of(reason)
    if rule is not None:  # the node's own policy, not the record's validity: say which rule
        entry["rule"] = rule[0]
    return entry


def _refusal_line(file: str, entry: dict) -> str:
    rule = door.rule_of(entry["reason"])
    if rule is None:
        return f"  line {entry['line']}: {entry['reason']}"
    name, says = rule
    where = "stdin" if file == "-" else file
    return (f"  line {entry['line']} of {where}: {entry['reason']}: refused by the {name} rule, as the daemon "
            f"refuses it from peers ({says})")


async def cmd_import(ctx: Context, args: argparse.Namespace) -> int:
    refused: list[dict] = []
    accepted = duplicates = 0
    now = ctx.now()
    batch: list[tuple[int, bytes, bytes, bytes]] = []
    stored: list = []
    node = ctx.node
    admit = None

    async def flush(store) -> None:
        nonlocal accepted, duplicates, admit
        if admit is None:
            # The gossip door's admission, in its order: the death certificates, then the policy.
            admit = door.then_policy(await revocation.admission(store, node, now))
        report = await record_store.intake(
            store,
            [(body, sig) for _, body, sig, _ in batch],
            network=ctx.network,
            now=now,
            origin="import",
            admit=admit,
            claimed_ids=[rid for *_, rid in batch],
        )
        stored.extend(report.accepted)
        accepted += len(report.accepted)
        duplicates += report.duplicates
        refused.extend(_refused(batch[r.index][0], r.reason) for r in report.refusals)
        batch.clear()

    handle = _open(args.file)
    async with await ctx.open_store() as store:
        with handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    body, sig, rid = _parse_line(line)
                except (ValueError, UnicodeDecodeError) as error:
                    refused.append({"line": number, "reason": f"not a record line: {error}"})
                    continue
                batch.append((number, body, sig, rid))
                if len(batch) >= IMPORT_BATCH:
                    await flush(store)
            if batch:
                await flush(store)
        # Immediate effect: statuses recomputed and the memory folder re-rendered now, not at sleep.
        died = any(refused_as_dead(r["reason"]) for r in refused)
        effect = (await revocation.after_intake(store, node, now, stored, refused_dead=died)).to_json()
    data = {"accepted": accepted, "duplicates": duplicates, "refused": refused}
    if effect["status_changes"]:
        data["status_changes"] = effect["status_changes"]

    def text() -> str:
        lines = [f"accepted {accepted}, already held {duplicates}, refused {len(refused)}"]
        lines += [_refusal_line(args.file, r) for r in refused]
        lines += [f"  {c['lesson'][:12]} {c['from'] or 'new'} → {c['to']}: {c['why']}" for c in effect["status_changes"]]
        return "\n".join(lines)

    emit(args, data, text)
    return 1 if refused else 0
