"""Seeded text corpora and queries for recall's exactness: three kinds of store, four kinds of query.

Written for ``bench_recall_index.py`` (10^5 and 10^6 rows) and ``tests/test_recall_index.py``
(a few thousand); the same seed gives the same texts on every machine. Nothing here is read from a
transcript: the vocabulary is made up from the shapes a coding session has.

Stores (``KINDS``):

- ``lessons``: texts shaped as the lessons ``commons.core.learning.lessons`` writes (a command that
  failed with an error, what worked after it or that no fix was seen, with the sessions' counts; the
  person correcting the agent), over tools, subcommands, flags, packages, paths, versions and
  errors, with a long tail of generated names;
- ``errors``: short error lines, one to a dozen words, many repeated or nearly so (a few hundred
  shapes dominate, as in a real archive);
- ``mixed``: long texts (40 to 200 words) mixing prose, commands, log lines, paths and stack frames:
  dense vectors, where every dimension of the embedding is used.

Queries (``QUERY_KINDS``), drawn from the store they are asked of:

- ``words``: a run of words from a stored text (what an agent sees again);
- ``paraphrase``: half the words of a stored text, shuffled, with words of another and ordinary ones;
- ``rare``: a name that few texts hold, with a word or two around it;
- ``common``: common words of the store's kind only ("error failed install").

Priors as a store ages: last touches mostly recent (exponential, mean 40 days) with a uniform tail
over 400 days, a few touched after the reference time; strengths from 0.2 to 12, most near 1.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from commons.core.learning.lessons import DAY

KINDS = ("lessons", "errors", "mixed")
QUERY_KINDS = ("words", "paraphrase", "rare", "common")
NOW = 400 * DAY

TOOLS = {
    "pip": "install uninstall download wheel freeze show", "npm": "ci install run test publish audit",
    "pnpm": "install add run build", "yarn": "install add build test", "cargo": "build test run clippy fmt add",
    "go": "build test mod get vet run", "mvn": "package install test compile verify", "gradle": "build test assemble",
    "docker": "build run compose push pull exec", "kubectl": "apply get describe logs rollout delete",
    "terraform": "plan apply init validate import", "git": "push pull rebase merge commit checkout fetch clone",
    "make": "test build install lint all", "pytest": "-x -q -k --lf -vv", "jest": "--watch --ci --coverage",
    "tsc": "--noEmit --build -p", "eslint": "--fix --ext .", "ruff": "check format --fix", "mypy": "--strict .",
    "uv": "sync run pip add lock", "poetry": "install add lock run", "brew": "install upgrade link",
    "apt-get": "install update upgrade", "ssh": "-i -p -o", "rsync": "-av --delete -e", "curl": "-sSL -X -H -o",
    "psql": "-U -h -d -c", "node": "--inspect -e", "python": "-m -c", "rustc": "--edition --crate-type",
    "swift": "build test package", "xcodebuild": "-scheme -workspace test", "dotnet": "build test restore run",
    "bundle": "install exec update", "composer": "install require update", "helm": "install upgrade template",
    "gcloud": "deploy auth builds", "aws": "s3 ecr lambda sts", "systemctl": "restart status enable",
}
ERRORS = [
    "No module named {name}", "ModuleNotFoundError: No module named '{name}'", "permission denied",
    "Permission denied (publickey)", "connection refused", "command not found: {tool}", "Cannot find module '{name}'",
    "EACCES: permission denied, open '{path}'", "ENOENT: no such file or directory, open '{path}'",
    "error[E0433]: failed to resolve: use of undeclared crate or module `{name}`", "segmentation fault (core dumped)",
    "fatal: refusing to merge unrelated histories", "fatal: The current branch {branch} has no upstream branch",
    "error: failed to push some refs to '{host}'", "Killed: out of memory", "timed out after {n}s",
    "TypeError: {name} is not a function", "ImportError: cannot import name '{name}' from '{module}'",
    "npm ERR! 404 Not Found - GET https://registry.npmjs.org/{name}", "error TS2307: Cannot find module '{name}'",
    "SyntaxError: invalid syntax", "AssertionError: expected {n} got {m}", "KeyError: '{name}'",
    "version solving failed: {name} {version} requires python >={version}", "no matching distribution found for {name}",
    "could not find `Cargo.toml` in `{path}` or any parent directory", "undefined reference to `{name}'",
    "{path}:{n}:{m}: error: expected ';' before '}}' token", "database is locked", "address already in use :{port}",
    "certificate verify failed: unable to get local issuer certificate", "rate limit exceeded, retry after {n}s",
    "lockfile is out of date: run {tool} install", "the lock file needs to be updated", "disk quota exceeded",
    "invalid value for --{flag}: {name}", "unknown flag: --{flag}", "mismatched types: expected `{name}`, found `{module}`",
    "cannot borrow `{name}` as mutable more than once at a time", "Unhandled promise rejection: {name}",
    "java.lang.NullPointerException at {module}.{name}({name}.java:{n})", "gradle build failed with exit code {n}",
    "pod {name} CrashLoopBackOff", "Error: resource {name} already exists", "403 Forbidden", "401 Unauthorized",
    "502 Bad Gateway from {host}", "tests failed: {n} failed, {m} passed", "{n} errors found in {m} files",
]
FIXES = [
    "{tool} install {name}", "{tool} {sub} --{flag}", "git push --set-upstream origin {branch}", "chmod +x {path}",
    "export PATH={path}:$PATH", "rm -rf node_modules && npm ci", "{tool} {sub} {name}=={version}",
    "pip install -e .", "cargo add {name}", "npm install --save-dev {name}", "sudo systemctl restart {name}",
    "ssh-add {path}", "kill the process on port {port}", "edit {path}", "uv sync --frozen", "docker compose up -d {name}",
]
CLAIMS = [
    "use {tool} not {tool2} in this project", "the tests live in {path}", "we deploy with {tool}, never by hand",
    "{name} is deprecated, use {module}", "do not touch {path}", "run {tool} {sub} before committing",
    "the branch is {branch}, not main", "that port is taken by {name}", "this repo pins {name} to {version}",
    "{tool} needs the --{flag} flag here", "wait, that is the staging database", "no, {name} lives in {module}",
]
PROSE = ("the a we it this that then so but when after before because while if not only also again still "
         "first next last other same new old small large fast slow good bad right wrong all some most few "
         "test tests build run change changed fix fixed check checked try tried work works worked fail fails "
         "failed error errors warning file files code line lines function module package service server client "
         "request response user users data database table query config setting settings path folder branch "
         "commit merge review release version update install deploy cache log logs output input value values "
         "type types name names list key keys time times step steps issue issues problem reason case cases "
         "should would could might must need needs want wants seems looks means makes takes gives keeps").split()
SYLLABLES = "ka ro mi tu zen lo vex qua dri pel sor nim bat fu gri hal jo ket lum nar osk pim rud sil tov wex yar zu".split()


def _names(rng: random.Random, count: int) -> list[str]:
    """Made-up identifiers (packages, modules, crates, functions): the rare words of a store."""
    out: set[str] = set()
    joiners = ("", "-", "_", "", ".")
    while len(out) < count:
        parts = ["".join(rng.choices(SYLLABLES, k=rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
        out.add(rng.choice(joiners).join(parts))
    return sorted(out)


@dataclass(frozen=True)
class Corpus:
    """A store's texts and priors, and queries asked of it, with the kind of each query."""

    kind: str
    texts: list[str]
    touched: np.ndarray
    strength: np.ndarray
    queries: list[str]
    query_kinds: list[str]


