"""Real-format sessions of a failure and its fix, through ingest and one night of sleep: the lesson
names what worked, joins sessions from different branches and worktrees, and invents no fix."""

from __future__ import annotations

import json
from dataclasses import replace
import subprocess
import sys
from pathlib import Path

import pytest

from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode
from commons.core.learning.lessons import Lesson
from commons.core.records import LessonKind, Scope
from commons.core.learning.evidence import Evidence, Resolution
from commons.core.policy.observation import check_observation
from commons.ingest.claude_code import STATE_VERSION, ParseState, StateError, parse
from commons.ingest.lessons_report import measure, read_all

FIXTURES = Path(__file__).parent / "fixtures" / "lessons"
ROOT = Path(__file__).resolve().parents[1]


def lessons_of(*names: str) -> list[Lesson]:
    report = measure([FIXTURES / f"{name}.jsonl" for name in names])
    return list(report.lessons)


def only(lessons: list[Lesson], kind: LessonKind = LessonKind.ERROR) -> Lesson:
    (lesson,) = [l for l in lessons if l.kind is kind]
    return lesson


def test_git_push_without_upstream_on_two_branches_is_one_lesson_naming_set_upstream():
    lesson = only(lessons_of("push-upstream-spotter-gqc", "push-upstream-totals-panel"))
    assert lesson.text == ('`git push` failed with "fatal: The current branch <branch> has no upstream branch."; '
                           '`git push --set-upstream origin <branch>` succeeded after it (2 of 2 sessions).')
    assert lesson.seen == 2 and lesson.scope is Scope.SHARED and lesson.triggers == ("git push",)
    assert "spotter" not in lesson.text and "totals" not in lesson.text


def test_npm_ci_without_a_lockfile_names_npm_install():
    lesson = only(lessons_of("npm-ci-ci-setup", "npm-ci-docs"))
    assert lesson.text.startswith("`npm ci` failed with \"npm error The 'npm ci' command can only install")
    assert lesson.text.endswith("; `npm install` succeeded after it (2 of 2 sessions).")


def test_pip_externally_managed_names_uv_add_whatever_the_package():
    lesson = only(lessons_of("pip-uv-httpx", "pip-uv-orjson"))
    assert lesson.text == ('`pip install` failed with "error: externally-managed-environment"; '
                           '`uv add <package>` succeeded after it (2 of 2 sessions).')


def test_pytest_async_not_supported_names_the_asyncio_mode_edit():
    lesson = only(lessons_of("pytest-async-async-retry", "pytest-async-worker-retry"))
    assert lesson.text == ('`pytest` failed with "Failed: async def functions are not natively supported."; '
                           "it passed after `Edit pyproject.toml: asyncio_mode = 'auto'` (2 of 2 sessions).")


def test_a_pre_commit_format_hook_failure_belongs_to_git_commit_and_names_ruff_format():
    lesson = only(lessons_of("precommit-ruff-export-header", "precommit-ruff-rates-cache"))
    assert lesson.text.startswith('`git commit` failed with "hook ruff-format failed: files were modified')
    assert lesson.text.endswith("it passed after `uv run ruff format .` (2 of 2 sessions).")


def test_edit_before_read_names_the_read_and_stays_a_local_rule_without_a_trigger():
    lesson = only(lessons_of("edit-before-read-client.ex", "edit-before-read-retry.ts"))
    assert "it succeeded after a Read of the file (2 of 2 sessions)" in lesson.text
    assert lesson.scope is Scope.LOCAL and lesson.triggers == ()  # never "any use of Edit"


def test_a_failure_with_no_fix_says_so_and_invents_none():
    errors = [e for e in read_all([FIXTURES / "no-fix-spotter.jsonl", FIXTURES / "no-fix-spotter-gqc.jsonl"])
              if isinstance(e, ErrorEpisode)]
    assert len(errors) == 2 and all(e.resolution is None for e in errors)
    lesson = only(lessons_of("no-fix-spotter", "no-fix-spotter-gqc"))
    assert lesson.text.endswith("; no fix was seen (2 times in 2 sessions).")
    assert lesson.scope is Scope.LOCAL  # not offered to the commons unless the owner says so
    assert "spotter" not in lesson.text


