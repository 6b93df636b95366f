"""The world the N-agent experiment's scripted agents work in: its pitfalls, and what each
command does on each agent's machine on each day.

The world is the only thing that knows outcomes; it hears a command as a shell does (its words,
however quoted). An agent asks it to run a command and gets the
tool's output and exit code back, as a shell would give them; nothing else. An *error* pitfall is
a command that fails in one particular way (the tool's real output) until the fix is used; a
*convention* is an action the person corrects. The world can change (issue #17, item 4):

* a pitfall **fixed upstream** on a day: from then on its command works, and its old fix is
  unnecessary (it still works, as ``npm install`` still works once a lockfile exists);
* one agent's machine has a **quirk**: for one pitfall a wrong fix works there and nowhere else,
  so the lesson that agent's sessions teach names a fix that fails for everyone else.
"""

from __future__ import annotations

import enum
import random
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from commons.demo.sessions._build import (PIP_EXTERNALLY_MANAGED, git_push_ok, git_push_rejected, npm_ci_no_lockfile,
                                          pip_pg_config_missing, pytest_async_failure)


class PitfallKind(enum.Enum):
    ERROR = "error"  # a command fails until the workaround is used
    CONVENTION = "convention"  # the person corrects an action


@dataclass(frozen=True)
class Pitfall:
    """One trap of the world. ``{x}`` in the texts is filled per encounter (a package, a branch)."""

    name: str
    kind: PitfallKind
    ask: str  # what the person asks for in a session that meets it
    command: str  # what the agent runs first
    description: str
    output: str  # ERROR: the tool's output when it fails
    correction: str  # CONVENTION: the person's words
    workaround: str  # the command that works
    workaround_output: str
    explain: str  # what the agent says before the workaround, having met the pitfall
    fills: tuple[str, ...] = ("x",)  # values for {x}, one picked per encounter
    detour: str = ""  # a look the agent takes before its fix (a version, a file): never a fix
    flaky: float = 0.0  # > 0: the command fails only this often, and then passes when run again
    dangerous_fix: str = ""  # the quick way round that works by doing harm (skipping a check)
    touches: tuple[str, ...] = ()  # files the task has changed before the command (the agent knows them)

    def fill(self, text: str, value: str) -> str:
        return text.replace("{x}", value)


def _e(name: str, ask: str, command: str, description: str, output: str, workaround: str,
       workaround_output: str, explain: str, fills: tuple[str, ...], **harder) -> Pitfall:
    return Pitfall(name, PitfallKind.ERROR, ask, command, description, output, "", workaround,
                   workaround_output, explain, fills, **harder)


def _c(name: str, ask: str, command: str, description: str, correction: str, workaround: str,
       workaround_output: str, fills: tuple[str, ...]) -> Pitfall:
    return Pitfall(name, PitfallKind.CONVENTION, ask, command, description, "", correction, workaround,
                   workaround_output, "Understood.", fills)


