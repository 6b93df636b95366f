"""Benchmark: commons' reconciliation beside negentropy's JavaScript reference, on the same sets.

    .venv/bin/python tests/benchmarks/bench_negentropy.py           # table (10^5 items)
    .venv/bin/python tests/benchmarks/bench_negentropy.py --json    # the same figures as JSON
    .venv/bin/python tests/benchmarks/bench_negentropy.py --large   # also 10^6 items, scattered 1/10/1,000 (minutes, ~2 GB)
    .venv/bin/python tests/benchmarks/bench_negentropy.py --sweep   # commons alone, branching x threshold
    .venv/bin/python tests/benchmarks/bench_negentropy.py --breakdown "both unique" 1000
                                       # where the bytes go: each message by range mode, both protocols

Both sides hold ``--store`` shared items, each a record key at a creation day spread over a year
(what a record signs; negentropy gets the same day as its timestamp and the record id as its id),
plus the differences of each case:

* scattered: d new items at random days, split between the sides;
* newest missing: the initiator lacks the d newest items (a node that was away);
* both unique: each side made d/2 items of its own since they last met (a healed partition);
* busy day (``--store`` items over two days, each made at a second of its day; d = 1,000 only): the
  initiator lacks the d newest records of the second day. Commons orders by day, so within the day
  they are scattered; negentropy gets the second as its timestamp (its own ordering, in which they
  are one dense range) and, in ``negentropy_by_day``, the day alone, as commons has it.

Commons runs in version 3 (range fingerprints, ``commons``) and version 4 (symbol 0 in the opening, then
rateless coded symbols, ``commons_v4``; between two nodes that already know they both speak it --
the first session between two version 4 nodes costs half a round trip and one version 3 message
more, ``v4_first_session``). ``v4_beyond_ids`` is version 4's bytes less 32 a difference, per
difference: what it costs beyond the ids themselves (issue 31: <= 100, in <= 3 round trips). The
JSON carries ``goals`` in the shape ``make bench`` tabulates.

Bytes are the reconciliation's messages alone, for both protocols. Records are transfer, not
counted: the records a commons side pushes after a Diff (``records_pushed``, the items the peer's
IdList lacked, which the Diff counts but does not name) are counted no more than the records a
negentropy initiator uploads to its responder, or the records either fetches by id afterwards.

Negentropy tells only the initiator the difference; commons tells both sides what to send and
fetch. So beside negentropy's own figures the table gives "equal knowledge": negentropy plus the
ids the initiator must then send so the responder knows as much (32 bytes each, half a round trip
more when there are any). A commons side that is pushed records learns their ids from the records,
as a negentropy responder learns them from the initiator's uploads.

Both run with the same frame size limit (65,536 bytes, the protocol's largest message), in one
process each, through ``negentropy_driver.js``; negentropy is skipped with a message when node or
its source (``../shared/anchors/negentropy/Negentropy.js`` beside the checkout) is missing. Round
trips = messages / 2. The goal (issue 18): bytes <= 1.5 x negentropy's, round trips <= its + 1.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from commons.core.reconcile.coded import CodedReconciler  # noqa: E402
from commons.core.reconcile.negotiate import NegotiatedReconciler  # noqa: E402
from commons.core.reconcile.reconciler import KeySet, Mode, Reconciler, make_key, run_in_memory  # noqa: E402
from commons.core.reconcile.keyset import encode_varint  # noqa: E402
from commons.core.reconcile.wire import bound_bytes, decode_message, floor_day, items_bytes, positions_bytes  # noqa: E402

DRIVER = Path(__file__).with_name("negentropy_driver.js")
NEGENTROPY = ROOT.parent / "shared" / "anchors" / "negentropy" / "Negentropy.js"
FRAME = 65536
DAYS = 365
FIRST_DAY = 20_000
COUNTS = (1, 10, 100, 1000, 10_000)

Entry = tuple[bytes, int]  # (33-byte key, day)


def _entries(rng: random.Random, count: int, first: int, last: int) -> list[Entry]:
    return [(make_key(rng.randrange(4), rng.randbytes(32)), rng.randrange(first, last + 1)) for _ in range(count)]


KINDS = ("scattered", "newest missing", "both unique", "busy day")
BUSY = 1000  # the busy-day case's difference


SECONDS: dict[bytes, int] = {}  # busy day: each key's second (negentropy's own timestamp)


def busy_day(rng: random.Random, store: int, d: int) -> tuple[str, int, list[Entry], list[Entry], list[Entry]]:
    """``store`` records over two days, each at a second; the initiator lacks the d newest of the second."""
    made = []
    for _ in range(store):
        second = FIRST_DAY * 86400 + rng.randrange(2 * 86400)
        key = make_key(rng.randrange(4), rng.randbytes(32))
        SECONDS[key] = second
        made.append((key, second // 86400))
    made.sort(key=lambda e: SECONDS[e[0]])
    return ("busy day", d, made[:-d], [], made[-d:])


def cases(
    rng: random.Random, store: int, counts: tuple[int, ...], kinds: tuple[str, ...] = KINDS
) -> list[tuple[str, int, list[Entry], list[Entry], list[Entry]]]:
    """(kind, difference, shared, initiator only, responder only) for every case."""
    if "busy day" in kinds:  # its own sets (drawn first from their own generator: the others stay as they were)
        busy = [busy_day(random.Random(f"busy/{store}"), store, BUSY)]
    else:
        busy = []
    last = FIRST_DAY + DAYS - 1
    base = _entries(rng, store, FIRST_DAY, last)
    out = []
    for d in counts:
        extra = _entries(rng, d, FIRST_DAY, last)
        half = (d + 1) // 2
        out.append(("scattered", d, base, extra[:half], extra[half:]))
    ordered = sorted(base, key=lambda e: (e[1], e[0]))
    for d in counts:
        if d < store:
            out.append(("newest missing", d, ordered[:-d], [], ordered[-d:]))
    for d in counts:
        fresh = _entries(rng, d, last + 1, last + 2)  # made apart, after the shared history
        half = (d + 1) // 2
        out.append(("both unique", d, base, fresh[:half], fresh[half:]))
    return [case for case in out if case[0] in kinds] + busy


def run_commons(
    shared: list[Entry], only_a: list[Entry], only_b: list[Entry], *, messages: bool = False, version: str = "3",
    **params: int
) -> dict[str, Any]:
    """One session in memory. ``version``: "3" (range fingerprints), "4" (coded symbols, both sides
    knowing the other speaks it), "4 first" (negotiated from scratch: the offer in version 3 first)."""
    a, b = KeySet(shared + only_a), KeySet(shared + only_b)
    started = time.perf_counter()
    if version == "4":
        sides = (CodedReconciler(a, frame_size_limit=FRAME, salt=1), CodedReconciler(b, frame_size_limit=FRAME, salt=2))
    elif version == "4 first":
        sides = (NegotiatedReconciler(a, frame_size_limit=FRAME, salt=1), NegotiatedReconciler(b, frame_size_limit=FRAME, salt=2))
    else:
        sides = (Reconciler(a, frame_size_limit=FRAME, **params), Reconciler(b, frame_size_limit=FRAME, **params))
    exchange = run_in_memory(*sides)
    seconds = time.perf_counter() - started
    have, need, _ = exchange.learned(initiator=True)
    if sorted(have) != sorted(k for k, _ in only_a) or sorted(need) != sorted(k for k, _ in only_b):
        raise AssertionError("commons reconciled the wrong difference")
    if exchange.unexpected != ([], []):
        raise AssertionError("commons pushed records its peer had not been told to expect")
    out = {"round_trips": exchange.round_trips, "bytes_total": sum(map(len, exchange.messages)),
           "messages": len(exchange.messages), "records_pushed": sum(map(len, exchange.pushed)),
           "seconds": round(seconds, 3)}
    return out | ({"messages": exchange.messages} if messages else {})


def run_v4(shared: list[Entry], only_a: list[Entry], only_b: list[Entry]) -> dict[str, Any]:
    """Version 4's figures for one case: the session, and what it costs beyond the ids."""
    ours = run_commons(shared, only_a, only_b, version="4")
    d = len(only_a) + len(only_b)
    ours["beyond_ids_per_difference"] = round((ours["bytes_total"] - 32 * d) / max(1, d), 1)
    first = run_commons(shared, only_a, only_b, version="4 first")
    ours["first_session"] = {"bytes_total": first["bytes_total"], "round_trips": first["round_trips"]}
    return ours