def test_one_sessions_work_in_progress_is_no_lesson():
    assert lessons_of("wip-mix-compile") == []


def test_one_sessions_failing_queries_are_work_in_progress_until_another_session_meets_them():
    from commons.core.learning.sleep import work_in_progress

    def query(uid: str, session: str = "s1") -> ErrorEpisode:
        return ErrorEpisode(session=session, uid=uid, at=1.0, tool="Bash",
                            target='psql -h db -U app -c "INSERT INTO models (accuracy) VALUES (1)"',
                            failure='ERROR: column "accuracy" of relation "models" does not exist')
    assert work_in_progress([query("a"), query("b")])
    assert not work_in_progress([query("a"), query("b", session="s2")])
    # The query run again changed (the column added first) is still the schema being written.
    altered = Resolution(Evidence.RETRY_CHANGED, 'psql -h db -U app -c "ALTER TABLE models ADD accuracy real"', "Bash",
                         confidence=0.8)
    assert work_in_progress([query("a"), replace(query("b"), resolution=altered)])


def test_failures_one_session_mended_only_by_editing_its_own_code_are_work_in_progress():
    from commons.core.learning.sleep import work_in_progress

    def gen(uid: str, resolution: Resolution | None, session: str = "s1", tool: str = "Bash") -> ErrorEpisode:
        return ErrorEpisode(session=session, uid=uid, at=1.0, tool=tool, target="go generate ./internal/ent",
                            failure='entc/gen: edge-field "org_id" was set as Immutable, but edge "org" is not',
                            resolution=resolution)
    edit = Resolution(Evidence.CHANGED_BEFORE, "Edit internal/ent/schema/user.go: field.UUID(...)", "Edit", confidence=0.7)
    fmt = Resolution(Evidence.CHANGED_BEFORE, "gofmt -w internal/ent/schema/user.go", "Bash", confidence=0.8)
    # `go generate` is no test or compile run, but what mended it was the schema being written.
    assert work_in_progress([gen("a", edit), gen("b", None), gen("c", fmt)])
    # Codex patching through the shell is an edit too, of the files its patch names.
    patch = Resolution(Evidence.CHANGED_BEFORE, "apply_patch <<'PATCH' *** Begin Patch *** Update File: cmd/api/main.go",
                       "Bash", confidence=0.8)
    manifest = replace(patch, command="apply_patch <<'PATCH' *** Begin Patch *** Update File: go.mod")
    assert work_in_progress([gen("a", edit), gen("b", patch)])
    assert not work_in_progress([gen("a", edit), gen("b", manifest)])
    # Met in another session too: a pitfall.
    assert not work_in_progress([gen("a", edit), gen("b", edit, session="s2")])
    # A manifest or configuration edited, or a dependency added, is the project set up: a pitfall.
    config = Resolution(Evidence.CHANGED_BEFORE, "Write package.json", "Write", confidence=0.8)
    get = Resolution(Evidence.CHANGED_BEFORE, "go get golang.org/x/tools@v0.28.0", "Bash", confidence=0.8)
    assert not work_in_progress([gen("a", config), gen("b", None)])
    assert not work_in_progress([gen("a", edit), gen("b", get)])
    # No fix at all says nothing of what the failure was; the agent's file tools are mended by a Read.
    assert not work_in_progress([gen("a", None), gen("b", None)])
    assert not work_in_progress([gen("a", edit, tool="Edit"), gen("b", edit, tool="Edit")])