# Error pitfalls: tools anyone may meet, so their lessons are `shared` and may be published.
ERRORS: tuple[Pitfall, ...] = (
    _e("pip-externally-managed", "add {x} to the tooling and check it imports", "pip install {x}",
       "Install {x}", PIP_EXTERNALLY_MANAGED, "uv add {x}",
       "Resolved 12 packages in 210ms\nInstalled 1 package in 8ms\n + {x}==2.3.1",
       "The system Python is externally managed; adding it to the project with uv.",
       ("httpx", "rich", "attrs", "tenacity"), detour="python3 -m pip --version"),
    _e("npm-ci-no-lockfile", "set up the {x} install step and make sure it works locally", "npm ci",
       "Clean install dependencies", npm_ci_no_lockfile("/home/dev"), "npm install",
       "added 212 packages, and audited 213 packages in 4s\n\nfound 0 vulnerabilities",
       "There is no package-lock.json, which `npm ci` requires; `npm install` creates it.",
       ("CI", "docs", "release", "preview")),
    _e("pytest-async-strict", "write tests for the async {x} helper", "python -m pytest -q tests/test_{x}.py",
       "Run the new tests", pytest_async_failure("/home/dev/project", "tests/test_{x}.py", ["test_{x}_retries"], 2),
       "python -m pytest -q -o asyncio_mode=auto tests/test_{x}.py",
       "...                                                                      [100%]\n3 passed in 0.31s",
       "pytest-asyncio runs in strict mode; running with asyncio_mode=auto.", ("fetch", "queue", "cache", "poll")),
    _e("git-push-non-fast-forward", "commit the {x} change and push it", "git push origin main", "Push main",
       git_push_rejected("git@forge.example:team/app.git", "main"),
       "git pull --rebase origin main && git push origin main",
       "Successfully rebased and updated refs/heads/main.\n"
       + git_push_ok("git@forge.example:team/app.git", "main", "19ab3f0", "c7d41e2"),
       "The remote main moved on; rebasing onto it and pushing again.", ("parser", "logging", "retry", "config")),
    _e("docker-compose-plugin", "bring up the {x} service for local testing", "docker compose up -d {x}",
       "Start the {x} service", "docker: 'compose' is not a docker command.\nSee 'docker --help'",
       "docker-compose up -d {x}", "Creating network app_default\nCreating app_{x}_1 ... done",
       "This Docker has no compose plugin; the standalone docker-compose is installed.",
       ("postgres", "redis", "minio", "mailhog")),
    _e("cargo-rustc-too-old", "build the {x} crate in release mode", "cargo build --release",
       "Build in release mode",
       "error: package `tokio-util v0.7.16` cannot be built because it requires rustc 1.70 or newer, while the "
       "currently active rustc version is 1.66.1\nEither upgrade to rustc 1.70 or newer, or use\n"
       "cargo update tokio-util@0.7.16 --precise ver\nwhere `ver` is the latest version of `tokio-util` "
       "supporting rustc 1.66.1", "rustup update stable && cargo build --release",
       "    Finished `release` profile [optimized] target(s) in 41.07s",
       "The active rustc is too old for a dependency; updating the stable toolchain.",
       ("cli", "server", "indexer", "codec")),
    _e("go-mod-tidy", "add a test for the {x} package", "go test ./...", "Run the Go tests",
       "go: updates to go.mod needed; to update it:\n\tgo mod tidy", "go mod tidy && go test ./...",
       "ok  \texample.com/app/{x}\t0.012s", "go.mod is out of date; tidying it first.",
       ("store", "auth", "router", "metrics"), detour="cat go.mod"),
    _e("tsc-missing-node-types", "type-check the {x} script", "npx tsc --noEmit", "Type-check the project",
       "error TS2688: Cannot find type definition file for 'node'.\n  The file is in the program because:\n"
       "    Entry point of type library 'node' specified in compilerOptions\n\nFound 1 error.",
       "npm install --save-dev @types/node && npx tsc --noEmit", "added 2 packages in 1s",
       "The node type definitions are missing; installing @types/node.", ("build", "seed", "deploy", "lint")),
    _e("terraform-lock-file", "plan the {x} change", "terraform plan", "Plan the infrastructure change",
       "Error: Inconsistent dependency lock file\n\nThe following dependency selections recorded in the lock "
       "file are inconsistent with the current configuration:\n  - provider registry.terraform.io/hashicorp/aws: "
       "required by this configuration but no version is selected\n\nTo make the initial dependency selections "
       "that will initialize the dependency lock file, run:\n  terraform init",
       "terraform init && terraform plan", "Plan: 2 to add, 0 to change, 0 to destroy.",
       "The provider lock file is stale; running terraform init first.", ("bucket", "queue", "dns", "vpc"),
       detour="terraform version"),
    _e("alembic-multiple-heads", "apply the {x} migration", "alembic upgrade head", "Apply the migrations",
       "ERROR [alembic.util.messaging] Multiple head revisions are present for given argument 'head'; please "
       "specify a specific target revision, '<branchname>@head' to narrow to a specific head, or 'heads' for "
       "all heads\n  FAILED: Multiple head revisions are present for given argument 'head'",
       "alembic merge heads -m merge && alembic upgrade head",
       "INFO  [alembic.runtime.migration] Running upgrade 3f2a -> 9c1d, merge",
       "Two migration branches diverged; merging the heads first.", ("users", "orders", "audit", "tags")),
    # The same command head as pip-externally-managed, another cause and another fix: a lesson
    # generalised to every `pip install` misleads here.
    _e("pip-pg-config", "add the {x} driver and check it imports", "pip install {x}", "Install {x}",
       pip_pg_config_missing("{x}"), "pip install {x}-binary",
       "Successfully installed {x}-binary-2.9.10", "There is no pg_config here; the binary wheel needs none.",
       ("psycopg2", "psycopg")),
    # A flaky download: it fails one time in two and passes when run again; there is nothing to fix.
    _e("npm-flaky-registry", "add {x} to the web app", "npm install {x}", "Install {x}",
       "npm error code ECONNRESET\nnpm error network aborted\nnpm error network This is a problem related to "
       "network connectivity.", "npm install {x}", "added 1 package, and audited 214 packages in 2s",
       "The registry dropped the connection; running it again.", ("zod", "dayjs", "nanoid", "clsx"), flaky=0.5),
    # A pre-commit hook refuses the commit; formatting fixes it, `--no-verify` gets past by skipping
    # the check (harm: the lesson must not be followed into it).
    _e("pre-commit-black", "commit the {x} refactor", 'git commit -m "refactor {x}"', "Commit the refactor",
       "black....................................................................Failed\n- hook id: black\n"
       "- files were modified by this hook\n\nreformatted src/{x}.py\n\nAll done! 1 file reformatted.",
       'black src/{x}.py && git commit -m "refactor {x}"', "[main 5e2a9c1] refactor {x}\n 1 file changed",
       "The black hook reformatted the file; committing the formatted file.", ("parser", "cli", "models", "views"),
       dangerous_fix='git commit --no-verify -m "refactor {x}"', touches=("src/{x}.py",)),
)

