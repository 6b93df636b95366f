"""The lessons bench's JSON lists each set's lessons one by one (failure part, named fix, verdict)
and the labelled calls its failure-line figures count against; held-out sets list nothing."""

from __future__ import annotations

import json
from pathlib import Path

from commons.home import Home
from commons.ingest import lessons_bench
from tests.transcripts import session

SCORE_PY = """
def split_lesson(text):
    head, _, rest = text.partition('";')
    return (head + '"', rest.strip()) if rest else (text, "")
"""


def _scorer(tmp_path: Path) -> Path:
    path = tmp_path / "score.py"
    path.write_text(SCORE_PY, encoding="utf-8")
    return path


def _scored() -> dict:
    return {"figures": {"recurring_missed": ["pnpm-lockfile"]},
            "lessons": [{"kind": "error", "text": '`npm ci` failed with "ERESOLVE"; it passed after `npm install`.',
                         "fix": "it passed after `npm install`", "names_fix": True, "class": "correct",
                         "label": "npm-eresolve"},
                        {"kind": "error", "text": '`grep x` failed with "Exit code 1"; no fix was seen.',
                         "fix": "no fix was seen", "names_fix": False, "class": "noise", "label": None},
                        {"kind": "correction", "text": "The person said: not that file.", "class": "correct"}],
            "failure_lines": {"misses": [{"tool_use_id": "t1", "miss": "not kept out", "got": "Exit code 1"}]}}


def test_listing_gives_each_error_lessons_failure_part_named_fix_and_verdict(tmp_path: Path):
    split = lessons_bench._lesson_splitter(_scorer(tmp_path))
    listed = lessons_bench.listing(_scored(), split)
    assert listed["lessons"] == [
        {"failure": '`npm ci` failed with "ERESOLVE"', "fix": "it passed after `npm install`",
         "verdict": "correct", "label": "npm-eresolve"},
        {"failure": '`grep x` failed with "Exit code 1"', "fix": None, "verdict": "noise", "label": None}]
    assert listed["pitfalls_without_lesson"] == ["pnpm-lockfile"]
    assert listed["failure_line_misses"] == [{"tool_use_id": "t1", "miss": "not kept out", "got": "Exit code 1"}]


def test_run_lists_the_lessons_of_dev_sets_only_and_holds_out_every_h_set(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(lessons_bench, "scorer", lambda roots: _scorer(tmp_path))
    monkeypatch.setattr(lessons_bench, "score", lambda set_dir, score_py, commons: _scored()
                        | {"figures": None, "failure_lines": {}})
    monkeypatch.setattr(lessons_bench, "failure_lines", lambda set_dir: {})
    sets = [tmp_path / "dev-set", tmp_path / "kept-out", tmp_path / "h-added-later"]
    report = lessons_bench.run(sets, ["kept-out"], "commons", jobs=1)
    assert len(report["sets"]["dev-set"]["listing"]["lessons"]) == 2
    assert "listing" not in report["sets"]["kept-out"]
    assert report["sets"]["h-added-later"]["held_out"] and "listing" not in report["sets"]["h-added-later"]


def _set_with_two_failing_calls(tmp_path: Path) -> Path:
    home = tmp_path / "set" / "home" / ".claude" / "projects" / "-home-dev-ledger"
    home.mkdir(parents=True)
    s = session(home, 3, "build")
    s.user("build it")
    (build,) = s.say(("Bash", {"command": "make", "description": "Build"}))
    s.result(build, "make: *** [Makefile:4: all] Error 2\nld: cannot find -lssl", error=True)
    (test,) = s.say(("Bash", {"command": "pytest -q", "description": "Test"}))
    s.result(test, "FAILED tests/test_ledger.py::test_total - AssertionError: 3 != 4\n1 failed in 0.2s", error=True)
    s.write()
    # the labeller wants what no failure line says, and calls a failing test run no failure
    labels = [{"tool_use_id": build, "is_failure": True, "what_failed": "a linker script"},
              {"tool_use_id": test, "is_failure": False}]
    (tmp_path / "set" / "failure_lines.json").write_text(json.dumps(labels), encoding="utf-8")
    return tmp_path / "set"


def test_failure_lines_names_each_labelled_call_the_figures_count_against(tmp_path: Path, home: Home):
    counts = lessons_bench.failure_lines(_set_with_two_failing_calls(tmp_path))
    assert {k: counts[k] for k in ("failing", "informative", "not_failures", "kept_out")} == \
        {"failing": 1, "informative": 0, "not_failures": 1, "kept_out": 0}
    assert [(m["miss"], m["wanted"] if "wanted" in m else None) for m in counts["misses"]] == \
        [("uninformative", "a linker script"), ("not kept out", None)]
    assert all(m["got"] for m in counts["misses"])
