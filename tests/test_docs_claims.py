"""The docs' concrete claims that a machine can check: every repository path written in backticks
in README.md and docs/*.md exists (and a `file.py::test_name` names a test that is there), every
`make X` is a Makefile target, every `commons COMMAND [SUBCOMMAND]` is a real command.

A path is a claim about the repository when its first segment is a top-level entry of it
(`commons/…`, `tests/…`, `protocol/…`, `Makefile`), or when it is a shorthand with a file
extension (`gossip/session.py`) that must end some path of it. Paths outside the repository (the
person's home, the data folder, environment variables, the folders beside the checkout) are
allowed by :data:`OUTSIDE` alone; `<placeholder>`, `NAME`, `…` and `*` stand for any name.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
from functools import cache
from pathlib import Path

import pytest

from commons.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "mutants", ".bench", ".pytest_cache",
                ".hypothesis", "build", "dist"}

# Paths a doc may name that are not the repository's: where they start says whose they are.
OUTSIDE = (
    "~",  # the person's home: ~/.claude/projects/<slug>/memory/MEMORY.md, ~/.codex, ~/.config/commons/
    "$",  # under an environment variable: $CODEX_HOME/AGENTS.md, $XDG_DATA_HOME/commons/
    "/",  # absolute, on the person's machine: /home/<user>, /tmp/…
    "<",  # a folder named by a placeholder: <data>/ (the node's data folder), <session>/subagents/
    "DIR/",  # a COMMONS_HOME=DIR
    "../",  # beside the checkout: ../shared/transcripts, ../shared/lessons-bench/score.py
    ".bench/",  # what `make bench` and `make fuzz` write (ignored by git)
    ".claude/",  # a project's Claude Code settings, in the person's repository
    ".../",
    "http://", "https://",
)
# Paths in other projects' repositories, named where the docs compare commons with them.
OTHER_REPOSITORIES = frozenset({"mcp_server/src/graphiti_mcp_server.py", "openmemory/api/app/mcp_server.py"})
EXTENSIONS = (".py", ".md", ".json", ".jsonl", ".toml", ".js", ".sh", ".txt", ".png", ".yml", ".yaml")
PLACEHOLDER = re.compile(r"<[^<>/]+>|(?<![A-Za-z])NAME(?![A-Za-z])|…|\.\.\.")
SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


@cache
def repository() -> tuple[frozenset[str], frozenset[str]]:
    """(every file, every folder) of the checkout, as paths relative to its root."""
    files, folders = set(), set()

    def walk(folder: Path) -> None:
        for entry in folder.iterdir():
            if entry.name in SKIPPED_DIRS or entry.name.endswith(".egg-info"):
                continue
            relative = entry.relative_to(ROOT).as_posix()
            if entry.is_dir():
                folders.add(relative)
                walk(entry)
            else:
                files.add(relative)

    walk(ROOT)
    return frozenset(files), frozenset(folders)


def top_level() -> set[str]:
    files, folders = repository()
    return {p for p in files | folders if "/" not in p}


def spans(doc: Path) -> list[str]:
    return [m.group(1).strip() for m in SPAN.finditer(FENCE.sub("", doc.read_text(encoding="utf-8")))]


def code_lines(doc: Path) -> list[str]:
    return [line for block in FENCE.findall(doc.read_text(encoding="utf-8")) for line in block.splitlines()[1:-1]]


def path_claims() -> list[tuple[str, str]]:
    """(doc, path) for every span that names a path of the repository."""
    tops = top_level()
    claims = []
    for doc in DOCS:
        for text in spans(doc):
            if " " in text or text.startswith(OUTSIDE) or text.startswith(("-", "@")):
                continue  # "@./notes.md" is an agent's import syntax, shown as text
            path = text.split("::", 1)[0].rstrip("/")
            first = path.split("/", 1)[0]
            shorthand = ("/" in path and path.endswith(EXTENSIONS) and path not in OTHER_REPOSITORIES
                         and "*" not in path and not PLACEHOLDER.search(path))  # a pattern: the person's files
            if first in tops or shorthand:
                claims.append((doc.name, text))
    return claims


def exists(text: str) -> bool:
    files, folders = repository()
    path, _, test = text.partition("::")
    path = path.rstrip("/")
    pattern = PLACEHOLDER.sub("*", path)
    if "*" in pattern:
        found = [p for p in files | folders if fnmatch.fnmatchcase(p, pattern)]
    elif path in files or path in folders:
        found = [path]
    else:  # a shorthand: the end of a path (`gossip/session.py` in the core's section)
        found = [p for p in files | folders if p.endswith("/" + path)]
    if not found or not test:
        return bool(found)
    name = re.escape(test.split("::")[-1].split("[")[0])
    return any(re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{name}\b", (ROOT / p).read_text(encoding="utf-8"),
                         re.MULTILINE) for p in found if p in files)


def test_the_check_finds_a_stale_path_and_allows_the_persons_home():
    assert exists("commons/node/door.py") and exists("tests/test_docs_claims.py::test_every_path_the_docs_name_exists")
    assert exists("gossip/session.py") and exists("protocol/*.md") and exists("commons/core/NAME/")
    assert not exists("commons/core/gossip_session.py") and not exists("core/trust_incremental.py")
    assert not exists("tests/test_daemon.py::test_no_such_test")
    assert "~/.claude/projects/<slug>/memory/MEMORY.md".startswith(OUTSIDE)


def test_every_path_the_docs_name_exists():
    claims = path_claims()
    assert len(claims) > 100  # the docs name many files: a broken extraction would check none
    stale = [f"{doc}: `{text}`" for doc, text in claims if not exists(text)]
    assert not stale, "paths named in the docs that the repository does not have:\n" + "\n".join(stale)


def make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"^([A-Za-z][\w.-]*)\s*:(?!=)", makefile, re.MULTILINE)}


# Targets of other projects' Makefiles, quoted in lessons the docs show.
OTHER_MAKE_TARGETS = frozenset({"vsla_tests"})


def test_every_make_target_the_docs_name_is_in_the_makefile():
    targets = make_targets()
    assert {"test", "install", "bench"} <= targets
    named = [(doc.name, words[1]) for doc in DOCS for words in commands(doc)
             if len(words) > 1 and words[0] == "make" and re.fullmatch(r"[a-z][\w-]*", words[1])]
    assert len(named) > 5
    unknown = sorted({f"{doc}: `make {target}`" for doc, target in named
                      if target not in targets and target not in OTHER_MAKE_TARGETS})
    assert not unknown, "make targets named in the docs that the Makefile lacks:\n" + "\n".join(unknown)


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return None


def _takes_positionals(parser: argparse.ArgumentParser) -> bool:
    return any(not a.option_strings and not isinstance(a, argparse._SubParsersAction) for a in parser._actions)


SEPARATOR = re.compile(r"&&|\|\||[;|]|\$\(")
PREFIX = re.compile(r"^(?:[A-Z_]+=\S*\s+|nice\s+-n\s*\d+\s+|sudo\s+|\$\s+|\.venv/bin/)*")
GLOBAL_WITH_VALUE = {"--at"}


def command_line_words(line: str) -> list[list[str]]:
    """The words of each command in a shell line (a code line or a span), as a person would type
    them: after `;`, `&&`, `|`, environment assignments and `nice`; comments left out."""
    line = re.sub(r"(^|\s)#.*$", "", line)
    found = []
    for part in SEPARATOR.split(line):
        words = PREFIX.sub("", part.strip()).split()
        if words:
            found.append(words)
    return found


def commands(doc: Path) -> list[list[str]]:
    """Every command a doc shows: each of a fenced block's code lines, and the one a span starts
    with (a span is a command, or a message that quotes one: `…; make it writable` is not)."""
    return ([found[0] for text in spans(doc) if (found := command_line_words(text))]
            + [words for line in code_lines(doc) for words in command_line_words(line)])


def command_words(text: str) -> list[list[str]]:
    """The words after each `commons` that runs in a shell line, global options left out."""
    return [kept for words in command_line_words(text) if (kept := commons_words(words))]


def commons_words(words: list[str]) -> list[str]:
    """The words after `commons` of one command ([] for another program), global options left out."""
    if words[0] != "commons":
        return []
    kept, skip = [], False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in GLOBAL_WITH_VALUE:
            skip = True
        elif word.startswith("-") and not kept:
            continue
        elif word.startswith(("-", "[", ">", "<")):
            break
        else:
            kept.append(word)
    return kept


def unknown_command(words: list[str]) -> str | None:
    """The first word that is not a command where one must be, or None."""
    parser = build_parser()
    for depth, word in enumerate(words[:2]):
        choices = _choices(parser)
        if choices is None or (depth > 0 and _takes_positionals(parser)):
            return None
        if PLACEHOLDER.fullmatch(word) or word.isupper():  # `commons COMMAND --help`
            return None
        if word not in choices:
            return word
        parser = choices[word]
    return None


def test_every_commons_command_the_docs_name_exists():
    assert unknown_command(["store", "check"]) is None and unknown_command(["lessons", "scope"]) is None
    assert unknown_command(["stor"]) == "stor" and unknown_command(["store", "vacuum"]) == "vacuum"
    named = [(doc.name, kept) for doc in DOCS for words in commands(doc) if (kept := commons_words(words))]
    assert len(named) > 50
    unknown = sorted({f"{doc}: `commons {' '.join(words)}` ({unknown_command(words)!r})"
                      for doc, words in named if unknown_command(words) is not None})
    assert not unknown, "commands named in the docs that `commons` does not have:\n" + "\n".join(unknown)


@pytest.mark.parametrize("text, words", [
    ("commons --at 2026-11-09T08:00Z sleep --json", [["sleep"]]),
    ("COMMONS_HOME=/tmp/a commons peers add HOST:PORT KEY", [["peers", "add", "HOST:PORT", "KEY"]]),
    ("pipx install commons-memory", []),
    ("commons/node/door.py", []),
    ("make install   # a virtualenv with commons in it", []),
    ("commons export > records.jsonl && commons import records.jsonl", [["export"], ["import", "records.jsonl"]]),
])
def test_commands_are_read_from_spans_and_code_lines(text, words):
    assert command_words(text) == words