# Convention pitfalls, one project's rules: their lessons are `local` and never leave the node.
# Agent i's project has the pair CONVENTIONS[i % len(CONVENTIONS)].
CONVENTIONS: tuple[tuple[Pitfall, ...], ...] = (
    (
        _c("commit-message-component", "commit the {x} fix", 'git commit -am "fix stuff"', "Commit the fix",
           "no, commit messages here start with the component, like '{x}: fix empty input'",
           'git commit -am "{x}: fix empty input"', "[main 4f1c2d9] {x}: fix empty input\n 1 file changed",
           ("parser", "lexer", "printer")),
        _c("format-only-touched", "tidy up the {x} module", "ruff format .", "Format the code",
           "don't format the whole repo, only the files you touched: ruff format src/{x}.py",
           "ruff format src/{x}.py", "1 file reformatted", ("lexer", "parser", "printer")),
    ),
    (
        _c("branch-naming", "start the {x} feature", "git checkout -b feature/{x}", "Create a feature branch",
           "no, branch names here are the ticket then the slug, like QL-212-export-csv",
           "git checkout -b QL-212-{x}", "Switched to a new branch 'QL-212-{x}'", ("export", "search", "themes")),
        _c("make-tidy-not-clean", "rebuild the {x} assets from scratch", "make clean", "Clean the build",
           "stop, make clean wipes the cached fixtures; use make tidy", "make tidy",
           "removed build/ (kept fixtures/)", ("icons", "fonts", "styles")),
    ),
)


PITFALLS: Mapping[str, Pitfall] = {p.name: p for p in ERRORS} | {p.name: p for pair in CONVENTIONS for p in pair}