class _Words:
    """The store's vocabulary, drawn Zipf-wise: a few words common, a long tail rare."""

    def __init__(self, rng: random.Random, names: int) -> None:
        self.rng = rng
        self.names = _names(rng, names)
        rng.shuffle(self.names)
        self._cumulative = list(itertools.accumulate(1 / (i + 1) ** 0.9 for i in range(len(self.names))))
        self.tools = sorted(TOOLS)

    def name(self) -> str:
        at = self.rng.random() * self._cumulative[-1]
        return self.names[min(bisect.bisect(self._cumulative, at), len(self.names) - 1)]

    def fill(self, template: str) -> str:
        r, tool = self.rng, self.rng.choice(self.tools)
        return template.format(
            name=self.name(), module=self.name().replace("-", "_"), tool=tool, tool2=r.choice(self.tools),
            sub=r.choice(TOOLS[tool].split()), flag=r.choice(("no-deps", "force", "frozen", "offline", "verbose",
                                                              "release", "all", "dry-run", self.name())),
            path="/".join(r.choice(("src", "lib", "tests", "app", "cmd", "pkg", "<home>", self.name()))
                          for _ in range(r.randint(1, 4))) + r.choice(("", ".py", ".ts", ".rs", ".go", ".json", ".toml")),
            branch=r.choice(("main", "develop", "<branch>", f"feat/{self.name()}")), host=r.choice(("<host>", "origin",
                                                                                                   "github.com")),
            version=f"{r.randint(0, 5)}.{r.randint(0, 30)}" + (f".{r.randint(0, 9)}" if r.random() < 0.5 else ""),
            n=r.randint(1, 600), m=r.randint(1, 90), port=r.choice((3000, 5432, 8000, 8080, 6379, r.randint(1024, 65535))))

    def command(self) -> str:
        tool = self.rng.choice(self.tools)
        words = [tool, self.rng.choice(TOOLS[tool].split())]
        if self.rng.random() < 0.5:
            words.append(self.name())
        return " ".join(words)


