"""Hand-written notes for the experiment's reader (issue #29, item 1): paraphrases of correct
lessons, in many writers' styles, notes about other commands, and notes that give nothing to follow.

None is in commons' template except the first of each group; the second and third batches were
written after the reader, and the reader was not changed to fit any one of them alone.
``reader_figures`` measures the reader on them, with each note's package, service or crate
swapped for a value drawn by seed (so a seed's figure is the reader's on notes it was not tuned to).
"""

from __future__ import annotations

import random

from simulations.experiment.reader import advice_for

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


# How the reader did on each later batch the first time it read it, before anything was changed
# for that batch (followed to the right fix, of how many): a measure of how it does on words it
# was not written for. The first batch is the one it was written against.
FIRST_READ = {"second batch": (6, 10), "third batch": (12, 15)}

# The value each group's notes use, and the values a seed may put in its place.
VALUES = {"httpx": ("rich", "attrs", "tenacity", "pydantic", "orjson"),
          "rich": ("httpx", "click", "typer", "loguru"),
          "redis": ("postgres", "minio", "mailhog", "kafka")}


def _swap(text: str, old: str, new: str) -> str:
    return text.replace(old, new)


def reader_figures(seed: int) -> dict:
    """The share of paraphrases the reader follows to their fix, and of notes about another command
    it follows at all, with values drawn by ``seed``."""
    rng = random.Random(f"paraphrases/{seed}")
    followed = total = 0
    for mine, fix, notes in PARAPHRASES:
        old = next((v for v in VALUES if v in mine.split()), None)
        new = rng.choice(VALUES[old]) if old else None
        for note in notes:
            m, f, n = (mine, fix, note) if old is None else (_swap(mine, old, new), _swap(fix, old, new), _swap(note, old, new))
            followed += advice_for(n, m) == f
            total += 1
    other = sum(bool(advice_for(note, mine)) for mine, note in OTHER_COMMANDS)
    quiet = sum(not advice_for(note, mine) for mine, note in NO_ADVICE)
    return {"follows_paraphrase": round(followed / total, 4), "paraphrases": total,
            "follows_other_command": round(other / len(OTHER_COMMANDS), 4), "other_commands": len(OTHER_COMMANDS),
            "no_advice_kept_quiet": round(quiet / len(NO_ADVICE), 4)}
