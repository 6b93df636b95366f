"""make bench's runner: each bench's figures and a record of its run; a failed bench leaves its error
and no figures (not an earlier run's, which the table would show as this run's)."""

from __future__ import annotations

import json

import pytest

from tests.benchmarks import run


def test_a_bench_that_fails_leaves_its_error_and_no_earlier_figures(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_QUICK", "1")
    (tmp_path / "bench_gone.json").write_text('{"goals": []}')  # an earlier run's figures
    record = run.run_one("bench_gone", tmp_path)  # no such module: python exits 1
    assert record["returncode"] == 1 and "No module named" in record["error"]
    assert record["mode"] == "quick" and len(record["load_before"]) == 3 and record["cpus"] >= 1
    assert not (tmp_path / "bench_gone.json").exists()
    assert json.loads((tmp_path / "bench_gone.run.json").read_text())["bench"] == "bench_gone"


@pytest.mark.parametrize("quick, passed", [("", ["--large"]), ("1", [])])
def test_a_full_run_gives_a_bench_its_full_arguments_and_a_quick_one_does_not(tmp_path, monkeypatch, quick, passed):
    monkeypatch.setenv("BENCH_QUICK", quick)
    monkeypatch.setitem(run.FULL_ARGUMENTS, "bench_gone", ("--large",))
    record = run.run_one("bench_gone", tmp_path)
    assert record["arguments"] == passed and record["mode"] == ("quick" if quick else "full")


def test_a_name_that_is_no_bench_is_refused_before_anything_runs(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        run.main(["bench_nothing", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert "no such bench: bench_nothing" in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_every_bench_file_is_one_the_runner_knows():
    assert "bench_recall_index" in run.benches() and all(name.startswith("bench_") for name in run.benches())
