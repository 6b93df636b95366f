"""Scope and topics of a lesson (docs/design.md "Scopes and privacy").

A lesson is **local** when it is about this person, project or machine — names, paths, hosts,
one repository's conventions ("this project uses uv", "the person prefers tabs") — and
**shared** when it is about a tool, library, version or platform anyone may meet ("`pip install`
failed with 'error: externally-managed-environment'"). Only shared lessons may ever be
published, so when the evidence is thin the answer is local: a wrong "local" costs one lesson
the commons does not get; a wrong "shared" leaks.

Topics are the tool, library, language and platform names a lesson concerns, from a built-in
vocabulary of common developer tools plus the program names of the commands its episodes ran.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from commons.core.embedding import tokenize
from commons.core.learning.generalise import TOOL_CACHE_NAMED
from commons.core.records import Scope
from commons.core.policy import looks_private
from commons.core.policy import PLACEHOLDER


VOCABULARY = frozenset(
    """
    python python3 pip pip3 pipx uv poetry pdm hatch conda mamba virtualenv venv pyenv setuptools
    wheel twine pytest pytest-asyncio pytest-trio pytest-xdist pytest-cov hypothesis tox nox mypy
    pyright ruff black isort flake8 pylint bandit coverage sphinx mkdocs jupyter ipython
    numpy pandas scipy matplotlib sklearn scikit-learn torch pytorch tensorflow jax
    django flask fastapi starlette uvicorn gunicorn celery sqlalchemy alembic pydantic requests
    httpx aiohttp trio asyncio anyio aiosqlite msgpack pynacl cryptography openssl zeroconf
    node nodejs npm npx yarn pnpm deno bun tsc typescript javascript eslint prettier jest vitest
    mocha webpack vite rollup esbuild babel react vue svelte angular nextjs next express
    cargo rustc rustup rust clippy rustfmt go gofmt golang gcc g++ clang clang++ make cmake ninja
    meson bazel gradle maven mvn java javac kotlin scala sbt swift xcode xcodebuild dotnet ruby
    gem bundler rails php composer perl lua elixir mix erlang haskell ghc stack cabal
    docker docker-compose podman kubectl helm minikube kind terraform ansible vagrant
    git gh git-lfs pre-commit ssh scp rsync curl wget jq sed awk grep ripgrep rg find tar
    gzip zip unzip bash zsh fish sh powershell tmux systemd systemctl journalctl cron
    apt apt-get dpkg dnf yum rpm pacman apk brew homebrew nix snap flatpak
    debian ubuntu fedora alpine arch centos rhel macos windows linux wsl wsl2 freebsd
    sqlite sqlite3 postgres postgresql psql mysql mariadb redis mongodb mongo elasticsearch
    kafka rabbitmq nginx apache caddy
    aws gcloud az azure vercel netlify heroku fly
    """.split()
)

# Shell words that come before the program a command actually runs.
_PREFIXES = frozenset({"sudo", "doas", "env", "time", "nohup", "exec", "command", "builtin", "nice", "timeout"})
# A prefix's options that take a value (``sudo -u postgres``, ``nice -n 10``): the value is no program.
_PREFIX_VALUED = {"sudo": frozenset("ugUCDprTh"), "doas": frozenset("uC"), "env": frozenset("uCS"),
                  "nice": frozenset("n"), "timeout": frozenset("sk")}


def past_prefixes(words: list[str]) -> list[str]:
    """``words`` without the programs that only run the next one (``sudo -u postgres``,
    ``env -i``, ``timeout 30``, ``nice -n 10``) and their options."""
    while words and words[0] in _PREFIXES:
        if words[0] == "command" and words[1:2] in (["-v"], ["-V"]):
            return words  # `command -v x` looks a program up: that is the command
        prefix, words = words[0], words[1:]
        valued = _PREFIX_VALUED.get(prefix, frozenset())
        while words and words[0].startswith("-") and len(words[0]) > 1:
            flag, words = words[0], words[1:]
            if not flag.startswith("--") and flag[-1] in valued and len(flag) == 2 and words:
                words = words[1:]
        if prefix == "timeout" and words and re.match(r"^\d", words[0]):
            words = words[1:]
    return words
# Options a program takes before its sub-command, with a value of their own (`adb -s emulator-5554
# shell`, `git -C repo status`, `kubectl -n prod get pods`, `make -C build test`): the value is no
# sub-command. Only options that take a value are listed; a flag (`git --no-pager log`) is passed
# over as every option is.
_VALUED_BEFORE_SUBCOMMAND = {
    "adb": frozenset({"-s", "-t", "-H", "-P", "-L"}),
    "git": frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"}),
    "kubectl": frozenset({"-n", "--namespace", "--context", "--cluster", "--kubeconfig", "--user"}),
    "helm": frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig"}),
    "make": frozenset({"-C", "--directory", "-f", "--file", "--makefile", "-I", "--include-dir"}),
    "docker": frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"}),
    "podman": frozenset({"--url", "-c", "--connection", "--root", "--runroot"}),
    "npm": frozenset({"--prefix", "-w", "--workspace"}),
    "pnpm": frozenset({"-C", "--dir", "--filter", "-F"}),
    "yarn": frozenset({"--cwd"}),
    "cargo": frozenset({"--manifest-path", "--config", "-Z"}),
    "go": frozenset({"-C"}),
    "uv": frozenset({"--directory", "--project"}),
    "gh": frozenset({"-R", "--repo"}),
    "systemctl": frozenset({"-H", "--host", "-M", "--machine"}),
}


def takes_value(program: str, option: str) -> bool:
    """Whether ``option``, given before ``program``'s sub-command, takes the next word as its value."""
    return option in _VALUED_BEFORE_SUBCOMMAND.get(program.rsplit("/", 1)[-1].lower(), frozenset())


