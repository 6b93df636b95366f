"""End-to-end sync between two real daemons, against the raw Ed25519 verify rate (issue #18).

Node A holds N records from ~100 authors (lessons, verifications of them, vouches between the
authors), signed for today, as received from peers; node B starts empty and trusts a few of the
authors as roots, so vouches extend its web of trust, verifications count and lessons are
promoted while it catches up. B dials A; the clock runs until B's store holds all N. The figure
is B's records per CPU-second (user + system of its daemon process, from /proc) divided by
libsodium's single-core verify rate over the same signatures, measured in the same run. Run at
two sizes, it gives the CPU growth exponent log(cpu₂/cpu₁)/log(N₂/N₁) (1.0: linear). B's peak
RSS is read from /proc (VmHWM).

With ``--workload one-author`` node A holds N lessons of one author instead (B trusts that author
as its root): every record then passes the door policy's text checks (``commons.node.door``),
which verifications and vouches skip. Goal (issue #31): ratio ≥ 0.6 at 10^5 on both workloads;
the ``goals`` entry of ``--json`` says whether this run met it, per workload and size.

    .venv/bin/python -m tests.benchmarks.bench_sync [--sizes 10000 100000] [--workload mixed|one-author ...] [--json]
    .venv/bin/python -m tests.benchmarks.bench_sync --hold 1000000 --json   # a daemon's memory holding N
    .venv/bin/python -m tests.benchmarks.bench_sync --hold 1000000 --keep /tmp/held --json   # its store built once
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import nacl.bindings  # noqa: E402
import nacl.signing  # noqa: E402
from blake3 import blake3  # noqa: E402

from commons.config import load_config  # noqa: E402
from commons.core import records as rec  # noqa: E402
from commons.daemon.heap import TRACE_ENV, resident_mb  # noqa: E402
from commons.runtime import run  # noqa: E402
from commons.store import records as record_store  # noqa: E402
from commons.store.db import Store  # noqa: E402
from tests.daemons import Node, wait_for  # noqa: E402

AUTHORS = 100
ROOTS = 5  # authors node B trusts outright
GOAL_RATIO = 0.6  # issue #31
GOAL_EXPONENT = 1.1
RATE = "records_per_second = 1000000.0\nrecords_burst = 1000000\n"


def make_records(count: int, network: bytes, today: int) -> list[rec.SignedRecord]:
    """~45% lessons, ~50% verifications of them, ~5% vouches, from AUTHORS keys, in a fixed mix."""
    return list(iter_records(count, network, today))


def iter_records(count: int, network: bytes, today: int) -> Iterator[rec.SignedRecord]:
    """``make_records``, one at a time (10^6 of them decoded would be ~1.5 GB at once)."""
    keys = [nacl.signing.SigningKey(blake3(b"bench-sync-author%d" % n).digest()) for n in range(AUTHORS)]
    public = [bytes(k.verify_key) for k in keys]
    vouches = min(count // 20, AUTHORS * (AUTHORS - 1))
    lessons = (count - vouches) * 9 // 19
    lesson_ids: list[bytes] = []
    for v in range(vouches):
        a, b = v % AUTHORS, (v // AUTHORS + 1 + v % AUTHORS) % AUTHORS
        yield rec.sign(rec.Vouch(network=network, author=public[a], created=today, subject=public[b]), keys[a])
    for i in range(lessons):
        a = i % AUTHORS
        lesson = rec.sign(rec.Lesson(
            network=network, author=public[a], created=today, kind=rec.LessonKind.ERROR,
            text=f"`tool{i}` fails on author {a}'s machine with exit code {i % 7 + 1} (case {i}).",
            scope=rec.Scope.SHARED, topics=("tools",),
            prediction=rec.Prediction(f"running tool{i}", f"exit code {i % 7 + 1}")), keys[a])
        lesson_ids.append(lesson.id)
        yield lesson
    for j in range(count - vouches - lessons):
        target = j % len(lesson_ids)
        a = (target % AUTHORS + 1 + j // len(lesson_ids)) % AUTHORS  # never the lesson's author
        yield rec.sign(rec.Verification(
            network=network, author=public[a], created=today, lesson=lesson_ids[target],
            outcome=rec.Outcome.CONFIRMED if j % 5 else rec.Outcome.FAILED,
            evidence=blake3(b"evidence%d" % j).digest(), received=today, observed=today, naive=True), keys[a])


def one_author_records(count: int, network: bytes, today: int) -> list[rec.SignedRecord]:
    """``count`` lessons of one author, with the lesson texts of ``iter_records``."""
    key = nacl.signing.SigningKey(blake3(b"bench-sync-one-author").digest())
    author = bytes(key.verify_key)
    return [rec.sign(rec.Lesson(
        network=network, author=author, created=today, kind=rec.LessonKind.ERROR,
        text=f"`tool{i}` fails on the author's machine with exit code {i % 7 + 1} (case {i}).",
        scope=rec.Scope.SHARED, topics=("tools",),
        prediction=rec.Prediction(f"running tool{i}", f"exit code {i % 7 + 1}")), key) for i in range(count)]


WORKLOADS = {"mixed": make_records, "one-author": one_author_records}


def raw_verify_rate(records: list[rec.SignedRecord]) -> float:
    messages = [(r.signature + rec.signed_message(r.type, r.id), r.author) for r in records]
    start = time.process_time()
    for signed, key in messages:
        nacl.bindings.crypto_sign_open(signed, key)
    return len(messages) / (time.process_time() - start)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    return resident_mb(pid)[1]


def sync_once(root: Path, count: int, profile: Path | None = None, workload: str = "mixed") -> dict:
    a, b = Node(root, "a"), Node(root, "b")
    network = load_config(a.home.config_file).network.key_bytes
    now = time.time()
    records = WORKLOADS[workload](count, network, rec.day_of(now))
    roots = sorted({r.author.hex() for r in records[:AUTHORS]})[:ROOTS]
    for node in (a, b):  # the per-peer rate limit (default 200 records/s) lifted: this measures capacity
        config = node.home.config_file.read_text(encoding="utf-8")
        node.home.config_file.write_text(config.replace("\n[gossip]\n", "\n[gossip]\n" + RATE, 1), encoding="utf-8")
    with open(b.home.config_file, "a", encoding="utf-8") as handle:
        handle.write("\n[trust]\nroots = [" + ", ".join(f'"{k}"' for k in roots) + "]\n")

    async def store_them() -> None:
        async with await Store.open(a.home.database) as store:
            await record_store.add_received(store, records, now)

    run(store_them)
    raw = max(raw_verify_rate(records[: min(count, 20_000)]) for _ in range(2))
    a.start(timeout=max(120.0, count / 500))  # A loads every record it holds before it listens
    b.start(timeout=120.0)  # a shared, loaded machine starts a daemon slowly
    try:
        spy = None
        if profile is not None:  # py-spy samples B's daemon while it catches up (collapsed stacks)
            who = a if os.environ.get("BENCH_SYNC_PROFILE_A") else b
            py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))  # or in the venv
            spy = subprocess.Popen([py_spy, "record", "--pid", str(who.process.pid), "--format", "raw", "--rate", os.environ.get("BENCH_SYNC_PROFILE_RATE", "50"),
                                   *([] if os.environ.get("BENCH_SYNC_PROFILE_ALL") else ["--gil"]),
                                    "--output", str(profile), "--nonblocking"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        before, before_a = cpu_seconds(b.process.pid), cpu_seconds(a.process.pid)
        started = time.monotonic()
        b.cli("peers", "add", a.address, a.transport)
        wait_for(lambda: len(b.keys()) >= count, timeout=max(600.0, count / 50), what=f"b to hold {count} records")
        wall = time.monotonic() - started
        cpu = cpu_seconds(b.process.pid) - before
        cpu_a = cpu_seconds(a.process.pid) - before_a
        rss = peak_rss_mb(b.process.pid)
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=30)
    finally:
        a.stop()
        b.stop()
        if os.environ.get("BENCH_SYNC_KEEP_LOG"):
            Path(os.environ["BENCH_SYNC_KEEP_LOG"]).write_text(b.stderr())
    return {"workload": workload, "records": count, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "load_average_1min": round(os.getloadavg()[0], 2),
            "records_per_cpu_s": round(count / cpu), "sender_cpu_s": round(cpu_a, 2), "raw_verify_per_s": round(raw),
            "ratio": round(count / cpu / raw, 3), "peak_rss_mb": round(rss, 1)}


def rss_mb(pid: int) -> float:
    return resident_mb(pid)[0]


def hold_once(root: Path, count: int, keep: Path | None = None) -> dict:
    """A daemon started on a store of ``count`` records (signed here, stored in chunks; or copied
    from ``keep``, where the first run left it): its start-up CPU, its RSS once it listens and
    after 2 s idle, its peak (VmHWM), and its memory after each start-up step (from its log)."""
    a = Node(root, "a")
    network = load_config(a.home.config_file).network.key_bytes
    now = time.time()
    made = time.process_time()
    kept = None if keep is None else keep / f"hold-{count}-{network.hex()[:16]}.sqlite"

    async def store_them() -> None:
        async with await Store.open(a.home.database) as store:
            chunk: list[rec.SignedRecord] = []
            for signed in iter_records(count, network, rec.day_of(now)):
                chunk.append(signed)
                if len(chunk) == 20_000:
                    await record_store.add_received(store, chunk, now)
                    chunk = []
            await record_store.add_received(store, chunk, now)

    if kept is not None and kept.exists():  # signed for the day it was made: trust judges them as of it
        shutil.copyfile(kept, a.home.database)
    else:
        run(store_them)
        if kept is not None:
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(a.home.database, kept)
    made = time.process_time() - made
    a.env[TRACE_ENV] = "1"
    started = time.monotonic()
    a.start(timeout=max(60.0, count / 200))  # it loads every record it holds before it listens
    try:
        wall = time.monotonic() - started
        cpu, listening = cpu_seconds(a.process.pid), rss_mb(a.process.pid)
        time.sleep(2.0)
        return {"records": count, "made_and_stored_cpu_s": round(made, 1), "start_wall_s": round(wall, 1),
                "start_cpu_s": round(cpu, 1), "rss_mb_listening": round(listening, 1),
                "rss_mb_idle": round(rss_mb(a.process.pid), 1), "peak_rss_mb": round(peak_rss_mb(a.process.pid), 1),
                "goal_mb": 1024, "steps": [line.split("start-up memory after ", 1)[1]
                                           for line in a.stderr().splitlines() if "start-up memory after " in line]}
    finally:
        a.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--workload", nargs="+", choices=sorted(WORKLOADS), default=["mixed"],
                        help="mixed: ~100 authors' lessons, verifications and vouches; one-author: one author's lessons")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", type=Path, help="sample B's daemon with py-spy into this file (collapsed stacks)")
    parser.add_argument("--hold", type=int, metavar="N",
                        help="instead: start one daemon on a store of N records and report its memory")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="with --hold: keep the store built in DIR and start on a copy of it next time "
                             "(building 10^6 records takes ~54 CPU-s)")
    args = parser.parse_args()
    if args.hold:
        with tempfile.TemporaryDirectory() as folder:
            print(json.dumps(hold_once(Path(folder), args.hold, args.keep), indent=None if args.json else 2))
        return
    runs = []
    for workload in args.workload:
        for count in args.sizes:
            with tempfile.TemporaryDirectory() as folder:
                runs.append(sync_once(Path(folder), count, args.profile, workload))
            print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    result: dict = {"runs": runs, "goal_ratio": GOAL_RATIO, "goal_exponent": GOAL_EXPONENT, "goals": []}
    sizes = " ".join(map(str, args.sizes))
    for workload in args.workload:
        mine = [r for r in runs if r["workload"] == workload]
        command = f".venv/bin/python -m tests.benchmarks.bench_sync --sizes {sizes} --workload {workload} --json"
        for run_ in mine:
            result["goals"].append({
                "goal": f"end-to-end sync of {run_['records']:,} records ({workload}) between two daemons, B's CPU "
                        f"against raw single-core verify, ≥ {GOAL_RATIO}",
                "figure": f"{run_['ratio']:.3f} ({run_['records_per_cpu_s']:,} records per CPU-s, raw verify "
                          f"{run_['raw_verify_per_s']:,}/s, load {run_['load_average_1min']})",
                "target": f"≥ {GOAL_RATIO} of raw verify", "met": run_["ratio"] >= GOAL_RATIO, "command": command})
        if len(mine) >= 2:
            first, last = mine[0], mine[-1]
            exponent = round(math.log(last["cpu_s"] / first["cpu_s"]) / math.log(last["records"] / first["records"]), 3)
            result.setdefault("cpu_exponent", {})[workload] = exponent
            result["goals"].append({
                "goal": f"B's CPU grows linearly with N ({workload}): exponent ≤ {GOAL_EXPONENT}",
                "figure": f"{exponent} ({first['records']:,} to {last['records']:,} records)",
                "target": f"≤ {GOAL_EXPONENT}", "met": exponent <= GOAL_EXPONENT, "command": command})
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
