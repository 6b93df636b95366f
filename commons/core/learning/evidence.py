"""Evidence of a fix: what, in the same session, really made a failed step succeed.

A fix is named only when the session proves it (issue #25): the failing step is **tried again**
— the same tool on the same target (the same command head and key argument, the same MCP tool,
an edit of the same file, the shell's search for what a failed Grep or Glob looked for) or clearly
the same goal (`SAME_GOAL`) — and the retry **succeeds**.
The fix is then what changed in between:

- ``RETRY_CHANGED``: the retry's own difference (``git push --set-upstream origin <branch>``
  after ``git push``; ``sudo ./install.sh`` after ``./install.sh``);
- ``CHANGED_BEFORE``: a state-changing step before the successful retry (an install, a format,
  a config change, an edit of the file the error names), preferring the one the error text
  names, then the agent's own words just before it, then setting the project up;
- ``READ_BEFORE``: for an edit the tool refused until the file was read, the Read before it;
- ``RERUN``: the same call again with nothing changed (a transient failure: low confidence);
- ``FOUND_BY_WRAPPER``: a program the shell could not find, run again under a wrapper that
  provides it (``nix-shell -p cargo --run 'cargo check'``, `commons.core.learning.wrappers`): the
  retry may fail on something of the program's own, the program was found.

A command run on a device, in a container or on a host (``adb shell x``, ``docker exec web x``,
`scope.remote_command`) is what runs there: its kind is that command's, and it is tried again by
that command run again in the same place.

Read-only steps (listing, reading, printing, searching, ``--version``, status, checks such as a
test run) and clean-up or abort steps (``git rebase --abort``, ``git stash``, ``rm`` of a temporary
file) are never fixes; nor is the next task, since only a retry of the failing step proves one.
A retry whose exit status another program decides (``make 2>&1 | tail``, ``cmd; echo done``)
proves nothing. A retry that fails again refutes the steps taken before it.

The classification of steps is data (`READ_ONLY_TOOLS`, `READ_ONLY_PROGRAMS`, `READ_ONLY_WORDS`,
`CLEAN_UP`), testable on its own (`step_kind`). `shows_fix` is the same rules asked of another
session's calls: did they run a given fix step and then succeed at the failing step?

Pure functions and one small bounded tracker (`advance`) over the ordered calls of a session.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from commons.core.learning.failure import is_bare, program_of, segments, split_command
from commons.core.learning.generalise import COMMON_WORDS, fills
from commons.core.learning.scope import SHELL_TOOLS, command_head, past_prefixes, remote_command, remote_place, takes_value
from commons.core.learning.script_writes import script_write_step, script_writes
from commons.core.learning.wrappers import found_by_wrapper, provides, wrapped
from commons.core.policy import clip, scrub

HORIZON = 40  # calls after a failure within which its retry may still come
MAX_OPEN = 8  # failures awaiting their retry at once (oldest forgotten first)
MAX_STEPS = 6  # state-changing steps kept between a failure and its retry
STEP_CHARS = 120
WORDS_CHARS = 300  # the agent's words kept beside a step (what it said it was doing)


class Evidence(enum.Enum):
    RETRY_CHANGED = "retry-changed"
    CHANGED_BEFORE = "changed-before-retry"
    READ_BEFORE = "read-before-retry"
    RERUN = "rerun-unchanged"
    FOUND_BY_WRAPPER = "found-by-wrapper"  # a missing program ran under a wrapper (then failed otherwise)


# How sure each kind of evidence is that the step made the failing one succeed.
CONFIDENCE = {
    Evidence.READ_BEFORE: 0.9, Evidence.RETRY_CHANGED: 0.8, Evidence.FOUND_BY_WRAPPER: 0.8,
    Evidence.CHANGED_BEFORE: 0.7, Evidence.RERUN: 0.3,
}  # fmt: skip
POINTED_BONUS = 0.1  # the error text or the agent's words named the step
NAMED_MIN = 0.5  # confidence from which a fix is named in a lesson


@dataclass(frozen=True)
class Resolution:
    """The fix a session proved for one failed call."""

    evidence: Evidence
    command: str  # the step: the changed retry, the step before it, or the retry (RERUN)
    tool: str = ""  # the tool that ran the step
    confidence: float = 0.0
    retry: str = ""  # the retry that succeeded (for CHANGED_BEFORE / READ_BEFORE)
    refuted: tuple[str, ...] = ()  # steps taken before a retry that failed again

    def to_json(self) -> dict[str, object]:
        return {"evidence": self.evidence.value, "command": self.command, "tool": self.tool,
                "confidence": self.confidence, "retry": self.retry, "refuted": list(self.refuted)}

    @classmethod
    def from_json(cls, body: dict[str, object]) -> Resolution | None:
        """None for a resolution an earlier version mined without evidence (``relation``)."""
        if "evidence" not in body:
            return None
        return cls(Evidence(str(body["evidence"])), str(body["command"]), str(body.get("tool") or ""),
                   float(body.get("confidence") or 0.0), str(body.get("retry") or ""),  # type: ignore[arg-type]
                   tuple(str(s) for s in body.get("refuted") or ()))  # type: ignore[union-attr]


def is_proven(resolution: Resolution | None) -> bool:
    return resolution is not None and resolution.confidence >= NAMED_MIN


# --------------------------------------------------------------------------------------------
# What kind of step a call is (data)


class StepKind(enum.Enum):
    READ_ONLY = "read-only"  # looks, prints, searches, checks: never a fix
    CLEAN_UP = "clean-up"  # undoes or abandons an attempt: never a fix
    STATE_CHANGING = "state-changing"  # may be a fix


READ_ONLY_TOOLS = frozenset({
    "read", "grep", "glob", "ls", "websearch", "webfetch", "todowrite", "todoread", "bashoutput",
    "task", "agent", "exitplanmode", "killshell", "notebookread", "list_directory", "read_file",
    "search_file_content", "glob_files", "google_web_search", "web_fetch", "read_many_files",
})  # fmt: skip
READ_ONLY_PROGRAMS = frozenset({
    "ls", "ll", "dir", "cat", "bat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag",
    "find", "fd", "locate", "which", "whereis", "type", "echo", "printf", "pwd", "wc", "file", "stat",
    "tree", "du", "df", "env", "printenv", "id", "whoami", "groups", "uname", "date", "hostname", "ps",
    "pgrep", "top", "htop", "lsof", "netstat", "ss", "ping", "dig", "nslookup", "host", "true", "false",
    "sleep", "test", "[", "[[", "diff", "cmp", "md5sum", "sha256sum", "sha1sum", "readlink", "realpath",
    "basename", "dirname", "nproc", "free", "uptime", "lscpu", "lsblk", "lsusb", "lspci", "nvidia-smi",
    "jq", "yq", "column", "sort", "uniq", "cut", "awk", "tr", "xxd", "od", "hexdump", "strings", "nm",
    "objdump", "ldd", "readelf", "history", "man", "get-childitem", "get-content", "test-path",
    "select-string", "get-command", "write-host", "write-output", "get-process", "get-item",
    "pytest", "jest", "vitest", "mocha", "mypy", "pyright", "tsc", "eslint", "flake8", "pylint",
    "shellcheck", "hadolint", "bandit", "clippy",
    "getprop", "dumpsys",  # Android's shell: its properties, its services' state
})  # fmt: skip
# Sub-commands and flags that make any program's call a look rather than a change.
READ_ONLY_WORDS = frozenset({
    "--version", "-v", "-V", "version", "--help", "-h", "help", "status", "log", "show", "diff", "list",
    "ls", "info", "view", "inspect", "describe", "get", "logs", "ps", "images", "outdated", "freeze",
    "search", "check", "--check", "--dry-run", "-n", "whoami", "config --get", "config --list",
    "config -l", "remote -v", "branch", "rev-parse", "ls-files", "ls-remote", "blame", "reflog",
    "test", "lint", "top", "is-active", "is-enabled", "cat-file", "shortlog", "tag -l", "explain",
    "doctor", "audit", "why", "tree", "env", "-l", "clippy", "vet", "--list",
})  # fmt: skip
# Package managers and service CLIs asked what there is (``winget list``, ``gh pr view``, ``gcloud
# compute instances list``, ``helm status x``): a sub-command of `QUERY_VERBS` among the first words
# before an option is a look. Programs that only ever query (``apt-cache``, ``dpkg-query``) and the
# querying flags of others (``dpkg -l``, ``rpm -qa``, ``pacman -Qi``, ``dotnet --list-sdks``) too.
QUERY_CLIS = frozenset({
    "winget", "choco", "scoop", "gem", "conda", "mamba", "micromamba", "helm", "gh", "glab", "gcloud", "az",
    "aws", "snap", "flatpak", "pipx", "rustup", "nvm", "pyenv", "sdk", "dotnet", "composer", "bundle",
    "poetry", "pdm", "asdf", "mise", "volta", "fnm", "flyctl", "fly", "vercel", "netlify", "heroku",
    "firebase", "supabase", "wrangler", "terraform", "tofu", "pulumi", "podman", "nerdctl", "crictl",
    "minikube", "kind", "k3d", "microk8s", "multipass", "vagrant", "virsh", "lxc", "incus", "nmcli", "ip",
    "launchctl", "sc", "netsh", "solana", "spl-token",
    "adb", "pm",  # Android's debug bridge (`adb devices`) and package manager (`pm list packages`, `pm path x`)
})  # fmt: skip
QUERY_VERBS = frozenset({
    "list", "ls", "show", "status", "info", "view", "describe", "get", "search", "inspect", "logs", "whoami",
    "version", "outdated", "current", "which", "balance", "address", "check", "validate", "plan", "history",
    "query", "ps", "images",
    "devices", "get-state", "get-serialno", "path", "dump",
})  # fmt: skip
# AWS's and gcloud's verbs are joined to their object: `describe-instances`, `get-value`, `list-buckets`.
_QUERY_VERB_PREFIX = re.compile(r"^(?:list|describe|get|show)-[a-z]")
QUERY_PROGRAMS = frozenset({"apt-cache", "apt-file", "dpkg-query", "journalctl", "lsb_release", "sw_vers",
                            "systeminfo", "ver", "winver", "ipconfig", "getent", "locale", "timedatectl",
                            "hostnamectl", "loginctl"})
_QUERY_FLAGS = re.compile(r"^(?:dpkg\s+(?:-[lsLS]\b|--(?:list|status|listfiles|search)\b)|rpm\s+-q\w*|"
                          r"pacman\s+-(?:Q\w*|S[sil]\w*)|dotnet\s+--(?:list-sdks|list-runtimes|info)\b|"
                          r"wsl\s+(?:-l|--list|--status)\b|apt\s+(?:list|show|search|policy)\b|"
                          r"brew\s+(?:list|info|search|outdated|--prefix)\b)")


def is_query(words: Sequence[str]) -> bool:
    """Whether a command (its words past prefixes and assignments) only asks a package manager or a
    service's CLI what there is (`QUERY_CLIS`, `QUERY_PROGRAMS`)."""
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1].lower().removesuffix(".exe")
    if program in QUERY_PROGRAMS and not (program == "journalctl" and any(w.startswith("--vacuum") or w == "--rotate"
                                                                          for w in words)):
        return True
    if _QUERY_FLAGS.match(" ".join([program, *words[1:]])):
        return True
    if program not in QUERY_CLIS:
        return False
    subs: list[str] = []
    i = 1
    while i < len(words) and len(subs) < 3:
        if words[i].startswith("-"):
            if subs or not takes_value(program, words[i]):
                break  # past the sub-commands: an option's value may be any word
            i += 2  # `adb -s emulator-5554 devices`: the option's value comes before the sub-command
            continue
        subs.append(words[i].lower())
        i += 1
    return any(word in QUERY_VERBS or _QUERY_VERB_PREFIX.match(word) for word in subs)