def subcommand_words(words: list[str]) -> list[str]:
    """The words of a command (past its prefixes) after its program that are not options nor an
    option's value (`_VALUED_BEFORE_SUBCOMMAND`): ``adb -s emulator-5554 shell id`` → ``shell id``."""
    valued = _VALUED_BEFORE_SUBCOMMAND.get(words[0].rsplit("/", 1)[-1].lower(), frozenset()) if words else frozenset()
    out: list[str] = []
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = not out and word in valued  # a value before the sub-command, never one after it
        else:
            out.append(word)
    return out


# Programs that run a command somewhere else (a device, a container, a pod, a host) and what comes
# before that command: `adb [-s x] shell CMD`, `docker exec [-it] [-u x] NAME CMD`, `kubectl exec [-n x]
# POD -- CMD`, `ssh [-p 22] HOST CMD`. What such a call does is what its command does.
_EXEC_VALUED = frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "-c", "--container",
                          "-n", "--namespace", "--context", "-p", "-i", "-l", "-o", "-F", "-J"})
_REDIRECTION = re.compile(r"^\d*(?:>>?|<)&?\S*$")


def is_redirection(word: str) -> bool:
    """A shell word that redirects (``2>&1``, ``>out.log``, ``<in``), not an argument."""
    return bool(_REDIRECTION.match(word))


def shell_words(segment: str) -> list[str]:
    """A shell sub-command's words as the shell splits them; with an unbalanced quote, its plain words."""
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


def remote_command(segment: str) -> str | None:
    """The command a shell sub-command runs elsewhere (on a device, in a container or pod, on a host),
    or None: ``adb -s x shell "ls -la /sbin/ 2>&1" 2>&1`` → ``ls -la /sbin/ 2>&1``."""
    split = _remote_split(segment)
    return " ".join(split[1]) if split else None


