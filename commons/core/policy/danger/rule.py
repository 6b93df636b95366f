"""The machinery of the rules: a danger's `Kind`, the `Step` a rule reads, a `Rule`, the programs
a rule's test can be true of (`applies_to`) and the table indexed by them (`RuleIndex`), and what
several families of rules read (shared branches, folders a tool makes again, the programs that
fetch, run text or install)."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from commons.core.policy.danger.shell import Command


class Kind(enum.Enum):
    DESTROYS_DATA = "destroys data"
    REWRITES_HISTORY = "rewrites history"
    RAISES_PRIVILEGES = "raises privileges"
    DISABLES_SECURITY = "disables a security check"
    SKIPS_CHECK = "skips a check"
    RUNS_NETWORK_CODE = "runs code from the network"
    GLOBAL_CONFIG = "changes global configuration"


@dataclass(frozen=True)
class Step:
    """A step as a whole: its text and every command it runs (what rules about pipes, downloads
    and SQL look at)."""

    text: str
    commands: tuple[Command, ...]
    edit_path: str = ""  # for a file edit: the file
    edit_text: str = ""  # and the text it writes


Test = Callable[[Command, Step], bool]


def applies_to(*programs: str) -> Callable[[Test], Test]:
    """Declare that a rule's test is false of every command whose `Command.program` is none of
    ``programs``: a command meets only the rules of its program and those that declare none
    (the rules about pipes, redirections, variables and flags of any program)."""

    def declare(test: Test) -> Test:
        setattr(test, "programs", frozenset(programs))
        return test

    return declare


@dataclass(frozen=True)
class Rule:
    id: str
    kind: Kind
    risk: str  # what it destroys or disables, in a plain clause a person reads
    test: Test

    @property
    def programs(self) -> frozenset[str] | None:
        """The programs its test can be true of (`applies_to`); None when it may be true of any."""
        return getattr(self.test, "programs", None)


class RuleIndex:
    """A table of rules by the program they can apply to: what :meth:`of` gives a command is the
    rules its program declares and those of any program, in the table's order (the first that
    matches names the danger, so the order is the table's whatever the index)."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.any_program = tuple(r for r in rules if r.programs is None)
        named = {p for r in rules for p in r.programs or ()}
        self._by_program = {p: tuple(r for r in rules if r.programs is None or p in r.programs) for p in named}

    def of(self, command: Command) -> tuple[Rule, ...]:
        # A pattern's `$` also matches before a final newline (`_MANAGE` of a word `manage.py\n`):
        # such a program meets the rules of the name without it too.
        return self._by_program.get(command.program.removesuffix("\n"), self.any_program)


# --------------------------------------------------------------------------------------------
# What several rule families read

SHARED_BRANCHES = re.compile(r"^(?:main|master|trunk|develop|development|dev|production|prod|stable|release.*|HEAD|gh-pages)$",
                              re.IGNORECASE)
REGENERABLE = frozenset({
    "node_modules", ".venv", "venv", "env", ".env.d", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    ".cache", "cache", ".next", ".nuxt", ".turbo", ".parcel-cache", ".svelte-kit", ".angular", ".vite", "build", "dist",
    "target", "out", "coverage", ".coverage", "htmlcov", ".tox", ".nox", ".gradle", ".terraform", "_build", "deps",
    ".eggs", ".hypothesis", ".expo", ".dart_tool", "bin", "obj", ".build", "DerivedData", "tmp", ".tmp", "temp",
    ".pnpm-store", ".yarn/cache", "pkg", ".elixir_ls", ".nyc_output", "storybook-static", "lib-cov",
})  # fmt: skip
REGENERABLE_FILES = re.compile(r"^(?:package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|uv\.lock|Cargo\.lock|"
                                r"[\w.-]+\.(?:pyc|pyo|o|log|tmp|bak|swp|lock|pid|tsbuildinfo)|\.DS_Store|"
                                r"[\w.-]+\.egg-info|index\.lock|\.coverage)$")
