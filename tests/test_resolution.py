"""Resolution mining over the ordered calls of a session: what resolved a failure, and never more."""

from __future__ import annotations

from commons.core.learning.resolution import (HORIZON, OpenFailure, Relation, Resolution, advance, fixed_by_setup,
                                     named_fix, opened, relate)

NO_UPSTREAM = """fatal: The current branch feat-x has no upstream branch.
To push the current branch and set the remote as upstream, use

    git push --set-upstream origin feat-x
"""


def test_the_fix_an_error_names_is_found_in_its_output():
    assert named_fix(NO_UPSTREAM) == "git push --set-upstream origin feat-x"
    assert named_fix("** (Mix) mix format failed.\nRun 'mix format' to fix the formatting") == "mix format"
    assert named_fix("error: externally-managed-environment\n× This environment is externally managed") == ""


def test_the_hinted_command_succeeding_resolves_the_failure():
    failure = OpenFailure("t1", "Bash", "git push", named_fix(NO_UPSTREAM))
    found = relate(failure, "Bash", "git push --set-upstream origin feat-x")
    assert found is not None and found.relation is Relation.HINTED and found.confidence >= 0.8


def test_a_different_command_on_the_same_package_resolves_an_install():
    found = relate(OpenFailure("t1", "Bash", "pip install httpx", ""), "Bash", "uv add httpx==0.27")
    assert found is not None and (found.relation, found.command) == (Relation.NEXT_COMMAND, "uv add httpx==0.27")


def test_an_unrelated_success_resolves_nothing():
    assert relate(OpenFailure("t1", "Bash", "pip install httpx", ""), "Bash", "git status") is None
    assert relate(OpenFailure("t1", "Bash", "pip install httpx", ""), "Read", "/x/pyproject.toml") is None


def test_a_rerun_after_an_edit_names_the_edit_as_the_fix():
    state = opened((), OpenFailure("t1", "Bash", "uv run pytest -q", ""))
    state, done = advance(state, "Read", "/p/pyproject.toml", ok=True)
    assert not done and state[0].steps == ()  # looking changes nothing
    state, done = advance(state, "Edit", "/p/pyproject.toml", ok=True, detail='asyncio_mode = "auto"')
    state, done = advance(state, "Bash", "uv run pytest -q", ok=True)
    assert state == ()
    (item,) = done
    assert item.resolution.relation is Relation.RERUN
    assert item.resolution.steps == ('Edit /p/pyproject.toml: asyncio_mode = "auto"',)


def test_a_read_before_the_next_edit_resolves_edit_before_read():
    found = relate(OpenFailure("t1", "Edit", "/p/a.py", ""), "Read", "/p/a.py")
    assert found is not None and found.relation is Relation.REREAD
    assert relate(OpenFailure("t1", "Edit", "/p/a.py", ""), "Read", "/p/b.py") is None


def test_a_failure_not_resolved_within_the_horizon_is_forgotten_not_resolved():
    state = opened((), OpenFailure("t1", "Bash", "npm ci", ""))
    for _ in range(HORIZON + 1):
        state, done = advance(state, "Bash", "git status", ok=True)
        assert not done
    assert state == ()


def test_a_failed_call_never_resolves_anything():
    state = opened((), OpenFailure("t1", "Bash", "npm ci", ""))
    state, done = advance(state, "Bash", "npm install", ok=False)
    assert not done and len(state) == 1


def test_resolution_and_open_failure_round_trip_through_json():
    r = Resolution(Relation.RERUN, "pytest", ("uv add --dev pytest-asyncio",), 0.7, "Bash")
    assert Resolution.from_json(r.to_json()) == r
    f = OpenFailure("t1", "Bash", "npm ci", "", 3, ("npm cache clean",))
    assert OpenFailure.from_json(f.to_json()) == f


def test_looking_around_after_a_failure_is_not_its_fix():
    failure = OpenFailure("t1", "Bash", "git push", "")
    assert relate(failure, "Bash", "git status") is None
    assert relate(failure, "Bash", "git log --oneline -3") is None
    found = relate(OpenFailure("t1", "Bash", "npm ci", ""), "Bash", "npm install")
    assert found is not None and found.relation is Relation.NEXT_COMMAND


def test_another_command_of_the_same_runner_is_not_the_failed_program_tried_again():
    # `uv run pytest` runs pytest: `uv add --dev pytest-asyncio` after it is a step, not its fix.
    assert relate(OpenFailure("t1", "Bash", "uv run pytest -q tests/test_rates.py", ""), "Bash",
                  "uv add --dev pytest-asyncio") is None


def test_installing_dependencies_with_another_package_manager_resolves_an_install():
    found = relate(OpenFailure("t1", "Bash", "npm ci", ""), "Bash", "cd ../docs && pnpm install --frozen-lockfile")
    assert found is not None and (found.relation, found.command) == (Relation.NEXT_COMMAND,
                                                                      "pnpm install --frozen-lockfile")
    assert relate(OpenFailure("t1", "Bash", "npm ci", ""), "Bash", "pnpm run build") is None


def test_a_fix_that_sets_the_project_up_is_told_from_one_that_edits_the_code():
    def rerun_after(step: str) -> Resolution:
        return Resolution(Relation.RERUN, "uv run pytest", steps=(step,), confidence=0.7)

    assert fixed_by_setup(rerun_after("Edit /p/pyproject.toml: asyncio_mode = 'auto'"))
    assert fixed_by_setup(rerun_after("uv add --dev pytest-asyncio"))
    assert not fixed_by_setup(rerun_after("Edit /p/ledgerly/rates.py: return float(rate)"))
    assert not fixed_by_setup(None)