# Steps that undo or abandon an attempt: what they restore is the state before it, not a fix.
CLEAN_UP = (
    re.compile(r"^git (?:rebase|merge|cherry-pick|am|revert) --(?:abort|quit|skip)\b"),
    re.compile(r"^git stash(?:\s+(?:push|save|-u|--include-untracked|-k|--keep-index)\b.*)?$"),
    re.compile(r"^git (?:reset|restore|checkout --|clean)\b"),
    # `rm` of a temporary file is tidying up; `rm` of a stale lock, a cache or a build folder is a
    # change that can be the fix (the error names the lock), so only temporary paths are clean-up.
    re.compile(r"^rm\s+(?:-\w+\s+)*(?:/tmp/|/var/tmp/|\S*\.tmp\b|\S*\.bak\b|\S*~\s*$)"),
    re.compile(r"^(?:exit|logout|clear|reset|cd\s*$)"),
)
# MCP tools named for looking ("mcp__docs__SearchDocumentation", "get-pod", "list_issues").
_LOOKING_TOOL = re.compile(r"(?:^|[-_]|(?<=[a-z])(?=[A-Z]))(?:search|get|list|read|fetch|describe|query|find|view|show|"
                           r"status|logs?|inspect|lookup|browse|info)(?=$|[-_A-Z])", re.IGNORECASE)