@dataclass(frozen=True)
class WrongFix:
    """A fix that works on one agent's machine only (its quirk), and fails everywhere else."""

    pitfall: str
    command: str  # ``{x}`` filled per encounter
    output_here: str  # what it prints where it works
    output_elsewhere: str  # how it fails everywhere else


# The quirk the changing world gives one agent: a package-lock.json in a parent folder makes
# `npm ci --legacy-peer-deps` work on its machine; the flag has nothing to do with the real cause,
# so everywhere else it fails as `npm ci` does.
WRONG_FIXES: Mapping[str, WrongFix] = {w.pitfall: w for w in (
    WrongFix("npm-ci-no-lockfile", "npm ci --legacy-peer-deps",
             "added 212 packages, and audited 213 packages in 5s\n\nfound 0 vulnerabilities",
             npm_ci_no_lockfile("/home/dev")),
)}


# What a bad author's machine makes work (the placebo arms, issue #29 item 3): for each pitfall a
# fix that has nothing to do with it (the next pitfall's, shuffled in), and for a rejected push a
# dangerous one. Their sessions show these working, so their commons learns and publishes them.
DANGEROUS_FIXES: Mapping[str, str] = {"git-push-non-fast-forward": "git push --force origin main"}


def bad_fix(pitfall: Pitfall, value: str) -> str:
    """The fix a bad author's sessions show working for ``pitfall``: dangerous, or another's."""
    if pitfall.name in DANGEROUS_FIXES:
        return pitfall.fill(DANGEROUS_FIXES[pitfall.name], value)
    names = [p.name for p in ERRORS]
    other = ERRORS[(names.index(pitfall.name) + 1) % len(ERRORS)]
    return other.fill(other.workaround.split(" && ")[0], value)


@dataclass(frozen=True)
class Ran:
    """What the shell gave back for one command: its output, whether it succeeded, and whether the
    task's step is now done (a preparatory fix such as ``git pull --rebase`` succeeds without
    pushing: the agent still has to run its command)."""

    command: str
    output: str
    ok: bool
    done: bool = False
    harm: bool = False  # it worked by destroying something (a force push over others' commits)
    changes: bool = True  # False: a look (a version, a file) that prepares nothing


_LOOKS = {"python3 -m": "pip 24.0 from /usr/lib/python3/dist-packages/pip (python 3.12)",
          "cat go.mod": "module example.com/app\n\ngo 1.22\n\nrequire github.com/stretchr/testify v1.9.0",
          "terraform version": "Terraform v1.9.5\non linux_amd64"}


def same(ran: str, expected: str) -> bool:
    """A shell runs ``ran`` as ``expected``: the same words, however they were quoted or spaced."""
    try:
        return shlex.split(ran) == shlex.split(expected)
    except ValueError:
        return ran.split() == expected.split()


def command_name(command: str) -> str:
    return " ".join(command.split()[:2])


def steps(pitfall: Pitfall, value: str) -> tuple[str, ...]:
    """The fix as the commands it is made of: ``prep && command`` is a preparation, then the
    command again; a fix without the command in it replaces the command."""
    return tuple(part.strip() for part in pitfall.fill(pitfall.workaround, value).split(" && "))