def message_breakdown(message: bytes) -> dict[str, Any]:
    """One commons message: its size, and per range mode the ranges, items and bytes it carries
    (each range re-encoded as the reference writes it, against the range before it)."""
    modes: dict[str, dict[str, int]] = {}
    for r in decode_message(message):
        size = len(bound_bytes(r.upper, r.lower)) + 1
        if r.mode is Mode.FINGERPRINT:
            size += len(r.fingerprint)
        else:  # IdList, PushList or Diff (which counts what it pushes and names what it lacks)
            size += len(encode_varint(r.pushed)) if r.mode is Mode.DIFF else 0
            size += len(encode_varint(len(r.items))) + len(items_bytes(list(r.items), floor_day(r.lower)))
            size += len(positions_bytes(sorted(r.withheld)))
            size += len(positions_bytes(list(r.lacking))) if r.mode is Mode.DIFF else 0
        entry = modes.setdefault(r.mode.name.lower(), {"ranges": 0, "items": 0, "bytes": 0})
        entry["ranges"] += 1
        entry["items"] += len(r.items)
        entry["bytes"] += size
        if r.mode is Mode.DIFF:
            entry["pushed"] = entry.get("pushed", 0) + r.pushed
    return {"bytes": len(message)} | modes


def breakdown(kind: str, difference: int, store: int, seed: int, with_negentropy: bool) -> dict[str, Any]:
    """Where the bytes go in one case: each commons message by mode, and negentropy's message sizes.
    The sets are drawn as for the table (every count of COUNTS), so the figures are the table's."""
    for case_kind, d, shared, only_a, only_b in cases(random.Random(seed), store, COUNTS):
        if (case_kind, d) != (kind, difference):
            continue
        ours = run_commons(shared, only_a, only_b, messages=True)
        out: dict[str, Any] = {"case": case_kind, "difference": d, "store": store,
                               "commons": [message_breakdown(m) for m in ours["messages"]]}
        if with_negentropy:
            out["negentropy_message_bytes"] = run_negentropy(shared, only_a, only_b)["sizes"]
        return out
    raise SystemExit(f"no case {kind!r} with difference {difference}")


