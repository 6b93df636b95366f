"""Run the benchmarks as ``make bench`` does: each one's ``--json`` to ``.bench/<bench>.json``, and
beside it ``.bench/<bench>.run.json``: when it ran, how long, the machine's load before and after, its
CPU, the commit, the mode (``quick`` under ``BENCH_QUICK=1``) and its exit status.

    .venv/bin/python -m tests.benchmarks.run                       # every tests/benchmarks/bench_*.py
    BENCH_QUICK=1 .venv/bin/python -m tests.benchmarks.run         # their quick runs
    .venv/bin/python -m tests.benchmarks.run bench_recall_index    # some of them

A bench that fails leaves its ``.run.json`` (with the end of its stderr) and no figures; the others
still run, and the exit status says that one failed. ``tests/benchmarks/table.py`` makes
``docs/benchmarks.md`` from what is in the folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.benchmarks.goals import quick

ROOT = Path(__file__).resolve().parents[2]
BENCHES = Path(__file__).resolve().parent
# What a full run adds to a bench's own sizes: the goals at 10^6 items (issue #31) are measured only there.
FULL_ARGUMENTS = {"bench_negentropy": ("--large",)}


def benches() -> list[str]:
    return sorted(p.stem for p in BENCHES.glob("bench_*.py"))


def cpu_model() -> str:
    """The processor's name as the kernel gives it, else what Python knows of the machine."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def commit() -> str:
    """The checkout's commit, with ``+changes`` when its tracked files differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=ROOT).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def run_one(name: str, out: Path) -> dict[str, Any]:
    """Run one bench with ``--json``; write its figures and its run record; return the record."""
    started, load_before = time.time(), os.getloadavg()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    extra = () if quick() else FULL_ARGUMENTS.get(name, ())
    done = subprocess.run([sys.executable, "-m", f"tests.benchmarks.{name}", "--json", *extra], cwd=ROOT,
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    record: dict[str, Any] = {
        "bench": name, "mode": "quick" if quick() else "full", "arguments": list(extra), "started": started,
        "wall_s": round(time.time() - started, 1),
        "cpu_s": round(after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime, 1),
        "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
        "cpu": cpu_model(), "cpus": os.cpu_count(), "machine": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(), "commit": commit(), "returncode": done.returncode,
    }
    figures = out / f"{name}.json"
    try:
        parsed = json.loads(done.stdout)
    except json.JSONDecodeError:
        parsed = None
    if done.returncode == 0 and parsed is not None:
        figures.write_text(json.dumps(parsed, indent=2) + "\n")
    else:
        figures.unlink(missing_ok=True)  # no figures of an earlier run beside this run's failure
        record["error"] = (done.stderr or done.stdout)[-2000:] or f"exit status {done.returncode}, no JSON on stdout"
    (out / f"{name}.run.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benches to run (default: every bench_*.py)")
    parser.add_argument("--out", type=Path, default=ROOT / ".bench")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(benches()))
    if unknown:
        parser.error(f"no such bench: {', '.join(unknown)} (there are: {', '.join(benches())})")
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in args.names or benches():
        print(f"== {name}", flush=True)
        record = run_one(name, args.out)
        if record["returncode"] != 0 or "error" in record:
            failed.append(name)
            print(f"   failed (exit {record['returncode']}): {record['error'].strip().splitlines()[-1:]}", flush=True)
            continue
        figures = json.loads((args.out / f"{name}.json").read_text())
        for g in figures.get("goals", []) if isinstance(figures, dict) else []:
            print(f"   {'met' if g.get('met') else 'MISSED'}: {g.get('goal')}: {g.get('figure')}", flush=True)
        print(f"   {record['wall_s']} s, load {record['load_before'][0]} -> {record['load_after'][0]}", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