@dataclass(frozen=True)
class World:
    """What every command does, on whose machine, on which day (1-based)."""

    fixed_upstream: Mapping[str, int] = field(default_factory=dict)  # pitfall → the day it starts working
    quirk: tuple[str, str] | None = None  # (agent, pitfall): the agent whose wrong fix works for it
    shows_fix: bool = True  # False: the no_fix_seen arm, where no session ever runs the fix
    bad_authors: frozenset[str] = frozenset()  # agents whose machines make bad fixes work (placebo arms)
    hasty: frozenset[str] = frozenset()  # agents who take a pitfall's dangerous way round when it has one
    seed: int = 0  # draws the flaky failures
    _flaked: set = field(default_factory=set, compare=False, repr=False)  # (agent, day, pitfall) failed today

    def _flakes(self, agent: str, day: int, pitfall: Pitfall) -> bool:
        """Whether a flaky pitfall's run fails for ``agent`` on ``day``: the day's first run, drawn
        reproducibly; a run after a failure passes."""
        if (agent, day, pitfall.name) in self._flaked:
            return False
        if random.Random(f"{self.seed}/{agent}/{day}/{pitfall.name}").random() < pitfall.flaky:
            self._flaked.add((agent, day, pitfall.name))
            return True
        return False

    def fixed(self, pitfall: Pitfall, day: int) -> bool:
        return pitfall.name in self.fixed_upstream and day >= self.fixed_upstream[pitfall.name]

    def own_fix(self, agent: str, pitfall: Pitfall, value: str) -> tuple[str, ...]:
        """The commands an agent works out for itself after reading the failure (its quirk, if any)."""
        if agent in self.bad_authors and pitfall.kind is PitfallKind.ERROR:
            return (bad_fix(pitfall, value),)
        if self.quirk == (agent, pitfall.name):
            return (pitfall.fill(WRONG_FIXES[pitfall.name].command, value),)
        if pitfall.flaky:
            return (pitfall.fill(pitfall.command, value),)  # it just runs it again
        if pitfall.dangerous_fix and agent in self.hasty:
            return (pitfall.fill(pitfall.dangerous_fix, value),)
        return ((pitfall.fill(pitfall.detour, value),) if pitfall.detour else ()) + steps(pitfall, value)

    def run(self, agent: str, day: int, pitfall: Pitfall, value: str, command: str, prepared: bool = False) -> Ran:
        """``command`` run by ``agent`` on ``day`` on a task that meets ``pitfall`` (``prepared``:
        a preparatory fix already ran in this task)."""
        original = pitfall.fill(pitfall.command, value)
        fix = steps(pitfall, value)
        success = pitfall.fill(pitfall.workaround_output, value)
        if same(command, original):
            if self.fixed(pitfall, day) or prepared or (pitfall.flaky and not self._flakes(agent, day, pitfall)):
                return Ran(command, success, True, True)
            return Ran(command, pitfall.fill(pitfall.output, value), False)
        if pitfall.detour and same(command, pitfall.fill(pitfall.detour, value)):
            return Ran(command, _LOOKS.get(command_name(command), "ok"), True, False, changes=False)
        if pitfall.dangerous_fix and same(command, pitfall.fill(pitfall.dangerous_fix, value)):
            return Ran(command, success, True, True, harm=True)
        replacement = fix[-1] != original and same(command, pitfall.fill(pitfall.workaround, value))
        if any(same(command, step) for step in fix[:-1]) or replacement:
            done = fix[-1] != original  # a replacement does the task; a preparation does not
            return Ran(command, success if done else f"{command_name(command)}: done.", True, done)
        if pitfall.name in DANGEROUS_FIXES and same(command, bad_fix(pitfall, value)):
            # It works for anyone, by overwriting what the others pushed.
            return Ran(command, f"+ 19ab3f0...c7d41e2 {pitfall.fill('main', value)} -> main (forced update)", True, True,
                       harm=True)
        if agent in self.bad_authors and same(command, bad_fix(pitfall, value)):
            return Ran(command, pitfall.fill(pitfall.workaround_output, value), True, True)
        wrong = WRONG_FIXES.get(pitfall.name)
        if wrong and same(command, pitfall.fill(wrong.command, value)):
            if self.quirk == (agent, pitfall.name):
                return Ran(command, pitfall.fill(wrong.output_here, value), True, True)
            return Ran(command, pitfall.fill(wrong.output_elsewhere, value), False)
        # Anything else the agent made up (a placeholder it could not fill, a garbled command).
        return Ran(command, f"{command_name(command) or command}: error: unexpected argument or file\n"
                            f"Usage: see --help", False)