# Tools that change a file.
EDIT_TOOLS = frozenset({"edit", "multiedit", "write", "notebookedit", "str_replace_based_edit_tool",
                        "replace", "write_file", "apply_patch", "create_file", "edit_file"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def is_shell(tool: str) -> bool:
    return tool.lower() in SHELL_TOOLS or tool.lower() in {"run_shell_command", "shell_command", "local_shell"}


def _words(segment: str) -> list[str]:
    return past_prefixes([w for w in segment.split() if not _ASSIGNMENT.match(w)])


def segment_kind(segment: str) -> StepKind:
    """What one sub-command of a shell command does (`StepKind`)."""
    segment = " ".join(segment.split())
    remote = remote_command(segment)
    if remote is not None:
        # `adb shell getprop x`, `docker exec web ls /app`: what runs there decides what the call does.
        return step_kind("bash", remote)
    plain = re.sub(r"^(?:sudo\s+)?", "", segment)
    if any(rx.search(plain) for rx in CLEAN_UP):
        return StepKind.CLEAN_UP
    words = _words(segment)
    if not words:
        return StepKind.READ_ONLY
    program = words[0].rsplit("/", 1)[-1].lower()
    rest = " ".join(words[1:])
    ran = (command_head("bash", segment).split() or [program])[0]
    if ran != program and ran in READ_ONLY_PROGRAMS:  # `uv run pytest`, `python -m mypy`: a check
        return StepKind.READ_ONLY
    if program == "cd":
        # The shell's working directory persists between calls: a `cd` on its own changes where
        # the next command runs (a fix for "No such file" from the wrong folder).
        return StepKind.STATE_CHANGING
    if any(not p.startswith(_SCRATCH) for p in written_paths(segment)):
        return StepKind.STATE_CHANGING  # `echo x > .env`, `cat a > b`: a file written, whatever printed it
    if "--version" in words[1:] or "--help" in words[1:]:
        return StepKind.READ_ONLY  # `corepack pnpm --version`: a look however it is started
    if is_query(words):
        return StepKind.READ_ONLY  # `winget list`, `gh pr view 12`, `dpkg -l`: what there is
    if program in READ_ONLY_PROGRAMS:
        if program == "find" and re.search(r"\s-(?:delete|exec)\b", segment):
            return StepKind.STATE_CHANGING
        if program in {"eslint", "tsc"} and re.search(r"--fix\b|--build\b|(?<!--no)Emit", rest):
            return StepKind.STATE_CHANGING
        return StepKind.READ_ONLY
    if re.search(r"(?:^|\s)-i\b", rest) and program in {"sed", "perl"}:
        return StepKind.STATE_CHANGING
    if program == "sed" and re.search(r"(?:^|\s)-n\b", rest):
        return StepKind.READ_ONLY  # `sed -n '1,40p' x`: prints lines of a file
    if program in {"python", "python3", "node", "ruby", "perl", "bash", "sh"} and re.match(r"^-c\b|^-e\b", rest) \
            and not re.search(r"open\([^)]*['\"][wa]|write|\.save|mkdir|remove|unlink|install|rename", rest):
        return StepKind.READ_ONLY  # a one-line script that looks (prints an import, a version)
    if program in {"ruff", "black", "prettier", "rustfmt", "gofmt", "cargo", "npm", "pnpm", "yarn", "uv", "pip",
                   "pip3", "git", "docker", "kubectl", "systemctl", "brew", "apt", "apt-get", "cargo"}:
        sub = rest.split(" ", 1)[0] if rest else ""
        two = " ".join(rest.split()[:2])
        if sub in READ_ONLY_WORDS or two in READ_ONLY_WORDS or any(w in READ_ONLY_WORDS for w in rest.split()
                                                                   if w.startswith("--")):
            if not re.search(r"--fix\b|--write\b", rest):
                return StepKind.READ_ONLY
        if program == "ruff" and sub == "check" and not re.search(r"--fix\b", rest):
            return StepKind.READ_ONLY
    if any(w in {"--version", "-V", "--help", "-h"} for w in words[1:2]) or words[1:2] == ["version"]:
        return StepKind.READ_ONLY
    return StepKind.STATE_CHANGING


# Where output is captured to be looked at, not kept: writing there changes nothing of the project.
_SCRATCH = ("/tmp/", "/var/tmp/", "/dev/", "$TMPDIR", "${TMPDIR")


def acting_part(command: str) -> str:
    """The statements of a shell command that change something, pipelines kept whole: what a
    step is named and pointed at by (``cat ~/package.json | head && git config user.name x`` is
    ``git config user.name x``). The whole command when none or all of them do."""
    statements: list[list[str]] = [[]]
    for seg, sep in split_command(command):
        statements[-1].append(seg)
        if sep != "|":
            statements.append([])
    whole = [" | ".join(parts) for parts in statements if parts]
    acting = [text for text, parts in zip(whole, [p for p in statements if p])
              if any(segment_kind(seg) is StepKind.STATE_CHANGING for seg in parts)]
    return " && ".join(acting) if acting and len(acting) < len(whole) else command


def step_kind(tool: str, target: str) -> StepKind:
    """What a call does: `StepKind.READ_ONLY`, `CLEAN_UP` or `STATE_CHANGING`. A compound shell
    command changes state when one of its parts does, and is clean-up when its changes all are."""
    low = tool.lower()
    if low in READ_ONLY_TOOLS:
        return StepKind.READ_ONLY
    if not is_shell(tool):
        if low not in EDIT_TOOLS and _LOOKING_TOOL.search(tool.rsplit("__", 1)[-1]):
            return StepKind.READ_ONLY  # an MCP tool that searches, lists, gets or reads
        return StepKind.STATE_CHANGING  # an edit, an MCP tool's action
    kinds = [segment_kind(part) for part in segments(target)]
    if StepKind.STATE_CHANGING in kinds:
        return StepKind.STATE_CHANGING
    if StepKind.CLEAN_UP in kinds:
        return StepKind.CLEAN_UP
    return StepKind.READ_ONLY


def changes_something(tool: str, target: str) -> bool:
    return step_kind(tool, target) is StepKind.STATE_CHANGING


# --------------------------------------------------------------------------------------------
# Is this call the failing step tried again?

# Commands that do the same job another way: installing a project's dependencies with another
# package manager is the same goal.
SAME_GOAL = (
    frozenset({"npm ci", "npm install", "npm i", "pnpm install", "pnpm i", "yarn install", "yarn", "bun install",
               "pnpm add", "yarn add", "bun add"}),
    frozenset({"pip install", "pip3 install", "uv sync", "uv pip", "uv add", "poetry install", "poetry add",
               "pipenv install"}),
)
_GOAL_OF = {head: i for i, heads in enumerate(SAME_GOAL) for head in heads}
_INSTALLS = frozenset(_GOAL_OF) - {"npm ci"}  # heads that name a package to install
# One program under two spellings: Compose v1 (`docker-compose up`) and v2 (`docker compose up`)
# take the same subcommands, so either tries the other again.
_SPELLINGS = ((re.compile(r"^((?:sudo\s+)?)docker-compose(?=\s|$)"), r"\1docker compose"),)
# Reading a folder and listing it are the same goal (Read of a directory fails with EISDIR).
_LISTING = frozenset({"ls", "list_directory", "glob"})
_FOLDER = re.compile(r"EISDIR|is a directory|illegal operation on a directory", re.IGNORECASE)
# The harness's own search tools, and the shell's searches that look for the same thing: a Grep
# or Glob that failed in itself (its ripgrep would not start: "spawn …/rg EACCES") is tried again
# by `grep -rn`/`find -name` of the same words.
_SEARCH_TOOLS = frozenset({"grep", "glob"})
_SHELL_SEARCHES = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "ls"})
# Output plumbing: changes what is shown, not what is run.
_PLUMBING = re.compile(r"\s*(?:\d?>&\d|&>\s*\S+|\d?>>?\s*(?:/dev/null|\S+))")


def _key(segment: str) -> str:
    """The first argument naming what a command works on, past its head: a file, a package,
    a target ("" when it has none). The remote command for ssh."""
    words = [w.strip("'\"") for w in _words(segment)]
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1].lower()
    if program == "ssh":
        # Where it goes and what it runs there: another host is another step.
        quoted = re.findall(r"'([^']+)'|\"([^\"]+)\"", segment)
        inner = next((a or b for a, b in reversed(quoted) if (a or b).strip()), "")
        plain = [w for w in segment.split() if not w.startswith(("'", '"'))]
        host = next((w for w in plain if "@" in w), "")
        if not host:
            host = next((w for i, w in enumerate(plain[1:], 1) if not w.startswith("-")
                         and plain[i - 1] not in {"-o", "-i", "-p", "-l", "-F", "-J", "-L", "-R", "-D"}), "")
        port = next((plain[i + 1] for i, w in enumerate(plain[:-1]) if w == "-p"), "")
        return f"{host}:{port} {command_head('bash', inner) if inner else ''}".strip()
    if program in {"python", "python3", "node", "bash", "sh", "ruby", "perl"} and ("-c" in words or "-e" in words):
        return " ".join(segment.split())  # a one-line script is its code: another code, another step
    head = command_head("bash", segment).split()
    # Past the runner (`uv run`, `python -m`, `npx`) and the head itself (`ruff check`).
    at = next((i for i, w in enumerate(words) if w.rsplit("/", 1)[-1].lower() == head[-1]), 0) if head else 0
    skip = at + 1
    for word in words[skip:]:
        if word.startswith("-") or not word:
            continue
        return word.rstrip("/").rsplit("/", 1)[-1].lower()
    return ""


def _head(segment: str) -> str:
    return command_head("bash", segment)


def spelled_alike(segment: str) -> str:
    """``segment`` with its program spelled as every other spelling of it is (`_SPELLINGS`)."""
    plain = segment.strip()
    for spelling, alike in _SPELLINGS:
        plain = spelling.sub(alike, plain)
    return plain


