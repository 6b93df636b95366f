from commons.core.learning.scope import Scope, classify, command_head, topics


def test_tool_fact_is_shared():
    d = classify("pip install fails with externally-managed-environment on Debian 12's system Python")
    assert d.scope is Scope.SHARED
    assert {"pip", "debian", "python"} <= set(d.topics)


def test_person_and_project_conventions_are_local():
    assert classify("This project uses uv.").scope is Scope.LOCAL
    assert classify("The person prefers tabs over spaces in Makefiles.").scope is Scope.LOCAL
    assert classify("`pytest` failed reading /home/alice/acme/conftest.py").scope is Scope.LOCAL


def test_a_project_name_makes_a_lesson_local():
    assert classify("`make deploy` of zebrafish failed", ["make deploy"],
                    project_names=["zebrafish"]).scope is Scope.LOCAL


def test_no_known_tool_means_local():
    assert classify("The widget frobnicator crashed twice.").scope is Scope.LOCAL


def test_command_head_finds_the_program_and_subcommand():
    assert command_head("Bash", "cd /x && sudo pip install -U requests") == "pip install"
    assert command_head("Bash", "python -m pytest -x") == "pytest"
    assert command_head("Bash", "FOO=1 make test") == "make test"
    assert command_head("Bash", "uv run pytest tests/") == "pytest"
    assert command_head("Read", "/home/a/x.py") == "read"


def test_topics_include_the_episode_heads():
    assert topics("it failed", ["cargo build"]) == ("cargo",)


def test_a_project_is_recognised_under_its_worktree_and_module_case_names():
    from commons.core.learning.generalise import project_aliases

    names = project_aliases(["/home/dev/src/spotter-gqc"])
    assert classify("`mix test` failed with 'SpotterWeb.Router is undefined'", ("mix test",),
                    project_names=names).scope is Scope.LOCAL
    assert classify("`mix test` failed in spotter-gqc", ("mix test",), project_names=names).scope is Scope.LOCAL
    assert classify("`git push` failed: no upstream branch", ("git push",), project_names=names).scope is Scope.SHARED


def test_a_tools_cache_keeps_a_lesson_shared_but_a_home_path_does_not():
    cleared = classify("`pip install` failed: no space left on device; it passed after `rm -rf ~/.cache/pip`.")
    assert cleared.scope is Scope.SHARED, cleared.reason
    personal = classify("`pip install` failed: no space left on device; it passed after `rm -rf ~/work/wheels`.")
    assert personal.scope is Scope.LOCAL, personal.reason
