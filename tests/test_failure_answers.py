"""Non-zero exits that are answers: a report of outdated packages, a chain of looks ending in a search that
found nothing, a search given a guessed path beside real ones. A search given words it took for paths, or a
report that crashed, is still a failure."""

from __future__ import annotations

from commons.core.learning.failure import failure_line, not_a_failure

MIX_OUTDATED = """Exit code 1
Dependency              Only      Current  Latest  Status
bandit                            1.10.0   1.10.2  Update possible
ecto_phone                        1.1.0    2.0.2   Update not possible
jason                             1.4.4    1.4.4   Up-to-date
"""
NPM_OUTDATED = """Exit code 1
Package  Current  Wanted  Latest  Location              Depended by
vite     5.0.0    5.4.1   6.0.3   node_modules/vite     app
"""


def _verdict(command: str, output: str, call: str = "") -> str:
    return not_a_failure("Bash", command, output, failure_line(output)[0], call=call)


def test_a_report_of_outdated_packages_is_an_answer():
    assert _verdict("mix hex.outdated", MIX_OUTDATED) == "probe"
    assert _verdict("npm outdated", NPM_OUTDATED) == "probe"
    assert _verdict("cd web && bundle outdated", "Exit code 1\nGem  Current  Latest  Requested  Groups\nrack 2.2.3 3.0.8 ~> 2.2 default\n") == "probe"


def test_an_outdated_report_that_did_not_run_is_a_failure():
    crashed = "Exit code 1\n** (RuntimeError) failed to start Mix.PubSub, reason: :eperm\n    lib/mix/tasks/hex.outdated.ex:62"
    assert _verdict("mix hex.outdated", crashed) == ""
    assert _verdict("npm outdated", "Exit code 1\nnpm error code ENOTFOUND\nnpm error network request failed") == ""
    # The same table from a command that is no report of outdated packages says nothing of an answer.
    assert _verdict("mix deps.update --all", MIX_OUTDATED) == ""


LISTED_EMPTY = "Exit code 1\ntotal 0\ndrwxr-xr-x   2 me  staff   64 Jan 21 06:42 .\ndrwxr-xr-x  28 me  staff  896 Feb 10 05:01 ..\n"


def test_looks_ending_in_a_search_that_found_nothing_are_a_probe():
    call = 'ls -la lib/app/products && rg -n "defmodule App.Products" lib/app/products -g "*.ex"'
    assert _verdict("ls -la lib/app/products", LISTED_EMPTY, call=call) == "probe"
    assert _verdict(call, LISTED_EMPTY) == "probe"


def test_a_chain_ending_in_a_search_is_a_failure_when_a_program_complains_or_the_search_broke():
    call = 'ls -la lib/app/products && rg -n "defmodule" lib/app/products'
    assert _verdict("cat config.json && grep -n port config.json", "Exit code 1\ncat: config.json: Permission denied\n") == ""
    assert _verdict(call, LISTED_EMPTY.replace("Exit code 1", "Exit code 2")) == ""  # a search's 2 is its error
    # A build before the search is no look: what it printed is no answer.
    assert _verdict("make && grep -c warning build.log", "Exit code 1\ncc -o app main.c\n") == ""


def test_a_search_given_a_guessed_path_beside_real_ones_is_a_probe():
    command = 'rg -n "schema \\"customers\\"|schema \\"contacts\\"" priv/repo/schema.exs lib -g \'*.ex\''
    output = ("Exit code 2\nrg: priv/repo/schema.exs: No such file or directory (os error 2)\n"
              "lib/app/customers/contact.ex:7:  schema \"contacts\" do\n"
              "lib/app/customers/customer.ex:12:  schema \"customers\" do\n")
    assert _verdict(command, output) == "probe"
    assert _verdict("grep -rn TODO src docs/notes.md", "Exit code 2\ngrep: docs/notes.md: No such file or directory\n"
                                                      "src/main.py:3:# TODO: parse args\n") == "probe"


def test_a_search_that_took_its_patterns_for_paths_is_a_failure():
    # `-n` given again does not add a pattern: rg searched "Phase 4" in the files "T021" and tasks.md.
    output = "Exit code 2\nrg: T021: No such file or directory (os error 2)\nspecs/tasks.md:40:## Phase 4\n"
    assert _verdict('rg -n "Phase 4" -n "T021" specs/tasks.md', output) == ""
    # A path the agent never named is not a guess of its own (a path from a config, a symlink's target).
    assert _verdict("rg -n x lib", "Exit code 2\nrg: lib/link.ex: No such file or directory (os error 2)\nlib/a.ex:1:x\n") == ""
