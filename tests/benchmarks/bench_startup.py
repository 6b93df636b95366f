"""Start-up where the agent waits: CPU seconds of each, beside a bare `python -c pass` in the same run.

    .venv/bin/python tests/benchmarks/bench_startup.py [--rounds N] [--tree DIR] [--json]

Four processes, each started ``--rounds`` times (default 10) in a fresh home made by `commons init`;
the median CPU time (user + system, of the process and its waited-for children) is reported, and
its ratio to the bare interpreter's (target: each within 3x, issue #28 item 3). ``--tree DIR`` runs
``python -m commons`` with ``PYTHONPATH=DIR`` instead of the installed script, to measure another
commit in the same venv (``git archive COMMIT | tar -x -C DIR``):

* ``python``: ``python -c pass``, the venv's interpreter, as the floor;
* ``version``: ``commons --version``;
* ``mcp_initialize``: `commons mcp` spawned, ``initialize`` sent on its stdin; the clock stops when
  its reply is read and stdin is closed (the server then exits without loading anything more);
* ``hook``: `commons hook session-end` given Claude Code's hook input for a small transcript,
  returning (the ingest it hands to a detached process is not its own CPU and not waited for).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.goals import goal  # noqa: E402

BIN = Path(sys.executable).parent
TARGET_RATIO = 3.0
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench_startup", "version": "0"}}}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


COMMONS: list[str] = []  # how commons is started: the installed script, or python -m commons (--tree)


def _commons() -> list[str]:
    if COMMONS:
        return COMMONS
    found = BIN / "commons"
    if not found.is_file():
        raise SystemExit(f"no `commons` beside {sys.executable}: run `make install`")
    return [str(found)]


def cpu_of_run(argv: list[str], env: dict[str, str], cwd: str, stdin: bytes = b"") -> float:
    before = _children_cpu()
    done = subprocess.run(argv, input=stdin, env=env, cwd=cwd, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')}")
    return _children_cpu() - before


def cpu_of_mcp_initialize(env: dict[str, str], cwd: str) -> float:
    before = _children_cpu()
    server = subprocess.Popen([*_commons(), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    reply = json.loads(server.stdout.readline())
    server.stdin.close()
    server.wait(timeout=60)
    if reply.get("id") != 0 or "result" not in reply:
        raise SystemExit(f"commons mcp did not answer initialize: {reply}")
    return _children_cpu() - before


def _wait_for_detached_ingests(home: Path, timeout: float = 120.0) -> None:
    """The hook hands each ingest to a detached process (its pid in hook.log): let them end before
    their home is removed."""
    pids = {int(m) for log in home.rglob("hook.log")
            for m in re.findall(r"ingest handed to pid (\d+)", log.read_text(encoding="utf-8"))}
    deadline = time.monotonic() + timeout
    while pids and time.monotonic() < deadline:
        pids = {pid for pid in pids if Path(f"/proc/{pid}").exists()}
        time.sleep(0.1)


def measure(rounds: int, tree: Path | None = None) -> dict[str, float]:
    if tree is not None:
        COMMONS[:] = [sys.executable, "-m", "commons"]
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as scratch:
        env = {**os.environ, "COMMONS_HOME": str(Path(scratch) / "home"), "HOME": scratch}
        if tree is not None:
            env["PYTHONPATH"] = str(tree.resolve())
        subprocess.run([*_commons(), "init"], env=env, cwd=scratch, check=True, capture_output=True)
        transcript = Path(scratch) / "session.jsonl"
        transcript.write_text(json.dumps({"type": "user", "sessionId": "bench", "cwd": scratch,
                                          "message": {"role": "user", "content": "hello"}}) + "\n")
        hook_input = json.dumps({"session_id": "bench", "transcript_path": str(transcript), "cwd": scratch,
                                 "hook_event_name": "SessionEnd", "reason": "exit"}).encode()
        runs: dict[str, list[float]] = {"python": [], "version": [], "mcp_initialize": [], "hook": []}
        for _ in range(rounds):  # interleaved, so a burst of load on the machine hits each alike
            runs["python"].append(cpu_of_run([sys.executable, "-c", "pass"], env, scratch))
            runs["version"].append(cpu_of_run([*_commons(), "--version"], env, scratch))
            runs["mcp_initialize"].append(cpu_of_mcp_initialize(env, scratch))
            runs["hook"].append(cpu_of_run([*_commons(), "hook", "session-end"], env, scratch, hook_input))
        _wait_for_detached_ingests(Path(scratch) / "home")
    median = {name: statistics.median(times) for name, times in runs.items()}
    figures: dict[str, float] = {"rounds": rounds, "target_ratio": TARGET_RATIO}
    for name, seconds in median.items():
        figures[f"{name}_cpu_s"] = round(seconds, 4)
        if name != "python":
            figures[f"{name}_ratio"] = round(seconds / median["python"], 2)
    figures["within_target"] = all(figures[f"{n}_ratio"] <= TARGET_RATIO for n in median if n != "python")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="CPU time of the start-ups an agent waits for.")
    parser.add_argument("--rounds", type=int, default=10, help="times each process is started (median kept)")
    parser.add_argument("--tree", type=Path, metavar="DIR",
                        help="measure the commons in DIR (python -m commons, PYTHONPATH=DIR) instead of the installed one")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args(argv)
    figures = measure(args.rounds, args.tree)
    if args.json:
        labels = {"version": "`commons --version`", "mcp_initialize": "`commons mcp` answers `initialize`",
                  "hook": "`commons hook session-end` returns"}
        figures["goals"] = [goal(f"start-up CPU: {label}, median of {args.rounds}, ÷ `python -c pass` in the same run",
                                 f"{figures[f'{name}_ratio']}× ({figures[f'{name}_cpu_s']} s against "
                                 f"{figures['python_cpu_s']} s)", f"≤ {TARGET_RATIO:g}×",
                                 figures[f"{name}_ratio"] <= TARGET_RATIO, "python -m tests.benchmarks.bench_startup --json")
                            for name, label in labels.items()]
        print(json.dumps(figures))
        return 0
    print(f"start-up CPU, median of {args.rounds} (target: within {TARGET_RATIO:g}x of bare python):")
    print(f"  python -c pass           {figures['python_cpu_s'] * 1000:7.1f} ms")
    for name, label in (("version", "commons --version"), ("mcp_initialize", "MCP initialize answered"),
                        ("hook", "SessionEnd hook returns")):
        print(f"  {label:24} {figures[f'{name}_cpu_s'] * 1000:7.1f} ms  ({figures[f'{name}_ratio']:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
