"""The door policy a daemon runs on every received record, against raw Ed25519 verify (issue #31).

``commons.node.door.policy`` (the observation check, the text policy of every door, the
dangerous-fix classifier) on records of ``bench_sync``'s two workloads, each text new to the
process (the door's caches hold nothing of them), in µs of process CPU a record, best of three,
and ÷ libsodium's verify of the same records in the same process: what the door costs a
catching-up daemon beside the signature check it cannot avoid. States no goal of its own: the
goal is ``bench_sync``'s, of which this is the largest stage.

    .venv/bin/python -m tests.benchmarks.bench_door [--records N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import nacl.bindings  # noqa: E402

from commons.core.records import signed_message  # noqa: E402
from commons.node import door  # noqa: E402
from tests.benchmarks.bench_sync import make_records, one_author_records  # noqa: E402

NETWORK, DAY, WARM = bytes(32), 20_400, 300


def _cpu_us(work, items) -> float:
    start = time.process_time()
    for item in items:
        work(item)
    return (time.process_time() - start) * 1e6 / len(items)


def _verify(message: tuple[bytes, bytes]) -> None:
    nacl.bindings.crypto_sign_open(*message)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=2000, help="records a run, of each workload")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    runs, n = 3, args.records
    workloads = {"one-author": one_author_records(WARM + runs * n, NETWORK, DAY),
                 "mixed": make_records(WARM + runs * n, NETWORK, DAY)}
    random.Random(31).shuffle(workloads["mixed"])  # each part the same mix (it is made in runs of one type)
    for records in workloads.values():  # the patterns' first use, the caches' own set-up
        for signed in records[:WARM]:
            door.policy(signed)
    messages = [(r.signature + signed_message(r.type, r.id), r.author) for r in workloads["one-author"][WARM:WARM + n]]
    result: dict = {"records": n, "timer": "process CPU time", "goals": []}
    raw = min(_cpu_us(_verify, messages) for _ in range(runs))
    result["raw_verify_us"] = round(raw, 2)
    for name, records in workloads.items():
        fresh = [records[WARM + i * n: WARM + (i + 1) * n] for i in range(runs)]  # no text seen before
        door_us = min(_cpu_us(door.policy, part) for part in fresh)
        result[name] = {"door_us": round(door_us, 2), "per_verify": round(door_us / raw, 3)}
    result["load_average_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
