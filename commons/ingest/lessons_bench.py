"""Do the lessons say what really fixed the failure? Figures from labelled sets of real transcripts.

    python -m commons.ingest.lessons_bench [--json] [--sets DIR ...] [--held-out NAME ...]
    make lessons-report                      # the same, every set found

Every labelled set found (a folder with ``home/``, ``schedule.json`` and ``labels.json``, in the
lessons-bench format) is replayed through this checkout's ``commons`` by the scorer,
``../shared/lessons-bench/score.py`` (it runs ``ingest`` day by day and ``sleep`` night by night,
then classifies every lesson against the labels written by reading the transcripts). The figures,
per set and pooled over the sets that are not held out:

- **fix precision**: lessons naming the fix that really worked / lessons naming any fix;
- **wrong-fix share** and **noise share** of error lessons (noise: refusals, probes, banners,
  work in progress, nothing labelled);
- **fix recall**: recurring pitfalls with a fix that got a lesson naming it; **pitfall coverage**;
- **correction precision / recall**;
- **failure-line informativeness**, from a set's ``failure_lines.json``: of the labelled failing
  calls, the share whose error episode's failure line matches what the labeller says failed (a
  call made into no episode counts as a miss); and of the calls labelled no failure (refusals,
  probes), the share kept out of the error episodes.

With ``--json`` each set that is not held out also carries a ``listing``: every error lesson's
failure part, named fix and verdict, the recurring pitfalls that got no lesson, and the labelled
calls the failure-line figures count against, so the classes behind a figure are found fast.
Held-out sets show their figures only.

Where the sets are: ``LESSONS_SETS`` (folders separated by ``:``), else ``shared/lessons-bench/sets``
and ``sets`` beside the repository (or beside the main checkout of a worktree). A set named in
``LESSONS_HELD_OUT`` (default: ``promptgrimoire``, ``b-sword-claude``, ``h-unitree-codex``, ``h-nuttapong-wallet-codex``, ``h-mfc-windows-codex`` and ``h-tala-expo-codex``, the sets their labellers kept out of every tuning)
is reported apart and never pooled, as is every set whose name starts with ``h-``. The labels of our own sets are kept in ``docs/lessons-sets/``
(without the transcripts, which their licences do not let us copy) so a set can be rebuilt.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from commons.core.learning import ErrorEpisode
from commons.ingest.lessons_report import read_all, transcripts

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_HELD_OUT = ("promptgrimoire", "b-sword-claude", "h-unitree-codex", "h-nuttapong-wallet-codex",
                    "h-mfc-windows-codex", "h-tala-expo-codex")  # docs/lessons-sets/README.md: kept out of all tuning
HELD_OUT_MARK = "h-"  # docs/lessons-sets/README.md: a set whose name starts so is held out
CLASSES = ("correct", "wrong", "honest-none", "missed-fix", "noise")


def _bases() -> list[Path]:
    """The folders beside this checkout, and beside the main checkout when this is a worktree."""
    bases = [ROOT.parent]
    try:
        common = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--git-common-dir"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        if common:
            main = (ROOT / common).resolve().parent
            bases.append(main.parent)
    except (OSError, subprocess.SubprocessError):
        pass
    return list(dict.fromkeys(bases))


def set_roots(environ: dict[str, str] | None = None) -> list[Path]:
    environ = dict(os.environ if environ is None else environ)
    if environ.get("LESSONS_SETS"):
        return [Path(p) for p in environ["LESSONS_SETS"].split(":") if p]
    roots = []
    for base in _bases():
        roots += [base / "shared" / "lessons-bench" / "sets", base / "sets"]
    return [r for r in dict.fromkeys(roots) if r.is_dir()]


def find_sets(roots: Sequence[Path]) -> list[Path]:
    found = []
    for root in roots:
        for folder in sorted(root.iterdir()):
            if (folder / "labels.json").is_file() and (folder / "schedule.json").is_file() and (folder / "home").is_dir():
                found.append(folder)
    return found


def scorer(roots: Sequence[Path]) -> Path:
    for base in _bases():
        candidate = base / "shared" / "lessons-bench" / "score.py"
        if candidate.is_file():
            return candidate
    raise SystemExit("lessons-bench: score.py not found in ../shared/lessons-bench/ (beside the repository)")


def score(set_dir: Path, score_py: Path, commons: str, timeout: int = 3600) -> dict:
    """The scorer's JSON for one set (``{"error": ...}`` when it could not run)."""
    try:
        out = subprocess.run([sys.executable, str(score_py), "--commons", commons, "--set", str(set_dir), "--json"],
                             capture_output=True, text=True, timeout=timeout)
        return json.loads(out.stdout)
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError) as error:
        return {"error": f"{type(error).__name__}: {error}"}