def remote_place(segment: str) -> str:
    """Where a shell sub-command runs its command, its options aside (``docker exec -it web`` →
    ``docker exec web``; ``adb -s x shell`` → ``adb shell``: the option picks one of the devices
    plain ``adb shell`` may reach), "" when it runs none elsewhere."""
    split = _remote_split(segment)
    if not split:
        return ""
    program, *before = split[0]
    words, skip = [program], False
    for word in before:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = takes_value(program, word) or word in _EXEC_VALUED
        else:
            words.append(word)
    return " ".join(words)


@functools.lru_cache(maxsize=4096)  # asked of the same segments by segment_kind, remote_command and remote_place
def _remote_split(segment: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(the words that place a remote command, the command's words), or None when it runs none elsewhere."""
    try:
        words = past_prefixes([w for w in shlex.split(segment) if not _ASSIGNMENT.match(w)])
    except ValueError:
        return None
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1].lower()
    rest = words[1:]
    if program == "adb":
        subs = subcommand_words(words)
        if not subs or subs[0] != "shell":
            return None
        at = rest.index("shell") + 1
    elif program in {"docker", "podman", "nerdctl", "kubectl", "oc"}:
        if "exec" not in rest:
            return None
        at = rest.index("exec") + 1
        if program in {"kubectl", "oc"}:
            if "--" not in rest[at:]:
                return None
            at = rest.index("--", at) + 1
        else:
            at = _past_exec_options(rest, at) + 1  # the container
    elif program == "ssh":
        at = _past_exec_options(rest, 0) + 1  # the host
    else:
        return None
    inner = rest[at:]
    while inner and is_redirection(inner[-1]):
        inner = inner[:-1]  # the outer command's own redirection (`… shell "x" 2>&1`)
    return ((words[0], *rest[:at]), tuple(inner)) if inner else None


def _past_exec_options(words: list[str], at: int) -> int:
    """The index of the first word from ``at`` on that is neither an option nor an option's value."""
    while at < len(words) and words[at].startswith("-"):
        at += 2 if words[at] in _EXEC_VALUED else 1
    return at


# Programs that run another program or a module: the interesting head is what they run.
_RUNNERS = {
    ("python", "-m"), ("python3", "-m"), ("uv", "run"), ("poetry", "run"), ("pdm", "run"),
    ("npx", None), ("pnpx", None), ("bunx", None), ("pipx", "run"), ("hatch", "run"),
}
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9\-]*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
SHELL_TOOLS = frozenset({"bash", "shell", "sh", "run_command", "terminal", "exec"})


@functools.lru_cache(maxsize=4096)  # asked of the same tool calls by every pass of every night
def command_head(tool: str, target: str) -> str:
    """The situation a tool call stands for: program + subcommand for shell commands.

    ``command_head("Bash", "cd /x && sudo pip install -U requests")`` → ``"pip install"``;
    ``command_head("Bash", "python -m pytest -x")`` → ``"pytest"``;
    ``command_head("Read", "/home/a/x.py")`` → ``"read"`` (for other tools, the tool name).
    """
    if tool.lower() not in SHELL_TOOLS:
        return tool.lower()
    # The last command of a chain is usually the one that matters ("cd x && make test").
    segments = [s for s in re.split(r"&&|\|\||;|\n", target) if s.strip()]
    if not segments:
        return tool.lower()
    segment = segments[-1] if len(segments) > 1 and segments[0].split()[0:1] == ["cd"] else segments[0]
    words = past_prefixes([w for w in segment.strip().split() if not _ASSIGNMENT.match(w)])
    if not words:
        return tool.lower()
    for program, flag in _RUNNERS:
        if words[0].rsplit("/", 1)[-1] == program and (flag is None or words[1:2] == [flag]):
            words = words[1 if flag is None else 2:]
            break
    if not words:
        return tool.lower()
    program = words[0].rsplit("/", 1)[-1].lower()
    program = re.sub(r"(?<=[a-z])\d+(?:\.\d+)*$", "", program) if program.startswith("python") else program
    rest = subcommand_words(words)
    if rest and _SUBCOMMAND.match(rest[0]) and not rest[0].endswith((".py", ".js", ".ts", ".sh")):
        return f"{program} {rest[0]}"
    return program