def test_one_sessions_compose_and_image_builds_are_the_project_being_built():
    from commons.core.learning.sleep import work_in_progress

    def up(uid: str, session: str = "s1", target: str = "docker-compose -f docker-compose.prod.yml up -d") -> ErrorEpisode:
        return ErrorEpisode(session=session, uid=uid, at=1.0, tool="Bash", target=target,
                            failure="ERROR: for web Cannot start service web: failed to create task for container")
    assert work_in_progress([up("a"), up("b", target="docker compose up -d --build"), up("c", target="docker build -t web .")])
    assert not work_in_progress([up("a"), up("b", session="s2")])
    # A setup step (an install) that mended it makes it a pitfall of the machine, not the project's work.
    apt = Resolution(Evidence.CHANGED_BEFORE, "sudo apt-get install docker-compose-plugin", "Bash", confidence=0.8)
    assert not work_in_progress([up("a"), replace(up("b"), resolution=apt)])


def test_one_sessions_failures_of_the_projects_own_program_are_work_in_progress():
    from commons.core.learning.generalise import project_aliases
    from commons.core.learning.sleep import work_in_progress

    names = project_aliases(["/home/u/src/spotter"])

    def run(uid: str, target: str, session: str = "s1") -> ErrorEpisode:
        return ErrorEpisode(session=session, uid=uid, at=1.0, tool="Bash", target=target,
                            failure="Error: Both --input and --session must be provided together")
    own = [run("a", "spotter-cli --input x.json"), run("b", "spotter-cli --session 12")]
    assert work_in_progress(own, names)
    assert not work_in_progress(own)  # without the project's names, a program like any other
    assert not work_in_progress([own[0], run("b", "spotter-cli --session 12", session="s2")], names)
    # A tool named by no part of the project's name is a tool.
    assert not work_in_progress([run("a", "gh pr create"), run("b", "gh pr create --fill")], names)


def test_every_fixture_lesson_is_a_short_observation():
    for lesson in lessons_of(*[p.stem for p in FIXTURES.glob("*.jsonl")]):
        assert check_observation(lesson.text) == lesson.text
        assert len(lesson.text) <= 220, lesson.text