def failure_lines(set_dir: Path) -> dict:
    """Failure-line figures of a set from its ``failure_lines.json`` (empty when it has none).

    Besides the counts, ``misses`` lists each labelled call the figures count against: a failing
    call whose episode's failure line is not what the labeller says failed (``got`` is that line,
    or None when the call made no episode), and a call labelled no failure that made an episode."""
    file = set_dir / "failure_lines.json"
    if not file.is_file():
        return {}
    labelled = json.loads(file.read_text(encoding="utf-8"))
    errors = {e.uid: e for e in read_all(transcripts([set_dir / "home"])) if isinstance(e, ErrorEpisode)}
    counts: dict = {"failing": 0, "informative": 0, "not_failures": 0, "kept_out": 0}
    misses = []
    for item in labelled:
        episode = errors.get(str(item.get("tool_use_id")))
        got = episode.failure if episode is not None else None
        if item.get("is_failure"):
            counts["failing"] += 1
            try:
                wanted = re.compile(str(item.get("what_failed") or "(?!)"), re.IGNORECASE)
            except re.error:
                continue
            if got is not None and wanted.search(got):
                counts["informative"] += 1
            else:
                misses.append({"tool_use_id": item.get("tool_use_id"), "miss": "uninformative",
                               "wanted": item.get("what_failed"), "got": got})
        else:
            counts["not_failures"] += 1
            counts["kept_out"] += episode is None
            if episode is not None:
                misses.append({"tool_use_id": item.get("tool_use_id"), "miss": "not kept out", "got": got})
    return {**counts, "misses": misses}


def _lesson_splitter(score_py: Path):
    """The scorer's own ``split_lesson``: the failure part is what its labels are matched on."""
    spec = importlib.util.spec_from_file_location("lessons_bench_score", score_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.split_lesson


def listing(result: dict, split_lesson) -> dict:
    """One set's lessons one by one, so classes of misses can be found fast.

    Each error lesson as its failure part, the fix it names (None for none) and the scorer's
    verdict (correct, wrong, honest-none, missed-fix, noise) with the label it matched; the
    recurring pitfalls that got no lesson; the failure-line misses."""
    rows = [r for r in result.get("lessons", []) if r.get("kind") != "correction"]
    return {
        "lessons": [{"failure": split_lesson(r.get("text") or "")[0],
                     "fix": r.get("fix") if r.get("names_fix") else None,
                     "verdict": r.get("class"), "label": r.get("label")} for r in rows],
        "pitfalls_without_lesson": (result.get("figures") or {}).get("recurring_missed", []),
        "failure_line_misses": result.get("failure_lines", {}).get("misses", []),
    }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def pooled(results: Sequence[dict]) -> dict:
    """The figures over several sets' results, from their counts (not an average of shares)."""
    counts = {c: 0 for c in CLASSES}
    fixed = with_fix = covered = recurring = 0
    corr = {"correct": 0, "all": 0, "labelled": 0, "found": 0}
    lines = {"failing": 0, "informative": 0, "not_failures": 0, "kept_out": 0}
    for r in results:
        f = r.get("figures")
        if not f:
            continue
        for c in CLASSES:
            counts[c] += f["counts"][c]
        fixed += len(f["recurring_fixed"])
        with_fix += f["labelled"]["recurring_with_fix"]
        covered += len(f["recurring_covered"])
        recurring += f["labelled"]["recurring"]
        corr["correct"] += f["correction_counts"]["correct"]
        corr["all"] += f["corrections"]
        corr["labelled"] += f["labelled"]["corrections"]
        corr["found"] += round((f["correction_recall"] or 0) * f["labelled"]["corrections"])
        for k in lines:
            lines[k] += r.get("failure_lines", {}).get(k, 0)
    n = sum(counts.values())
    return {
        "lessons": n, "counts": counts,
        "fix_precision": _ratio(counts["correct"], counts["correct"] + counts["wrong"]),
        "wrong_share": _ratio(counts["wrong"], n), "noise_share": _ratio(counts["noise"], n),
        "fix_recall": _ratio(fixed, with_fix), "pitfall_coverage": _ratio(covered, recurring),
        "correction_precision": _ratio(corr["correct"], corr["all"]),
        "correction_recall": _ratio(corr["found"], corr["labelled"]),
        "failure_lines_informative": _ratio(lines["informative"], lines["failing"]),
        "not_failures_kept_out": _ratio(lines["kept_out"], lines["not_failures"]),
        "failure_line_counts": lines,
    }  # fmt: skip


def is_held_out(name: str, held_out: Sequence[str]) -> bool:
    """Whether a set is kept out of the pooled figures and the listing: named so, or named with the
    labellers' mark for a held-out set (`HELD_OUT_MARK`), so a set added later is never pooled by mistake."""
    return name in held_out or name.startswith(HELD_OUT_MARK)


def run(sets: Sequence[Path], held_out: Sequence[str], commons: str, jobs: int = 2) -> dict:
    score_py = scorer([s.parent for s in sets])

    def one(set_dir: Path) -> dict:
        result = score(set_dir, score_py, commons)
        result["name"] = set_dir.name
        result["failure_lines"] = failure_lines(set_dir)
        result["held_out"] = is_held_out(set_dir.name, held_out)
        return result

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, sets))
    split_lesson = _lesson_splitter(score_py)
    per_set = {r["name"]: {**(pooled([r]) if r.get("figures") else {"error": r.get("error")}),
                           "held_out": r["held_out"], "commons_failures": len(r.get("commons_failures", [])),
                           # held-out sets' lessons are not listed: nobody reads them to write rules
                           **({} if r["held_out"] else {"listing": listing(r, split_lesson)})}
               for r in results}
    return {"sets": per_set,
            "pooled": pooled([r for r in results if not r["held_out"]]),
            "held_out": pooled([r for r in results if r["held_out"]]) if any(r["held_out"] for r in results) else None}