def _variant(key: str, other: str) -> bool:
    """Whether two packages are one package in another build (``psycopg2`` and ``psycopg2-binary``,
    ``opencv-python`` and ``opencv-python-headless``): installing one after the other failed is
    the install tried again."""
    return bool(key and other) and (other.startswith(key + "-") or key.startswith(other + "-"))


def _same_shell_step(failed: str, segment: str) -> bool:
    failed, segment = spelled_alike(failed), spelled_alike(segment)
    fh, sh = _head(failed), _head(segment)
    remote_failed, remote = remote_command(failed), remote_command(segment)
    if fh == sh and fh != "ssh" and remote_failed is not None and remote is not None:
        # On the same device or in the same container the step is what runs there (`adb shell ls /a`
        # after `adb shell ls /b` is another look, not the first tried again); elsewhere it is another.
        return remote_place(failed) == remote_place(segment) and _same_shell_step(remote_failed, remote)
    if fh != sh:
        goal = _GOAL_OF.get(fh)
        if goal is None or goal != _GOAL_OF.get(sh):
            return False
        fk, sk = _key(failed), _key(segment)
        return not fk or not sk or re.split(r"[=<>~!@\[]", fk)[0] == re.split(r"[=<>~!@\[]", sk)[0]
    fk, sk = _key(failed), _key(segment)
    if _INLINE.search(failed) and _INLINE.search(segment):
        # A one-line script is tried again when the new one runs every statement the failed one
        # did (and maybe more); another script is another step.
        return _statements(failed) <= _statements(segment)
    if _QUERY.search(failed) and _QUERY.search(segment):
        # A database client's query is what it does: `\\d table` after a failed INSERT is a look,
        # not the INSERT tried again; the same kinds of statement, however corrected, are.
        return _query_kinds(failed) <= _query_kinds(segment)
    # The key is a guess (the first word past the head may be an option's value: `psql -U app
    # -d app`): the same step names the other's key among its own arguments.
    return not fk or fk == sk or fk in _arguments(segment) or (bool(sk) and sk in _arguments(failed)) \
        or (fh in _INSTALLS and _variant(fk, sk))


def _arguments(segment: str) -> set[str]:
    return {w.strip("'\"").rstrip("/").rsplit("/", 1)[-1].lower() for w in _words(segment)[1:]}


_INLINE = re.compile(r"(?:^|\s)(?:python3?|node|ruby|perl|bash|sh)\s+(?:-\w+\s+)*-[ce]\s")


_QUERY = re.compile(r"(?:^|[\s/])(?:psql|mysql|mariadb|sqlite3|clickhouse-client|duckdb)\b.*?\s(?:-c|-e|--command|--execute)[=\s]",
                    re.DOTALL)
# Statement keywords anywhere (the call's text may have had its newlines folded, comments and all),
# and psql's backslash commands.
_SQL_WORD = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|ALTER|CREATE|DROP|GRANT|REVOKE|TRUNCATE|COPY|"
                       r"VACUUM|REINDEX|EXPLAIN)\b|(?:^|;)\s*(\\\w+)", re.IGNORECASE)


def _query_kinds(segment: str) -> frozenset[str]:
    """The kinds of statement a database client's query runs (``INSERT``, ``SELECT``, ``\\d``)."""
    query = _QUERY.split(segment, 1)[-1].strip().strip("'\"")
    return frozenset((m.group(1) or m.group(2)).upper() for m in _SQL_WORD.finditer(query))


_LITERAL = re.compile(r"'[^']*'|\\?\"[^\"]*?\\?\"")


def _statements(segment: str) -> frozenset[str]:
    """The statements of a one-line script, its string literals blanked (a changed message in a
    print is the same statement)."""
    code = _INLINE.split(segment, 1)[-1].strip().strip("'\"")
    code = _LITERAL.sub("''", code)
    return frozenset(" ".join(part.split()) for part in re.split(r";|\n|\\n", code) if part.strip())


MASKED = "\x00masked"  # a retry whose exit status another program decided
MASKED_DOUBT = 0.1  # how much less a filtered retry's output proves than its own exit status


def _gone(failure: str, output: str) -> bool:
    """Whether a filtered retry's ``output`` shows something and not the failure's own line."""
    def norm(text: str) -> str:
        return re.sub(r"\d+", "0", " ".join(text.lower().split()))
    line = norm(failure)[:60]  # the failure line is scrubbed: so is what it is looked for in
    return bool(output.strip()) and len(line) >= 12 and not is_bare(failure) and line not in norm(scrub(output[-8000:]))


def retry_part(failed_tool: str, failed: str, tool: str, target: str, folder: bool = False) -> str | None:
    """The part of a call (``tool``, ``target``) that tries the failed step (``failed_tool``,
    ``failed``: the sub-command that failed, or the target) again, or None.

    For a shell call, its sub-command with the same head and key argument; its exit status must
    be its own (joined to what follows by ``&&`` or last), else its success proves nothing.
    ``folder``: the failure was a Read of a folder, which a listing of it tries again."""
    ft, t = failed_tool.lower(), tool.lower()
    if is_shell(failed_tool):
        if not is_shell(tool) or _head(failed) in SHELL_TOOLS:
            return None
        for seg, sep in split_command(target):
            if _same_shell_step(failed, seg):
                # `a && b` that succeeded ran `a` successfully; `a | tail`, `a; b` say nothing of `a`.
                return seg if sep in ("", "&&") else MASKED
            inner = wrapped(seg) if not wrapped(failed) else None
            within = [s for s, s_sep in split_command(inner) if _same_shell_step(failed, s)] if inner else []
            if within:
                # Run under a wrapper (`nix develop -c cargo test`): the wrapper is the step, its
                # status that of the wrapped part only as far as `&&` carries it.
                inner_sep = next(s_sep for s, s_sep in split_command(inner or "") if s == within[0])
                return seg if sep in ("", "&&") and inner_sep in ("", "&&") else MASKED
        return None
    if ft in EDIT_TOOLS and t in EDIT_TOOLS:
        return target if _same_path(failed, target) else None
    if ft in EDIT_TOOLS and is_shell(tool):
        # The file tool refused (no permission, not read yet, changed since read): the shell
        # writing the same file (`sudo tee`, `sed -i`, `cp x <file>`) is the edit tried again.
        for seg, sep in split_command(target):
            if any(_same_file(failed, path) for path in written_paths(seg)):
                return seg if sep in ("", "&&") else MASKED
        return None
    if ft in _SEARCH_TOOLS and is_shell(tool):
        word = searched_word(failed)
        for seg, sep in split_command(target):
            if word and program_of(seg) in _SHELL_SEARCHES and word in seg.lower():
                return seg if sep in ("", "&&") else MASKED
        return None
    if ft == "read" and folder and (t in _LISTING or (is_shell(tool) and any(program_of(s) == "ls" for s in segments(target)))):
        return target if _path_in(failed, target) else None
    if ft == t:
        # The same MCP tool, the same agent tool, or another tool on the same non-empty target (a
        # call with no target, such as writing to a running process, is no retry of anything).
        if ft.startswith("mcp__") or ft in {"task", "agent"} or (failed.strip() and _same_path(failed, target)):
            return target
    return None


def searched_word(pattern: str) -> str:
    """The longest literal word of a search's pattern, a regex or a glob (``AISuite`` of
    ``type.*AISuite``, ``aisuite`` of ``**/*aisuite*``), lower-cased: a search of the same thing
    names it ("" when the pattern has no word of three letters)."""
    words = re.findall(r"[A-Za-z0-9_]{3,}", pattern)
    return max(words, key=len).lower() if words else ""


_REDIRECT = re.compile(r"(?<![\d&<])>>?\s*([^\s;&|<>]+)")