def topics(text: str, heads: Iterable[str] = ()) -> tuple[str, ...]:
    """The tool / library / language names ``text`` concerns, plus the programs of ``heads``.

    Sorted and deduplicated, so the same lesson always yields the same topics.
    """
    found = {t for t in tokenize(text) if t in VOCABULARY}
    for head in heads:
        program = head.split()[0] if head.strip() else ""
        if program and (program in VOCABULARY or "-" in program or program.isalpha()):
            found.add(program)
    return tuple(sorted(found))


# A home directory as the scrubber writes it ("~/src/app", "~\\AppData"): someone's own files.
_HOME = re.compile(r"(?<![\w.~])~[/\\]")

# Words that tie a lesson to this person or this repository.
_LOCAL_MARKERS = re.compile(
    r"\b(?:this|our|my|the person|the user|the owner)\s+(?:project|repo|repository|codebase|"
    r"team|company|machine|laptop|server|setup|branch|workspace|monorepo|app|service)\b"
    r"|\bthe (?:person|user|owner)\b|\bprefer(?:s|red|ence)?\b|\bconvention\b|\bin here\b"
    r"|\bwe (?:use|keep|always|never)\b|<(?:path|host|email|ip|secret|project)>",
    re.IGNORECASE,
)


def scrubbed_detail(text: str) -> str | None:
    """The first placeholder the scrubber left in ``text`` (``<password>``, ``~/``), or None.

    Shared means clean: a text the scrubber already changed held something of someone's (a key,
    a password, an address, a home directory), and a lesson that carries one stays on this node.
    The placeholder is what is named, never the value (it is gone). A tool's own cache
    (``~/.cache/pip``) is in every home alike and says nothing of the person's.
    """
    found = PLACEHOLDER.search(text) or _HOME.search(TOOL_CACHE_NAMED.sub("", text))
    return found.group(0) if found else None


@dataclass(frozen=True)
class ScopeDecision:
    scope: Scope
    topics: tuple[str, ...]
    reason: str  # one line a morning report can show next to the lesson


def names_project(text: str, project_names: Iterable[str]) -> str | None:
    """The first of ``project_names`` that ``text`` names, or None. A project's own names (its
    folder, its repository, its package and module names) never leave it (docs/privacy.md)."""
    words = set(tokenize(text))
    for name in project_names:
        low = name.lower()
        if not name or low in VOCABULARY:
            continue
        # "SpotterWeb" is the project "spotter" in module case: a word that begins with a
        # project name of four letters or more names it too.
        if low in words or (len(low) >= 4 and any(w.startswith(low) for w in words)):
            return name
    return None


def classify(text: str, heads: Iterable[str] = (), *, project_names: Iterable[str] = ()) -> ScopeDecision:
    """Decide whether a lesson is local or shared, and which topics it concerns.

    ``project_names`` are words that name the owner's own projects (e.g. the basenames of the
    working directories sessions ran in): a lesson that mentions one is local.
    """
    heads = tuple(heads)
    found = topics(text, heads)
    if looks_private(text):
        return ScopeDecision(Scope.LOCAL, found, "mentions a path, host, address or secret")
    scrubbed = scrubbed_detail(text)
    if scrubbed:
        return ScopeDecision(Scope.LOCAL, found, f"held a secret or personal detail, now {scrubbed!r}")
    marker = _LOCAL_MARKERS.search(text)
    if marker:
        return ScopeDecision(Scope.LOCAL, found, f"about this person or project ({marker.group(0)!r})")
    named = names_project(text, project_names)
    if named:
        return ScopeDecision(Scope.LOCAL, found, f"names the project {named!r}")
    if not any(t in VOCABULARY for t in found):
        return ScopeDecision(Scope.LOCAL, found, "names no tool, library or platform anyone may meet")
    return ScopeDecision(Scope.SHARED, found, "about " + ", ".join(t for t in found if t in VOCABULARY))