def _pct(x: float | None) -> str:
    return "  n/a" if x is None else f"{100 * x:4.0f}%"


def format_table(report: dict) -> str:
    cols = ("fix_precision", "wrong_share", "noise_share", "fix_recall", "pitfall_coverage",
            "correction_precision", "correction_recall", "failure_lines_informative")
    heads = ("fix prec", "wrong", "noise", "recall", "cover", "corr p", "corr r", "lines")
    lines = [f"{'set':<26}{'lessons':>8}" + "".join(f"{h:>9}" for h in heads)]

    def row(name: str, f: dict) -> str:
        if "error" in f:
            return f"{name:<26} error: {f['error']}"
        return f"{name:<26}{f['lessons']:>8}" + "".join(f"{_pct(f[c]):>9}" for c in cols)

    for name, f in report["sets"].items():
        lines.append(row(name + (" (held out)" if f.get("held_out") else ""), f))
    lines.append(row("POOLED (not held out)", report["pooled"]))
    if report["held_out"]:
        lines.append(row("HELD OUT", report["held_out"]))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m commons.ingest.lessons_bench",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="*", type=Path, help="set folders or folders of sets (default: LESSONS_SETS "
                                                               "or the sets beside the repository)")
    parser.add_argument("--held-out", nargs="*", default=None, help="set names reported apart (default: "
                                                                    "LESSONS_HELD_OUT or promptgrimoire, b-sword-claude, h-unitree-codex, "
                                                                    "h-nuttapong-wallet-codex, h-mfc-windows-codex, h-tala-expo-codex)")
    parser.add_argument("--commons", default=str(Path(sys.executable).with_name("commons")),
                        help="the commons command to replay with (default: this environment's)")
    parser.add_argument("--jobs", type=int, default=2, help="sets replayed at once (default 2)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    held = args.held_out if args.held_out is not None else (
        os.environ["LESSONS_HELD_OUT"].split(":") if os.environ.get("LESSONS_HELD_OUT") else list(DEFAULT_HELD_OUT))
    if args.sets:
        sets = [s for p in args.sets for s in ([p] if (p / "labels.json").is_file() else find_sets([p]))]
    else:
        sets = find_sets(set_roots())
    if not sets:
        print("lessons-bench: no labelled sets found (set LESSONS_SETS)", file=sys.stderr)
        return 2
    report = run(sets, held, args.commons, args.jobs)
    print(json.dumps(report, indent=1) if args.json else format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
