"""One seed's run of the N-agent experiment: every arm over one plan, summarised (what
``python -m simulations.experiment --seed N`` prints, and what ``--seeds`` runs per process)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

from simulations.experiment.agent import PLAIN_TRY_DAYS
from simulations.experiment.figures import summarise
from simulations.experiment.n_agents import ARMS, run_arm
from simulations.experiment.schedule import make_plan


def scratch_folder() -> str | None:
    """Where a run keeps its homes when not told (``--workdir``): a folder in memory (``/dev/shm``)
    when the machine has one, else the system's temporary folder (None). A seed's homes are about
    100 MB, made, rewritten and removed within the run; in memory their SQLite and file writes cost
    no disk waits (the figures do not depend on where the homes are)."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def run_experiment(seed: int = 7, agents: int = 8, days: int = 28, pitfalls: int = 8, meets: int = 3, *,
                   arms: Sequence[str] = ARMS, changes: bool = True, workdir: Path,
                   plain_try_days: int | None = PLAIN_TRY_DAYS) -> dict:
    plan = make_plan(seed, agents, days, pitfalls, meets, changes)
    started, cpu, load = time.monotonic(), time.process_time(), []
    runs = {}
    for arm in arms:
        runs[arm] = run_arm(arm, plan, seed, workdir / arm, plain_try_days)
        load.append(os.getloadavg()[0])
    result = summarise(runs, plan, seed)
    result["plain_try_days"] = plain_try_days
    # How long it took, and how busy the machine was meanwhile (1-minute load after each arm).
    result["wall_seconds"] = round(time.monotonic() - started, 1)
    # The CPU time of this one process: the harness, every command and (in-process) every daemon.
    result["cpu_seconds"] = round(time.process_time() - cpu, 1)
    result["load_average"] = round(sum(load) / len(load), 2)
    result["cpus"] = os.cpu_count()
    # The ground truth, kept with the homes (when they are kept) for a second look.
    result["encounters"] = {arm: [e.to_json() for e in run.encounters] for arm, run in runs.items()}
    (workdir / "encounters.json").write_text(json.dumps(result["encounters"]), "utf-8")
    return result
