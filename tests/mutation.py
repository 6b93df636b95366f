"""`make mutation`: mutation testing of commons/core/ and commons/node/ with mutmut, on a sample.

mutmut (its settings are `[tool.mutmut]` in pyproject.toml) writes a mutated copy of the package
into mutants/, runs the test selection once to learn which tests reach which function, then runs
each mutant against the tests that reach its function. Every mutant of the two layers is some
20,000: far too many for one sitting on two cores, so this runs a sample of them, drawn
reproducibly (``--seed``) in proportion to each package's share of all mutants, and reports, per
package, how many the tests killed, how many survived, how many timed out and how many no test
reaches. The score is killed (and timed out) over those tested, as mutmut counts it.

    python -m tests.mutation --sample 200 --seed 1 --out .bench/mutation.json

A mutant's diff: `.venv/bin/mutmut show NAME`; the tests that reach it: `.venv/bin/mutmut
tests-for-mutant NAME`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("commons.core", "commons.node")


def package_of(name: str) -> str:
    """``commons.core`` or ``commons.node`` for a mutant name (``commons.core.x.y.x_f__mutmut_3``)."""
    return next(p for p in PACKAGES if name.startswith(p + "."))


def generate() -> dict[str, int | None]:
    """Write the mutants (mutmut's own generation; files unchanged since the last run are kept) and
    return every mutant's name with its last exit code (None: not run)."""
    from mutmut import __main__ as mutmut
    from mutmut.mutation.trampoline import set_mutant_under_test

    set_mutant_under_test("mutant_generation")
    os.makedirs("mutants", exist_ok=True)
    mutmut.copy_src_dir()
    mutmut.copy_also_copy_files()
    mutmut.setup_source_paths()
    mutmut.create_mutants(os.cpu_count() or 2)
    mutants, _ = mutmut.collect_source_file_mutation_data(mutant_names=[])
    return {name: code for _, name, code in mutants}


def sample(names: list[str], size: int, seed: int) -> list[str]:
    """``size`` names drawn with ``seed``, each package given its share of all mutants."""
    rng = random.Random(seed)
    by_package = {p: sorted(n for n in names if package_of(n) == p) for p in PACKAGES}
    chosen = []
    for package, members in by_package.items():
        share = round(size * len(members) / len(names))
        chosen += rng.sample(members, min(share, len(members)))
    return sorted(chosen)


def results(names: list[str]) -> dict[str, str]:
    """Each mutant's status as mutmut records it (killed, survived, timeout, no tests, …)."""
    from mutmut import __main__ as mutmut
    from mutmut.stats import status_by_exit_code

    wanted = set(names)
    mutants, _ = mutmut.collect_source_file_mutation_data(mutant_names=[])
    return {name: status_by_exit_code[code] for _, name, code in mutants if name in wanted}


def summary(statuses: dict[str, str]) -> dict:
    table = {}
    for package in PACKAGES:
        counts = Counter(s for n, s in statuses.items() if package_of(n) == package)
        tested = counts["killed"] + counts["survived"] + counts["timeout"] + counts["segfault"]
        score = (counts["killed"] + counts["timeout"] + counts["segfault"]) / tested if tested else None
        table[package] = {"mutants": sum(counts.values()), **dict(sorted(counts.items())),
                          "score": None if score is None else round(score, 3)}
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=200, help="how many mutants to run (default 200); 0: all")
    parser.add_argument("--seed", type=int, default=1, help="which sample (default 1): the same seed, the same mutants")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="mutants run at once")
    parser.add_argument("--out", metavar="FILE", help="also write the table and every mutant's status as JSON")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    began = time.time()
    every = generate()
    chosen = sample(list(every), args.sample, args.seed) if args.sample else sorted(every)
    print(f"{len(every)} mutants in {', '.join(PACKAGES)}; running {len(chosen)} (seed {args.seed})", file=sys.stderr)
    mutmut = [str(Path(sys.executable).parent / "mutmut"), "run", "--max-children", str(args.max_children)]
    done = subprocess.run(mutmut + chosen, stdout=sys.stderr)
    if done.returncode != 0:
        print(f"mutmut run exited {done.returncode}", file=sys.stderr)
        return done.returncode
    statuses = results(chosen)
    table = summary(statuses)
    if args.out:
        Path(args.out).write_text(json.dumps(
            {"seed": args.seed, "sample": len(chosen), "mutants": len(every), "table": table,
             "seconds": round(time.time() - began), "statuses": statuses}, indent=2) + "\n")
    for package, row in table.items():
        print(f"{package:14} " + ", ".join(f"{k} {v}" for k, v in row.items()))
    for name, status in sorted(statuses.items()):
        if status != "killed":
            print(f"  {status:10} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
