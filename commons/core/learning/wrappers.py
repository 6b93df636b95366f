"""Wrappers: commands that run another command where what it needs is at hand.

``nix-shell -p cargo --run 'cargo check'``, ``nix develop -c cargo build``, ``npx prettier .``,
``uvx ruff check``, ``python -m pytest``, ``docker run --rm node:20 npm test``, ``bash -lc 'make'``:
each runs the command it wraps with a program, a package or an environment the bare command did
not have. Run after the bare command failed, the wrapped command is that step tried again, and the
wrapper is what changed (`commons.core.learning.evidence`). A program the shell could not find
(``cargo: command not found``) that then runs under a wrapper and fails on something else was
found by the wrapper: that is its fix, whatever the program's own next failure.

Pure functions over one sub-command's text (no ``&&`` chains: `failure.split_command` makes those).
"""

from __future__ import annotations

import re
import shlex

from commons.core.learning.failure import program_of, segments
from commons.core.learning.scope import past_prefixes, shell_words

# Runners whose next word is the program they run, after their own options.
_RUN_NEXT = {
    ("npx",): frozenset({"-p", "--package", "-c", "--call"}), ("pnpx",): frozenset({"-p", "--package"}),
    ("bunx",): frozenset({"-p", "--package"}), ("uvx",): frozenset({"--from", "--with", "--python", "-p"}),
    ("pnpm", "dlx"): frozenset({"-p", "--package"}), ("yarn", "dlx"): frozenset({"-p", "--package"}),
    ("pnpm", "exec"): frozenset(), ("yarn", "exec"): frozenset(), ("npm", "exec"): frozenset({"-p", "--package"}),
    ("pipx", "run"): frozenset({"--spec", "--python"}), ("uv", "run"): frozenset({"--with", "--python", "-p", "--package",
                                                                                  "--extra", "--group", "--directory"}),
    ("uv", "tool", "run"): frozenset({"--from", "--with", "--python"}), ("poetry", "run"): frozenset(),
    ("pdm", "run"): frozenset(), ("hatch", "run"): frozenset(), ("pipenv", "run"): frozenset(),
    ("bundle", "exec"): frozenset(), ("devbox", "run"): frozenset(), ("asdf", "exec"): frozenset(),
    ("conda", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("mamba", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("micromamba", "run"): frozenset({"-n", "--name", "-p", "--prefix"}),
    ("direnv", "exec"): frozenset(), ("toolbox", "run"): frozenset({"-c", "--container"}),
    ("python", "-m"): frozenset(), ("python3", "-m"): frozenset(),
}  # fmt: skip
# Wrappers whose run starts after a word of their own: `nix develop -c cargo build`, `mise exec node@20 -- npm test`.
_RUN_AFTER = {("nix", "develop"): ("-c", "--command"), ("nix", "shell"): ("-c", "--command"),
              ("mise", "exec"): ("--",), ("mise", "x"): ("--",), ("distrobox", "enter"): ("--",),
              ("rtx", "exec"): ("--",)}
# Wrappers whose option holds the whole command as one shell string.
_RUN_STRING = {("nix-shell",): ("--run", "--command"), ("bash",): ("-c",), ("sh",): ("-c",), ("zsh",): ("-c",),
               ("devbox", "shell"): ("--command", "-c")}
# Containers: the image (or container, or service) first, past the options, then the command run in it.
_CONTAINERS = frozenset({("docker", "run"), ("podman", "run"), ("docker", "exec"), ("podman", "exec"),
                         ("docker", "compose", "run"), ("docker", "compose", "exec"), ("docker-compose", "run"),
                         ("docker-compose", "exec")})
_CONTAINER_VALUED = frozenset({"-v", "--volume", "-e", "--env", "--env-file", "-w", "--workdir", "-u", "--user",
                               "-p", "--publish", "--name", "--network", "--net", "--entrypoint", "--mount", "-l",
                               "--label", "--platform", "--add-host", "--cpus", "-m", "--memory", "--gpus",
                               "--device", "--hostname", "-h", "--ulimit", "--shm-size", "--pull", "--cap-add",
                               "--security-opt", "--tmpfs", "--ipc", "--pid", "--runtime", "--dns", "--log-driver"})
_LOGIN_FLAGS = re.compile(r"^-[a-z]*c[a-z]*$")  # bash -c, -lc, -ic, -lic


def _words(segment: str) -> list[str]:
    words = shell_words(segment)
    return past_prefixes([w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)])


def _head(words: list[str], length: int) -> tuple[str, ...]:
    return tuple(w.rsplit("/", 1)[-1].lower() if i == 0 else w for i, w in enumerate(words[:length]))


def _past_options(words: list[str], valued: frozenset[str]) -> list[str]:
    while words and words[0].startswith("-") and len(words[0]) > 1:
        flag, words = words[0], words[1:]
        if flag in valued and words:
            words = words[1:]
    return words


def wrapped(segment: str) -> str | None:
    """The command a wrapper sub-command runs (``cargo check`` of ``nix-shell -p cargo --run
    'cargo check'``), unwrapped as far as it goes (``nix develop -c bash -lc 'make'`` is ``make``);
    None when ``segment`` wraps nothing."""
    inner = _unwrap_once(segment)
    if inner is None:
        return None
    deeper = wrapped(inner) if len(inner) < len(segment) else None
    return deeper or inner


def _unwrap_once(segment: str) -> str | None:
    words = _words(segment)
    if not words:
        return None
    for head, valued in _RUN_NEXT.items():
        if _head(words, len(head)) == head:
            rest = _past_options(words[len(head):], valued)
            if head == ("direnv", "exec") and rest:
                rest = rest[1:]  # the folder whose environment it loads
            return shlex.join(rest) if rest else None
    for head, marks in _RUN_AFTER.items():
        if _head(words, len(head)) == head:
            at = next((i for i, w in enumerate(words) if w in marks), None)
            rest = words[at + 1:] if at is not None else []
            return shlex.join(rest) if rest else None
    for head, flags in _RUN_STRING.items():
        if _head(words, len(head)) == head:
            for i, word in enumerate(words[len(head):-1], len(head)):
                if word in flags or (head[0] in {"bash", "sh", "zsh"} and _LOGIN_FLAGS.match(word)):
                    return words[i + 1].strip() or None
            return None
    if words[0].rsplit("/", 1)[-1].lower() == "nix" and words[1:2] == ["run"]:
        # `nix run nixpkgs#jq -- .a x.json` runs jq, the installable's attribute.
        program = words[2].rsplit("#", 1)[-1].rsplit(".", 1)[-1] if len(words) > 2 else ""
        args = words[words.index("--") + 1:] if "--" in words else []
        return shlex.join([program, *args]) if program and not program.startswith("-") else None
    for head in _CONTAINERS:
        if _head(words, len(head)) == head:
            rest = _past_options(words[len(head):], _CONTAINER_VALUED)
            return shlex.join(rest[1:]) if len(rest) > 1 else None
    return None


# "cargo: command not found", "'cargo' is not recognized as an internal or external command",
# PowerShell's "The term 'cargo' is not recognized": the shell found no such program.
_MISSING = (re.compile(r"(?:^|[\s:])([\w.\-+]+): (?:command )?not found\b", re.MULTILINE),
            re.compile(r"'([\w.\-+]+)' is not recognized as (?:an internal or external command|the name of a cmdlet)"),
            re.compile(r"The term '([\w.\-+]+)' is not recognized", re.IGNORECASE),
            re.compile(r"exec: \"?([\w.\-+]+)\"?: executable file not found"),
            re.compile(r"command not found: ([\w.\-+]+)"))


def missing_program(failure: str) -> str | None:
    """The program a failure says the shell could not find (``cargo`` of ``bash: line 1: cargo:
    command not found``), or None."""
    for pattern in _MISSING:
        found = pattern.search(failure)
        if found and found.group(1).lower() not in {"line", "bash", "sh", "zsh"}:
            return found.group(1).rsplit("/", 1)[-1].lower()
    return None


# The wrapper's own failures: it never ran the program (no such package, image or flake output),
# so the program's being found is not shown.
WRAPPER_FAILED = re.compile(
    r"error: (?:undefined variable|getting status of|flake '|path '[^']*' does not exist|attribute '|"
    r"cannot (?:find|look up)|file '[^']*' was not found|experimental Nix feature|unable to download)"
    r"|npm (?:ERR!|error) (?:code E404|404|could not determine executable)|could not determine executable to run"
    r"|No solution found when resolving|not found in the package registry|Unable to find image"
    r"|Error response from daemon|pull access denied|manifest unknown|no such service|is not running"
    r"|EnvironmentLocationNotFound|Could not find conda environment",
    re.IGNORECASE)


def provides(failure: str, retry: str) -> bool:
    """Whether ``retry`` (a sub-command) runs under a wrapper the program whose absence
    ``failure`` says made the step fail (``nix-shell -p cargo --run 'cargo check'`` after
    ``cargo: command not found``)."""
    program = missing_program(failure)
    inner = wrapped(retry)
    return program is not None and inner is not None and program in {program_of(seg) for seg in segments(inner)}


def found_by_wrapper(failure: str, retry: str, retry_failure: str) -> bool:
    """Whether ``retry`` ran, under a wrapper, the program whose absence made the step fail
    (`provides`), and the program ran this time, failing otherwise (``retry_failure``, not the
    wrapper's own failure): the wrapper found it."""
    return provides(failure, retry) and bool(retry_failure.strip()) and missing_program(retry_failure) is None \
        and not WRAPPER_FAILED.search(retry_failure)