def written_paths(segment: str) -> list[str]:
    """The files one shell sub-command writes: a redirection's target, ``tee``'s files, the last
    argument of ``cp``/``mv``/``install``, the files of ``sed -i``/``perl -pi``, the files an
    inline script writes (`script_writes`)."""
    paths = [p.strip("'\"") for p in _REDIRECT.findall(segment) if not p.startswith("/dev/")]
    paths += [path for path, _ in script_writes(segment)]
    words = [w.strip("'\"") for w in _words(segment)]
    program = words[0].rsplit("/", 1)[-1].lower() if words else ""
    args = [w for w in words[1:] if not w.startswith("-") and ">" not in w]
    if program == "tee":
        paths += args
    elif program in {"cp", "mv", "install"} and len(args) >= 2:
        paths.append(args[-1])
    elif program in {"sed", "perl"} and re.search(r"(?:^|\s)-[A-Za-z0-9]{0,3}i(?:\.\w*)?(?=\s|$)", segment) and len(args) >= 2:
        paths += args[1:]
    return paths


def _write_step(segment: str, path: str) -> str:
    """A shell write named short: its program and the part that writes ``path``
    (``echo … > ~/.docker/config.json``, ``sudo tee /etc/x.rules``)."""
    plain = " ".join(segment.split())
    if len(plain) <= 60:
        return plain
    script = script_write_step(segment, path.rstrip("/").rsplit("/", 1)[-1])
    if script is not None:
        return clip(script, STEP_CHARS)
    name = re.escape(path.rstrip("/").rsplit("/", 1)[-1])
    write = re.search(r"(?:(?:sudo\s+)?tee(?:\s+-a)?\s+|>>?\s*)\S*" + name + r"\S*", plain)
    if write is None:
        return clip(plain, STEP_CHARS)
    return clip(f"{plain.split()[0]} … {write.group(0)}", STEP_CHARS)


def _same_file(path: str, other: str) -> bool:
    """Whether two spellings of a path name one file (absolute and relative, ``~``)."""
    a, b = path.strip().rstrip("/"), other.strip().rstrip("/")
    if not a or not b or a.rsplit("/", 1)[-1] != b.rsplit("/", 1)[-1]:
        return False
    a, b = a.lstrip("~").lstrip("./"), b.lstrip("~").lstrip("./")
    return a.endswith(b) or b.endswith(a)


def _same_path(a: str, b: str) -> bool:
    return bool(a) and a.strip() == b.strip()


def _path_in(path: str, target: str) -> bool:
    """Whether a listing (``target``) is of the folder ``path``: it names the folder, its name as
    a word, or the folder's last two parts as parts of a pattern (``**/pkg/harbor/*.go`` lists
    ``/p/pkg/harbor``: the pattern is relative, the folder absolute)."""
    name = path.rstrip("/")
    if not name:
        return False
    if name in target or name.rsplit("/", 1)[-1] in target.split():
        return True
    tail = "/".join(name.split("/")[-2:])
    return "/" in tail.strip("/") and any(re.search(r"(?:^|/)" + re.escape(tail) + r"(?:/|$)", word)
                                          for word in target.split())


_VERBOSITY = re.compile(r"(?<=\s)(?:-v+|-q+|-s|--verbose|--quiet|--tb=\w+|--no-header|--color(?:=\w+)?|"
                        r"--no-ansi|--progress=\w+)(?=\s|$)")


def _plain(command: str) -> str:
    """A command without output plumbing, verbosity flags and spacing: what two runs compare on
    (``pytest -x -v 2>&1 | tail`` is ``pytest -x`` run again)."""
    parts = []
    for seg, sep in split_command(command):
        if program_of(seg) in {"tail", "head", "grep", "tee", "less", "more", "cat"} and parts and parts[-1][1] == "|":
            parts[-1] = (parts[-1][0], "")
            continue
        parts.append((_VERBOSITY.sub("", _PLUMBING.sub("", seg)).strip(), sep))
    return " ".join(" ".join(f"{s} {sep}".split()) for s, sep in parts).strip(" |;&")


# --------------------------------------------------------------------------------------------
# The tracker


@dataclass(frozen=True)
class Step:
    tool: str
    target: str  # raw, as the call was made
    text: str  # as a lesson names it ("Edit /x/pyproject.toml: asyncio_mode = 'auto'")
    said: str = ""  # the agent's words just before it


@dataclass(frozen=True)
class OpenFailure:
    """A failed call awaiting its retry (small and serialisable)."""

    uid: str
    tool: str
    command: str  # the sub-command that failed (shell) or the target (other tools)
    hint: str  # the words of the error: what it names (files, packages, the fix it suggests)
    calls_since: int = 0
    steps: tuple[Step, ...] = ()
    refuted: tuple[str, ...] = ()
    detail: str = ""  # the failed call's detail (an edit's added line, a Read's offset)
    target: str = ""  # the whole call that failed ("" = ``command``)
    failure: str = ""  # its failure line: a retry failing with another one got past this failure
    passed: bool = False  # a retry got past this failure (failed otherwise): its fix is among the steps before

    def to_json(self) -> list[object]:
        return [self.uid, self.tool, self.command, self.hint, self.calls_since,
                [[s.tool, s.target, s.text, s.said] for s in self.steps], list(self.refuted), self.detail,
                self.target, self.failure, self.passed]

    @classmethod
    def from_json(cls, row: list[object]) -> OpenFailure:
        uid, tool, command, hint, since, steps, refuted, detail, target, failure, *rest = row
        return cls(str(uid), str(tool), str(command), str(hint), int(since),  # type: ignore[call-overload]
                   tuple(Step(*map(str, s)) for s in steps),  # type: ignore[union-attr]
                   tuple(str(s) for s in refuted), str(detail), str(target), str(failure),  # type: ignore[union-attr]
                   bool(rest and rest[0]))


def goal_of(target: str, failed: str) -> str:
    """What a failed shell call was for, to know its retry: the failed sub-command, or, when that
    was only the `cd` before the work (``cd build && make``: "cd: build: No such file"), the work."""
    if program_of(failed) != "cd":
        return failed
    work = [seg for seg in segments(target) if program_of(seg) not in {"cd", "source", ".", "export", "set"}]
    return work[-1] if work else failed


def step_of(tool: str, target: str, detail: str = "") -> str:
    """How a step is named ("Edit pyproject.toml: asyncio_mode = 'auto'", "uv add --dev x")."""
    text = target if is_shell(tool) else f"{tool} {target}".strip()
    if detail:
        text = f"{text}: {detail}"
    return clip(" ".join(text.split()), STEP_CHARS)


@dataclass(frozen=True)
class Resolved:
    uid: str
    resolution: Resolution


def _names(hint: str, step: Step) -> bool:
    """Whether the error's words point at a step: they name the file it edits, the package it
    installs, or the command it runs."""
    if not hint:
        return False
    low = hint.lower()
    if step.tool.lower() in EDIT_TOOLS:
        name = step.target.rstrip("/").rsplit("/", 1)[-1].lower()
        return len(name) >= 3 and name in low
    for seg in segments(step.target):
        head = _head(seg)
        if len(head) >= 4 and head in low:
            return True
        for word in _words(seg)[1 + (len(head.split()) > 1):]:
            word = re.split(r"[=<>~!@\[]", word.strip("'\""))[0].rsplit("/", 1)[-1].lower()
            if len(word) >= 4 and not word.startswith("-") and re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", low):
                return True
    return False


_SETUP = re.compile(r"\b(?:install|add|sync|config|init|setup|format|fmt|--fix)\b|\.(?:toml|json|ya?ml|cfg|ini|lock|env)\b"
                    r"|requirements|Makefile|CMakeLists|Dockerfile|\brc\b")