TEMP_ROOTS = re.compile(r"^(?:/tmp/|/var/tmp/|\$TMPDIR|\$\{?TMPDIR\}?/|%TEMP%|\$env:TEMP|~/\.cache/|\$HOME/\.cache/|"
                         r"~/Library/Caches/|~/\.npm/_cacache|~/\.cargo/registry|~/\.gradle/caches|~/\.m2/repository)")
TEST_FILE = re.compile(r"(?:^|/)(?:test_[\w.-]+\.py|[\w.-]+_test\.(?:py|go|rb|exs?)|[\w.-]+\.(?:test|spec)\.[jt]sx?|"
                        r"[\w.-]+Test\.(?:java|kt|cs|php)|tests?/|__tests__/|spec/[\w./-]+_spec\.rb)", re.IGNORECASE)
DB_FILE = re.compile(r"\.(?:db|sqlite3?|sqlite-wal|mdb|ldb)$|(?:^|/)(?:pgdata|mysql|data/db)(?:/|$)", re.IGNORECASE)
FETCHERS = frozenset({"curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "fetch", "http", "https",
                       "xh", "aria2c", "lwp-request", "certutil"})
RUNS_TEXT = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "python", "python3", "py", "node", "perl",
                        "ruby", "php", "iex", "invoke-expression", "powershell", "pwsh", "cmd", "source", "."})
PKG_MANAGERS = frozenset({"pip", "pip3", "npm", "yarn", "pnpm", "gem", "cargo", "go", "uv", "poetry", "pipx", "bun",
                           "composer", "easy_install", "conda", "mamba"})
DB_CLIENTS = frozenset({"psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "cockroach", "clickhouse-client", "duckdb",
                         "mongo", "mongosh", "redis-cli", "cqlsh", "sqlplus", "db2", "dbshell", "dbconsole", "execute",
                         "prisma", "supabase", "wrangler", "turso", "bq", "snowsql", "pg_restore", "knex", "sequelize"})
SQL_DESTROYS = re.compile(r"\b(?:DROP\s+(?:TABLE|DATABASE|SCHEMA|KEYSPACE|COLLECTION|OWNED)|TRUNCATE(?:\s+TABLE)?\s+\w|"
                           r"ALTER\s+TABLE\s+\S+\s+DROP\s+(?:COLUMN\s+)?\w|DELETE\s+FROM\s+[\w.\"`]+\s*(?:;|$|'|\")|"
                           r"FLUSHALL|FLUSHDB|dropDatabase\(|\.drop\(\))", re.IGNORECASE)


def env_of(command: Command, step: Step) -> dict[str, str]:
    """Variables the command runs with: its own, and those exported earlier in the step."""
    found: dict[str, str] = {}
    for other in step.commands:
        if other is command:
            break
        if not other.words:
            found.update(other.env)
    found.update(command.env)
    return found


def regenerable(path: str) -> bool:
    """Whether a path is a folder or file a tool makes again (the look-alikes in ``rules``)."""
    path = path.strip().strip("'\"")
    if not path or path in {".", "..", "/", "~", "*", ".*", "./*", "~/", "$HOME", "${HOME}", "%USERPROFILE%"}:
        return False
    if TEMP_ROOTS.match(path) and not re.search(r"\$\w+/?$|\*$", path.split("/", 3)[-1] if path.count("/") > 2 else ""):
        return True
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    if not parts or any(p == ".." for p in parts) or parts[0] in {"~", "$HOME", "${HOME}"} and len(parts) < 3:
        return False
    if path.startswith("/") and len(parts) < 3:
        return False
    last = parts[-1]
    if "$" in last or last in {"*", ".*"}:
        return False
    name = last.rstrip("*")
    return name in REGENERABLE or "/".join(parts[-2:]) in REGENERABLE or bool(REGENERABLE_FILES.match(last)) \
        or (name.startswith(".") and name.endswith("cache")) or name.endswith(".egg-info")


def targets_of(command: Command) -> tuple[str, ...]:
    return tuple(a for a in command.positional())
