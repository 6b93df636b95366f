"""A fix needs evidence: the failing step tried again and succeeding, and what changed in between."""

from __future__ import annotations

import json

from commons.core.learning.evidence import (
    Call,
    Evidence,
    OpenFailure,
    Resolution,
    StepKind,
    advance,
    fix_outcome,
    opened,
    retry_part,
    shows_fix,
    step_kind,
)

NO_UPSTREAM = ("fatal: The current branch feat-x has no upstream branch.\n"
               "    git push --set-upstream origin feat-x")


def _run(failure: OpenFailure, calls):
    """Feed ``calls`` ((tool, target, ok[, detail, said])) after ``failure``; the fixes proven."""
    state = opened((), failure)
    found = []
    for call in calls:
        tool, target, ok, *rest = call
        detail, said = (rest + ["", ""])[:2]
        state, done = advance(state, tool, target, ok, detail=detail, said=said,
                              failure="" if ok else "same failure")
        found += done
    return [r.resolution for r in found], state


def test_steps_are_classified_as_data_read_only_clean_up_or_state_changing():
    for tool, target in [("Bash", "ls -la build"), ("Bash", "cat pyproject.toml"), ("Bash", "git status"),
                         ("Bash", "git log --oneline -5"), ("Bash", "node --version"), ("Bash", "which pnpm"),
                         ("Bash", "uv run pytest -q"), ("Bash", "python -c 'import numpy; print(numpy.__version__)'"),
                         ("Bash", "ruff check src"), ("Read", "/p/a.py"), ("Grep", "TODO"), ("Bash", "echo $PATH")]:
        assert step_kind(tool, target) is StepKind.READ_ONLY, target
    for target in ["git rebase --abort", "git merge --abort", "git stash", "rm -f /tmp/build.log"]:
        assert step_kind("Bash", target) is StepKind.CLEAN_UP, target
    for tool, target in [("Bash", "pip install pybind11"), ("Bash", "cd build"), ("Bash", "rm -f .git/index.lock"),
                         ("Bash", "sed -i 's/a/b/' x.cfg"), ("Bash", "ruff check --fix ."), ("Edit", "/p/a.py"),
                         ("Bash", "git config user.email a@b.c")]:
        assert step_kind(tool, target) is StepKind.STATE_CHANGING, target


