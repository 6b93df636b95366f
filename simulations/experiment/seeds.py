"""Many seeds, fixed goals (issue #29, item 4): the experiment over a range of seeds, in parallel
processes, summarised as a mean and a 95% interval per figure.

Each seed is a whole run (every arm over one plan) in a process of its own, in a folder of its
own; a seed's result is the one ``python -m simulations.experiment --seed N --json`` prints, less
its encounters. The goals are fixed before running (``GOALS``) and the summary says which are met.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from simulations.experiment.one_seed import run_experiment, scratch_folder
from simulations.experiment.paraphrases import reader_figures

JOBS_PER_CPU = 2

# Written before the runs (issue #29's "Done when"): figure → (comparison, bound).
GOALS: Mapping[str, tuple[str, float]] = {
    "trusted": (">=", 0.85),
    "peer_review_beyond_verifiers": (">=", 0.75),
    "placebo_misled_over_control": ("<=", 1.0),
    "reader_follows_paraphrase": (">=", 0.9),
    "reader_follows_other_command": ("<=", 0.1),
}

# Student's t, two-sided 95%, by degrees of freedom (beyond 30: the normal's 1.96 is within 2%).
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042)


def parse_seeds(text: str) -> list[int]:
    """``1-20``, ``3,7,11`` or ``1-5,9`` as the seeds they name, in order, each once."""
    seeds: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise ValueError(f"--seeds: expected ranges like 1-20 or lists like 3,7,11; got {part!r}")
        low, high = int(m.group(1)), int(m.group(2) or m.group(1))
        seeds += [s for s in range(low, high + 1) if s not in seeds]
    if not seeds:
        raise ValueError("--seeds: no seed given")
    return seeds


def interval(values: Sequence[float]) -> dict:
    """Mean and 95% confidence interval (Student's t) of ``values``; None where undefined."""
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return {"mean": None, "ci95": [None, None], "n": 0}
    mean = sum(xs) / len(xs)
    if len(xs) == 1:
        return {"mean": round(mean, 4), "ci95": [None, None], "n": 1}
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
    t = _T95[len(xs) - 2] if len(xs) - 1 <= len(_T95) else 1.96
    half = t * sd / math.sqrt(len(xs))
    return {"mean": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)], "n": len(xs)}


def seed_figures(result: dict) -> dict:
    """The figures one seed contributes to the summary."""
    arms, reduction = result["arms"], result["reduction"]
    def over(arm: str) -> int | None:
        """Agents misled in ``arm`` minus those misled in control, over the same (honest) agents."""
        if arm not in arms or "control" not in arms:
            return None
        bad = set(arms[arm].get("bad_authors", ()))
        return (len(set(arms[arm]["misled"]["who"]) - bad)
                - len(set(arms["control"]["misled"]["who"]) - bad))
    reader = result.get("reader") or reader_figures(result["seed"])
    return {
        "trusted": reduction.get("trusted"),
        "peer_review": reduction.get("peer_review"),
        "peer_review_beyond_verifiers": reduction.get("peer_review_beyond_verifiers"),
        "placebo_misled_over_control": over("placebo"),
        "placebo_trusted_misled_over_control": over("placebo_trusted"),
        "reader_follows_paraphrase": reader["follows_paraphrase"],
        "reader_follows_other_command": reader["follows_other_command"],
    }


def _met(value: float | None, comparison: str, bound: float) -> bool | None:
    if value is None:
        return None
    return value >= bound if comparison == ">=" else value <= bound


def summarise_seeds(results: Sequence[dict], wall_s: float) -> dict:
    """One JSON object over every seed: per figure its mean and 95% interval, the goals, the runs."""
    per_seed = [seed_figures(r) for r in results]
    keys = list(per_seed[0]) if per_seed else []
    summary = {k: interval([f[k] for f in per_seed]) for k in keys}
    goals = {k: {"goal": f"{c} {b}", "mean": summary.get(k, {}).get("mean"),
                 "met": _met(summary.get(k, {}).get("mean"), c, b)} for k, (c, b) in GOALS.items()}
    return {"seeds": [r["seed"] for r in results], "wall_s": round(wall_s, 1), "summary": summary,
            "goals": goals, "runs": [dict(r, figures=f) for r, f in zip(results, per_seed)]}


def kept_results(path: Path) -> list[dict]:
    """The seeds ``run_seeds(keep=path)`` wrote, each seed once (its last run), in seed order."""
    found = {}
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            result = json.loads(line)
            found[result["seed"]] = result
    return [found[s] for s in sorted(found)]


def _one_seed(seed: int, kwargs: dict) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix=f"commons-experiment-{seed}-", dir=scratch_folder()))
    try:
        result = run_experiment(seed, workdir=workdir, **kwargs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result.pop("encounters", None)
    result["reader"] = reader_figures(seed)
    return result


def run_seeds(seeds: Sequence[int], jobs: int | None = None, progress: Callable[[str], None] | None = None,
              keep: Path | None = None, **kwargs) -> dict:
    """Every seed in ``seeds``, ``jobs`` at a time (default: two per CPU: a seed's process waits
    on its daemons' quiet rounds for a good part of each night, time another seed's can use),
    summarised."""
    jobs = max(1, min(jobs or JOBS_PER_CPU * (os.cpu_count() or 1), len(seeds)))
    started, begun = time.monotonic(), time.time()
    results = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_one_seed, seed, kwargs): seed for seed in seeds}
        for done in as_completed(futures):
            results.append(dict(done.result(), run_started_at=round(begun, 1), ended_at=round(time.time(), 1),
                                jobs=jobs))
            if keep is not None:  # each seed as it ends: a run cut short still has its seeds
                with keep.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(results[-1]) + "\n")
            if progress:
                progress(f"seed {futures[done]} done ({len(results)}/{len(seeds)}, "
                         f"{time.monotonic() - started:.0f} s)")
    results.sort(key=lambda r: seeds.index(r["seed"]))
    return dict(summarise_seeds(results, time.monotonic() - started), jobs=jobs)
