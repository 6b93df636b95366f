"""docs/benchmarks.md is made from .bench/ alone: every goal a bench states is a row naming its bench,
run and command; failed benches and malformed goals are said, not dropped; the notes hold no figure."""

from __future__ import annotations

import json
import re

import pytest

from tests.benchmarks import table
from tests.benchmarks.goals import goal

MADE = 1_796_000_000.0  # 2026-11-30


def write(folder, name, figures=None, run=None):
    if figures is not None:
        (folder / f"{name}.json").write_text(json.dumps(figures))
    if run is not None:
        (folder / f"{name}.run.json").write_text(json.dumps(run))


def run_record(mode="full", load=(1.5, 3.25), error=None):
    record = {"mode": mode, "started": MADE - 600, "wall_s": 12.5, "cpu_s": 11.0, "load_before": [load[0], 1, 1],
              "load_after": [load[1], 1, 1], "cpu": "Test CPU @ 2.0GHz", "cpus": 2, "commit": "abc1234", "returncode": 0}
    if error:
        record.update(returncode=1, error=f"Traceback\n{error}")
    return record


@pytest.fixture
def page(tmp_path):
    folder = tmp_path / ".bench"
    folder.mkdir()
    write(folder, "bench_fast", {"p95_ms": 1.2, "goals": [
        goal("p95 at 10^5", "1.2 ms", "≤ 5 ms", True, "python -m tests.benchmarks.bench_fast --json"),
        goal("build | time", "40 s", "≤ 36 s", False, "BENCH_QUICK=1 python -m tests.benchmarks.bench_fast --json")]},
        run_record(mode="quick", load=(0.5, 9.0)))
    write(folder, "bench_plain", [{"figure": 3}], run_record())
    write(folder, "bench_broken", None, run_record(error="ZeroDivisionError: division by zero"))
    write(folder, "bench_odd", {"goals": [{"goal": "no figure", "met": True}]}, run_record())
    write(folder, "bench_by_hand", {"mode": "full", "goals": [goal("held", "900 MB", "≤ 1 GB", True, "cmd")]})
    (folder / "fuzz.json").write_text(json.dumps({"goals": {"not": "ours"}}))  # make fuzz's: no bench
    notes = tmp_path / "notes.md"
    notes.write_text("## What each bench measures\n\nWords only.\n")
    out = tmp_path / "benchmarks.md"
    assert table.main(["--bench", str(folder), "--out", str(out), "--notes", str(notes)]) == 0
    return out.read_text()


def rows(page: str) -> list[list[str]]:
    return [re.split(r"(?<!\\)\|", line)[1:-1] for line in page.splitlines() if line.startswith("| ") and "---" not in line]


def test_every_stated_goal_is_a_row_with_its_figure_target_bench_and_command(page):
    goal_rows = [r for r in rows(page) if len(r) == 6 and r[0].strip() != "goal"]
    assert [r[0].strip() for r in goal_rows] == ["held", "p95 at 10^5", "build \\| time"]  # benches by name
    fast = goal_rows[1]
    assert fast[1].strip() == "1.2 ms" and fast[2].strip() == "≤ 5 ms" and fast[3].strip() == "yes"
    assert "`bench_fast`, quick" in fast[4] and "`python -m tests.benchmarks.bench_fast --json`" in fast[5]
    assert goal_rows[2][3].strip() == "**no**"
    assert "## Goals: 2 of 3 met" in page


def test_the_page_says_the_mode_the_load_the_processor_and_the_commit(page):
    assert "mode **full and quick**" in page
    assert "from 0.5 to 9 while they ran" in page
    assert "Test CPU @ 2.0GHz (2 CPUs)" in page and "abc1234" in page


def test_a_failed_bench_a_bench_without_goals_and_malformed_goals_are_said(page):
    runs = {r[0].strip(): r for r in rows(page) if len(r) == 8}
    assert "failed: ZeroDivisionError: division by zero" in runs["`bench_broken`"][7]
    assert runs["`bench_plain`"][7].strip() == "none stated"
    assert runs["`bench_by_hand`"][5].strip() == "not recorded"
    assert "bench_odd: goal 1 lacks figure, target, command" in page
    assert "fuzz" not in page


def test_the_notes_are_included_after_the_tables(page):
    assert page.index("## Runs") < page.index("## What each bench measures") and page.endswith("Words only.\n")


def test_an_empty_folder_is_refused_with_what_to_run(tmp_path, capsys):
    with pytest.raises(SystemExit):
        table.main(["--bench", str(tmp_path), "--out", str(tmp_path / "out.md")])
    assert "make bench" in capsys.readouterr().err


def test_the_hand_written_notes_hold_no_figure():
    text = "\n".join(line for line in table.NOTES.read_text().splitlines() if not line.startswith("    "))  # code
    prose = re.sub(r"```.*?```|`[^`]*`", "", text, flags=re.DOTALL)
    assert not re.findall(r"\d", prose), "a figure in docs/benchmarks-notes.md: it belongs to a bench's goals"