def _choose(failure: OpenFailure, retry: str, tool: str, detail: str = "", whole: str = "") -> Resolution:
    """The fix a successful retry proves: its own difference, else the step before it."""
    refuted = failure.refuted
    if failure.tool.lower() in EDIT_TOOLS | {"read"} and tool.lower() in EDIT_TOOLS | {"read"}:
        # A file tool refused (not read yet, text not found, too large): a Read of the file before
        # the retry, else the retry's own difference (other text, an offset).
        reads = [s for s in failure.steps if s.tool.lower() == "read" and _same_path(s.target, failure.command)
                 or is_shell(s.tool) and _reads_file(failure, s.target)]
        if reads and tool.lower() in EDIT_TOOLS:
            return Resolution(Evidence.READ_BEFORE, reads[-1].text, reads[-1].tool, CONFIDENCE[Evidence.READ_BEFORE],
                              retry=step_of(tool, retry), refuted=refuted)
        if tool.lower() in EDIT_TOOLS or detail != failure.detail or tool.lower() != failure.tool.lower():
            # The file tools refuse the same input the same way: a retry that passed changed it
            # (other text, replace_all, an offset) even where the detail kept does not show how.
            return Resolution(Evidence.RETRY_CHANGED, step_of(tool, retry, _edit_change(failure, detail) or detail), tool,
                              CONFIDENCE[Evidence.RETRY_CHANGED], refuted=refuted)
        return Resolution(Evidence.RERUN, step_of(tool, retry), tool, CONFIDENCE[Evidence.RERUN], refuted=refuted)
    if failure.tool.lower() in EDIT_TOOLS and is_shell(tool):
        # The shell wrote the file the edit could not: that write is the fix, named by how it
        # wrote (what it wrote can be long: the lesson keeps the program and the write).
        return Resolution(Evidence.RETRY_CHANGED, _write_step(retry, failure.command), tool,
                          CONFIDENCE[Evidence.RETRY_CHANGED], refuted=refuted)
    if is_shell(tool):
        # What differs between the failed call and the retry's, part by part: the retried part
        # itself (`git push --set-upstream origin x`), a change run before it in the same call
        # (`git pull --rebase && git push`: a step before the retry), or where it runs (`make x`
        # after `cd build && make x`). Looks and what follows the retry are no part of it.
        failed_parts = segments(failure.target or failure.command)
        earlier = {_plain(seg) for seg in failed_parts}
        parts = [seg for seg, _ in split_command(whole or retry)]
        at = parts.index(retry) if retry in parts else len(parts)
        prefix = parts[:at]
        extra = [seg for seg in prefix if _plain(seg) not in earlier
                 and segment_kind(seg) is StepKind.STATE_CHANGING and program_of(seg) != "cd"]
        own_changed = _plain(retry) != _plain(failure.command)
        if extra and not own_changed:
            return Resolution(Evidence.CHANGED_BEFORE, step_of(tool, " && ".join(extra)), tool,
                              CONFIDENCE[Evidence.CHANGED_BEFORE] + POINTED_BONUS, retry=step_of(tool, retry),
                              refuted=refuted)
        where = [seg for seg in prefix if program_of(seg) in {"cd", "pushd"}]
        where_before = [seg for seg in failed_parts if program_of(seg) in {"cd", "pushd"}]
        moved = [_plain(c) for c in where] != [_plain(c) for c in where_before]
        went = {_plain(seg) for step in failure.steps if is_shell(step.tool) for seg in segments(step.target)
                if program_of(seg) in {"cd", "pushd"}}
        if moved and not where and all(_plain(c) in went for c in where_before):
            moved = False  # a step in between went there already: the shell's folder persists
        changed = own_changed or moved or bool(extra)
        dropped = [c for c in where_before if _plain(c) not in {_plain(w) for w in where}] if moved else []
        retry = " && ".join([*(where if moved else []), *extra, retry])
        if dropped and not where:
            # Run where the shell already was: the difference is the `cd` left out.
            retry = f"{retry} (run without {' && '.join(dropped)})"
        params = new_params(failure.detail, detail)
        if params and not changed and (not failure.steps or _params_answer(params, failure.hint)):
            # The call itself was made otherwise (out of the sandbox, a longer timeout, in the
            # background): the harness's own switch, which only the failure makes one reach for.
            # After other changes (an edit of the code that raised), the switch is the fix only
            # when the failure was of its kind: a longer timeout answers "timed out", not an
            # IndexError the edit before it mended.
            command = f"{clip(' '.join(retry.split()), STEP_CHARS - 60)} (with {clip(params, 60)})"
            return Resolution(Evidence.RETRY_CHANGED, command, tool,
                              CONFIDENCE[Evidence.RETRY_CHANGED], refuted=refuted)
    else:
        changed = retry.strip() != failure.command.strip() or detail != failure.detail \
            or tool.lower() != failure.tool.lower()
    before = list(failure.steps)
    pointed = [s for s in before if _names(failure.hint, s)]
    said = [s for s in before if _said_about(s.said, failure)]
    setup = [s for s in before if _SETUP.search(s.text)]
    own = step_of(tool, retry, "" if is_shell(tool) else detail)

    def changed_before(step: Step, bonus: float) -> Resolution:
        return Resolution(Evidence.CHANGED_BEFORE, step.text, step.tool, CONFIDENCE[Evidence.CHANGED_BEFORE] + bonus,
                          retry=step_of(tool, retry), refuted=refuted)

    # In order of how surely each shows the fix: a step the error names; the retry's own
    # difference when nothing else changed, or when it is one that only a fix makes (`sudo`, an
    # environment variable, a runner, a wrapper that provides the program the shell missed); a step the agent said was about the failure; a step that
    # sets the project up; the retry's difference beside unrelated changes.
    if pointed:
        return changed_before(pointed[-1], POINTED_BONUS)
    if changed and (not before or (is_shell(tool) and (_strong(failure.target or failure.command, retry)
                                                       or provides(failure.failure, retry)))):
        sure = CONFIDENCE[Evidence.RETRY_CHANGED] + (POINTED_BONUS if _hint_is(failure.hint, retry) else 0.0)
        return Resolution(Evidence.RETRY_CHANGED, own, tool, min(sure, 1.0), refuted=refuted)
    if said:
        return changed_before(said[-1], POINTED_BONUS)
    if setup:
        return changed_before(setup[-1], 0.0)
    if changed:
        return Resolution(Evidence.RETRY_CHANGED, own, tool, CONFIDENCE[Evidence.RETRY_CHANGED] - 0.1, refuted=refuted)
    if len(before) == 1 and not changed:
        # The only thing that changed between the failure and the same step passing.
        return changed_before(before[0], 0.0)
    if before:
        # Several things changed, and neither the error nor the agent pointed at one: the
        # nearest change, too unsure to be named.
        return changed_before(before[-1], -0.25)
    return Resolution(Evidence.RERUN, step_of(tool, retry), tool, CONFIDENCE[Evidence.RERUN], refuted=refuted)


# What each of the harness's call switches answers: a longer timeout or the background a run
# that was cut short; out of the sandbox a refusal of the sandbox's (files, network, processes).
_PARAM_ANSWERS = (
    (re.compile(r"^(?:timeout|timeout_ms|run_in_background|yield_time_ms)=", re.IGNORECASE),
     re.compile(r"tim(?:ed|e) ?out|timeout|time limit|deadline|killed|SIGTERM|SIGKILL|still running", re.IGNORECASE)),
    (re.compile(r"^(?:sandbox\w*|with_escalated_permissions|dangerouslyDisableSandbox|escalat\w*)=", re.IGNORECASE),
     re.compile(r"sandbox|bwrap|seccomp|landlock|permission|denied|not permitted|EACCES|EPERM|read-only file system|"
                r"network|resolve|connect|socket|unreachable", re.IGNORECASE)),
)