def _section(entries: list[Entry], by_second: bool = False) -> bytes:
    stamp = (lambda key, day: SECONDS[key]) if by_second else (lambda key, day: day)
    return len(entries).to_bytes(4, "big") + b"".join(stamp(key, day).to_bytes(4, "big") + key[1:] for key, day in entries)


def run_negentropy(shared: list[Entry], only_a: list[Entry], only_b: list[Entry], by_second: bool = False) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".bin") as sets:
        sets.write(_section(shared, by_second) + _section(only_a, by_second) + _section(only_b, by_second))
        sets.flush()
        done = subprocess.run(
            ["node", str(DRIVER), str(NEGENTROPY), sets.name, str(FRAME)], capture_output=True, text=True, check=False
        )
    if done.returncode:
        raise RuntimeError(f"negentropy driver failed: {done.stderr.strip()[-400:]}")
    figures = json.loads(done.stdout)
    if (figures["have"], figures["need"]) != (len(only_a), len(only_b)):
        raise AssertionError(f"negentropy found {figures['have']}/{figures['need']}, expected {len(only_a)}/{len(only_b)}")
    return {k: figures[k] for k in ("round_trips", "bytes_total", "sizes")} | {"seconds": round(figures["seconds"], 3)}


def negentropy_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed"
    if not NEGENTROPY.is_file():
        return f"negentropy's reference is not at {NEGENTROPY}"
    return None


