"""Ingest throughput: parse Claude Code transcripts and archive them, on one core.

Synthesises >= 100 MB of transcripts in a temporary folder from the bundled demo sessions (their
records as templates, with file-sized tool results drawn from a code-like vocabulary, split
assistant messages and hook progress records, as real sessions have), then reads each transcript
as a growing file is read (several appends) through `parse` and `Archive.append`.

    .venv/bin/python tests/benchmarks/bench_ingest.py            # figures for a person
    .venv/bin/python tests/benchmarks/bench_ingest.py --json     # the same, for a script
    .venv/bin/python tests/benchmarks/bench_ingest.py --mb 20    # a quicker, smaller run
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from commons.ingest.archive import Archive  # noqa: E402
from commons.ingest.claude_code import parse  # noqa: E402

DEMO = ROOT / "commons" / "demo" / "sessions"
WORDS = (
    "def class return import from self async await yield value result error config path file "
    "request response client server token session record state offset chunk buffer stream "
    "parse render index table column row query cursor commit branch merge rebase test assert "
    "fixture mock patch timeout retry backoff logger debug info warning items keys update"
).split()


def _code_body(rng: random.Random, lines: int) -> str:
    out = []
    for n in range(1, lines + 1):
        indent = " " * (4 * rng.randint(0, 3))
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9)))
        out.append(f"{n:>6}\u2192{indent}{words}({rng.randint(0, 999)})")
    return "\n".join(out)


def synthesise(folder: Path, target_bytes: int, seed: int = 7, sources: list[Path] | None = None) -> list[Path]:
    """Write transcripts of 1-4 MB each until `target_bytes` are written, each a template (the demo's
    sessions, or ``sources``) repeated with fresh ids and varied tool output."""
    rng = random.Random(seed)
    templates = [[line for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
                 for p in (sources or sorted(DEMO.glob("*/day-*.jsonl")))]
    paths, total, n = [], 0, 0
    while total < target_bytes:
        template = rng.choice(templates)
        size_goal = rng.randint(1, 4) * 1024 * 1024
        session = f"{rng.getrandbits(128):032x}"
        lines: list[str] = []
        size = 0
        while size < size_goal:
            for raw in template:
                try:
                    rec = json.loads(raw)
                except ValueError:
                    rec = None
                if not isinstance(rec, dict):  # a real transcript's odd line: kept as it is
                    lines.append(raw)
                    size += len(raw.encode()) + 1
                    continue
                if "sessionId" in rec:
                    rec["sessionId"] = session
                if "uuid" in rec:
                    rec["uuid"] = f"{rng.getrandbits(128):032x}"
                content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
                first = content[0] if isinstance(content, list) and content and isinstance(content[0], dict) else {}
                if first.get("type") == "tool_result":
                    if not first.get("is_error") and rng.random() < 0.7:
                        first["content"] = _code_body(rng, rng.randint(20, 400))
                    first["tool_use_id"] = str(first.get("tool_use_id", "")) + f"{size:x}"
                elif first.get("type") == "tool_use":
                    first["id"] = str(first.get("id", "")) + f"{size:x}"
                line = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
                lines.append(line)
                size += len(line.encode()) + 1
        path = folder / f"{session}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
        total += path.stat().st_size
        n += 1
    return paths


def _pieces(data: bytes, rng: random.Random, count: int = 4) -> list[tuple[int, bytes]]:
    cuts = sorted(rng.randrange(len(data)) for _ in range(count - 1))
    return [(a, data[a:b]) for a, b in zip([0, *cuts], [*cuts, len(data)])]


def run(mb: int) -> dict:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "transcripts"
        src.mkdir()
        paths = synthesise(src, mb * 1024 * 1024)
        blobs = [(p.name, p.read_bytes()) for p in paths]
        total = sum(len(b) for _, b in blobs)

        parse_s = archive_s = 0.0
        wall0 = time.perf_counter()
        episodes = 0
        archive = Archive(Path(tmp) / "archive")
        for name, data in blobs:
            state, pending = None, b""
            for offset, piece in _pieces(data, rng):
                pending += piece
                t0 = time.process_time()
                result = parse(pending, state, session_hint=name)
                t1 = time.process_time()
                consumed = pending[: result.consumed_bytes]
                archive.append(name, consumed, result.state.offset - len(consumed), original_path=name)
                t2 = time.process_time()
                parse_s += t1 - t0
                archive_s += t2 - t1
                state, pending = result.state, pending[result.consumed_bytes :]
                episodes += len(result.episodes)
        wall_s = time.perf_counter() - wall0
        stored = sum(e.stored_size for e in archive.entries())
        archived = sum(e.size for e in archive.entries())
        assert archived == total, "archive lost bytes"
        t0 = time.perf_counter()
        for name, data in blobs[:5]:
            assert archive.read(name) == data
        read_mb_s = sum(len(d) for _, d in blobs[:5]) / (time.perf_counter() - t0) / 1e6
    return {
        "transcripts": len(blobs),
        "bytes": total,
        "episodes": episodes,
        "parse_mb_s": round(total / parse_s / 1e6, 1),
        "archive_mb_s": round(total / archive_s / 1e6, 1),
        "ingest_mb_s": round(total / (parse_s + archive_s) / 1e6, 1),
        "ingest_wall_mb_s": round(total / wall_s / 1e6, 1),
        "archive_ratio": round(total / stored, 2),
        "read_back_mb_s": round(read_mb_s, 1),
        "cpu": "one core (process CPU time; parse and archive run in one thread)",
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="megabytes of transcripts to synthesise (default 100)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    figures = run(args.mb)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{figures['transcripts']} transcripts, {figures['bytes'] / 1e6:.1f} MB, {figures['episodes']} episodes emitted")
    print(f"parse:   {figures['parse_mb_s']} MB/s")
    print(f"archive: {figures['archive_mb_s']} MB/s (ratio {figures['archive_ratio']}x)")
    print(f"ingest:  {figures['ingest_mb_s']} MB/s on one core (target >= 20)")
    print(f"ingest (wall clock, with fsyncs): {figures['ingest_wall_mb_s']} MB/s")
    print(f"read back: {figures['read_back_mb_s']} MB/s")


if __name__ == "__main__":
    main()
