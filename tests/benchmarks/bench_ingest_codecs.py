"""The archive's compressor, chosen by measurement: ratio and MB/s of each candidate on transcripts.

Synthesises transcripts from ../shared/transcripts (the generator of bench_ingest.py: real
records as templates, varied tool output), cuts them into the archive's chunks (CHUNK_MAX, as
`Archive.append` does), and compresses and decompresses every chunk with each candidate (then
the real transcripts as they are, one chunk each: a ratio that no replication inflates):
lzma (xz) presets 0 and 1, zlib levels 1, 3 and 6, and zstd levels 1, 3 and 6 (the `zstandard`
package; left out with a message where it is not installed). Times are process CPU seconds on one
thread, so a busy machine slows the figures less than wall clock would.

    .venv/bin/python -m tests.benchmarks.bench_ingest_codecs            # a table for a person
    .venv/bin/python -m tests.benchmarks.bench_ingest_codecs --json     # the same, for a script
    .venv/bin/python -m tests.benchmarks.bench_ingest_codecs --mb 20    # a quicker, smaller run
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from commons.ingest.archive import CHUNK_MAX, ZSTD_LEVEL  # noqa: E402
from tests.benchmarks.bench_ingest import synthesise  # noqa: E402

SHARED = ROOT.parent / "shared" / "transcripts"
Codec = tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]


def candidates() -> dict[str, Codec]:
    out: dict[str, Codec] = {}
    for preset in (0, 1):
        out[f"xz-{preset}"] = (
            lambda b, p=preset: lzma.compress(b, format=lzma.FORMAT_XZ, check=lzma.CHECK_NONE, preset=p),
            lzma.decompress,
        )
    for level in (1, 3, 6):
        out[f"zlib-{level}"] = (lambda b, lv=level: zlib.compress(b, lv), zlib.decompress)
    try:
        import zstandard
    except ImportError:
        print("zstandard is not installed: zstd left out", file=sys.stderr)
        return out
    for level in (1, 3, 6):
        out[f"zstd-{level}"] = (zstandard.ZstdCompressor(level=level).compress,
                                zstandard.ZstdDecompressor().decompress)
    return out


def _measure(chunks: list[bytes]) -> dict:
    total = sum(len(c) for c in chunks)
    rows = {}
    for name, (pack, unpack) in candidates().items():
        t0 = time.process_time()
        packed = [pack(c) for c in chunks]
        t1 = time.process_time()
        back = [unpack(p) for p in packed]
        t2 = time.process_time()
        assert back == chunks, f"{name} did not give the bytes back"
        rows[name] = {
            "ratio": round(total / sum(len(p) for p in packed), 2),
            "compress_mb_s": round(total / max(t1 - t0, 1e-9) / 1e6, 1),
            "decompress_mb_s": round(total / max(t2 - t1, 1e-9) / 1e6, 1),
        }
    return rows


def run(mb: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = synthesise(folder, mb * 1024 * 1024, sources=sorted(SHARED.glob("*.jsonl")))
        chunks = [data[i : i + CHUNK_MAX] for p in paths for data in [p.read_bytes()]
                  for i in range(0, len(data), CHUNK_MAX)]
    real = [p.read_bytes() for p in sorted(SHARED.glob("*.jsonl"))]
    return {"bytes": sum(map(len, chunks)), "chunks": len(chunks), "codecs": _measure(chunks),
            "real_bytes": sum(map(len, real)), "real": _measure(real)}


SPEED_GOAL = 10.0  # the archive's codec compresses at >= 10x xz-0's MB/s ...
RATIO_GOAL = 0.9  # ... at >= 0.9 of its ratio (pyproject.toml's reason for zstandard)


def goals(figures: dict, mb: int) -> list[dict]:
    """The archive's codec (zstd at ``ZSTD_LEVEL``) against xz-0, on the replicated transcripts and
    on the real ones as they are: its compression speed and its ratio, each a goal of the table."""
    chosen = f"zstd-{ZSTD_LEVEL}"
    out = []
    for rows, what in (("codecs", f"{figures['bytes'] / 1e6:.0f} MB replicated"),
                       ("real", f"{figures['real_bytes'] / 1e6:.1f} MB of real transcripts")):
        table = figures[rows]
        if chosen not in table:
            continue  # zstandard missing: said on stderr
        ours, xz = table[chosen], table["xz-0"]
        speed = ours["compress_mb_s"] / xz["compress_mb_s"]
        ratio = ours["ratio"] / xz["ratio"]
        command = f".venv/bin/python -m tests.benchmarks.bench_ingest_codecs --mb {mb} --json"
        out.append({"goal": f"the archive's {chosen} compresses {what} ≥ {SPEED_GOAL:g}x as fast as xz-0",
                    "figure": f"{speed:.1f}x ({ours['compress_mb_s']} vs {xz['compress_mb_s']} MB/s, CPU time)",
                    "target": f"≥ {SPEED_GOAL:g}x xz-0", "met": speed >= SPEED_GOAL, "command": command})
        out.append({"goal": f"the archive's {chosen} keeps ≥ {RATIO_GOAL} of xz-0's ratio on {what}",
                    "figure": f"{ratio:.2f} ({ours['ratio']}x vs {xz['ratio']}x)",
                    "target": f"≥ {RATIO_GOAL} of xz-0's ratio", "met": ratio >= RATIO_GOAL, "command": command})
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=50, help="megabytes of transcripts to synthesise (default 50)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    figures = run(args.mb)
    figures["goals"] = goals(figures, args.mb)
    if args.json:
        print(json.dumps(figures))
        return
    for title, rows in ((f"{figures['bytes'] / 1e6:.1f} MB replicated, in {figures['chunks']} chunks", "codecs"),
                        (f"{figures['real_bytes'] / 1e6:.2f} MB of real transcripts as they are", "real")):
        print(f"{title}; process CPU time, one thread")
        print(f"{'codec':8} {'ratio':>6} {'compress MB/s':>14} {'decompress MB/s':>16}")
        for name, row in figures[rows].items():
            print(f"{name:8} {row['ratio']:>6} {row['compress_mb_s']:>14} {row['decompress_mb_s']:>16}")


if __name__ == "__main__":
    main()