def measure(
    store: int, counts: tuple[int, ...], seed: int, with_negentropy: bool, kinds: tuple[str, ...] = KINDS
) -> list[dict[str, Any]]:
    rows = []
    for kind, d, shared, only_a, only_b in cases(random.Random(seed), store, counts, kinds):
        row: dict[str, Any] = {"store": store, "case": kind, "difference": d, "commons": run_commons(shared, only_a, only_b),
                               "commons_v4": run_v4(shared, only_a, only_b)}
        if with_negentropy:
            neg = run_negentropy(shared, only_a, only_b, by_second=kind == "busy day")
            if kind == "busy day":
                by_day = run_negentropy(shared, only_a, only_b)
                row["negentropy_by_day"] = {k: by_day[k] for k in ("round_trips", "bytes_total")}
            del neg["sizes"]
            ours = row["commons"]
            row["negentropy"] = neg
            row["bytes_ratio"] = round(ours["bytes_total"] / neg["bytes_total"], 3)
            row["round_trips_over"] = ours["round_trips"] - neg["round_trips"]
            row["meets_goal"] = row["bytes_ratio"] <= 1.5 and row["round_trips_over"] <= 1
            equal_bytes = neg["bytes_total"] + 32 * len(only_a)
            equal_trips = neg["round_trips"] + (0.5 if only_a else 0)
            row["equal_knowledge"] = {"bytes_total": equal_bytes, "round_trips": equal_trips}
            row["equal_knowledge_bytes_ratio"] = round(ours["bytes_total"] / equal_bytes, 3)
            row["equal_knowledge_round_trips_over"] = ours["round_trips"] - equal_trips
            row["v4_bytes_ratio"] = round(row["commons_v4"]["bytes_total"] / neg["bytes_total"], 3)
        rows.append(row)
    return rows


def goals(rows: list[dict[str, Any]], large: bool) -> list[dict[str, Any]]:
    """Issue 31's goals for reconciliation version 4, from the measured rows."""
    command = ".venv/bin/python tests/benchmarks/bench_negentropy.py --json" + (" --large" if large else "")
    out = []
    for r in rows:
        v4 = r["commons_v4"]
        if r["case"] == "scattered":
            out.append({
                "goal": f"reconcile v4, {r['difference']:,} scattered in {r['store']:,}: <= 100 B each beyond the ids, <= 3 round trips",
                "figure": f"{v4['beyond_ids_per_difference']} B a difference beyond the ids, {v4['round_trips']} round trips "
                          f"({v4['bytes_total']:,} B; v3 {r['commons']['bytes_total']:,} B)",
                "target": "<= 100 B beyond the ids, <= 3 round trips",
                "met": v4["beyond_ids_per_difference"] <= 100 and v4["round_trips"] <= 3,
                "command": command,
            })
    for r in rows:
        if r["case"] == "both unique" and r["difference"] >= 100:
            v4, v3 = r["commons_v4"], r["commons"]
            ratio = v4["bytes_total"] / v3["bytes_total"]
            out.append({
                "goal": f"reconcile v4, both sides made {r['difference']:,} since they met ({r['store']:,} shared): no dearer than v3",
                "figure": f"{v4['bytes_total']:,} B / {v4['round_trips']} round trips, {ratio:.2f} x v3 ({v3['bytes_total']:,} B / "
                          f"{v3['round_trips']} round trips)",
                "target": "<= 1.5 x v3's bytes, <= 3 round trips",
                "met": ratio <= 1.5 and v4["round_trips"] <= 3,
                "command": command,
            })
    scattered = {(r["store"], r["difference"]): r for r in rows if r["case"] == "scattered"}
    for r in rows:
        if r["case"] == "busy day" and (r["store"], r["difference"]) in scattered:
            v4, other = r["commons_v4"], scattered[(r["store"], r["difference"])]["commons_v4"]
            ratio = v4["bytes_total"] / other["bytes_total"]
            neg = r.get("negentropy", {}).get("bytes_total", "-")
            out.append({
                "goal": f"reconcile v4, newest {r['difference']:,} of a busy day missing ({r['store']:,} items over two days): as cheap as scattered",
                "figure": f"{v4['bytes_total']:,} B / {v4['round_trips']} round trips, {ratio:.2f} x {r['difference']:,} scattered "
                          f"(v3 {r['commons']['bytes_total']:,} B; negentropy by second {neg} B)",
                "target": "<= 1.1 x the bytes of as many scattered, <= 3 round trips",
                "met": ratio <= 1.1 and v4["round_trips"] <= 3,
                "command": command,
            })
    return out


