"""The experiment agent's reader follows advice from words, however the sentence is built, and
only advice about the command it is about to run (issue #29, item 1). Every note here was written
by hand; none is in commons' own template except the first of each group."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from simulations.experiment.paraphrases import NO_ADVICE, OTHER_COMMANDS, PARAPHRASES, reader_figures
from simulations.experiment.reader import FOR_ANY_VALUE, FOR_OTHER_VALUES, NAMES_MY_VALUE, advice_for, fit, read_note

CASES = [(mine, fix, note) for mine, fix, notes in PARAPHRASES for note in notes]


@pytest.mark.parametrize("mine,fix,note", CASES)
def test_a_paraphrased_lesson_leads_to_its_fix(mine, fix, note):
    assert advice_for(note, mine) == fix


@pytest.mark.parametrize("mine,note", OTHER_COMMANDS)
def test_a_lesson_about_another_command_is_not_followed(mine, note):
    assert advice_for(note, mine) == ""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_reader_follows_at_least_nine_paraphrases_in_ten_and_at_most_one_other_command_in_ten(seed):
    figures = reader_figures(seed)
    assert figures["paraphrases"] >= 30 and figures["follows_paraphrase"] >= 0.9, figures
    assert figures["follows_other_command"] <= 0.1 and figures["no_advice_kept_quiet"] == 1.0, figures


@pytest.mark.parametrize("mine,note", NO_ADVICE)
def test_a_note_with_nothing_that_worked_gives_no_advice(mine, note):
    assert advice_for(note, mine) == ""


def test_a_lesson_that_saw_no_fix_gives_no_advice():
    note = "`npm ci` failed with \"can only install with an existing package-lock.json\"; no fix was seen (2 sessions)."
    assert advice_for(note, "npm ci") == ""
    assert read_note(note, "npm ci").about


def test_a_fix_the_note_warns_about_is_not_followed():
    note = ("`git push origin main` was rejected (non-fast-forward); it passed after `git push --force origin main`, "
            "which rewrites the remote's history and destroys others' commits.")
    assert advice_for(note, "git push origin main") == ""


def test_placeholders_are_filled_from_the_command_about_to_run():
    note = "`pip install <package>` failed with externally-managed-environment; `uv add <package>` worked instead."
    assert advice_for(note, "pip install tenacity") == "uv add tenacity"
    assert advice_for("`go test ./...` failed; `go mod tidy && go test ./...` fixed it.", "go test ./...") == \
        "go mod tidy && go test ./..."


def test_a_placeholder_within_a_word_is_filled_as_the_word_it_is_part_of():
    note = "`pip install` failed: pg_config executable not found; `pip install <package>-binary` worked."
    assert advice_for(note, "pip install psycopg2") == "pip install psycopg2-binary"


def test_the_reader_imports_nothing_of_commons():
    source = Path(__file__).resolve().parents[1] / "simulations" / "experiment" / "reader.py"
    imported = {alias.name for node in ast.walk(ast.parse(source.read_text("utf-8")))
                if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
    assert not {name for name in imported if name.split(".")[0] == "commons"}, imported


def test_a_file_placeholder_is_filled_from_the_files_touched_and_never_from_other_words():
    note = "`git commit` failed with \"hook black failed: files were modified by this hook\"; it passed after `black <path>`."
    assert advice_for(note, 'git commit -m "refactor cli"', ("src/cli.py",)) == "black src/cli.py"
    # A commit with no file formatted in the task: the commit message is not a file to run black on.
    assert advice_for(note, 'git commit -am "fix stuff"') == ""


@pytest.mark.parametrize("note", [
    "`pip install` failed with \"pg_config executable not found\"; `pip install <package>-binary` succeeded after it, "
    "for psycopg2 and psycopg (2 of 2 sessions).",
    "For psycopg2 or psycopg, a plain `pip install` dies on the missing pg_config; `pip install <package>-binary` works.",
    "Installing psycopg2 with `pip install` needs pg_config, which is not here: use `pip install <package>-binary`, "
    "seen for psycopg2, psycopg.",
])
def test_a_note_seen_for_some_packages_is_nearest_for_those_and_farthest_for_another(note):
    assert advice_for(note, "pip install psycopg2") == "pip install psycopg2-binary"
    assert fit(note, "pip install psycopg2") == NAMES_MY_VALUE
    assert fit(note, "pip install httpx") == FOR_OTHER_VALUES


def test_a_note_for_any_package_is_advice_for_every_one_between_the_two():
    note = "`pip install` is refused here for any package (externally managed); `uv add <package>` works instead."
    assert advice_for(note, "pip install httpx") == "uv add httpx"
    assert fit(note, "pip install httpx") == FOR_ANY_VALUE
