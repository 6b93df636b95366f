"""A missing program run under a wrapper that provides it: the wrapper is the step tried again, and
its fix even when the program then fails on something of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from commons.core.learning.episode import ErrorEpisode
from commons.core.learning.evidence import Evidence, OpenFailure, advance, opened
from commons.core.learning.wrappers import found_by_wrapper, missing_program, wrapped
from commons.home import Home
from tests.transcripts import lesson_about, session

NO_CARGO = "/run/current-system/sw/bin/bash: line 1: cargo: command not found"


@pytest.mark.parametrize(("wrapper", "runs"), [
    ("nix-shell -p cargo rustc --run 'cargo check --manifest-path kernel/Cargo.toml'",
     "cargo check --manifest-path kernel/Cargo.toml"),
    ("nix develop -c cargo build", "cargo build"),
    ("nix develop .#ci --command bash -lc 'cargo fmt --all && cargo test'", "cargo fmt --all && cargo test"),
    ("nix shell nixpkgs#jq -c jq .name package.json", "jq .name package.json"),
    ("nix run nixpkgs#jq -- .name package.json", "jq .name package.json"),
    ("npx -y prettier --check .", "prettier --check ."),
    ("uvx ruff check src", "ruff check src"),
    ("pnpm dlx tsc --noEmit", "tsc --noEmit"),
    ("python3 -m pytest -q", "pytest -q"),
    ("docker run --rm -v $PWD:/w -w /w node:20 npm test", "npm test"),
    ("docker compose exec web python manage.py migrate", "python manage.py migrate"),
    ("mise exec node@20 -- npm test", "npm test"),
    ("conda run -n ml python train.py", "python train.py"),
])
def test_a_wrapper_is_read_for_the_command_it_runs(wrapper: str, runs: str):
    assert wrapped(wrapper) == runs


@pytest.mark.parametrize("plain", ["cargo build", "bash build.sh", "nix-shell -p cargo", "docker run --rm node:20",
                                   "nix develop", "git commit -m 'nix develop -c x'"])
def test_a_command_that_wraps_nothing_is_no_wrapper(plain: str):
    assert wrapped(plain) is None


@pytest.mark.parametrize(("failure", "program"), [
    (NO_CARGO, "cargo"), ("sh: 1: jq: not found", "jq"), ("zsh: command not found: jq", "jq"),
    ("'cargo' is not recognized as an internal or external command,", "cargo"),
    ("cargo : The term 'cargo' is not recognized as the name of a cmdlet, function", "cargo"),
    ("error[E0382]: borrow of moved value: `sender`", None), ("Exit code 1", None),
])
def test_the_program_the_shell_could_not_find_is_read_from_its_failure(failure: str, program: str | None):
    assert missing_program(failure) == program


def test_the_wrappers_own_failure_or_the_same_absence_shows_no_program_found():
    retry = "nix-shell -p carg --run 'cargo check'"
    assert not found_by_wrapper(NO_CARGO, retry, "error: undefined variable 'carg' at «string»:1:107:")
    assert not found_by_wrapper(NO_CARGO, "nix-shell -p rustc --run 'cargo check'", NO_CARGO)
    assert not found_by_wrapper(NO_CARGO, "nix-shell -p jq --run 'jq . x'", "jq: error: x: No such file")
    assert found_by_wrapper(NO_CARGO, "nix-shell -p cargo --run 'cargo check'", "error[E0594]: cannot assign")


def _track(failed: str, failure: str, calls):
    state = opened((), OpenFailure("t1", "Bash", failed, failure, failure=failure, target=failed))
    found = []
    for target, ok, said_failure in calls:
        state, done = advance(state, "Bash", target, ok, failure=said_failure)
        found += [r.resolution for r in done]
    return found, state


def test_a_missing_program_run_under_a_wrapper_that_then_fails_otherwise_names_the_wrapper():
    wrapper = "nix-shell -p cargo rustc --run 'cargo check --manifest-path kernel/Cargo.toml'"
    (fix,), state = _track("cargo check --manifest-path kernel/Cargo.toml", NO_CARGO,
                           [(wrapper, False, "error[E0594]: cannot assign to data in an `Arc`")])
    assert (fix.evidence, fix.command) == (Evidence.FOUND_BY_WRAPPER, wrapper)
    assert state == ()


def test_a_wrapper_that_succeeds_after_an_unrelated_change_is_still_the_fix_of_the_missing_program():
    (fix,), _ = _track("cargo build", NO_CARGO, [("git add -A", True, ""), ("nix develop -c cargo build", True, "")])
    assert (fix.evidence, fix.command) == (Evidence.RETRY_CHANGED, "nix develop -c cargo build")


def test_a_wrapped_step_whose_status_a_pipe_decides_proves_nothing():
    found, state = _track("cargo test", NO_CARGO, [("nix develop -c bash -lc 'cargo test | tail -5'", True, "")])
    assert found == [] and len(state) == 1


def test_a_failure_of_another_kind_than_a_missing_program_is_not_mended_by_a_wrapper_that_fails():
    found, state = _track("cargo build", "error[E0425]: cannot find value `x` in this scope",
                          [("nix develop -c cargo build", False, "error[E0308]: mismatched types")])
    assert found == [] and state[0].passed


def _missing_cargo_then_nix_shell(folder: Path, day: int) -> Path:
    s = session(folder, day, f"nix-{day}", cwd="/home/dev/kernel")
    s.user("check the kernel builds")
    s.bash("cargo check", "Check the crate", NO_CARGO, exit_code=127)
    s.say(("text", "cargo is not on PATH here; I'll use Nix to provide it."))
    s.bash("nix-shell -p cargo rustc --run 'cargo check'", "Check under nix-shell",
           "error[E0382]: borrow of moved value: `sender`\nerror: could not compile `kernel` (bin \"kernel\") "
           "due to 1 previous error", exit_code=101)
    s.say(("text", "Now it compiles far enough to show a real error; fixing it."))
    s.write()
    return s.path


def test_two_sessions_whose_missing_cargo_nix_shell_found_make_a_lesson_naming_nix_shell(tmp_path: Path, capsys,
                                                                                          home: Home):
    lesson = lesson_about(capsys, "command not found", lambda day: _missing_cargo_then_nix_shell(tmp_path, day))
    assert lesson["fix"]["evidence"] == "found-by-wrapper"
    assert lesson["fix"]["step"].startswith("nix-shell -p cargo rustc --run")
    assert "found the program" in lesson["text"]


def test_one_sessions_compile_errors_under_a_wrapper_are_work_in_progress_as_the_bare_build_is():
    from commons.core.learning.sleep import work_in_progress

    def build(uid: str, target: str, session: str = "s1") -> ErrorEpisode:
        return ErrorEpisode(session=session, uid=uid, at=1.0, tool="Bash", target=target,
                            failure="error[E0382]: borrow of moved value: `sender`")
    wrapped_build = "nix develop -c cargo build --manifest-path kernel/Cargo.toml"
    assert work_in_progress([build("a", wrapped_build), build("b", "nix-shell -p cargo --run 'cargo check'")])
    assert not work_in_progress([build("a", wrapped_build), build("b", wrapped_build, session="s2")])
    assert not work_in_progress([build("a", "nix develop -c ./scripts/deploy-prod"), build("b", "nix develop -c "
                                                                                            "terraform apply")])
