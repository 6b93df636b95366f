"""The experiment agent's reader follows advice from words, however the sentence is built, and
only advice about the command it is about to run (issue #29, item 1). Every note here was written
by hand; none is in commons' own template except the first of each group."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from simulations.experiment.reader import advice_for, read_note

# (the command the agent is about to run, the fix it should run, notes that say so in other words)
PARAPHRASES = [
    ("pip install httpx", "uv add httpx", [
        "`pip install <package>` failed with \"error: externally-managed-environment\"; `uv add <package>` succeeded after it (2 of 2 sessions).",
        "Running `pip install httpx` is refused here (externally-managed-environment). `uv add httpx` worked instead.",
        "The system Python is externally managed, so `pip install <pkg>` errors out; the fix was `uv add <pkg>`.",
        "When `pip install PACKAGE` complains about an externally managed environment, switching to `uv add PACKAGE` gets past it.",
        "Use `uv add httpx`: plain `pip install httpx` was rejected with externally-managed-environment.",
        "pip install httpx failed with an externally-managed-environment error, and uv add httpx went through.",
    ]),
    ("npm ci", "npm install", [
        "`npm ci` failed with \"The 'npm ci' command can only install with an existing package-lock.json\"; `npm install` succeeded after it.",
        "There is no lockfile, so `npm ci` fails; `npm install` is what worked.",
        "`npm install` did the trick after `npm ci` refused to run without a package-lock.json.",
        "Whenever 'npm ci' breaks on the missing lockfile, running 'npm install' fixes it.",
        "Workaround: `npm install`. `npm ci` exits with an error when package-lock.json is missing.",
    ]),
    ("git push origin main", "git pull --rebase origin main", [
        "`git push origin <branch>` was rejected (non-fast-forward); it passed after `git pull --rebase origin <branch>`.",
        "Pushing with `git push origin main` gets rejected when the remote moved on; `git pull --rebase origin main` first, then the push goes through.",
        "After running `git pull --rebase origin main`, `git push origin main` succeeded; before that it was rejected as non-fast-forward.",
        "A rejected `git push origin main` (fetch first) was fixed by `git pull --rebase origin main`.",
    ]),
    ("docker compose up -d redis", "docker-compose up -d redis", [
        "`docker compose up -d <service>` failed with \"docker: 'compose' is not a docker command.\"; `docker-compose up -d <service>` succeeded after it.",
        "This machine's Docker has no compose plugin: `docker compose up -d redis` fails, `docker-compose up -d redis` works.",
        "Using the standalone `docker-compose up -d {x}` solved it when `docker compose up -d {x}` said compose is not a docker command.",
        "If `docker compose up -d SERVICE` errors with \"'compose' is not a docker command\", go with `docker-compose up -d SERVICE` instead.",
    ]),
    ("cargo build --release", "rustup update stable", [
        "`cargo build --release` failed with \"requires rustc 1.70 or newer\"; it passed after `rustup update stable`.",
        "The active rustc was too old, so `cargo build --release` failed; `rustup update stable` fixed it.",
        "`rustup update stable` is the fix when `cargo build --release` complains that a dependency needs a newer rustc.",
        "After `rustup update stable` the release build went through; `cargo build --release` had errored on the rustc version.",
    ]),
    ("go test ./...", "go mod tidy", [
        "`go test ./...` failed with \"go: updates to go.mod needed\"; it passed after `go mod tidy`.",
        "go.mod was stale and `go test ./...` refused to run; running `go mod tidy` first sorted it.",
        "Fix: `go mod tidy`, since `go test ./...` stops with 'updates to go.mod needed'.",
        "`go mod tidy` helped: without it `go test ./...` gave the go.mod error.",
    ]),
    ("terraform plan", "terraform init", [
        "`terraform plan` failed with \"Error: Inconsistent dependency lock file\"; it passed after `terraform init`.",
        "The provider lock file was stale: `terraform plan` errored until `terraform init` was run, which resolved it.",
        "Whenever `terraform plan` complains about an inconsistent dependency lock file, the solution is `terraform init`.",
        "`terraform init` worked where `terraform plan` had failed on the lock file.",
    ]),
    ("alembic upgrade head", "alembic merge heads -m merge", [
        "`alembic upgrade head` failed with \"Multiple head revisions are present\"; it passed after `alembic merge heads -m merge`.",
        "Two migration branches had diverged, so `alembic upgrade head` failed; merging them with `alembic merge heads -m merge` fixed it.",
        "`alembic upgrade head` errors out on multiple heads. What worked: `alembic merge heads -m merge`.",
        "If `alembic upgrade head` throws a multiple-heads error, use `alembic merge heads -m merge`.",
    ]),
]

# A second batch, written after the reader, in the styles of other writers: the reader was not
# changed to fit any one of them alone.
PARAPHRASES += [
    ("pip install rich", "uv add rich", [
        "Tried `pip install rich` and got error: externally-managed-environment. Resolved by running `uv add rich`.",
        "On this box, `uv add rich` is how packages get installed; `pip install rich` is blocked by PEP 668.",
    ]),
    ("npm ci", "npm install", [
        "`npm ci` needs a package-lock.json, which this repo lacks. Running `npm install` instead generated one and the install completed.",
    ]),
    ("git push origin main", "git pull --rebase origin main", [
        "The remote had new commits, so `git push origin main` was refused. Rebasing with `git pull --rebase origin main` and pushing again worked.",
    ]),
    ("docker compose up -d redis", "docker-compose up -d redis", [
        "Note: `docker compose` is unavailable (no plugin). The hyphenated `docker-compose up -d redis` starts the service fine.",
    ]),
    ("cargo build --release", "rustup update stable", [
        "Building with `cargo build --release` stopped because tokio-util needs rustc 1.70. Updating the toolchain via `rustup update stable` let the build finish.",
    ]),
    ("go test ./...", "go mod tidy", [
        "`go test ./...` reported that go.mod needs updates. Solution: `go mod tidy`, then rerun the tests.",
    ]),
    ("terraform plan", "terraform init", [
        "Error: Inconsistent dependency lock file on `terraform plan`. `terraform init` resolved the lock file and the plan ran.",
    ]),
    ("alembic upgrade head", "alembic merge heads -m merge", [
        "Multiple heads made `alembic upgrade head` fail. Merging them (`alembic merge heads -m merge`) unblocked the upgrade.",
    ]),
    ("npx tsc --noEmit", "npm install --save-dev @types/node", [
        "`npx tsc --noEmit` could not find the type definitions for node; installing them with `npm install --save-dev @types/node` made the type-check pass.",
    ]),
]

# A third batch, written after the second had passed: prose with commands bare or in quotes.
PARAPHRASES += [
    ("pip install httpx", "uv add httpx", [
        "pip refuses: 'pip install httpx' hits externally-managed-environment. 'uv add httpx' is the way.",
        "Installing httpx with pip is refused on this machine (externally managed Python); adding it through uv (`uv add httpx`) works.",
    ]),
    ("npm ci", "npm install", [
        "No lockfile in the repo means npm ci cannot run. Use npm install.",
        "The install step: `npm install` rather than `npm ci`, since the repo has no package-lock.json.",
    ]),
    ("git push origin main", "git pull --rebase origin main", [
        "Before pushing (`git push origin main`) you may need `git pull --rebase origin main` because the push is rejected when main moved.",
    ]),
    ("go test ./...", "go mod tidy", [
        "Seen twice: `go test ./...` -> \"updates to go.mod needed\". `go mod tidy` then the tests pass.",
    ]),
    ("cargo build --release", "rustup update stable", ["`cargo build --release`: rustc too old. `rustup update stable` fixes it."]),
    ("terraform plan", "terraform init", [
        "Lesson: run `terraform init` whenever `terraform plan` reports an inconsistent lock file.",
        "Had to `terraform init` again before `terraform plan` would run (lock file inconsistent).",
    ]),
    ("docker compose up -d redis", "docker-compose up -d redis", [
        "The compose plugin is missing, so `docker compose up -d redis` fails. Workaround: `docker-compose up -d redis`.",
    ]),
]

# Notes about my command that give no advice to follow: no fix seen, a fix that did not help, a
# command the words only describe.
NO_ADVICE = [
    ("npm ci", "`npm ci` failed with a missing lockfile; `npm install` did not help either."),
    ("npm ci", "`npm ci` failed twice with a missing lockfile (no fix found)."),
    ("git push origin main", "`git status` showed a clean tree after `git push origin main` was rejected."),
    ("pip install httpx", "`uv add httpx` failed with a resolver error; `uv add httpx==0.27` worked."),
]

# Notes about another command (same program, other subcommand or arguments): not advice for mine.
OTHER_COMMANDS = [
    ("pip install httpx", "`pip download <package>` failed with \"No matching distribution\"; `pip download --no-deps <package>` succeeded after it."),
    ("pip install httpx", "`uv sync` failed with \"No `project` table found\"; it passed after `uv init`."),
    ("npm ci", "`npm test` failed with \"Cannot find module 'jest'\"; `npm install --save-dev jest` succeeded after it."),
    ("npm ci", "`npm run build` errors out on a missing env file; `cp .env.example .env` fixed it."),
    ("git push origin main", "`git push origin release` was rejected by a protected-branch rule; `git push origin HEAD:release-candidate` worked."),
    ("git push origin main", "`git pull origin main` failed with divergent branches; `git pull --rebase origin main` fixed it."),
    ("git push origin main", "`git commit -m wip` failed with a hook error; `git commit -m 'wip: parser'` succeeded after it."),
    ("docker compose up -d redis", "`docker build .` failed with \"no space left on device\"; `docker builder prune` fixed it."),
    ("cargo build --release", "`cargo test` failed with a missing fixture; it passed after `make fixtures`."),
    ("cargo build --release", "`cargo clippy` complained about a lint; `cargo clippy --fix` solved it."),
    ("go test ./...", "`go build ./cmd/server` failed with \"undefined: Config\"; it passed after `go generate ./...`."),
    ("terraform plan", "`terraform apply` failed with a state lock; `terraform force-unlock 1234` worked after it."),
    ("alembic upgrade head", "`alembic revision --autogenerate` failed with \"Target database is not up to date\"; `alembic upgrade head` succeeded after it."),
    ("python -m pytest -q tests/test_fetch.py", "`python -m pip install -e .` failed with a build error; it passed after `python -m pip install -U pip`."),
    ("npx tsc --noEmit", "`npx eslint .` failed with a config error; `npm install --save-dev eslint-config-prettier` succeeded after it."),
]

CASES = [(mine, fix, note) for mine, fix, notes in PARAPHRASES for note in notes]


@pytest.mark.parametrize("mine,fix,note", CASES)
def test_a_paraphrased_lesson_leads_to_its_fix(mine, fix, note):
    assert advice_for(note, mine) == fix


@pytest.mark.parametrize("mine,note", OTHER_COMMANDS)
def test_a_lesson_about_another_command_is_not_followed(mine, note):
    assert advice_for(note, mine) == ""


def test_the_reader_follows_at_least_nine_paraphrases_in_ten_and_at_most_one_other_command_in_ten():
    followed = sum(advice_for(note, mine) == fix for mine, fix, note in CASES) / len(CASES)
    other = sum(bool(advice_for(note, mine)) for mine, note in OTHER_COMMANDS) / len(OTHER_COMMANDS)
    assert len(CASES) >= 30 and followed >= 0.9 and other <= 0.1, (followed, other)


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


def test_the_reader_imports_nothing_of_commons():
    source = Path(__file__).resolve().parents[1] / "simulations" / "experiment" / "reader.py"
    imported = {alias.name for node in ast.walk(ast.parse(source.read_text("utf-8")))
                if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
    assert not {name for name in imported if name.split(".")[0] == "commons"}, imported