def test_a_resolution_that_arrives_in_a_later_read_re_emits_the_error_with_the_same_uid():
    data = (FIXTURES / "push-upstream-totals-panel.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b"has no upstream branch" in line) + 1
    first = parse(b"".join(lines[:cut]))
    (failed,) = [e for e in first.episodes if isinstance(e, ErrorEpisode)]
    assert failed.resolution is None  # the hint alone proves no fix
    state = ParseState.from_json(first.state.to_json())
    second = parse(b"".join(lines[cut:]), state)
    (resolved,) = [e for e in second.episodes if isinstance(e, ErrorEpisode)]
    assert resolved.uid == failed.uid and resolved.resolution.evidence is Evidence.RETRY_CHANGED
    whole = [e for e in parse(data).episodes if isinstance(e, ErrorEpisode)]
    assert whole == [resolved]


def test_a_state_saved_by_the_previous_reader_is_refused_so_the_transcript_is_read_again():
    old = json.loads(ParseState().to_json())
    old["v"] = STATE_VERSION - 1
    with pytest.raises(StateError):
        ParseState.from_json(json.dumps(old))


def test_corrections_on_labelled_fixtures_are_found_with_full_precision():
    labels = json.loads((FIXTURES / "corrections_labels.json").read_text())
    found = {e.uid: e for e in parse((FIXTURES / "corrections-ledger.jsonl").read_bytes()).episodes
             if isinstance(e, CorrectionEpisode)}
    assert set(found) == {uid for uid, yes in labels.items() if yes}
    assert sum(e.after_done for e in found.values()) >= 2  # found by structure, with no keyword


def test_a_correction_lesson_names_the_command_and_the_claim():
    (lesson,) = [l for l in lessons_of("corrections-ledger") if "pip install" in l.text]
    assert lesson.text == ("The person corrected the agent's `pip install --break-system-packages rich`: "
                           "\"this project uses uv. use uv add rich\".")
    assert lesson.triggers == ("pip install",)


def test_the_fixtures_are_what_their_builder_writes(tmp_path):
    before = {p.name: p.read_bytes() for p in FIXTURES.glob("*.json*")}
    subprocess.run([sys.executable, str(FIXTURES / "_build.py")], check=True, cwd=ROOT)
    after = {p.name: p.read_bytes() for p in FIXTURES.glob("*.json*")}
    assert before == after, "regenerate with: python tests/fixtures/lessons/_build.py"


def test_the_lessons_report_meets_its_goals_on_the_fixtures():
    report = measure([FIXTURES])
    assert report.informative.value is not None and report.informative.value >= 0.95
    assert report.naming_fix.value is not None and report.naming_fix.value >= 0.8
    assert report.bare_echoes.value is not None and report.bare_echoes.value <= 0.1
    assert report.correction_precision.value == 1.0


def _night(names: list[str]):
    from commons.core.learning.generalise import project_aliases
    from commons.core.learning.sleep import PredictionMade, SleepState, run_night

    episodes = read_all([FIXTURES / f"{name}.jsonl" for name in names])
    last = max(e.at for e in episodes)
    result = run_night(SleepState(), episodes, last + 3600, hash_episode=lambda uid: uid.encode(),
                   project_names=project_aliases(["/home/dev/src/spotter", "/home/dev/src/ledger"]))
    return {e.prediction.lesson_id: e.prediction for e in result.events if isinstance(e, PredictionMade)}, result


def test_a_prediction_is_the_failing_command_not_any_use_of_a_tool():
    predictions, result = _night(["push-upstream-spotter-gqc", "push-upstream-totals-panel",
                                  "edit-before-read-client.ex", "edit-before-read-retry.ts"])
    by_text = {l.text.split(" failed")[0]: l for l in result.state.lessons}
    push, edit = by_text["`git push`"], by_text["`Edit`"]
    assert predictions[push.id].triggers == ("git push",) and predictions[push.id].situation == "Bash git push"
    assert edit.id not in predictions  # "any use of Edit" is no situation


def test_a_correction_predicts_on_the_command_the_agent_ran_not_its_prose():
    from commons.core.learning.predictions import situation_line

    _, result = _night(["corrections-ledger"])
    (pip,) = [l for l in result.state.lessons if "pip install" in l.text]
    assert situation_line(pip) == "Bash pip install --break-system-packages rich"


def test_a_correction_after_a_call_that_only_looked_does_not_name_that_call():
    from commons.core.learning.lessons import deterministic_text

    def corrected(command: str, rejected: bool = False) -> str:
        said = "scrolling back in xterm.js still does not work"
        return deterministic_text(LessonKind.CORRECTION, [CorrectionEpisode(
            "s", "u", 0.0, said, "Let me check the server log.", via_rejection=rejected, command=command)])

    assert corrected("Bash tail -5 /tmp/claude-1000/tasks/b.output") == (
        'The person corrected the agent, after it said "Let me check the server log.": '
        '"scrolling back in xterm.js still does not work".')
    assert corrected("Bash npm run dev").startswith("The person corrected the agent's `npm run dev`: ")
    # Of a compound command, what did something: not the look at its result.
    assert corrected("Bash git add -A && git status --short | head -5").startswith(
        "The person corrected the agent's `git add -A`: ")
    assert corrected("Read /x/app.js", rejected=True).startswith("The person corrected the agent's `Read <path>`")


def test_a_read_refuted_in_one_session_does_not_beat_the_write_that_worked_there():
    # One session: the Edit was refused, a Read, the Edit refused again (the Read refuted), then
    # `sed -i` wrote the file. Another: a Read, then the Edit passed. The Read is proven once and
    # refuted once, whatever part of the file each Read took: the write is the fix.
    from commons.core.learning.lessons import choose_fix

    modified = "File has been modified since read, either by the user or by a linter."

    def refused(uid: str, session: str, resolution: Resolution) -> ErrorEpisode:
        return ErrorEpisode(session=session, uid=uid, at=float(len(uid)), tool="Edit", target="/p/compose.yml",
                            failure=modified, resolution=resolution)
    read = Resolution(Evidence.READ_BEFORE, "Read /p/compose.yml", "Read", confidence=0.9)
    sed = Resolution(Evidence.RETRY_CHANGED, "sed -i 's/cpus: 4/cpus: 8/' /p/compose.yml", "Bash", confidence=0.8,
                     refuted=("Read /p/compose.yml: offset=133 limit=15",))
    fix, refuted_steps = choose_fix([refused("a", "s1", read), refused("bb", "s2", sed)], ())
    assert fix is not None and fix.step.startswith("sed -i")
    assert "Read <path>" in refuted_steps


def test_a_stale_edit_is_mended_by_the_look_and_the_edit_made_again_a_read_first_rule_by_the_read():
    from commons.core.learning.lessons import _fix_phrase

    # The patch's lines were not the file's: the look alone fixed nothing, the edit made from it did.
    stale = "apply_patch verification failed: Failed to find expected lines in <path>: func Load() {"
    look = Resolution(Evidence.READ_BEFORE, "sed -n '1,40p' internal/config.go", "Bash", confidence=0.9,
                      retry="Edit /p/internal/config.go")
    step, phrase = _fix_phrase(look, (), failure=stale)
    assert "sed -n '1,40p'" in step
    assert phrase == "it succeeded after the file was re-read (`sed -n '1,40p' <path>`) and edited again (`Edit <path>`)"
    read = Resolution(Evidence.READ_BEFORE, "Read /p/a.py", "Read", confidence=0.9, retry="Edit /p/a.py")
    assert _fix_phrase(read, (), failure="String to replace not found in file.") == (
        "Read <path>", "it succeeded after the file was re-read (`Read <path>`) and edited again (`Edit <path>`)")
    # The tool wanted the file read before any edit: the Read was the fix, whatever edit came next.
    first = Resolution(Evidence.READ_BEFORE, "Read /p/compose.yml", "Read", confidence=0.9, retry="Edit /p/compose.yml")
    assert _fix_phrase(first, (), failure="File has not been read yet. Read it first before writing to it.") == (
        "Read <path>", "it succeeded after a Read of the file")


def test_a_long_fix_that_went_somewhere_first_is_shown_by_what_it_ran_unless_going_there_was_the_fix():
    from commons.core.learning.lessons import _fix_phrase

    full_path = Resolution(Evidence.RETRY_CHANGED, "cd C:/Users/dev/app && powershell -Command \"& 'C:\\Program Files"
                           "\\Docker\\Docker\\resources\\bin\\docker.exe' compose up -d db\"", "Bash", 0.8)
    step, _ = _fix_phrase(full_path, (), 'powershell -Command "docker compose up -d db"')
    assert step.startswith("powershell -Command '& 'C:\\Program Files\\Docker\\Docker\\resources\\bin")
    moved = Resolution(Evidence.RETRY_CHANGED, "cd /home/dev/projects/payments-service/build && make -j8 payments_tests "
                       "VERBOSE=1", "Bash", 0.8)
    step, _ = _fix_phrase(moved, (), "make -j8 payments_tests VERBOSE=1")
    assert step.startswith("cd ")  # running there is all that changed


def test_a_retry_out_of_the_sandbox_is_said_so_whichever_agent_and_a_timeout_beside_it_is_kept():
    from commons.core.learning.lessons import _fix_phrase

    def said(command: str) -> tuple[str, str]:
        return _fix_phrase(Resolution(Evidence.RETRY_CHANGED, command, "Bash", confidence=0.8), ())

    assert said("npm test (with dangerouslyDisableSandbox=true)") == (
        "npm test (escalated)", "it passed when run outside the sandbox (escalated)")
    assert said("npm install (with with_escalated_permissions=true timeout_ms=600000)") == (
        "npm install (escalated, with timeout_ms=600000)",
        "it passed when run outside the sandbox (escalated), with timeout_ms=600000")
    # Codex's default permissions, or only a longer timeout: no way out of the sandbox.
    assert said("npm install (with timeout_ms=600000)")[1] == "`npm install (with timeout_ms=600000)` succeeded after it"
    assert said("npm install (with sandbox_permissions=use_default)")[1].endswith("succeeded after it")
