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
                         ("Bash", "ruff check src"), ("Bash", "sed -n '1,40p' a.py"), ("Read", "/p/a.py"), ("Grep", "TODO"), ("Bash", "echo $PATH")]:
        assert step_kind(tool, target) is StepKind.READ_ONLY, target
    for target in ["git rebase --abort", "git merge --abort", "git stash", "rm -f /tmp/build.log"]:
        assert step_kind("Bash", target) is StepKind.CLEAN_UP, target
    for tool, target in [("Bash", "pip install pybind11"), ("Bash", "cd build"), ("Bash", "rm -f .git/index.lock"),
                         ("Bash", "sed -i 's/a/b/' x.cfg"), ("Bash", "ruff check --fix ."), ("Edit", "/p/a.py"),
                         ("Bash", "git config user.email a@b.c")]:
        assert step_kind(tool, target) is StepKind.STATE_CHANGING, target


def test_a_version_flag_anywhere_is_a_look_and_a_redirect_into_a_file_a_change():
    for target in ["corepack pnpm --version", "npx prisma --help", "echo done > /tmp/out.txt", "ls > /dev/null"]:
        assert step_kind("Bash", target) is StepKind.READ_ONLY, target
    for target in ["echo 'KEY=1' > .env", "cat a.conf > /etc/app.conf", "printf x >> config.toml"]:
        assert step_kind("Bash", target) is StepKind.STATE_CHANGING, target


def test_a_package_manager_or_service_cli_asked_what_there_is_is_a_look_and_its_changes_are_not():
    for target in ["winget list --id Docker.DockerDesktop", "choco list --local-only", "gem list rails",
                   "conda list numpy", "helm status web -n prod", "gh pr view 12 --json state", "gh auth status",
                   "gcloud compute instances list --project p", "gcloud config get-value project",
                   "az account show", "aws sts get-caller-identity", "apt-cache policy docker-ce", "dpkg -l | grep ros",
                   "dpkg -s libssl-dev", "rpm -qa kernel", "pacman -Qi git", "dotnet --list-sdks",
                   "sudo journalctl -u nginx -n 50", "terraform plan -out /tmp/plan"]:
        assert step_kind("Bash", target) is StepKind.READ_ONLY, target
    for target in ["winget install Docker.DockerDesktop", "gh pr create --title list", "gem install rails",
                   "conda env create -f environment.yml", "helm upgrade web ./chart --set image.tag=get",
                   "gcloud config set project p", "az account set --subscription s", "dpkg -i x.deb",
                   "rpm -ivh x.rpm", "pacman -S git", "dotnet add package Npgsql", "terraform apply",
                   "sudo journalctl --vacuum-time=2d"]:
        assert step_kind("Bash", target) is StepKind.STATE_CHANGING, target