def test_a_retry_with_its_own_difference_names_that_difference():
    (fix,), _ = _run(OpenFailure("t1", "Bash", "git push", NO_UPSTREAM, failure="no upstream"),
                     [("Bash", "git status", True), ("Bash", "git push --set-upstream origin feat-x", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED
    assert fix.command == "git push --set-upstream origin feat-x"
    assert fix.confidence > 0.8  # the error's own output pointed at it


def test_the_install_the_error_points_at_before_the_retry_is_the_fix_not_the_diagnostics():
    failed = 'source venv/bin/activate && python -c "import pybind11"'
    (fix,), _ = _run(OpenFailure("t1", "Bash", 'python -c "import pybind11"', "ModuleNotFoundError: No module named "
                                 "'pybind11'", target=failed),
                     [("Bash", "ls venv/lib", True), ("Bash", "source venv/bin/activate && pip install pybind11", True),
                      ("Bash", "pip list", True), ("Bash", failed, True)])
    assert fix.evidence is Evidence.CHANGED_BEFORE
    assert fix.command == "source venv/bin/activate && pip install pybind11"


def test_a_success_of_another_step_or_a_clean_up_proves_nothing():
    fixes, state = _run(OpenFailure("t1", "Bash", "git push origin main", "[rejected] main -> main (fetch first)"),
                        [("Bash", "git rebase --abort", True), ("Bash", "bd close issue-12", True),
                         ("Bash", "npm run build", True)])
    assert fixes == [] and len(state) == 1


def test_a_plain_rerun_with_nothing_changed_is_transient_and_unsure():
    (fix,), _ = _run(OpenFailure("t1", "Bash", "curl -sf https://api.example.org/health", "Connection reset"),
                     [("Bash", "sleep 5", True), ("Bash", "curl -sf https://api.example.org/health", True)])
    assert fix.evidence is Evidence.RERUN and fix.confidence < 0.5


def test_a_retry_whose_exit_status_a_filter_decides_proves_nothing():
    fixes, state = _run(OpenFailure("t1", "Bash", "make all", "error: undefined reference to `sqrt'"),
                        [("Bash", "make all 2>&1 | tail -20", True), ("Bash", "make all; echo done", True)])
    assert fixes == [] and len(state) == 1
    assert retry_part("Bash", "make all", "Bash", "cd build && make all && ./tests") == "make all"


def test_a_step_followed_by_the_same_failure_is_refuted_and_the_next_one_wins():
    (fix,), _ = _run(OpenFailure("t1", "Bash", "npm run dev", "Error: listen EADDRINUSE: address already in use :::3000"),
                     [("Bash", "npm install", True), ("Bash", "npm run dev", False),
                      ("Bash", "kill 4242", True), ("Bash", "npm run dev", True)])
    assert fix.command == "kill 4242" and fix.refuted == ("npm install",)


def test_an_edit_refused_until_the_file_was_read_names_the_read_once_an_edit_of_it_succeeds():
    state = opened((), OpenFailure("e1", "Edit", "/p/CMakeLists.txt", "File has not been read yet.",
                                   failure="File has not been read yet."))
    state, done = advance(state, "Read", "/p/CMakeLists.txt", True)
    assert not done
    # Failing otherwise is past this failure but no success: nothing is proven, nothing refuted.
    state, done = advance(state, "Edit", "/p/CMakeLists.txt", False, failure="String to replace not found in file.")
    assert not done and state[0].steps and not state[0].refuted
    state, (item,) = advance(state, "Edit", "/p/CMakeLists.txt", True)
    assert item.resolution.evidence is Evidence.READ_BEFORE and item.resolution.command == "Read /p/CMakeLists.txt"
    # Never a success (the person rejected the next try): no fix.
    state = opened((), OpenFailure("e2", "Write", "/p/index.html", "File has not been read yet.",
                                   failure="File has not been read yet."))
    state, _ = advance(state, "Read", "/p/index.html", True)
    state, done = advance(state, "Edit", "/p/index.html", False, failure="File has been unexpectedly modified.")
    assert not done


def test_a_failure_in_the_cd_before_the_work_is_retried_by_the_work_without_it():
    from commons.core.learning.evidence import goal_of

    target = "cd build && ./tests/unit_tests"
    (fix,), _ = _run(OpenFailure("t1", "Bash", goal_of(target, "cd build"), "cd: build: No such file or directory",
                                 target=target),
                     [("Bash", "pwd", True), ("Bash", "./tests/unit_tests", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED and fix.command == "./tests/unit_tests (run without cd build)"


def test_a_file_tool_retried_with_an_offset_names_the_offset():
    (fix,), _ = _run(OpenFailure("r1", "Read", "/p/big.log", "exceeds maximum allowed tokens"),
                     [("Read", "/p/big.log", True, "offset=1 limit=200")])
    assert fix.evidence is Evidence.RETRY_CHANGED and fix.command.endswith("offset=1 limit=200")


def test_another_sessions_calls_show_a_fix_only_when_it_ran_and_the_step_then_succeeded():
    fix = "uv add --dev <package>"
    good = [Call("Bash", "uv run pytest", False), Call("Bash", "uv add --dev pytest-asyncio", True),
            Call("Bash", "uv run pytest", True)]
    assert shows_fix(good, "Bash", "uv run pytest", fix)
    assert not shows_fix(good[:2] + [Call("Bash", "uv run pytest", False)], "Bash", "uv run pytest", fix)
    assert not shows_fix([Call("Bash", "uv run pytest", True)], "Bash", "uv run pytest", fix)
    assert not shows_fix(good[:2] + [Call("Bash", "uv run pytest 2>&1 | tail", True)], "Bash", "uv run pytest", fix)
    assert shows_fix([Call("Bash", "git push --set-upstream origin x", True)], "Bash", "git push",
                     "git push --set-upstream origin <branch>")


def test_resolutions_and_open_failures_round_trip_and_old_resolutions_are_dropped():
    r = Resolution(Evidence.CHANGED_BEFORE, "uv add --dev pytest-asyncio", "Bash", 0.8, "uv run pytest", ("uv sync",))
    assert Resolution.from_json(json.loads(json.dumps(r.to_json()))) == r
    assert Resolution.from_json({"relation": "next_command", "command": "ls", "steps": [], "confidence": 0.6}) is None
    _, (f,) = _run(OpenFailure("t1", "Bash", "npm ci", "no lockfile", target="npm ci"), [("Bash", "rm -rf node_modules", True)])
    assert OpenFailure.from_json(json.loads(json.dumps(f.to_json()))) == f


def test_the_only_change_before_the_same_step_passed_is_its_fix_and_one_of_several_unnamed_ones_is_not_named():
    from commons.core.learning.evidence import NAMED_MIN

    (fix,), _ = _run(OpenFailure("t1", "Bash", "cargo build --release", "error: requires rustc 1.70 or newer"),
                     [("Bash", "rustc --version", True), ("Bash", "rustup update stable", True),
                      ("Bash", "cargo build --release", True)])
    assert fix.command == "rustup update stable" and fix.confidence >= NAMED_MIN
    (fix,), _ = _run(OpenFailure("t2", "Bash", "npm test", "Error: Cannot find module './db'"),
                     [("Write", "/p/notes.md", True), ("Bash", "mkdir -p tmp", True), ("Bash", "npm test", True)])
    assert fix.confidence < NAMED_MIN  # two unrelated changes: no proof which one it was


def test_another_sessions_calls_show_a_fix_failing_when_it_ran_and_the_step_failed_again_after_it():
    fix = "uv add --dev <package>"
    ran = [Call("Bash", "uv run pytest", False), Call("Bash", "uv add --dev pytest-asyncio", True)]
    assert fix_outcome(ran + [Call("Bash", "uv run pytest", False)], "Bash", "uv run pytest", fix) is False
    assert fix_outcome([Call("Bash", "uv add --dev pytest-asyncio", False)], "Bash", "uv run pytest", fix) is False
    # Failed again, then worked after the fix ran a second time: shown working.
    again = ran + [Call("Bash", "uv run pytest", False), Call("Bash", "uv add --dev pytest-asyncio", True),
                   Call("Bash", "uv run pytest", True)]
    assert fix_outcome(again, "Bash", "uv run pytest", fix) is True
    # Neither: the fix never ran, or ran and the step was not tried after it.
    assert fix_outcome([Call("Bash", "uv run pytest", False), Call("Bash", "pip install x", True)], "Bash",
                       "uv run pytest", fix) is None
    assert fix_outcome(ran, "Bash", "uv run pytest", fix) is None
