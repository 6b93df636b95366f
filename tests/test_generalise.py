"""What is particular becomes a placeholder, so the same pitfall in two worktrees is one lesson."""

from __future__ import annotations

from commons.core.learning.generalise import fills, generalise, project_aliases


def test_branch_names_become_a_placeholder_but_main_stays():
    assert generalise("fatal: The current branch spotter-gqc has no upstream branch.") == (
        "fatal: The current branch <branch> has no upstream branch.")
    assert generalise("git push --set-upstream origin totals-panel") == "git push --set-upstream origin <branch>"
    assert generalise("! [rejected] main -> main (non-fast-forward)") == "! [rejected] main -> main (non-fast-forward)"
    assert generalise("! [rejected] feat-1 -> feat-1 (fetch first)") == "! [rejected] <branch> -> <branch> (fetch first)"


def test_paths_hosts_ports_pids_and_line_numbers_become_placeholders():
    assert generalise("cannot open /home/ada/src/ledgerly/app/main.py") == "cannot open <path>"
    assert generalise("connect to db.internal:5432 refused") == "connect to <host>:<port> refused"
    assert generalise("Address already in use (port 4000, pid 8812)") == "Address already in use (port <port>, pid <pid>)"
    assert generalise("lib/a.ex:12:5: undefined function") == "<path>:<n>: undefined function"


def test_well_known_project_files_keep_their_names():
    assert generalise("Edit /home/ada/src/ledgerly/pyproject.toml") == "Edit pyproject.toml"
    assert generalise("no package-lock.json found") == "no package-lock.json found"


def test_a_tools_cache_in_the_home_keeps_its_name_but_not_the_person():
    assert generalise("rm -rf /home/ada/.cache/pip") == "rm -rf ~/.cache/pip"
    assert generalise("rm -rf ~/.npm/_cacache/") == "rm -rf ~/.npm/_cacache"
    assert generalise("rm -rf /Users/bo/Library/Caches/pnpm") == "rm -rf ~/Library/Caches/pnpm"
    assert generalise("rm -rf /home/ada/.cache/pip/wheels/3f") == "rm -rf <path>"  # deeper: whose is it?
    assert generalise("rm -rf /home/ada/ledgerly/build") == "rm -rf <path>"


def test_versions_and_tool_names_are_kept():
    text = "pytest-asyncio 0.23.5 requires pytest>=7.0.0"
    assert generalise(text) == text


def test_a_project_is_known_under_its_worktree_and_module_names():
    names = project_aliases(["/home/dev/src/spotter-gqc", "/home/dev/src/spotter"])
    assert "spotter-gqc" in names and "spotter" in names
    assert generalise("undefined module SpotterWeb.Router in spotter-gqc", names) == (
        "undefined module <project>.Router in <project>")


def test_libraries_named_like_files_keep_their_names_but_project_files_do_not():
    said = "scrolling back in xterm.js still does not work; the handler is in session_live.js"
    assert generalise(said) == "scrolling back in xterm.js still does not work; the handler is in <path>"


def test_public_forges_and_registries_and_dotted_versions_are_not_particular():
    assert generalise("git@github.com: Permission denied (publickey).") == "git@github.com: Permission denied (publickey)."
    assert generalise("fetch https://github.com/acme/widgets.git failed") == "fetch https://github.com/<path> failed"
    assert generalise("Version 1.2.3.4 installed; pkg==1.2.3.4") == "Version 1.2.3.4 installed; pkg==1.2.3.4"
    # A private host, a private address and an unknown site stay placeholders.
    assert generalise("curl https://api.internal.acme.com/v1/x") == "curl <host>"
    assert generalise("connect to 10.0.0.5 refused") == "connect to <host> refused"
    assert generalise("ssh deploy@build.acme.com failed") == "ssh deploy@<host> failed"


def test_the_project_placeholder_stands_only_for_distinctive_names_never_for_dictionary_words():
    names = project_aliases(["/c/Users/power/Code/Windows", "/home/leo/posthog-impact-dashboard",
                             "/home/kenth56/vsla/python"])
    assert not {"Code", "Windows", "power", "Users", "impact", "dashboard", "python"} & set(names)
    assert {"posthog-impact-dashboard", "posthog", "vsla"} <= set(names)
    assert generalise("Exit code 1: interrupted by user in the Windows power shell", names) == (
        "Exit code 1: interrupted by user in the Windows power shell")
    assert generalise("No module named 'vsla._core'", names) == "No module named '<project>._core'"


def test_system_folders_and_go_module_hosts_are_kept_they_are_the_same_everywhere():
    assert generalise("PYTHONPATH=/usr/lib/python3/dist-packages python3 -c 'import psutil'") == (
        "PYTHONPATH=/usr/lib/python3/dist-packages python3 -c 'import psutil'")
    assert generalise("go get golang.org/x/tools@v0.28.0") == "go get golang.org/x/tools@v0.28.0"
    assert generalise("cp /home/ada/notes/a.txt /srv/x/y") == "cp <path> <path>"


def test_a_placeholder_stands_for_a_whole_word_or_part_of_one_and_nothing_else_differs():
    assert fills("<package>-binary", "psycopg2-binary") and fills("<path>", "src/models.py")
    assert fills("--dev", "--dev") and not fills("--dev", "--user")
    assert not fills("<package>-binary", "psycopg2") and not fills("<package>-binary", "-binary")
    assert not fills("src/<path>", "lib/x.py")