# A shell call's parameter that runs it outside the agent's sandbox: Codex's shell tool's
# ``with_escalated_permissions=true``, its later ``sandbox_permissions=require_escalated`` (each with a
# ``justification`` the person approves), Claude Code's ``dangerouslyDisableSandbox=true``.
_OUTSIDE_SANDBOX = re.compile(r"^(?:with_escalated_permissions=true|sandbox_permissions=require_escalated"
                              r"|dangerouslyDisableSandbox=true)$", re.IGNORECASE)


def outside_sandbox(params: str) -> tuple[bool, str]:
    """Whether a retry's new call parameters (``key=value`` words) ran it outside the sandbox, and
    the parameters beside that one (a longer timeout)."""
    words = params.split()
    escaped = [w for w in words if _OUTSIDE_SANDBOX.match(w)]
    return bool(escaped), " ".join(w for w in words if w not in escaped)


def _params_answer(params: str, hint: str) -> bool:
    """Whether a failure's words are of the kind a retry's new call parameters answer."""
    return any(name.match(word) and said.search(hint) for word in params.split() for name, said in _PARAM_ANSWERS)


def new_params(failed: str, retry: str) -> str:
    """The parameters a shell call's retry set that the failed call did not (``timeout_ms=600000``,
    ``sandbox_permissions=require_escalated``): a shell call's detail is its parameters beside
    the command, ``key=value`` words."""
    had = set(failed.split())
    return " ".join(w for w in retry.split() if "=" in w and w not in had)


# An edit whose old text is not the file's (Claude Code's "String to replace not found", Codex's
# apply_patch "Failed to find expected lines", a hunk without its context): the agent's own idea of
# the file was stale, and a look at the file in the shell (`sed -n`, `cat`, `rg`) mends it as a Read
# does. Refusals that want the Read tool itself ("not read yet", "modified since read") are not met so.
_STALE_TEXT = re.compile(r"String to replace not found|Failed to find expected lines|apply_patch verification failed"
                         r"|Expected update hunk|invalid hunk", re.IGNORECASE)


def is_stale_text(failure: str) -> bool:
    """Whether an edit was refused because the text it was to change is not the file's (the agent
    wrote it from an old or guessed view): the fix is a look at the file and the edit made again
    from it, never the look alone."""
    return bool(_STALE_TEXT.search(failure))


def _reads_file(failure: OpenFailure, target: str) -> bool:
    """Whether a shell call only looked at the file an edit could not change, its text being stale."""
    if failure.tool.lower() not in EDIT_TOOLS or not is_stale_text(f"{failure.failure}\n{failure.hint[:300]}"):
        return False
    parts = segments(target)
    return bool(parts) and all(segment_kind(seg) is StepKind.READ_ONLY for seg in parts) \
        and any(_same_file(failure.command, word.strip("'\"")) for seg in parts for word in seg.split())


_MANY_MATCHES = re.compile(r"Found \d+ matches of the string to replace", re.IGNORECASE)
_NOT_FOUND_TEXT = re.compile(r"String to replace not found", re.IGNORECASE)


def _edit_change(failure: OpenFailure, detail: str) -> str:
    """What an edit's retry must have changed, from what the refusal said ("" when it does not
    tell): the tool refuses the same old_string the same way, so a retry that passed gave another."""
    if "replace_all=true" in detail:
        return ""
    said = f"{failure.failure}\n{failure.hint[:300]}"
    if _MANY_MATCHES.search(said):
        return "with a unique old_string (more context around it)"
    if _NOT_FOUND_TEXT.search(said):
        return "with an old_string as the file's actual text reads"
    return ""


def _strong(failed: str, retry: str) -> bool:
    """A difference that only a fix makes: ``sudo``, an environment variable, a runner added."""
    def marks(command: str) -> set[str]:
        words = command.split()
        found = {w.split("=", 1)[0] + "=" + w.split("=", 1)[1] for w in words if _ASSIGNMENT.match(w)}
        found |= {w for w in words if w in {"sudo", "doas"}}
        head = command_head("bash", command).split()
        first = [w for w in words if not _ASSIGNMENT.match(w) and w not in {"sudo", "doas"}][:1]
        if head and first and first[0].rsplit("/", 1)[-1] != head[0]:
            found.add("runner:" + first[0])
        return found
    return bool(marks(retry) - marks(failed))


def _hint_is(hint: str, retry: str) -> bool:
    plain = " ".join(retry.split())
    return len(plain) >= 6 and plain in " ".join(hint.split())


_POINTING = re.compile(r"\b(?:install|add|fix|set|configur|chang|updat|upgrad|downgrad|use|using|creat|remov|renam|"
                       r"mov|switch|format|missing|need|first|pin|regenerat|rebuild|reinstall|enabl|disabl)\w*",
                       re.IGNORECASE)


def _said_about(said: str, failure: OpenFailure) -> bool:
    """Whether the agent's words before a step say it is about the failure ("pybind11 is not
    installed... let me install it"): they share a distinctive word with the error and say why."""
    if not said or not failure.failure:
        return False
    # The failure's own line, not the whole output (a usage text shares words with anything).
    words = {w.lower() for w in re.findall(r"[A-Za-z_][\w.\-]{3,}", failure.failure)} - _COMMON - COMMON_WORDS
    said_words = {w.lower() for w in re.findall(r"[A-Za-z_][\w.\-]{3,}", said)}
    return bool(words & said_words) and bool(_POINTING.search(said))


_COMMON = frozenset({"error", "failed", "failure", "file", "line", "with", "from", "that", "this", "module", "named",
                     "found", "command", "exit", "code", "such", "directory", "cannot", "could", "not", "have"})


def _same_failure(a: str, b: str) -> bool:
    def norm(line: str) -> str:
        return re.sub(r"\d+", "0", " ".join(line.lower().split()))[:80]
    return not a or not b or norm(a) == norm(b)


def advance(open_failures: tuple[OpenFailure, ...], tool: str, target: str, ok: bool, detail: str = "",
            said: str = "", failure: str = "", output: str | None = None) -> tuple[tuple[OpenFailure, ...], tuple[Resolved, ...]]:
    """One more call of the session: (the failures still open, those this call proved fixed).

    A successful retry of a failure proves its fix (`_choose`); a retry that fails with another
    failure (``failure``: its line) leaves it open, its steps kept, for a later success to prove;
    a retry that fails the same way refutes the steps taken since the last attempt; any other successful call that changes
    something is kept as a step (with the agent's words before it); every call counts toward the
    horizon.

    ``output``: what a successful call showed (None when the reader does not say). A retry whose
    status a filter decided (`MASKED`) proves the fix, less surely, when it showed something and
    the failure's own line is not in it: the error is gone from what the step printed.
    """
    still: list[OpenFailure] = []
    resolved: list[Resolved] = []
    kind = step_kind(tool, target) if ok else None
    for open_ in open_failures:
        retry = retry_part(open_.tool, open_.command, tool, target, folder=_FOLDER.search(open_.failure) is not None)
        if retry == MASKED and ok and output is not None and _gone(open_.failure, output):
            part = next((seg for seg in segments(target) if _same_shell_step(open_.command, seg)), target)
            found = _choose(open_, part, tool, detail, target)
            resolved.append(Resolved(open_.uid, replace(found, confidence=round(found.confidence - MASKED_DOUBT, 2))))
            continue
        if retry == MASKED:
            # `make 2>&1 | tail`: the step ran again, but what its success says is the filter's.
            # Neither a retry nor a change toward one.
            if open_.calls_since + 1 <= HORIZON:
                still.append(replace(open_, calls_since=open_.calls_since + 1))
            continue
        if retry is not None and ok:
            resolved.append(Resolved(open_.uid, _choose(open_, retry, tool, detail, target)))
            continue
        since = open_.calls_since + 1
        if since > HORIZON:
            continue
        if retry is not None and not _same_failure(open_.failure, failure) \
                and found_by_wrapper(open_.failure, retry, failure):
            # The program the shell could not find ran under a wrapper and failed on something of
            # its own: the wrapper found it, whatever the program's next failure.
            resolved.append(Resolved(open_.uid, Resolution(Evidence.FOUND_BY_WRAPPER, step_of(tool, retry), tool,
                                                           CONFIDENCE[Evidence.FOUND_BY_WRAPPER],
                                                           refuted=open_.refuted)))
            continue
        if retry is not None and not _same_failure(open_.failure, failure):
            # Tried again and failed otherwise: past this failure, not yet a success. The steps
            # taken so far got it past (a later success names them); those taken after are
            # about the new failure. Nothing is refuted.
            still.append(replace(open_, calls_since=since, passed=True))
            continue
        if retry is not None:  # tried again and failed the same way: what was done since did not fix it
            refuted = (open_.refuted + tuple(s.text for s in open_.steps))[-MAX_STEPS:]
            still.append(replace(open_, calls_since=since, steps=(), refuted=refuted))
            continue
        steps = open_.steps
        if ok and not open_.passed and (kind is StepKind.STATE_CHANGING or (tool.lower() == "read" and open_.tool.lower() in EDIT_TOOLS)
                                        or is_shell(tool) and _reads_file(open_, target)):
            named = acting_part(target) if is_shell(tool) else target
            steps = (steps + (Step(tool, named, step_of(tool, named, detail), clip(said, WORDS_CHARS)),))[-MAX_STEPS:]
        still.append(replace(open_, calls_since=since, steps=steps))
    return tuple(still), tuple(resolved)