def test_a_compound_step_is_named_and_pointed_at_by_what_it_changed_not_by_its_looks():
    # The error names package.json; the step before the retry printed package.json and then
    # changed something else. What it printed points at nothing: the change is the step.
    failure = OpenFailure("t1", "Bash", "pnpm build", "configured to use yarn because /h/package.json has a field",
                          failure="configured to use yarn because /h/package.json has a field")
    (fix,), _ = _run(failure, [("Bash", "cat /h/package.json | head -5 && npm config set fund false", True),
                               ("Bash", "pnpm build", True)])
    assert fix.command == "npm config set fund false"
    assert fix.confidence < 0.8  # not pointed at by the error: the package.json it printed is no part of it
    # Only looks before the retry, the retry's own difference is the fix.
    (fix,), _ = _run(failure, [("Bash", "cat /h/package.json | head -5 && which pnpm && corepack pnpm --version", True),
                               ("Bash", "COREPACK_ENABLE_PROJECT_SPEC=0 pnpm build", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED and fix.command == "COREPACK_ENABLE_PROJECT_SPEC=0 pnpm build"


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


def test_a_shell_retry_made_with_other_call_parameters_names_them():
    # The same command, made again out of the sandbox (or with a longer time-out): the parameter
    # is the difference, even after unrelated edits in between.
    (fix,), _ = _run(OpenFailure("t1", "Bash", "go test ./...", "command timed out after 10003 milliseconds",
                                 failure="command timed out after 10003 milliseconds"),
                     [("Edit", "/p/main.go", True), ("Bash", "go test ./...", True, "timeout_ms=200000")])
    assert fix.evidence is Evidence.RETRY_CHANGED
    assert fix.command == "go test ./... (with timeout_ms=200000)"
    (fix,), _ = _run(OpenFailure("t1", "Bash", "sed -n 1,20p a.md", "bwrap: loopback: Failed RTM_NEWADDR",
                                 detail="timeout_ms=1000"),
                     [("Bash", "sed -n 1,20p a.md", True, "timeout_ms=1000 sandbox_permissions=require_escalated")])
    assert fix.command == "sed -n 1,20p a.md (with sandbox_permissions=require_escalated)"


def test_a_longer_timeout_is_no_fix_of_an_exception_an_edit_before_it_mended():
    # The script raised; the code was edited; the run was made again with a longer timeout. The
    # timeout answers nothing the error said: the edit is what changed the outcome.
    (fix,), _ = _run(OpenFailure("t1", "Bash", "python scripts/gen.py --steps 4", "IndexError: index out of range",
                                 failure="IndexError: index out of range"),
                     [("Edit", "/p/model.py", True), ("Bash", "python scripts/gen.py --steps 4", True, "timeout=60000")])
    assert fix.evidence is Evidence.CHANGED_BEFORE and fix.command.startswith("Edit /p/model.py")
    # With nothing else changed, the new parameter is still the only difference.
    (fix,), _ = _run(OpenFailure("t2", "Bash", "python scripts/gen.py", "IndexError: index out of range"),
                     [("Bash", "python scripts/gen.py", True, "timeout=60000")])
    assert fix.command == "python scripts/gen.py (with timeout=60000)"


def test_a_shell_retry_with_the_same_parameters_is_a_rerun():
    (fix,), _ = _run(OpenFailure("t1", "Bash", "go test ./...", "flaky", detail="timeout_ms=200000"),
                     [("Bash", "go test ./...", True, "timeout_ms=200000")])
    assert fix.evidence is Evidence.RERUN


def test_the_shell_writing_the_file_an_edit_could_not_is_the_edit_tried_again():
    eacces = "EACCES: permission denied, open '/etc/apt/sources.list.d/a.sources'"
    (fix,), _ = _run(OpenFailure("t1", "Edit", "/etc/apt/sources.list.d/a.sources", eacces, failure=eacces),
                     [("Bash", "sudo cp /etc/apt/sources.list.d/a.sources /tmp/a.sources.bak", True),
                      ("Write", "/tmp/a.sources.new", True),
                      ("Bash", "sudo cp /tmp/a.sources.new /etc/apt/sources.list.d/a.sources", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED
    assert fix.command == "sudo cp /tmp/a.sources.new /etc/apt/sources.list.d/a.sources"
    for write in ["echo 'x=1' | sudo tee /etc/udev/rules.d/81-x.rules", "sed -i 's/a/b/' rules.d/81-x.rules",
                  "cat > /etc/udev/rules.d/81-x.rules <<'EOF'\nx=1\nEOF"]:
        (fix,), _ = _run(OpenFailure("t1", "Write", "/etc/udev/rules.d/81-x.rules", "File has not been read yet."),
                         [("Bash", write, True)])
        assert fix.evidence is Evidence.RETRY_CHANGED, write


def test_a_shell_command_that_only_reads_the_file_is_no_retry_of_its_edit():
    fixes, _ = _run(OpenFailure("t1", "Edit", "/p/compose.yml", "File has been modified since read"),
                    [("Bash", "cat /p/compose.yml > /tmp/compose.copy", True), ("Bash", "grep x /p/compose.yml", True)])
    assert fixes == []


def test_a_retry_run_as_another_user_is_the_same_step_and_names_the_user():
    failed = "psql -U app -d app -c 'select 1'"
    assert retry_part("Bash", failed, "Bash", "sudo -u postgres psql -d app -c 'select 1'") is not None
    (fix,), _ = _run(OpenFailure("t1", "Bash", failed, "FATAL: Peer authentication failed for user 'app'"),
                     [("Bash", "sudo -u postgres psql -d app -c 'select 1'", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED and fix.command.startswith("sudo -u postgres psql")


def test_an_edit_retried_after_many_matches_names_the_unique_old_string_it_needed():
    many = "Found 2 matches of the string to replace, but replace_all is false."
    (fix,), _ = _run(OpenFailure("t1", "Edit", "/p/cpu.c", many, failure=many), [("Edit", "/p/cpu.c", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED and "unique old_string" in fix.command
    (fix,), _ = _run(OpenFailure("t1", "Edit", "/p/cpu.c", many, failure=many),
                     [("Edit", "/p/cpu.c", True, "replace_all=true")])
    assert fix.command.endswith("replace_all=true")
    missing = "String to replace not found in file."
    (fix,), _ = _run(OpenFailure("t1", "Edit", "/p/a.py", missing, failure=missing), [("Edit", "/p/a.py", True)])
    assert "actual text" in fix.command


def test_a_database_clients_look_is_no_retry_of_its_failed_change():
    insert = 'psql -h db -U app -d app -c "INSERT INTO models (name, accuracy) VALUES (1, 2)"'
    assert retry_part("Bash", insert, "Bash", 'psql -h db -U app -d app -c "\\d models"') is None
    folded = 'psql -h db -c " -- add what is missing ALTER TABLE models ADD COLUMN accuracy FLOAT"'  # newlines folded
    assert retry_part("Bash", folded, "Bash", 'psql -h db -c "\\d models"') is None
    assert retry_part("Bash", insert, "Bash", 'psql -h db -U app -d app -c "INSERT INTO models (name) VALUES (1)"')
    fixes, _ = _run(OpenFailure("t1", "Bash", insert, 'ERROR: column "accuracy" of relation "models" does not exist'),
                    [("Bash", 'psql -h db -U app -d app -c "\\d models"', True)])
    assert fixes == []


def test_steps_after_a_retry_got_past_the_failure_are_about_the_next_failure():
    missing = "missing go.sum entry for module providing package golang.org/x/sync/errgroup"
    calls = [("Bash", "go get golang.org/x/sync/errgroup@v0.7.0", True), ("Bash", "go generate ./ent", False),
             ("Bash", "go get golang.org/x/tools@v0.28.0", True), ("Bash", "go generate ./ent", True)]
    state = opened((), OpenFailure("t1", "Bash", "go generate ./ent", missing, failure=missing))
    found = []
    for tool, target, ok in calls:
        state, done = advance(state, tool, target, ok, failure="" if ok else "invalid array length -delta * delta")
        found += done
    (fix,) = [r.resolution for r in found]
    assert fix.command == "go get golang.org/x/sync/errgroup@v0.7.0"
    passed = OpenFailure("u", "Bash", "x", "h", passed=True)
    assert OpenFailure.from_json(json.loads(json.dumps(passed.to_json()))) == passed
    assert OpenFailure.from_json(passed.to_json()[:10]).passed is False  # a state saved before the field


def test_a_retry_without_the_cd_a_step_in_between_already_made_is_the_same_call():
    failed = "cd /p/build && make bench"
    (fix,), _ = _run(OpenFailure("t1", "Bash", "make bench", "make: *** No rule to make target 'bench'.  Stop.",
                                 target=failed),
                     [("Bash", "cd /p/build && cmake ..", True), ("Bash", "make bench", True)])
    assert fix.evidence is Evidence.CHANGED_BEFORE and fix.command == "cd /p/build && cmake .."
    (fix,), _ = _run(OpenFailure("t1", "Bash", "make bench", "make: *** No rule to make target 'bench'.",
                                 target=failed), [("Bash", "make bench", True)])
    assert "(run without cd /p/build)" in fix.command  # nothing went there: leaving the cd out is the change


def test_a_filtered_retry_proves_the_fix_less_surely_when_the_failure_is_gone_from_what_it_showed():
    unbound = "./tool.sh: line 234: DIM: unbound variable"
    failure = OpenFailure("t1", "Bash", "./tool.sh help", unbound, failure=unbound)
    state = opened((), failure)
    state, _ = advance(state, "Edit", "/p/tool.sh", True, detail="readonly DIM='x'")
    _, (done,) = advance(state, "Bash", "./tool.sh help 2>&1 | tail -20", True, output="Usage: tool.sh build|help")
    assert done.resolution.evidence is Evidence.CHANGED_BEFORE and done.resolution.command.startswith("Edit /p/tool.sh")
    _, (plain,) = advance(state, "Bash", "./tool.sh help", True)
    assert 0.5 <= done.resolution.confidence < plain.resolution.confidence
    for shown in ["./tool.sh: line 240: DIM: unbound variable", "", None]:  # still failing, nothing shown, not said
        _, resolved = advance(state, "Bash", "./tool.sh help 2>&1 | tail -20", True, output=shown)
        assert resolved == (), shown


def test_a_long_shell_write_is_named_by_its_program_and_the_write():
    rules = "/etc/udev/rules.d/81-x.rules"
    long = "echo '" + "x=1, " * 20 + f"' > {rules}"
    (fix,), _ = _run(OpenFailure("t1", "Write", rules, "EACCES: permission denied"), [("Bash", long, True)])
    assert fix.command == f"echo … > {rules}"
    (fix,), _ = _run(OpenFailure("t1", "Write", rules, "EACCES: permission denied"),
                     [("Bash", "echo '" + "x=1, " * 20 + f"' | sudo tee {rules}", True)])
    assert fix.command == f"sudo tee {rules}"  # the part of the pipe that wrote it


def test_a_retry_that_changed_its_command_names_the_command_not_an_incidental_parameter():
    (fix,), _ = _run(OpenFailure("t1", "Bash", "npm install", "npm error ERESOLVE unable to resolve dependency tree"),
                     [("Bash", "npm install --legacy-peer-deps", True, "timeout=300000")])
    assert fix.command == "npm install --legacy-peer-deps"


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


def test_a_fix_whose_placeholder_is_part_of_a_word_is_seen_run_by_another_session():
    # `pip install <package>-binary` is what a lesson publishes for `pip install psycopg2-binary`;
    # read as a whole-word placeholder only, every node that fixed it so was judged "other-fix".
    fix = "pip install <package>-binary"
    ran = [Call("Bash", "pip install psycopg2", False), Call("Bash", "pip install psycopg2-binary", True),
           Call("Bash", "python -c 'import psycopg2'", True)]
    assert fix_outcome(ran, "Bash", "pip install", fix) is True
    assert fix_outcome(ran[:1] + [Call("Bash", "pip install psycopg2-wheel", True)], "Bash", "pip install", fix) is None


def test_an_edit_whose_text_was_stale_is_mended_by_a_look_at_the_file_in_the_shell():
    # Codex's apply_patch and Claude Code's Edit refuse a hunk whose lines are not the file's; the
    # agent printed the file (`sed -n`) and the next patch, written from it, applied: the look and
    # that patch are the fix (the lesson names both), the look the step another session can show.
    failure = OpenFailure("p1", "Edit", "/p/internal/config.go",
                          "apply_patch verification failed: Failed to find expected lines in /p/internal/config.go",
                          failure="apply_patch verification failed: Failed to find expected lines in /p/internal/config.go")
    (fix,), _ = _run(failure, [("Bash", "rg -n TODO /p/README.md", True),
                               ("Bash", "sed -n '1,80p' internal/config.go", True),
                               ("Edit", "/p/internal/config.go", True)])
    assert fix.evidence is Evidence.READ_BEFORE and fix.command == "sed -n '1,80p' internal/config.go"
    assert fix.retry == "Edit /p/internal/config.go"
    # A look at another file is no look at this one: the patch's own difference, as before.
    (fix,), _ = _run(failure, [("Bash", "sed -n '1,80p' internal/server.go", True), ("Edit", "/p/internal/config.go", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED
    # A refusal that wants the Read tool itself is not met by a shell look.
    unread = OpenFailure("p2", "Edit", "/p/a.py", "File has not been read yet.", failure="File has not been read yet.")
    (fix,), _ = _run(unread, [("Bash", "cat /p/a.py", True), ("Read", "/p/a.py", True), ("Edit", "/p/a.py", True)])
    assert fix.command == "Read /p/a.py"


def test_compose_under_its_other_spelling_is_the_same_step_tried_again():
    # A Docker without the Compose v2 plugin: the agent runs the standalone v1 binary instead.
    failure = OpenFailure("c1", "Bash", "docker compose up -d postgres",
                          "docker: 'compose' is not a docker command.", failure="docker: 'compose' is not a docker command.")
    (fix,), _ = _run(failure, [("Bash", "docker --version", True), ("Bash", "docker-compose up -d postgres", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED and fix.command == "docker-compose up -d postgres"
    v1 = OpenFailure("c2", "Bash", "docker-compose up -d", "docker-compose: command not found")
    (fix,), _ = _run(v1, [("Bash", "docker compose up -d", True)])
    assert fix.command == "docker compose up -d"
    # Another program that only starts with the name is another step.
    assert retry_part("Bash", "docker compose up -d", "Bash", "docker-composer up -d") is None


def test_the_same_package_in_another_build_is_the_install_tried_again_and_another_package_is_not():
    # psycopg2 builds from source and needs pg_config; its binary wheel needs none.
    failure = OpenFailure("p1", "Bash", "pip install psycopg2", "Error: pg_config executable not found.",
                          failure="Error: pg_config executable not found.")
    (fix,), _ = _run(failure, [("Bash", "which pg_config", True), ("Bash", "pip install psycopg2-binary", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED and fix.command == "pip install psycopg2-binary"
    assert retry_part("Bash", "pip install opencv-python-headless", "Bash", "pip install opencv-python") is not None
    fixes, _ = _run(failure, [("Bash", "pip install flask", True)])
    assert fixes == []
    # Outside installs a name with a suffix is another target (another file, another branch).
    assert retry_part("Bash", "python build.py", "Bash", "python build-docs.py") is None


RG_EACCES = "spawn /opt/homebrew/lib/node_modules/@anthropic-ai/claude-code/vendor/ripgrep/arm64-darwin/rg EACCES"


def test_a_grep_tool_that_could_not_start_is_tried_again_by_the_shells_grep_of_the_same_words():
    failure = OpenFailure("t1", "Grep", "disruptiveMergeAiSuites|mergeAiSuites", RG_EACCES, failure=RG_EACCES)
    (fix,), _ = _run(failure, [("Read", "/p/pkg/a.go", True),
                               ("Bash", "grep -n 'disruptiveMergeAiSuites\\|mergeAiSuites' /p/pkg/a.go", True)])
    assert fix.evidence is Evidence.RETRY_CHANGED
    assert fix.command.startswith("grep -n 'disruptiveMergeAiSuites")


def test_a_glob_that_could_not_start_is_tried_again_by_find_of_the_same_name():
    failure = OpenFailure("t1", "Glob", "**/*aisuite*", RG_EACCES, failure=RG_EACCES)
    (fix,), _ = _run(failure, [("Bash", 'find /p -type f -name "*aisuite*"', True)])
    assert fix.command == 'find /p -type f -name "*aisuite*"'


def test_a_shell_search_of_other_words_or_another_program_is_no_retry_of_a_failed_search_tool():
    failure = OpenFailure("t1", "Glob", "**/pkg/harbor/**", RG_EACCES, failure=RG_EACCES)
    assert retry_part("Glob", "**/pkg/harbor/**", "Bash", "find /p -name '*.go'") is None
    assert retry_part("Glob", "**/pkg/harbor/**", "Bash", "cat /p/pkg/harbor/client.go") is None
    fixes, state = _run(failure, [("Bash", "grep -rn Registry /p/pkg", True)])
    assert fixes == [] and state


EISDIR = "EISDIR: illegal operation on a directory, read '/p/pkg/harbor'"


def test_a_read_of_a_folder_is_tried_again_by_a_glob_of_its_files_under_a_relative_pattern():
    failure = OpenFailure("t1", "Read", "/p/pkg/harbor", EISDIR, failure=EISDIR)
    (fix,), _ = _run(failure, [("Glob", "**/backend/cluster/manager/**/*.go", True), ("Glob", "**/pkg/harbor/*.go", True)])
    assert fix.command == "Glob **/pkg/harbor/*.go"


def test_a_glob_of_another_folder_of_the_same_name_is_no_listing_of_the_folder_read():
    assert retry_part("Read", "/p/pkg/harbor", "Glob", "**/vendor/harbor/*.go", folder=True) is None
    assert retry_part("Read", "/p/pkg/harbor", "Glob", "**/pkg/harbor2/*.go", folder=True) is None
    assert retry_part("Read", "/p/pkg/harbor", "Glob", "**/pkg/harbor/*.go", folder=False) is None
