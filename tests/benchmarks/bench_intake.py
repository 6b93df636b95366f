"""Intake of signed records against the raw Ed25519 verify rate, on one core.

Intake is what a node does with every record a peer sends: strict decode, id, signature check,
dedupe and store, in batches of 1,000 (one transaction each). The raw rate is libsodium verifying
the very same signatures in a loop. Goal: intake ≥ 0.6 × raw. Each is the best of three runs,
interleaved, in one process pinned to one core.

    .venv/bin/python tests/benchmarks/bench_intake.py [--records N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import nacl.bindings  # noqa: E402
import nacl.signing  # noqa: E402

from commons.core.records import Lesson, LessonKind, Prediction, Scope, signed_message, sign  # noqa: E402
from commons.runtime import run  # noqa: E402
from commons.store import records as record_store  # noqa: E402
from commons.store.db import Store  # noqa: E402

NETWORK = bytes(range(32))
DAY = 20_400
BATCH = 1000


def make_records(count: int):
    keys = [nacl.signing.SigningKey(bytes([i]) * 32) for i in range(1, 21)]
    records = []
    for i in range(count):
        key = keys[i % len(keys)]
        records.append(
            sign(
                Lesson(
                    network=NETWORK,
                    author=bytes(key.verify_key),
                    created=DAY,
                    kind=LessonKind.ERROR,
                    text=f"`pip install` into the system Python {i % 7}.{i % 13} fails with "
                    f"'error: externally-managed-environment' (variant {i}).",
                    scope=Scope.SHARED,
                    topics=("pip", "python"),
                    prediction=Prediction("pip install on a system Python", "error: externally-managed-environment"),
                    episodes=tuple(sorted({bytes([i % 251, j]) * 16 for j in range(3)})),
                ),
                key,
            )
        )
    return records


def raw_verify_rate(records) -> float:
    messages = [(r.signature + signed_message(r.type, r.id), r.author) for r in records]
    start = time.perf_counter()
    for signed, public in messages:
        nacl.bindings.crypto_sign_open(signed, public)
    return len(messages) / (time.perf_counter() - start)


def intake_rate(records) -> tuple[float, int]:
    pairs = [(r.body, r.signature) for r in records]

    async def go() -> tuple[float, int]:
        with tempfile.TemporaryDirectory() as folder:
            async with await Store.open(Path(folder) / "bench.db") as store:
                accepted = 0
                start = time.perf_counter()
                for offset in range(0, len(pairs), BATCH):
                    report = await record_store.intake(
                        store, pairs[offset : offset + BATCH], network=NETWORK, now=DAY * 86400.0, origin="peer"
                    )
                    accepted += len(report.accepted)
                elapsed = time.perf_counter() - start
        return len(pairs) / elapsed, accepted

    return run(go)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, for both rates
    records = make_records(args.records)
    # Best of three for both, interleaved, so that a noisy moment on the machine hurts neither.
    raws, intakes = [], []
    for _ in range(3):
        raws.append(raw_verify_rate(records))
        rate, accepted = intake_rate(records)
        assert accepted == len(records)
        intakes.append(rate)
    raw, intake = max(raws), max(intakes)
    result = {
        "records": len(records),
        "batch": BATCH,
        "raw_verify_per_s": round(raw),
        "intake_per_s": round(intake),
        "ratio": round(intake / raw, 3),
        "goal_ratio": 0.6,
    }
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>18}: {value}")


if __name__ == "__main__":
    main()