SWEPT = (("scattered", 1), ("scattered", 1000), ("scattered", 10_000), ("newest missing", 10_000),
         ("both unique", 100), ("both unique", 1000), ("both unique", 10_000))


def sweep(store: int, seed: int) -> list[dict[str, Any]]:
    """Bytes and round trips of commons for each branching and id-list threshold (how they were
    chosen), on the table's sets (drawn for every count of COUNTS) of the cases in SWEPT."""
    sets = [c for c in cases(random.Random(seed), store, COUNTS) if (c[0], c[1]) in SWEPT]
    rows = []
    for branching in (8, 16, 32):
        for threshold in (8, 12, 16, 24, 32):
            row: dict[str, Any] = {"branching": branching, "id_list_threshold": threshold}
            for kind, d, shared, only_a, only_b in sets:
                ours = run_commons(shared, only_a, only_b, branching=branching, id_list_threshold=threshold)
                row[f"{kind} {d}"] = (ours["bytes_total"], ours["round_trips"])
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--store", type=int, default=100_000, help="shared items (default 100000)")
    parser.add_argument("--large", action="store_true", help="also 10^6 items with 1, 10 and 1,000 scattered differences")
    parser.add_argument("--sweep", action="store_true", help="commons alone over branching x id-list threshold")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--breakdown", nargs=2, metavar=("CASE", "DIFFERENCE"),
                        help='one case message by message, e.g. --breakdown "both unique" 1000')
    args = parser.parse_args(argv)
    if args.breakdown:
        kind, d = args.breakdown
        print(json.dumps(breakdown(kind, int(d), args.store, args.seed, negentropy_missing() is None), indent=1))
        return 0
    if args.sweep:
        for row in sweep(args.store, args.seed):
            print(json.dumps(row) if args.json else "  ".join(f"{k}: {v}" for k, v in row.items()))
        return 0
    missing = negentropy_missing()
    if missing:
        print(f"negentropy skipped: {missing}; commons alone", file=sys.stderr)
    rows = measure(args.store, COUNTS, args.seed, missing is None)
    if args.large:
        rows += measure(1_000_000, (1, 10, 1000), args.seed, missing is None, kinds=("scattered",))
    if args.json:
        print(json.dumps({"frame_size_limit": FRAME, "negentropy": missing or "ran", "rows": rows,
                          "goals": goals(rows, args.large)}, indent=2))
        return 0
    print(f"frame limit {FRAME} bytes for both; RT = round trips")
    print(f"{'store':>8} {'case':>15} {'diff':>6} | {'commons B':>10} {'RT':>5} | {'negentropy B':>12} {'RT':>5} | "
          f"{'B ratio':>7} {'RT +':>5} | {'equal-knowledge ratio':>21} {'RT +':>5} | {'v4 B':>9} {'RT':>4} "
          f"{'beyond ids':>10} {'v4/neg':>6} | {'v4 first B':>10} {'RT':>4}")
    for r in rows:
        c, n = r["commons"], r.get("negentropy", {})
        print(
            f"{r['store']:>8} {r['case']:>15} {r['difference']:>6} | {c['bytes_total']:>10} {c['round_trips']:>5} | "
            f"{n.get('bytes_total', '-'):>12} {n.get('round_trips', '-'):>5} | {r.get('bytes_ratio', '-'):>7} "
            f"{r.get('round_trips_over', '-'):>5} | {r.get('equal_knowledge_bytes_ratio', '-'):>21} "
            f"{r.get('equal_knowledge_round_trips_over', '-'):>5} | {r['commons_v4']['bytes_total']:>9} "
            f"{r['commons_v4']['round_trips']:>4} {r['commons_v4']['beyond_ids_per_difference']:>10} "
            f"{r.get('v4_bytes_ratio', '-'):>6} | {r['commons_v4']['first_session']['bytes_total']:>10} "
            f"{r['commons_v4']['first_session']['round_trips']:>4}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
