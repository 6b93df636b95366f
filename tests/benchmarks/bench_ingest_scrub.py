"""What the episode door's scrubbing costs on the ingest path: parsing with it, and without it.

Parses >= 20 MB of synthesised Claude Code transcripts (bench_ingest.py's generator) with
``commons.ingest.claude_code.parse`` three times each way and keeps the best: once as shipped
(every derived field scrubbed when the builder makes it), once with the scrubber replaced by a
plain cut. The difference is the door's cost per MB; ingest end to end is bench_ingest_store.py.

    .venv/bin/python -m tests.benchmarks.bench_ingest_scrub [--mb 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import commons.core.learning.failure as failure  # noqa: E402
import commons.core.learning.evidence as resolution  # noqa: E402
from commons.ingest import claude_code, episodes  # noqa: E402
from tests.benchmarks.bench_ingest import synthesise  # noqa: E402


def _best(datas: list[bytes], mb: float) -> float:
    rates = []
    for _ in range(3):
        started = time.process_time()
        for data in datas:
            claude_code.parse(data)
        rates.append(mb / (time.process_time() - started))
    return max(rates)


def measure(target_mb: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        datas = [p.read_bytes() for p in synthesise(Path(tmp), int(target_mb * 1e6))]
    mb = sum(map(len, datas)) / 1e6
    scrubbing = _best(datas, mb)
    saved = episodes.scrub, episodes.clip, failure.clip, resolution.clip
    try:
        episodes.scrub = lambda text: text
        episodes.clip = failure.clip = resolution.clip = lambda text, n: text[:n]
        plain = _best(datas, mb)
    finally:
        episodes.scrub, episodes.clip, failure.clip, resolution.clip = saved
    return {"mb": round(mb, 1), "parse_mb_s_with_scrub": round(scrubbing, 1), "parse_mb_s_without": round(plain, 1),
            "scrub_ms_per_mb": round(1000 / scrubbing - 1000 / plain, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20, help="megabytes of transcripts to synthesise (default 20)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    r = measure(args.mb)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print(f"{r['mb']} MB of transcripts, per CPU second: parse with the episode door's scrubbing "
              f"{r['parse_mb_s_with_scrub']} MB/s, without {r['parse_mb_s_without']} MB/s "
              f"(the door costs {r['scrub_ms_per_mb']} ms per MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