def opened(open_failures: tuple[OpenFailure, ...], failure: OpenFailure) -> tuple[OpenFailure, ...]:
    """``open_failures`` with ``failure`` added, the oldest forgotten beyond `MAX_OPEN`."""
    return (open_failures + (failure,))[-MAX_OPEN:]


# --------------------------------------------------------------------------------------------
# The same rules, asked of another session


@dataclass(frozen=True)
class Call:
    tool: str
    target: str
    ok: bool


def _runs(step: str, tool: str, target: str) -> bool:
    """Whether a call runs the fix step ``step`` (as a lesson names it; a ``<placeholder>`` stands
    for any one word or part of one, as in :func:`~commons.core.learning.generalise.fills`, and an
    edit names its file)."""
    step_tool, _, rest = step.partition(" ")
    if step_tool.lower() in EDIT_TOOLS | {"read"}:
        path = rest.split(": ", 1)[0].strip()
        return tool.lower() == step_tool.lower() or (step_tool.lower() in EDIT_TOOLS and tool.lower() in EDIT_TOOLS) \
            and (path.startswith("<") or target.strip() == path or target.endswith("/" + path.rsplit("/", 1)[-1]))
    if not is_shell(tool):
        return False
    want = re.split(r" \((?:run without|with) ", step, maxsplit=1)[0].split()
    for seg in segments(target):
        got = seg.split()
        if len(got) >= len(want) and all(fills(w, g) for w, g in zip(want, got)):
            return True
    return False


def fix_outcome(calls: Sequence[Call], failed_tool: str, failed: str, fix_step: str) -> bool | None:
    """What a session's ``calls`` (in order) show of ``fix_step`` as the fix of the failed step
    (``failed_tool``, ``failed``: the command or target a lesson names): True, the fix ran and the
    step then succeeded; False, the fix ran (or was tried) and the step failed again after it
    without a later success; None, neither (the fix was not run, or the step not tried after it).

    The evidence rules of this module, for a node verifying a received lesson (issue #26): the
    fix must succeed itself, and the retry's success must be its own (`retry_part`)."""
    fixed, refuted = False, False
    for call in calls:
        retry = retry_part(failed_tool, failed, call.tool, call.target)
        if not fixed and _runs(fix_step, call.tool, call.target):
            if not call.ok:
                refuted = True  # the fix itself failed
                continue
            fixed = True
            if retry not in (None, MASKED):
                return True  # the fix is the changed retry itself
            continue
        if fixed and retry not in (None, MASKED):
            if call.ok:
                return True
            fixed, refuted = False, True  # the fix ran and the step failed again
    return False if refuted else None


def shows_fix(calls: Sequence[Call], failed_tool: str, failed: str, fix_step: str) -> bool:
    """Whether a session's ``calls`` show ``fix_step`` run and then the failed step succeeding
    after it (`fix_outcome`)."""
    return fix_outcome(calls, failed_tool, failed, fix_step) is True


# --------------------------------------------------------------------------------------------
# The fix an error's output names (a pointer, never a fix on its own)

_HINTS = (
    re.compile(r"\buse:?[ \t]*\n(?:[ \t]*\n)?[ \t]+((?:git|npm|pip|uv|mix|cargo|yarn|pnpm)[ \t][^\n]+)", re.IGNORECASE),
    re.compile(r"\b(?:run|try|use|try running|please run)[ \t]+[`'\"]([^`'\"\n]{3,80})[`'\"]", re.IGNORECASE),
    re.compile(r"\bdid you mean\s+[`'\"]?([^`'\"\n?]{3,60})[`'\"]?\?", re.IGNORECASE),
)
_LOOKS_LIKE_COMMAND = re.compile(r"^[a-z][\w.\-]*(?:\s+[\w.\-=/<>:@\"']+)*$")


def named_fix(output: str) -> str:
    """The command a failed tool's output names as its fix, or "" (never guessed)."""
    lower = output.lower()
    if "use" not in lower and "run" not in lower and "try" not in lower and "did you mean" not in lower:
        return ""
    for pattern in _HINTS:
        found = pattern.search(output)
        if found:
            fix = " ".join(found.group(1).split())
            if _LOOKS_LIKE_COMMAND.match(fix) and len(fix.split()) <= 8:
                return fix
    return ""


# What sets a project up rather than writes its code: adding a dependency, editing a manifest or a
# tool's configuration. A failure fixed that way is a pitfall of the setup, not work in progress.
_SETUP_HEADS = frozenset({"pip install", "uv add", "uv pip", "uv sync", "poetry add", "pipenv install",
                          "npm install", "npm i", "pnpm add", "pnpm install", "yarn add", "bun add",
                          "cargo add", "go get", "mix deps.get", "gem install", "bundle add", "apt-get install",
                          "brew install", "apt install"})
_CONFIG_FILE = re.compile(r"(?:^|/)(?:pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini|requirements[\w.-]*\.txt|"
                          r"package\.json|tsconfig[\w.-]*\.json|\.[\w.-]*rc(?:\.json|\.ya?ml|\.js|\.cjs)?|"
                          r"[\w.-]*\.config\.(?:js|cjs|mjs|ts)|mix\.exs|Cargo\.toml|go\.mod|Gemfile|"
                          r"[\w.-]+\.(?:toml|ini|cfg|ya?ml))(?::|$)")


def is_setup_step(step: str) -> bool:
    """Whether a step (as `step_of` names it) sets the project up: a dependency added, or a
    manifest or configuration file edited (``Edit /x/pyproject.toml: asyncio_mode = 'auto'``)."""
    tool, _, rest = step.partition(" ")
    if tool.lower() in EDIT_TOOLS:
        return bool(_CONFIG_FILE.search(rest.split(": ", 1)[0].strip()))
    return any(command_head("bash", part) in _SETUP_HEADS for part in segments(step))


def fixed_by_setup(resolution: Resolution | None) -> bool:
    """Whether what fixed a failure was setting the project up (see `is_setup_step`)."""
    return resolution is not None and resolution.evidence is not Evidence.RERUN and is_setup_step(resolution.command)
