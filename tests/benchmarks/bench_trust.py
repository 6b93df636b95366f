"""Trust evaluation: one full recomputation of every lesson's status from the records a node holds.

    .venv/bin/python tests/benchmarks/bench_trust.py [--lessons N] [--verifications N] [--keys N] [--json]

The holding is built deterministically: ``--keys`` author keys (a third vouched for by the node,
a third vouched for by those, the rest untrusted), ``--lessons`` lessons (one in ten derived from
an earlier one, one in fifty superseding an earlier one by its author), ``--verifications``
verifications spread over the lessons (one in ten failed, one in twenty not naive), a sybil crowd
of a thousand keys behind five attack edges confirming one lesson, and revocations of one lesson
in a hundred and of a few keys. evaluate() does not check signatures (intake did), so records are
built unsigned, with ids from a counter: the figure is the trust computation alone.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from blake3 import blake3  # noqa: E402

from commons.core.records import (  # noqa: E402
    Lesson,
    LessonKind,
    Outcome,
    Prediction,
    Revocation,
    Scope,
    SignedRecord,
    TargetKind,
    Verification,
    Vouch,
)
from commons.core.trust.evaluation import LessonStatus, TrustPolicy, evaluate  # noqa: E402

NETWORK = bytes(32)
DAY = 20_000


def _key(n: int) -> bytes:
    return blake3(b"bench-trust-key" + n.to_bytes(4, "big")).digest()


class _Ids:
    def __init__(self) -> None:
        self.n = 0

    def wrap(self, record) -> SignedRecord:
        self.n += 1
        return SignedRecord(record, b"", blake3(self.n.to_bytes(8, "big")).digest(), bytes(64))


def build(lessons: int, verifications: int, keys: int, seed: int = 7) -> tuple[list[SignedRecord], bytes]:
    rng = random.Random(seed)
    ids = _Ids()
    me = _key(0)
    pks = [_key(n) for n in range(1, keys + 1)]
    records: list[SignedRecord] = []
    third = keys // 3
    for subject in pks[:third]:
        records.append(ids.wrap(Vouch(network=NETWORK, author=me, created=DAY, subject=subject)))
    for i, subject in enumerate(pks[third : 2 * third]):
        records.append(ids.wrap(Vouch(network=NETWORK, author=pks[i % third], created=DAY, subject=subject)))

    lesson_ids: list[bytes] = []
    lesson_authors: list[bytes] = []
    for n in range(lessons):
        author = pks[rng.randrange(keys)]
        parents = (lesson_ids[rng.randrange(n)],) if n and n % 10 == 0 else ()
        supersedes = None
        if n and n % 50 == 5:  # a new version of the lesson before, by the same author
            author, supersedes = lesson_authors[n - 1], lesson_ids[n - 1]
        lesson = Lesson(
            network=NETWORK,
            author=author,
            created=DAY - rng.randrange(60),
            kind=LessonKind.ERROR,
            text=f"Tool {n} fails on the {n % 97}th retry behind a proxy.",
            scope=Scope.SHARED,
            topics=("tool",),
            prediction=Prediction(f"running tool {n}", f"failure {n}"),
            parents=parents,
            supersedes=supersedes,
        )
        signed = ids.wrap(lesson)
        records.append(signed)
        lesson_ids.append(signed.id)
        lesson_authors.append(author)

    for n in range(verifications):
        target = rng.randrange(lessons)
        received = DAY + rng.randrange(10)
        observed = received + rng.randrange(20)
        records.append(
            ids.wrap(
                Verification(
                    network=NETWORK,
                    author=pks[rng.randrange(keys)],
                    created=observed,
                    lesson=lesson_ids[target],
                    outcome=Outcome.FAILED if n % 10 == 0 else Outcome.CONFIRMED,
                    evidence=blake3(n.to_bytes(8, "big")).digest(),
                    received=received,
                    observed=observed,
                    naive=n % 20 != 0,
                )
            )
        )

    # A sybil crowd behind five attack edges, all confirming lesson 0.
    for n in range(1000):
        sybil = _key(1_000_000 + n)
        records.append(ids.wrap(Vouch(network=NETWORK, author=pks[n % 5], created=DAY, subject=sybil)))
        records.append(
            ids.wrap(
                Verification(
                    network=NETWORK, author=sybil, created=DAY + 3, lesson=lesson_ids[0], outcome=Outcome.CONFIRMED,
                    evidence=blake3(b"sybil" + n.to_bytes(4, "big")).digest(), received=DAY + 1, observed=DAY + 2,
                    naive=True,
                )
            )
        )

    for n in range(0, lessons, 100):
        records.append(
            ids.wrap(Revocation(network=NETWORK, author=lesson_authors[n], created=DAY + 30, target=lesson_ids[n],
                                target_kind=TargetKind.RECORD, reason="wrong"))
        )
    for pk in pks[-3:]:
        records.append(
            ids.wrap(Revocation(network=NETWORK, author=pk, created=DAY + 30, target=pk, target_kind=TargetKind.KEY,
                                reason="compromised"))
        )
    return records, me


def bench(lessons: int, verifications: int, keys: int, rounds: int) -> dict[str, float]:
    records, me = build(lessons, verifications, keys)
    policy = TrustPolicy()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        view = evaluate(records, me=me, policy=policy)
        times.append(time.perf_counter() - start)
    statuses = {status: len(view.with_status(status)) for status in LessonStatus}
    return {
        "lessons": lessons,
        "verifications": verifications,
        "records": len(records),
        "keys": keys,
        "rounds": rounds,
        "best_s": min(times),
        "median_s": sorted(times)[len(times) // 2],
        "records_per_s": len(records) / min(times),
        "counted": sum(1 for v in view.verifications.values() if v.counted),
        "dead_ids": len(view.dead_ids),
        **{f"status_{status.value}": count for status, count in statuses.items()},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lessons", type=int, default=10_000)
    parser.add_argument("--verifications", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=3_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    figures = bench(args.lessons, args.verifications, args.keys, args.rounds)
    if args.json:
        print(json.dumps(figures))
        return
    print(
        f"evaluate: {figures['lessons']} lessons, {figures['verifications']} verifications, "
        f"{figures['records']} records in {figures['best_s'] * 1000:.0f} ms best, "
        f"{figures['median_s'] * 1000:.0f} ms median ({figures['records_per_s']:,.0f} records/s)"
    )
    print(
        "statuses: " + ", ".join(f"{k.removeprefix('status_')} {v}" for k, v in figures.items() if k.startswith("status_"))
        + f"; {figures['counted']} verifications counted; {figures['dead_ids']} dead ids"
    )


if __name__ == "__main__":
    main()
