"""Benchmark: reconcile two stores of 100,000 keys that differ by 1, 10, 100 and 1,000 keys.

(The side-by-side run against negentropy is ``bench_negentropy.py``; this one is commons alone,
at any frame limit, and the cost of the KeySet itself.) Keys are placed at created days spread
over a year, as records place them.

    .venv/bin/python tests/benchmarks/bench_reconcile.py            # table
    .venv/bin/python tests/benchmarks/bench_reconcile.py --json     # the same figures as JSON
    .venv/bin/python tests/benchmarks/bench_reconcile.py --frame 65536 --store 10000
    .venv/bin/python tests/benchmarks/bench_reconcile.py --version 4   # reconcile version 4 (coded symbols)

Differences are split between the sides (odd one to the initiator). Also measured: one side empty
(dense differences: the cost per key), and the KeySet itself (build, one insert + fingerprint).
Round trips = messages / 2; bytes "i->r" are the initiator's, "r->i" the responder's.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from commons.core.reconcile.coded import CodedReconciler  # noqa: E402
from commons.core.reconcile.reconciler import DEFAULT_FRAME_SIZE_LIMIT, KeySet, Reconciler, make_key, run_in_memory  # noqa: E402


Entry = tuple[bytes, int]  # (key, created day)


def _keys(rng: random.Random, count: int) -> list[Entry]:
    return [(make_key(rng.randrange(4), rng.randbytes(32)), 20_000 + rng.randrange(365)) for _ in range(count)]


def measure(shared: list[Entry], only_a: list[Entry], only_b: list[Entry], frame: int, version: int = 3) -> dict[str, Any]:
    a, b = KeySet(shared + only_a), KeySet(shared + only_b)
    started = time.perf_counter()
    if version == 4:
        sides = (CodedReconciler(a, frame_size_limit=frame, salt=1), CodedReconciler(b, frame_size_limit=frame, salt=2))
    else:
        sides = (Reconciler(a, frame_size_limit=frame), Reconciler(b, frame_size_limit=frame))
    exchange = run_in_memory(*sides)
    elapsed = time.perf_counter() - started
    a_have, a_need, _ = exchange.learned(initiator=True)
    assert sorted(a_have) == sorted(k for k, _ in only_a) and sorted(a_need) == sorted(k for k, _ in only_b), "wrong difference"
    sizes = [len(m) for m in exchange.messages]
    total = sum(sizes)
    return {
        "difference": len(only_a) + len(only_b),
        "round_trips": exchange.round_trips,
        "bytes_initiator_to_responder": sum(sizes[0::2]),
        "bytes_responder_to_initiator": sum(sizes[1::2]),
        "bytes_total": total,
        "bytes_per_difference": round(total / max(1, len(only_a) + len(only_b)), 1),
        "largest_message": max(sizes),
        "seconds": round(elapsed, 4),
    }


def keyset_costs(keys: list[Entry], rng: random.Random) -> dict[str, float]:
    started = time.perf_counter()
    ks = KeySet(keys)
    built = time.perf_counter() - started
    ks.fingerprint_between(0, len(ks))
    started = time.perf_counter()
    for key, day in _keys(rng, 100):
        ks.add(key, time=day)
        ks.fingerprint_between(0, len(ks))  # forces the lazy prefix-sum rebuild each time
    per_insert = (time.perf_counter() - started) / 100
    return {"build_seconds": round(built, 4), "insert_then_fingerprint_seconds": round(per_insert, 5)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--store", type=int, default=100_000, help="keys both sides share (default 100000)")
    parser.add_argument("--frame", type=int, default=DEFAULT_FRAME_SIZE_LIMIT, help="frame size limit in bytes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--version", type=int, choices=(3, 4), default=3, help="reconcile version (default 3)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    shared = _keys(rng, args.store)
    rows = []
    for diff in (1, 10, 100, 1000):
        extra = _keys(rng, diff)
        half = (diff + 1) // 2
        rows.append(measure(shared, extra[:half], extra[half:], args.frame, args.version))
    dense = measure([], _keys(rng, 10_000), [], args.frame, args.version)
    figures = {
        "store": args.store,
        "version": args.version,
        "frame_size_limit": args.frame,
        "rows": rows,
        "one_side_empty_10000": dense,
        "keyset": keyset_costs(shared, rng),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"two stores of {args.store} keys, frame limit {args.frame} bytes, reconcile version {args.version}")
    print(f"{'diff':>6} {'RTs':>6} {'i->r B':>9} {'r->i B':>9} {'B/diff':>8} {'max msg':>8} {'seconds':>8}")
    for r in [*rows, dense]:
        print(
            f"{r['difference']:>6} {r['round_trips']:>6} {r['bytes_initiator_to_responder']:>9} "
            f"{r['bytes_responder_to_initiator']:>9} {r['bytes_per_difference']:>8} {r['largest_message']:>8} "
            f"{r['seconds']:>8}"
        )
    print("(last row: one side empty, the other 10000 keys)")
    k = figures["keyset"]
    print(f"KeySet of {args.store}: build {k['build_seconds']} s; insert + fingerprint {k['insert_then_fingerprint_seconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