def _lesson(w: _Words) -> str:
    r = w.rng
    if r.random() < 0.15:
        return f"The person corrected the agent's `{w.command()}`: \"{w.fill(r.choice(CLAIMS))}\"" + \
            (f" (seen {r.randint(2, 6)} times)." if r.random() < 0.4 else ".")
    head = f"`{w.command()}` failed with \"{w.fill(r.choice(ERRORS))}\""
    sessions = r.randint(1, 9)
    tail = f" ({r.randint(1, sessions)} of {sessions} sessions)" if sessions > 1 else ""
    shape = r.random()
    if shape < 0.5:
        return f"{head}; `{w.fill(r.choice(FIXES))}` succeeded after it{tail}."
    if shape < 0.7:
        return f"{head}; it passed after `{w.fill(r.choice(FIXES))}`{tail}."
    if shape < 0.8:
        return f"{head}; only a step that deletes files was seen to work, not named here{tail}."
    return f"{head}; no fix was seen ({r.randint(2, 40)} times in {sessions} sessions)."


class _ErrorLines:
    """Short error lines: a few hundred filled shapes dominate (the same failure, again)."""

    def __init__(self, w: _Words) -> None:
        self.w = w
        self.seen = [w.fill(w.rng.choice(ERRORS)) for _ in range(400)]
        self._cumulative = list(itertools.accumulate(1 / (i + 1) for i in range(len(self.seen))))

    def __call__(self) -> str:
        r = self.w.rng
        if r.random() < 0.4:
            line = r.choices(self.seen, cum_weights=self._cumulative)[0]
        else:
            line = self.w.fill(r.choice(ERRORS))
        words = line.split()
        return " ".join(words[: r.randint(1, 12)]) if r.random() < 0.3 else line


def _mixed(w: _Words) -> str:
    r, parts, words = w.rng, [], 0
    length = r.randint(40, 200)
    while words < length:
        pick = r.random()
        if pick < 0.45:
            sentence = r.choices(PROSE, k=r.randint(8, 30))
            for i in range(0, len(sentence), 7):  # a name every seventh word or so
                if r.random() < 0.85:
                    sentence[i] = w.name()
            parts.append(" ".join(sentence) + ".")
        elif pick < 0.65:
            parts.append(f"$ {w.command()} --{r.choice(('verbose', 'quiet', 'json'))}")
        elif pick < 0.85:
            parts.append(w.fill(r.choice(ERRORS)))
        else:
            parts.append(w.fill('  File "{path}", line {n}, in {name}'))
        words += parts[-1].count(" ") + 1
    return "\n".join(parts)


def _queries(kind: str, texts: list[str], w: _Words, count: int) -> tuple[list[str], list[str]]:
    r, out, kinds = w.rng, [], []
    common = {"lessons": "failed with error install succeeded after sessions no fix was seen".split(),
              "errors": "error failed permission denied not found module fatal".split(),
              "mixed": PROSE[:60]}[kind]
    for i in range(count):
        query_kind = QUERY_KINDS[i % len(QUERY_KINDS)]
        words = r.choice(texts).split()
        if query_kind == "words":
            start = r.randrange(len(words))
            q = words[start:start + r.randint(3, 12)]
        elif query_kind == "paraphrase":
            other = r.choice(texts).split()[:20]
            q = r.sample(words, max(1, len(words[:24]) // 2)) + r.sample(other, min(2, len(other))) + \
                r.sample(common, 2)
            r.shuffle(q)
        elif query_kind == "rare":
            q = [w.names[-1 - r.randrange(len(w.names) // 2)]] + r.sample(common, r.randint(0, 2))
        else:
            q = r.sample(common, r.randint(2, 4))
        out.append(" ".join(q))
        kinds.append(query_kind)
    return out, kinds


def corpus(kind: str, rows: int, queries: int, seed: int) -> Corpus:
    """``rows`` texts of one kind, their priors, and ``queries`` queries, all from ``seed``."""
    if kind not in KINDS:
        raise ValueError(f"corpus(): kind {kind!r} is not one of {KINDS}")
    rng = random.Random(f"{kind}/{seed}")
    w = _Words(rng, names=max(2_000, rows // 5))
    make: Callable[[], str] = {"lessons": lambda: _lesson(w), "errors": _ErrorLines(w), "mixed": lambda: _mixed(w)}[kind]
    texts = [make() for _ in range(rows)]
    nprng = np.random.default_rng(rng.getrandbits(32))
    age = np.where(nprng.random(rows) < 0.7, nprng.exponential(40, rows), nprng.random(rows) * 400)
    age[nprng.random(rows) < 0.01] *= -0.05  # a few touched after the reference time
    touched = NOW - age * DAY
    strength = np.clip(nprng.lognormal(0.0, 0.8, rows), 0.2, 12).astype(np.float32)
    q, qk = _queries(kind, texts, w, queries)
    return Corpus(kind, texts, touched, strength, q, qk)
