"""Memory of holding N records and their trust evaluation, as a daemon does (issue #18: 10^6 ≤ 1 GB).

Builds N records from 100 authors (45% lessons, 50% verifications, 5% vouches; bodies encoded
canonically, signatures left as zeros: nothing here verifies) and holds them as a node does: the
trust evaluation of the facts it judges by (``IncrementalTrust``; the records themselves are in the
store, read when shown: ``node.trust.HeldRecords``), taken in 10,000 at a time as a node catching up
takes them in.
Then the evaluation is made again in full from the facts (what a revocation or a new day does; the
node lets the old one go first), four more batches of 1,000 are added, and
it reports the process's peak RSS (VmHWM) and the CPU time of each step.

    .venv/bin/python -m tests.benchmarks.bench_held_memory [--records 1000000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from blake3 import blake3  # noqa: E402

from commons.core import records as rec  # noqa: E402
from commons.core.trust.evaluation import TrustPolicy  # noqa: E402
from commons.core.trust.incremental import IncrementalTrust  # noqa: E402
from tests.benchmarks.goals import goal, quick  # noqa: E402

NETWORK = bytes(range(32))
DAY = 20_400
CHUNK = 10_000  # records taken in at a time
AUTHORS = [blake3(b"held-memory-author%d" % n).digest() for n in range(100)]


def unsigned(record) -> rec.SignedRecord:
    body = rec.encode_body(record)
    return rec.SignedRecord(record, body, rec.record_id(body), bytes(64))


def make(count: int, start: int = 0) -> list[rec.SignedRecord]:
    out, lessons = [], []
    for i in range(start, start + count):
        a = AUTHORS[i % 100]
        if i % 20 == 0:
            out.append(unsigned(rec.Vouch(network=NETWORK, author=a, created=DAY, subject=AUTHORS[(i + 1 + (i // 20) % 99) % 100])))
        elif i % 20 < 10 or not lessons:
            signed = unsigned(rec.Lesson(
                network=NETWORK, author=a, created=DAY, kind=rec.LessonKind.ERROR,
                text=f"`tool{i}` fails on author {i % 100}'s machine with exit code {i % 7 + 1}.",
                scope=rec.Scope.SHARED, topics=("tools",), prediction=rec.Prediction(f"running tool{i}", "an exit code")))
            lessons.append(signed.id)
            out.append(signed)
        else:
            out.append(unsigned(rec.Verification(
                network=NETWORK, author=a, created=DAY, lesson=lessons[(i * 7) % len(lessons)],
                outcome=rec.Outcome.CONFIRMED, evidence=blake3(b"e%d" % i).digest(), received=DAY, observed=DAY,
                naive=True)))
    return out


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000 if quick() else 1_000_000,
                        help="records held (default 10^6; 10^5 with BENCH_QUICK=1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    before = peak_rss_mb()
    policy = {"me": AUTHORS[0], "policy": TrustPolicy(roots=frozenset(AUTHORS[:5])), "today": DAY}
    trust = IncrementalTrust(**policy)
    intake = 0.0
    for start in range(0, args.records, CHUNK):
        chunk = make(min(CHUNK, args.records - start), start=start)
        started = time.process_time()
        trust.add(chunk)
        intake += time.process_time() - started
        del chunk
    started = time.process_time()
    facts = list(trust.records.values())
    del trust  # as the node does: the evaluation held is let go before it is made again
    trust = IncrementalTrust.of(facts, **policy)
    full = time.process_time() - started
    del facts
    batches, touched = [], set()
    for k in range(4):  # steady batches after the catch-up
        batch = make(1000, start=args.records + 1000 * k)
        started = time.process_time()
        touched = trust.add(batch)
        batches.append(round((time.process_time() - started) * 1e3, 1))
    result = {"records": args.records, "peak_rss_mb": round(peak_rss_mb(), 1), "rss_before_mb": round(before, 1),
              "intake_cpu_s": round(intake, 2), "full_evaluation_cpu_s": round(full, 2),
              "batches_of_1000_cpu_ms": batches,
              "lessons_recomputed_by_the_last_batch": "all" if touched is None else len(touched),
              "goal_rss_mb": 1024}
    result["goals"] = [goal(f"holding {args.records:,} records and their trust evaluation: peak RSS",
                            f"{result['peak_rss_mb']} MB", "≤ 1024 MB", result["peak_rss_mb"] <= 1024,
                            "python -m tests.benchmarks.bench_held_memory --json")]
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
