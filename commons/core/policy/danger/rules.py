"""The rule table: which steps destroy, rewrite, raise, disable, skip, fetch and run, or reconfigure.

Each `Rule` has an id (``git.push-force``), a `Kind`, the plain sentence of what the step destroys
or disables (what a person reads beside the lesson), and a test over one `Command` of the step and
the step as a whole (`Step`). The table is read in order and the first rule that matches names the
danger, so a rule for the worse reading of a command comes before the milder one
(``git config --global http.sslVerify false`` turns TLS off before it changes global configuration).

The safe look-alikes are decided here too, beside the rule they differ from:

- ``rm -rf`` of a folder a tool makes again (``node_modules``, ``.venv``, ``dist``, ``build``,
  ``target``, a cache, a temporary folder) is safe; of anything else (``.``, ``~``, ``/``, ``src``,
  a glob, a variable) it destroys data. ``Remove-Item -Recurse -Force`` and ``rd /s /q`` the same.
- ``git push --force`` is always dangerous: it replaces the remote branch with the local one, and
  commits others pushed meanwhile are lost. ``--force-with-lease`` (and ``--force-if-includes``)
  refuses when the remote moved since it was fetched: safe on a branch the step names that is not
  a shared one (``main``, ``master``, ``trunk``, ``develop``, ``release…``, ``production``); with no
  branch named, or a shared one, it still rewrites shared history and is dangerous.
- ``git reset --hard`` destroys uncommitted work; ``--soft`` and ``--mixed`` keep it.
- ``docker rm`` of containers it names is safe; of every container (``$(docker ps -aq)``) it is not.
  ``docker system prune`` is dangerous with ``-a`` or ``--volumes``; ``docker compose down`` only
  with ``-v``.
- ``sudo`` to install a system package (``apt-get install``) or to manage a service is what sudo is
  for; ``sudo`` running a language's package manager, a shell or a downloaded script is not.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass

from commons.core.policy.danger.shell import Command, tokenize


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


@dataclass(frozen=True)
class Rule:
    id: str
    kind: Kind
    risk: str  # what it destroys or disables, in a plain clause a person reads
    test: Callable[[Command, Step], bool]


# --------------------------------------------------------------------------------------------
# Helpers

_SHARED_BRANCHES = re.compile(r"^(?:main|master|trunk|develop|development|dev|production|prod|stable|release.*|HEAD|gh-pages)$",
                              re.IGNORECASE)
_REGENERABLE = frozenset({
    "node_modules", ".venv", "venv", "env", ".env.d", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    ".cache", "cache", ".next", ".nuxt", ".turbo", ".parcel-cache", ".svelte-kit", ".angular", ".vite", "build", "dist",
    "target", "out", "coverage", ".coverage", "htmlcov", ".tox", ".nox", ".gradle", ".terraform", "_build", "deps",
    ".eggs", ".hypothesis", ".expo", ".dart_tool", "bin", "obj", ".build", "DerivedData", "tmp", ".tmp", "temp",
    ".pnpm-store", ".yarn/cache", "pkg", ".elixir_ls", ".nyc_output", "storybook-static", "lib-cov",
})  # fmt: skip
_REGENERABLE_FILES = re.compile(r"^(?:package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|uv\.lock|Cargo\.lock|"
                                r"[\w.-]+\.(?:pyc|pyo|o|log|tmp|bak|swp|lock|pid|tsbuildinfo)|\.DS_Store|"
                                r"[\w.-]+\.egg-info|index\.lock|\.coverage)$")
_TEMP_ROOTS = re.compile(r"^(?:/tmp/|/var/tmp/|\$TMPDIR|\$\{?TMPDIR\}?/|%TEMP%|\$env:TEMP|~/\.cache/|\$HOME/\.cache/|"
                         r"~/Library/Caches/|~/\.npm/_cacache|~/\.cargo/registry|~/\.gradle/caches|~/\.m2/repository)")
_TEST_FILE = re.compile(r"(?:^|/)(?:test_[\w.-]+\.py|[\w.-]+_test\.(?:py|go|rb|exs?)|[\w.-]+\.(?:test|spec)\.[jt]sx?|"
                        r"[\w.-]+Test\.(?:java|kt|cs|php)|tests?/|__tests__/|spec/[\w./-]+_spec\.rb)", re.IGNORECASE)
_DB_FILE = re.compile(r"\.(?:db|sqlite3?|sqlite-wal|mdb|ldb)$|(?:^|/)(?:pgdata|mysql|data/db)(?:/|$)", re.IGNORECASE)
_FETCHERS = frozenset({"curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "fetch", "http", "https",
                       "xh", "aria2c", "lwp-request", "certutil"})
_RUNS_TEXT = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "python", "python3", "py", "node", "perl",
                        "ruby", "php", "iex", "invoke-expression", "powershell", "pwsh", "cmd", "source", "."})
_PKG_MANAGERS = frozenset({"pip", "pip3", "npm", "yarn", "pnpm", "gem", "cargo", "go", "uv", "poetry", "pipx", "bun",
                           "composer", "easy_install", "conda", "mamba"})
_DB_CLIENTS = frozenset({"psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "cockroach", "clickhouse-client", "duckdb",
                         "mongo", "mongosh", "redis-cli", "cqlsh", "sqlplus", "db2", "dbshell", "dbconsole", "execute",
                         "prisma", "supabase", "wrangler", "turso", "bq", "snowsql", "pg_restore", "knex", "sequelize"})
_SQL_DESTROYS = re.compile(r"\b(?:DROP\s+(?:TABLE|DATABASE|SCHEMA|KEYSPACE|COLLECTION|OWNED)|TRUNCATE(?:\s+TABLE)?\s+\w|"
                           r"ALTER\s+TABLE\s+\S+\s+DROP\s+(?:COLUMN\s+)?\w|DELETE\s+FROM\s+[\w.\"`]+\s*(?:;|$|'|\")|"
                           r"FLUSHALL|FLUSHDB|dropDatabase\(|\.drop\(\))", re.IGNORECASE)


def _is(command: Command, program: str, sub: str = "") -> bool:
    return command.program == program and (not sub or command.sub == sub)


def _lowered(command: Command) -> tuple[str, ...]:
    return tuple(a.lower() for a in command.args)


def _env(command: Command, step: Step) -> dict[str, str]:
    """Variables the command runs with: its own, and those exported earlier in the step."""
    found: dict[str, str] = {}
    for other in step.commands:
        if other is command:
            break
        if not other.words:
            found.update(other.env)
    found.update(command.env)
    return found


def _every_env(step: Step) -> dict[str, str]:
    found: dict[str, str] = {}
    for command in step.commands:
        found.update(command.env)
    return found


def _regenerable(path: str) -> bool:
    """Whether a path is a folder or file a tool makes again (see the module's docstring)."""
    path = path.strip().strip("'\"")
    if not path or path in {".", "..", "/", "~", "*", ".*", "./*", "~/", "$HOME", "${HOME}", "%USERPROFILE%"}:
        return False
    if _TEMP_ROOTS.match(path) and not re.search(r"\$\w+/?$|\*$", path.split("/", 3)[-1] if path.count("/") > 2 else ""):
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
    return name in _REGENERABLE or "/".join(parts[-2:]) in _REGENERABLE or bool(_REGENERABLE_FILES.match(last)) \
        or (name.startswith(".") and name.endswith("cache")) or name.endswith(".egg-info")


def _targets(command: Command) -> tuple[str, ...]:
    return tuple(a for a in command.positional())


# --------------------------------------------------------------------------------------------
# Git


def _git(command: Command, *subs: str) -> bool:
    return command.program == "git" and _git_sub(command) in subs


def _git_sub(command: Command) -> str:
    args = list(command.args)
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-c", "-C", "--git-dir", "--work-tree") and args:
            args.pop(0)
    return args[0].lower() if args else ""


def _git_c(command: Command) -> tuple[str, ...]:
    """The ``-c key=value`` settings given to git for one call."""
    args = command.args
    return tuple(args[i + 1].lower() for i, a in enumerate(args[:-1]) if a == "-c")


def _push_force(command: Command, step: Step) -> bool:
    if not _git(command, "push"):
        return False
    if command.flag("--force", "f") or any(a.startswith("+") and len(a) > 1 for a in command.positional()[1:]):
        return True
    if command.flag("--force-with-lease", "--force-if-includes"):
        refs = command.positional()[2:]  # push, the remote, then refspecs
        if command.flag("--all", "--mirror"):
            return True
        if not refs:
            return True  # the branch pushed is the current one, which may be a shared one
        return any(_SHARED_BRANCHES.match(ref.split(":")[-1].removeprefix("refs/heads/")) for ref in refs)
    return command.flag("--mirror", "--delete", "d") or any(a.startswith(":") and len(a) > 1 for a in command.positional()[2:])


def _reset_hard(command: Command, step: Step) -> bool:
    return _git(command, "reset") and command.flag("--hard", "--merge", "--keep") and "--keep" not in command.args


def _clean(command: Command, step: Step) -> bool:
    return _git(command, "clean") and command.flag("--force", "f") and not command.flag("--dry-run", "n")


def _discard(command: Command, step: Step) -> bool:
    if _git(command, "checkout", "restore"):
        args = command.args
        whole = {".", ":/", "*", "-A", ":(top)"}
        if _git_sub(command) == "restore" and command.flag("--staged", "S") and not command.flag("--worktree", "W"):
            return False
        after = args[args.index("--") + 1:] if "--" in args else command.positional()[1:]
        return any(a in whole for a in after) or (command.flag("--force", "f") and _git_sub(command) == "checkout")
    return _git(command, "stash") and len(command.positional()) > 1 and command.positional()[1].lower() in ("drop", "clear")


def _branch_delete(command: Command, step: Step) -> bool:
    return _git(command, "branch") and ("-D" in command.args or (command.flag("--delete", "d") and command.flag("--force", "f")))


def _history_rewrite(command: Command, step: Step) -> bool:
    if command.program in ("git-filter-repo", "bfg"):
        return True
    if _git(command, "filter-branch", "filter-repo", "replace"):
        return True
    if _git(command, "reflog") and "expire" in _lowered(command):
        return True
    if _git(command, "gc") and any(a.startswith("--prune=now") for a in command.args):
        return True
    return _git(command, "update-ref") and command.flag("d")


def _no_verify(command: Command, step: Step) -> bool:
    if command.program == "git" and _git_sub(command) in ("commit", "push", "merge", "am", "rebase", "cherry-pick", "revert"):
        env = _env(command, step)
        if command.flag("--no-verify") or (_git_sub(command) == "commit" and command.flag("n")):
            return True
        if env.get("HUSKY") == "0" or env.get("HUSKY_SKIP_HOOKS") or env.get("SKIP") or env.get("PRE_COMMIT_ALLOW_NO_CONFIG"):
            return True
        return any(c.startswith("core.hookspath=") for c in _git_c(command))
    if command.program == "pre-commit" and command.sub == "uninstall":
        return True
    if command.program == "git" and _git_sub(command) == "config" and "core.hookspath" in _lowered(command):
        return True
    return False


def _no_sign(command: Command, step: Step) -> bool:
    if command.program == "git" and (command.flag("--no-gpg-sign") or "commit.gpgsign=false" in _git_c(command)):
        return True
    low = _lowered(command)
    return _git(command, "config") and any(k in low for k in ("commit.gpgsign", "tag.gpgsign")) and "false" in low


# --------------------------------------------------------------------------------------------
# Files and permissions


def _rm_tree(command: Command, step: Step) -> bool:
    program, args = command.program, command.args
    if program == "rm" and (command.flag("--recursive", "r", "R")):
        if command.flag("--no-preserve-root"):
            return True
        return not all(_regenerable(t) for t in _targets(command)) or not _targets(command)
    if program in ("remove-item", "ri", "rm", "del", "rmdir", "rd", "erase") and any(
            a.lower() in ("-recurse", "-r", "-rec") for a in args):
        targets = [a for a in args if not a.startswith("-")]
        return not targets or not all(_regenerable(t) for t in targets)
    if program in ("rd", "rmdir", "del", "erase") and any(a.lower() in ("/s", "/q", "/f") for a in args):
        targets = [a for a in args if not a.startswith("/") or len(a) > 3]
        return not targets or not all(_regenerable(t) for t in targets)
    if program == "find" and ("-delete" in args or ("-exec" in args and any(a in ("rm", "shred") for a in args))):
        names = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-name", "-iname")]
        return not names or not all(_regenerable(n.replace("*", "x")) or n.startswith("*.py") for n in names)
    return program in ("shred", "wipefs", "mkfs", "dd") and (program != "dd" or any(a.startswith("of=/dev/") for a in args))


def _rm_data(command: Command, step: Step) -> bool:
    """A database file, the repository's own history, or everything in a folder."""
    if command.program not in ("rm", "remove-item", "del", "unlink", "ri", "erase") and not _git(command, "rm"):
        return False
    targets = [t for t in _targets(command) if t.lower() != "rm"]
    return any(_DB_FILE.search(t) or t.rstrip("/") in (".git", "*", ".*") or t.endswith("/*") and not _regenerable(t[:-2])
               for t in targets)


_DELETES = frozenset({"rm", "remove-item", "del", "unlink", "ri", "erase", "shred"})


def deletes_files(line: str) -> bool:
    """Whether a step deletes a file or folder a tool does not make again (``rm``, ``git rm``,
    ``Remove-Item``, ``del``)."""
    return any((c.program in _DELETES or _git(c, "rm")) and not all(_regenerable(t) for t in _targets(c) if t.lower() != "rm")
               for c in tokenize(line))


def _rm_test(command: Command, step: Step) -> bool:
    if command.program not in ("rm", "remove-item", "del", "unlink", "ri") and not _git(command, "rm"):
        return False
    return any(_TEST_FILE.search(t) and not _regenerable(t) for t in _targets(command) if t.lower() != "rm")


def _world_writable(command: Command, step: Step) -> bool:
    if command.program == "chmod":
        modes = [a for a in command.args if not a.startswith("-") or re.fullmatch(r"-[rwxXst]+", a)]
        mode = modes[0] if modes else ""
        if re.fullmatch(r"0?[0-7]?[0-7][0-7][2367]", mode) or re.search(r"(?:^|,)(?:a|o|ugo)?[+=]\w*w", mode) \
                and (mode.startswith(("a", "o", "+")) or "o" in mode.split("+")[0]):
            return True
        if re.fullmatch(r"0?[4-7][0-7]{3}", mode) or re.search(r"[ug]\+\w*s", mode):
            return True  # setuid / setgid
        return False
    if command.program == "icacls":
        return any(re.match(r"(?:everyone|\*s-1-1-0|users):", a, re.IGNORECASE) for a in command.args) \
            and "/grant" in _lowered(command)
    return False


def _owns_system(command: Command, step: Step) -> bool:
    if command.program in ("chown", "chgrp") and command.flag("--recursive", "R"):
        return any(re.match(r"^/(?:usr|etc|var|opt|bin|lib|Library|System)?/?$|^/usr/", t) for t in _targets(command)[1:])
    return command.program in ("takeown",) and "/r" in _lowered(command)


def _sudo_tools(command: Command, step: Step) -> bool:
    if not command.privileged:
        return False
    program = command.program
    if program in _PKG_MANAGERS or program in _SHELLS_AND_SCRIPTS or program.startswith(("./", "python")):
        return True
    if program in ("npm", "node", "bash", "sh") or command.words[0].startswith(("./", "../", "~/", "<path>")):
        return True
    return program in ("su", "visudo") or (program == "chmod" and _world_writable(command, step))


# `sudo make install` is how built software is installed; what a script or a language's package
# manager runs as root is not reviewed by anyone.
_SHELLS_AND_SCRIPTS = frozenset({"sh", "bash", "zsh", "su", "python", "python3", "node", "perl", "ruby", "php"})


def _sudoers(command: Command, step: Step) -> bool:
    if any(r.startswith(("/etc/sudoers", "/etc/doas")) for r in command.redirects):
        return True
    if command.program == "tee" and any(a.startswith("/etc/sudoers") for a in command.args):
        return True
    if command.program == "usermod" and any(g in _lowered(command) for g in ("sudo", "wheel", "root", "admin")):
        return True
    if command.program in ("net", "net1") and "localgroup" in _lowered(command) and "administrators" in _lowered(command):
        return True
    return command.program in ("setcap",) or "NOPASSWD" in " ".join(command.args)


def _elevate(command: Command, step: Step) -> bool:
    low = _lowered(command)
    if command.program == "start-process" and "-verb" in low and "runas" in low:
        return True
    return command.program == "runas" or (command.program == "su" and not command.privileged)


# --------------------------------------------------------------------------------------------
# Security checks turned off

_TLS_ENV = {"NODE_TLS_REJECT_UNAUTHORIZED": {"0"}, "GIT_SSL_NO_VERIFY": None, "PYTHONHTTPSVERIFY": {"0"},
            "CURL_INSECURE": None, "REQUESTS_CA_BUNDLE": {""}, "CURL_CA_BUNDLE": {""}, "SSL_CERT_FILE": {""},
            "NPM_CONFIG_STRICT_SSL": {"false", "0"}, "npm_config_strict_ssl": {"false", "0"},
            "YARN_ENABLE_STRICT_SSL": {"false", "0"}, "PIP_TRUSTED_HOST": None, "UV_INSECURE_HOST": None,
            "GOINSECURE": None, "GONOSUMDB": None, "GONOSUMCHECK": None, "GOSUMDB": {"off"}, "GOFLAGS": None,
            "CARGO_HTTP_CHECK_REVOKE": {"false"}, "CARGO_NET_GIT_FETCH_WITH_CLI": None, "DOCKER_CONTENT_TRUST": {"0"},
            "HELM_INSECURE_SKIP_TLS_VERIFY": None, "KUBECONFIG_INSECURE": None, "AWS_CA_BUNDLE": {""},
            "PIP_BREAK_SYSTEM_PACKAGES": None, "NODE_OPTIONS": None, "ELECTRON_DISABLE_SECURITY_WARNINGS": None,
            "DISABLE_SSL_VERIFY": None, "SSL_VERIFY": {"false", "0", "no"}, "VERIFY_SSL": {"false", "0", "no"}}


def _tls_env(command: Command, step: Step) -> bool:
    for name, value in _env(command, step).items():
        allowed = _TLS_ENV.get(name, _TLS_ENV.get(name.upper(), ()))
        if allowed == ():
            continue
        if name in ("GOFLAGS",):
            if "-insecure" in value:
                return True
            continue
        if name in ("NODE_OPTIONS",):
            if "--use-openssl-ca" not in value and "tls" in value.lower() and "reject" in value.lower():
                return True
            continue
        if name == "PIP_BREAK_SYSTEM_PACKAGES" or name == "CARGO_NET_GIT_FETCH_WITH_CLI":
            continue
        if allowed is None and value.lower() not in ("", "0", "false", "no") or allowed and value.lower() in allowed:
            return True
    return False


_TLS_SETTINGS = re.compile(r"^(?:http\.sslverify|http\.[^.]+\.sslverify|strict-ssl|strict_ssl|enablestrictssl|ssl_verify|"
                           r"sslverify|ssl-verify|verify_ssl|certificates\.[\w.-]+\.cert|disable-tls|secure-http|"
                           r"insecure|check-revoke|http\.check-revoke|global\.trusted-host|trusted-host|"
                           r"install\.trusted-host|tls-verify|insecure-skip-tls-verify)$")


def _tls_config(command: Command, step: Step) -> bool:
    args = [a.lower() for a in command.positional()]
    program = command.program
    if program in ("git", "npm", "pnpm", "yarn", "pip", "pip3", "poetry", "conda", "composer", "bundle", "gem", "uv",
                   "helm", "kubectl", "cargo", "bun", "pdm", "mamba", "micromamba"):
        for i, a in enumerate(args):
            key = a.split("=", 1)[0].lstrip("-")
            if _TLS_SETTINGS.match(key):
                value = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
                if "trusted-host" in key or value in ("false", "0", "no", "off", "true") and (
                        value != "true" or key in ("disable-tls", "insecure", "insecure-skip-tls-verify")):
                    return True
        for c in _git_c(command):
            key, _, value = c.partition("=")
            if _TLS_SETTINGS.match(key) and value in ("false", "0", "no"):
                return True
    return False


def _tls_flags(command: Command, step: Step) -> bool:
    program, low = command.program, _lowered(command)
    if program == "curl" and (command.flag("--insecure", "k")):
        return True
    if program == "wget" and "--no-check-certificate" in low:
        return True
    if program in ("pip", "pip3", "uv", "pipenv", "poetry") and any(a.startswith(("--trusted-host", "--allow-insecure-host"))
                                                                    for a in low):
        return True
    if any(a.startswith(("--insecure-skip-tls-verify", "--insecure-registry", "--disable-tls", "--tls-verify=false",
                         "--skip-tls-verify", "--ssl-no-revoke", "--no-verify-ssl", "--strict-ssl=false",
                         "--insecure")) and not a.startswith("--insecure-skip-tls-verify=false") for a in low) \
            and program not in ("git",):
        return True
    if program in ("invoke-webrequest", "iwr", "invoke-restmethod", "irm") and "-skipcertificatecheck" in low:
        return True
    if program in ("gem", "bundle") and any(a.startswith("http://") for a in low) and ("sources" in low or "source" in low):
        return True
    if program in ("pip", "pip3", "uv", "npm", "pnpm", "yarn") and any(
            a.startswith(("--index-url=http://", "--extra-index-url=http://", "--registry=http://", "http://"))
            for a in low) and ("install" in low or "config" in low or "set" in low):
        return True
    text = " ".join(command.words)
    return bool(re.search(r"verify\s*=\s*False|ssl\._create_unverified_context|CERT_NONE|rejectUnauthorized\s*[:=]\s*false|"
                          r"InsecureSkipVerify\s*:\s*true|danger_accept_invalid_certs", text)) and program in (
        "python", "python3", "py", "node", "go", "ruby", "deno", "bun")


def _signatures_off(command: Command, step: Step) -> bool:
    low = _lowered(command)
    if command.program in ("apt", "apt-get", "aptitude") and any(
            a in ("--allow-unauthenticated", "--force-yes", "--allow-insecure-repositories") for a in low):
        return True
    if command.program in ("dnf", "yum", "zypper", "rpm", "microdnf") and any(
            a in ("--nogpgcheck", "--nosignature", "--nodigest", "--no-gpg-checks", "--nodeps") for a in low):
        return True
    if command.program in ("npm", "pnpm", "yarn") and "--ignore-signatures" in low:
        return True
    if command.program in ("cosign",) and any("insecure" in a for a in low):
        return True
    text = " ".join(command.args) + " " + " ".join(command.redirects)
    return bool(re.search(r"\[trusted=yes\]|gpgcheck\s*=\s*0|SigLevel\s*=\s*Never", text, re.IGNORECASE))


def _protection_off(command: Command, step: Step) -> bool:
    program, low = command.program, _lowered(command)
    if program in ("pip", "pip3", "uv") and "--break-system-packages" in low:
        return True
    if "PIP_BREAK_SYSTEM_PACKAGES" in _env(command, step) and program in ("pip", "pip3", "python", "python3", "uv"):
        return True
    if program == "set-executionpolicy" and any(a in ("bypass", "unrestricted") for a in low):
        return True
    if program in ("powershell", "pwsh") and "-executionpolicy" in low and any(a in ("bypass", "unrestricted") for a in low):
        return True
    if program == "setenforce" and low[:1] == ("0",):
        return True
    if program in ("ufw",) and "disable" in low:
        return True
    if program in ("systemctl", "service") and any(a in ("stop", "disable", "mask") for a in low) and any(
            a.startswith(("firewalld", "apparmor", "ufw", "selinux", "auditd", "iptables", "nftables")) for a in low):
        return True
    if program in ("netsh",) and "firewall" in " ".join(low) and ("off" in low or "disable" in low):
        return True
    if program in ("set-mppreference",) and any(a.startswith("-disable") for a in low):
        return True
    if program in ("spctl",) and any(a in ("--master-disable", "--global-disable") for a in low):
        return True
    if program == "csrutil" and "disable" in low:
        return True
    if program == "xattr" and any("com.apple.quarantine" in a for a in low) and ("-d" in low or "-r" in low or "-c" in low):
        return True
    if any(a in ("--no-sandbox", "--disable-web-security", "--disable-setuid-sandbox") for a in low):
        return True
    if program in ("docker", "podman", "nerdctl") and (
            "--privileged" in low or any(a.startswith(("--security-opt=seccomp=unconfined", "--security-opt=apparmor=unconfined",
                                                        "--cap-add=all", "--pid=host")) for a in low)
            or any(low[i:i + 2] == ("--security-opt", "seccomp=unconfined") or low[i:i + 2] == ("--cap-add", "all")
                   for i in range(len(low)))):
        return True
    # Binding a role cluster-wide is how an account gets rights it was refused; a lesson cuts the
    # step before the role's name, so the binding itself is what is classed.
    return program == "kubectl" and command.sub == "create" and "clusterrolebinding" in low


def _docker_socket(command: Command, step: Step) -> bool:
    return command.program == "chmod" and any("docker.sock" in a for a in command.args)


# --------------------------------------------------------------------------------------------
# Checks skipped


def _test_deselect(command: Command, step: Step) -> bool:
    program, args = command.program, command.args
    runner = program in ("pytest", "py.test") or (program in ("python", "python3") and "pytest" in args[:2])
    if runner:
        for i, a in enumerate(args):
            value = a[3:] if a.startswith("-k=") else (args[i + 1] if a == "-k" and i + 1 < len(args) else None)
            if value is not None and re.search(r"\bnot\b", value):
                return True
            if a.startswith(("--deselect", "--ignore")) and not a.startswith("--ignore-glob=*.") \
                    or a in ("-p", "--continue-on-collection-errors") and i + 1 < len(args) and args[i + 1].startswith("no:"):
                return not (a == "-p" and args[i + 1] in ("no:cacheprovider", "no:randomly", "no:xdist", "no:warnings"))
        return False
    if program in ("jest", "vitest", "mocha") and any(a.startswith(("--testpathignorepatterns", "--exclude", "--ignore",
                                                                     "--modulepathignorepatterns"))
                                                       for a in _lowered(command)):
        return True
    if program == "go" and command.sub == "test" and any(a.startswith("-skip") for a in args):
        return True
    if program == "cargo" and command.sub in ("test", "nextest") and ("--skip" in args or "--exclude" in args):
        return True
    if program in ("mvn", "mvnw", "./mvnw", "gradle", "gradlew", "./gradlew"):
        low = _lowered(command)
        return any(a.startswith(("-dskiptests", "-dmaven.test.skip", "-dskipits")) for a in low) or any(
            low[i:i + 2] in (("-x", "test"), ("-x", "check"), ("--exclude-task", "test")) for i in range(len(low)))
    if program in ("npm", "pnpm", "yarn") and any(a in ("--passwithnotests", "--no-tests") for a in _lowered(command)):
        return False  # a run with no test to run is no skip of a failing one
    return False


def _or_true(command: Command, step: Step) -> bool:
    if command.joined != "||":
        return False
    words = command.words
    return words[:1] in (("true",), (":",)) or words[:2] == ("exit", "0") or words == ("echo",) or (
        words[:1] == ("echo",) and len(words) <= 4 and command is step.commands[-1])


def _exit_zero(command: Command, step: Step) -> bool:
    low = _lowered(command)
    if any(a in ("--exit-zero", "--exit-zero-even-if-changed", "--no-fail-on-error", "--max-warnings=-1", "--force-exclusion")
           for a in low) and command.program not in ("git",):
        return "--force-exclusion" not in low
    if command.program == "set" and low[:1] == ("+e",):
        return True
    return any(a in ("--continue-on-error", "--keep-going", "--no-bail") for a in low) and command.program in (
        "npm", "pnpm", "yarn", "nx", "turbo", "lerna")


def _lint_off(command: Command, step: Step) -> bool:
    program, args = command.program, command.args
    if program == "eslint":
        for i, a in enumerate(args):
            value = a.split("=", 1)[1] if a.startswith("--rule=") else (args[i + 1] if a == "--rule" and i + 1 < len(args) else "")
            if re.search(r":\s*['\"]?(?:off|0)['\"]?\s*}?$", value):
                return True
        return False
    if program in ("ruff", "flake8", "pylint", "mypy", "pyright", "golangci-lint", "rubocop", "shellcheck", "stylelint"):
        low = _lowered(command)
        return any(a.startswith(("--ignore=", "--extend-ignore=", "--disable=", "--ignore-errors", "--exclude=")) and
                   re.search(r"=(?:all|e,|e$|\*|.{0,3}$)|ignore-errors", a) for a in low) or "--disable-all" in low
    if program == "cargo" and command.sub == "clippy":
        return any(re.fullmatch(r"-A|--allow", a) for a in args) or any(a.startswith(("-Aclippy", "-Awarnings")) for a in args)
    return False


# --------------------------------------------------------------------------------------------
# Code from the network


def _fetches(command: Command) -> bool:
    if command.program in _FETCHERS:
        return True
    text = " ".join(command.words).lower()
    return "downloadstring" in text or "net.webclient" in text or "invoke-webrequest" in text or \
        bool(re.search(r"\b(?:iwr|irm)\b", text)) or bool(re.search(r"\burlopen\(|requests\.get\(", text))


def _fed_fetch(command: Command) -> bool:
    return any(_fetches(c) for c in command.fed)


def _pipe_to_shell(command: Command, step: Step) -> bool:
    program = command.program
    if command.words[:1] and command.words[0].startswith(("$(", "`")):  # output run as a command: `$(curl …)`
        return _fed_fetch(command)
    if program not in _RUNS_TEXT and not (program in ("sudo",)):
        return False
    if program in ("iex", "invoke-expression") and (_fed_fetch(command) or _fetches(command)):
        return True
    if command.joined in ("|", "|&"):
        pipe = [c for c in step.commands if c.pipeline == command.pipeline and not c.inner == (not command.inner)
                and c is not command]
        earlier = [c for c in step.commands[:step.commands.index(command)] if c.pipeline == command.pipeline
                   and c.inner == command.inner]
        if any(_fetches(c) for c in earlier or pipe):
            return program not in ("python", "python3", "node") or not command.args or command.args[0] in ("-", "-c")
    if _fed_fetch(command) and program in _RUNS_TEXT:
        return True  # bash <(curl …), sh -c "$(curl …)", source <(wget …)
    return _runs_download(command, step)


def _runs_download(command: Command, step: Step) -> bool:
    """``curl -o x.sh URL && sh x.sh``: a file fetched, then run."""
    index = step.commands.index(command)
    saved: set[str] = set()
    for earlier in step.commands[:index]:
        if _fetches(earlier):
            out = earlier.option("-o") or earlier.option("--output") or earlier.option("-outfile") or earlier.option("-O")
            if out:
                saved.add(out.lstrip("./"))
            saved.update(r.lstrip("./") for r in earlier.redirects)
    if not saved:
        return False
    if command.program in _RUNS_TEXT:
        return any(a.lstrip("./") in saved for a in command.args[:2])
    return command.words[0].lstrip("./") in saved


# --------------------------------------------------------------------------------------------
# Containers, clusters, infrastructure, databases


def _docker_prune(command: Command, step: Step) -> bool:
    if command.program not in ("docker", "podman"):
        return False
    low = _lowered(command)
    if low[:2] in (("system", "prune"),):
        return command.flag("--all", "a", "--volumes")
    if low[:2] in (("volume", "prune"), ("volume", "rm")) or low[:1] == ("volume",) and "rm" in low:
        return True
    if low[:1] in (("rm",), ("rmi",), ("kill",)) or low[:2] in (("container", "rm"), ("image", "rm"), ("container", "prune")):
        return any("$(" in a and ("-a" in a or "-q" in a) for a in command.args) or low[:2] == ("container", "prune")
    return False


def _compose_down(command: Command, step: Step) -> bool:
    compose = command.program == "docker-compose" or (command.program in ("docker", "podman") and command.sub == "compose")
    return compose and "down" in _lowered(command) and command.flag("--volumes", "v")


def _kubectl_delete(command: Command, step: Step) -> bool:
    if command.program not in ("kubectl", "oc", "k"):
        return False
    low = _lowered(command)
    if command.sub != "delete":
        return command.sub in ("drain",) and any(a.startswith("--delete-emptydir-data") or a == "--delete-local-data"
                                                  for a in low) or (command.sub == "replace" and "--force" in low)
    what = [a for a in command.positional()[1:]]
    if any(a in ("--all", "--all-namespaces", "-a") or a.startswith("--grace-period=0") for a in low):
        return True
    kinds = {w.split("/")[0] for w in what}
    return bool(kinds & {"namespace", "namespaces", "ns", "pvc", "pv", "persistentvolumeclaim", "persistentvolume",
                         "persistentvolumeclaims", "statefulset", "sts", "crd", "customresourcedefinition", "secret",
                         "deployment", "deploy", "node", "nodes"}) or "-f" in low and not what


def _helm_uninstall(command: Command, step: Step) -> bool:
    return command.program == "helm" and command.sub in ("uninstall", "delete", "del")


def _terraform(command: Command, step: Step) -> bool:
    if command.program not in ("terraform", "tofu", "terragrunt", "pulumi", "cdktf"):
        return False
    low = _lowered(command)
    sub = command.sub
    if sub in ("destroy",) or (sub == "apply" and "-destroy" in low) or (command.program == "pulumi" and sub == "destroy"):
        return True
    if sub == "state" and any(a in ("rm", "push", "replace-provider") for a in low):
        return True
    if sub == "workspace" and "delete" in low:
        return True
    return sub in ("apply", "up") and any(a.startswith("-replace") for a in low)


def _terraform_skip(command: Command, step: Step) -> bool:
    if command.program not in ("terraform", "tofu", "terragrunt", "pulumi"):
        return False
    low = _lowered(command)
    if command.sub == "force-unlock":
        return True
    return any(a in ("-lock=false", "--lock=false") for a in low) or (
        command.sub in ("apply", "up") and any(a in ("-auto-approve", "--auto-approve", "--yes", "-y", "--skip-preview")
                                               for a in low))


def _sql(command: Command, step: Step) -> bool:
    if command.program not in _DB_CLIENTS and not (command.program in ("echo", "cat", "printf") and command.joined != "|"):
        return False
    if command.program in ("echo", "cat", "printf"):
        after = [c for c in step.commands if c.pipeline == command.pipeline and c.program in _DB_CLIENTS]
        if not after:
            return False
    text = " ".join(command.args) + "\n" + command.stdin
    return bool(_SQL_DESTROYS.search(text)) and not re.search(r"\bIF\s+EXISTS\b.*\bCREATE\b", text, re.IGNORECASE | re.DOTALL)


def _drop_tools(command: Command, step: Step) -> bool:
    return command.program in ("dropdb", "dropuser", "mysqladmin") and (command.program != "mysqladmin" or "drop" in _lowered(command))


_MANAGE = re.compile(r"(?:^|/)manage\.py$|^<path>$")  # a lesson's placeholder may stand for manage.py
_DJANGO_COMMANDS = frozenset({"migrate", "flush", "reset_db", "sqlflush", "loaddata", "makemigrations", "runserver",
                              "dbshell", "shell", "test", "collectstatic", "createsuperuser"})


def _django(command: Command) -> bool:
    words, program = command.words, command.program
    if program == "django-admin":
        return True
    at = 1 if program in ("python", "python3", "py") else 0
    return len(words) > at + 1 and bool(_MANAGE.search(words[at])) and words[at + 1] in _DJANGO_COMMANDS


def _migration_destroys(command: Command, step: Step) -> bool:
    program, low = command.program, _lowered(command)
    if _django(command):
        rest = list(low[next((i for i, a in enumerate(low) if a in _DJANGO_COMMANDS), 0):])
        if rest[:1] in (["flush"], ["reset_db"], ["sqlflush"]):
            return True
        return rest[:1] == ["migrate"] and "zero" in rest
    if program == "prisma":
        return (low[:2] == ("migrate", "reset")) or (low[:2] == ("db", "push") and any(
            a in ("--accept-data-loss", "--force-reset") for a in low))
    if program in ("rails", "rake", "bin/rails", "bin/rake"):
        return any(a.split("[")[0] in ("db:drop", "db:reset", "db:schema:load", "db:purge", "db:migrate:reset",
                                      "db:structure:load", "db:truncate_all") for a in low)
    if program == "alembic":
        return low[:1] == ("downgrade",) and any(a in ("base", "-1") or a.startswith("-") and a[1:].isdigit() for a in low[1:])
    if program in ("sequelize", "sequelize-cli"):
        return any(a in ("db:drop", "db:migrate:undo:all", "db:seed:undo:all") for a in low)
    if program == "knex":
        return any(a.startswith("migrate:rollback") for a in low) and "--all" in low
    if program in ("typeorm", "typeorm-ts-node-commonjs"):
        return "schema:drop" in low
    if program == "mix":
        return any(a in ("ecto.drop", "ecto.reset", "ecto.rollback") and (a != "ecto.rollback" or "--all" in low) for a in low)
    if program in ("php", "artisan"):
        return any(a in ("migrate:fresh", "migrate:reset", "db:wipe", "migrate:refresh") for a in low)
    if program in ("diesel", "sqlx"):
        return low[:2] in (("database", "reset"), ("database", "drop"), ("migration", "revert")) and (
            low[:2] != ("migration", "revert") or "--all" in low)
    if program in ("supabase",):
        return low[:2] == ("db", "reset")
    if program in ("flyway",):
        return "clean" in low
    if program in ("liquibase",):
        return "dropall" in low or "drop-all" in low
    return False


def _migration_fake(command: Command, step: Step) -> bool:
    program, low = command.program, _lowered(command)
    if _django(command) and "migrate" in low and any(a in ("--fake", "--fake-initial") for a in low):
        return True
    if program == "alembic" and low[:1] == ("stamp",):
        return True
    if program == "flask" and low[:2] == ("db", "stamp"):
        return True
    if program == "prisma" and low[:2] == ("migrate", "resolve") and "--applied" in low:
        return True
    return False


# --------------------------------------------------------------------------------------------
# Global configuration


_RC_FILES = re.compile(r"(?:^|/)(?:\.bashrc|\.bash_profile|\.zshrc|\.zprofile|\.profile|\.config/fish/config\.fish|"
                       r"\.npmrc|\.yarnrc|\.gitconfig|\.pip/pip\.conf|\.config/pip/pip\.conf|pip\.ini|\.condarc|"
                       r"\.cargo/config(?:\.toml)?|\.docker/config\.json|/etc/[\w./-]+|\.ssh/config)$")


def _rc_files(command: Command, step: Step) -> bool:
    targets = list(command.redirects)
    if command.program == "tee":
        targets += [a for a in command.args if not a.startswith("-")]
    if command.program in ("sed", "perl") and command.flag("i", "--in-place"):
        targets += [a for a in command.args if not a.startswith("-")][1:]
    if command.program in ("cp", "mv", "ln", "install"):
        targets += list(command.positional()[-1:])
    if command.program in ("add-content", "set-content", "out-file") and any("$profile" in a.lower() for a in command.args):
        return True
    return any(_RC_FILES.search(t.replace("$HOME", "~")) and not t.startswith("./") for t in targets)


def _global_config(command: Command, step: Step) -> bool:
    program, low = command.program, _lowered(command)
    reading = {"--get", "--get-all", "--list", "-l", "get", "list", "ls", "--show-origin", "--get-regexp", "--show",
               "show", "--unset-all", "--edit"}
    if program == "git" and _git_sub(command) == "config":
        return any(a in ("--global", "--system") for a in low) and not any(a in reading for a in low)
    if program in ("npm", "pnpm") and command.sub in ("config", "set") and (command.sub == "set" or "set" in low[:3]):
        return not any(a in ("--location=project", "--location", "project") for a in low)
    if program == "yarn" and command.sub == "config" and "set" in low:
        return True  # yarn 1 writes ~/.yarnrc; berry's -H the home one, plain set the project's (.yarnrc.yml)
    if program in ("pip", "pip3") and command.sub == "config" and any(a in ("set", "unset") for a in low):
        return not any(a in ("--site",) for a in low)
    if program == "poetry" and command.sub == "config" and len(command.positional()) > 2:
        return "--local" not in low and "--list" not in low
    if program in ("conda", "mamba") and command.sub == "config" and any(a.startswith(("--set", "--add", "--remove",
                                                                                         "--append", "--prepend")) for a in low):
        return "--env" not in low and "--file" not in low
    if program == "go" and command.sub == "env" and "-w" in low:
        return True
    if program in ("rustup",) and command.sub in ("default",):
        return True
    if program in ("pyenv", "rbenv", "nodenv", "jenv", "goenv") and command.sub == "global":
        return True
    if program == "nvm" and low[:2] == ("alias", "default"):
        return True
    if program in ("update-alternatives",) and any(a in ("--set", "--install", "--config") for a in low):
        return True
    if program in ("setx",) or (program == "[environment]::setenvironmentvariable"):
        return True
    if any("setenvironmentvariable(" in w.lower() and ("'machine'" in w.lower() or "'user'" in w.lower() or
                                                       "machine" in w.lower()) for w in command.words):
        return True
    if program in ("sysctl",) and ("-w" in low or "--write" in low or any("=" in a for a in low)):
        return True
    if program == "defaults" and command.sub == "write":
        return True
    if program == "reg" and command.sub in ("add", "delete", "import") and any(a.startswith(("hklm", "hkey_local_machine"))
                                                                               for a in low):
        return True
    if program == "launchctl" and command.sub in ("setenv", "config"):
        return True
    if program in ("npm", "pnpm", "yarn", "bun") and command.privileged and command.flag("--global", "g"):
        return True
    return False


# --------------------------------------------------------------------------------------------
# The table (first match wins)

RULES: tuple[Rule, ...] = (
    Rule("fs.rm-tree", Kind.DESTROYS_DATA, "it deletes a whole folder tree that no tool can make again", _rm_tree),
    Rule("fs.rm-data", Kind.DESTROYS_DATA, "it deletes a database, the repository's history or every file of a folder",
         _rm_data),
    Rule("fs.rm-test", Kind.SKIPS_CHECK, "it deletes the failing test instead of making it pass", _rm_test),
    Rule("db.sql-destroys", Kind.DESTROYS_DATA, "it drops or empties tables, and the rows in them are gone", _sql),
    Rule("db.drop", Kind.DESTROYS_DATA, "it drops a whole database", _drop_tools),
    Rule("db.migration-destroys", Kind.DESTROYS_DATA,
         "it drops and recreates the database or unapplies its migrations, and the data in it is gone", _migration_destroys),
    Rule("db.migration-fake", Kind.SKIPS_CHECK,
         "it marks migrations applied without running them, so the schema no longer matches what the code expects",
         _migration_fake),
    Rule("docker.prune", Kind.DESTROYS_DATA,
         "it deletes every stopped container, unused image or volume, and the data kept in volumes", _docker_prune),
    Rule("docker.compose-down-volumes", Kind.DESTROYS_DATA, "it deletes the project's volumes and the data in them",
         _compose_down),
    Rule("k8s.delete", Kind.DESTROYS_DATA,
         "it deletes cluster resources (a namespace, volumes, everything of a kind) and what they held", _kubectl_delete),
    Rule("helm.uninstall", Kind.DESTROYS_DATA, "it removes a release and the resources it made from the cluster",
         _helm_uninstall),
    Rule("terraform.destroy", Kind.DESTROYS_DATA,
         "it destroys infrastructure or drops it from the state, and what it held is gone", _terraform),
    Rule("terraform.skip-review", Kind.SKIPS_CHECK,
         "it applies changes without the plan being reviewed, or without the state lock others rely on", _terraform_skip),
    Rule("git.push-force", Kind.REWRITES_HISTORY,
         "it overwrites the remote branch's history, and commits others pushed there are lost", _push_force),
    Rule("git.reset-hard", Kind.DESTROYS_DATA, "it throws away every uncommitted change in the working tree", _reset_hard),
    Rule("git.clean", Kind.DESTROYS_DATA, "it deletes every untracked file, and they cannot be recovered", _clean),
    Rule("git.discard", Kind.DESTROYS_DATA, "it throws away uncommitted or stashed changes", _discard),
    Rule("git.branch-force-delete", Kind.DESTROYS_DATA, "it deletes a branch even when its commits were merged nowhere",
         _branch_delete),
    Rule("git.rewrite-history", Kind.REWRITES_HISTORY, "it rewrites or prunes the repository's history", _history_rewrite),
    Rule("git.no-verify", Kind.SKIPS_CHECK, "it skips the repository's hooks, so what they check (tests, lint, secrets) "
         "is not checked", _no_verify),
    Rule("git.no-sign", Kind.DISABLES_SECURITY, "it turns off commit signing, so commits no longer prove their author",
         _no_sign),
    Rule("tls.env", Kind.DISABLES_SECURITY,
         "it turns off certificate or checksum verification, so a forged server or package is accepted", _tls_env),
    Rule("tls.config", Kind.DISABLES_SECURITY,
         "it turns off TLS certificate verification in the tool's configuration, so a forged server is accepted",
         _tls_config),
    Rule("tls.flag", Kind.DISABLES_SECURITY,
         "it skips TLS certificate verification, so a forged server or package is accepted", _tls_flags),
    Rule("pkg.signatures-off", Kind.DISABLES_SECURITY,
         "it installs packages without checking their signatures", _signatures_off),
    Rule("sec.protection-off", Kind.DISABLES_SECURITY,
         "it turns off a protection (the system's Python, the execution policy, a sandbox, a firewall, SELinux)",
         _protection_off),
    Rule("net.pipe-to-shell", Kind.RUNS_NETWORK_CODE,
         "it runs a script fetched from the network, unread, with the user's rights", _pipe_to_shell),
    Rule("fs.world-writable", Kind.RAISES_PRIVILEGES,
         "it makes files writable by every user (or setuid), so anyone on the machine can change what runs",
         _world_writable),
    Rule("fs.docker-socket", Kind.RAISES_PRIVILEGES, "it gives every user root through the Docker socket", _docker_socket),
    Rule("fs.own-system", Kind.RAISES_PRIVILEGES, "it takes ownership of system folders", _owns_system),
    Rule("priv.sudo-tool", Kind.RAISES_PRIVILEGES,
         "it runs a package manager, a shell or a project's script as root, and their install scripts with it",
         _sudo_tools),
    Rule("priv.sudoers", Kind.RAISES_PRIVILEGES, "it grants administrator rights", _sudoers),
    Rule("priv.elevate", Kind.RAISES_PRIVILEGES, "it starts a shell or program as another, more privileged user", _elevate),
    Rule("check.deselect", Kind.SKIPS_CHECK, "it leaves the failing tests out of the run instead of making them pass",
         _test_deselect),
    Rule("check.or-true", Kind.SKIPS_CHECK, "it hides the failure: the step counts as passed whatever happened", _or_true),
    Rule("check.exit-zero", Kind.SKIPS_CHECK, "it makes a checker report success whatever it found", _exit_zero),
    Rule("check.lint-off", Kind.SKIPS_CHECK, "it turns off the lint rule that failed instead of meeting it", _lint_off),
    Rule("config.rc-file", Kind.GLOBAL_CONFIG,
         "it changes a configuration file outside the project (a shell profile, a tool's user config, /etc)", _rc_files),
    Rule("config.global", Kind.GLOBAL_CONFIG,
         "it changes a tool's configuration for every project of this user (or the whole machine)", _global_config),
)


# --------------------------------------------------------------------------------------------
# Edits: what the text written to a file turns off

EDIT_RULES: tuple[tuple[str, Kind, str, re.Pattern[str], re.Pattern[str] | None], ...] = (
    ("edit.tls-off", Kind.DISABLES_SECURITY, "it turns off TLS certificate verification in the code or its settings",
     re.compile(r"verify\s*=\s*False|rejectUnauthorized\s*[:=]\s*false|NODE_TLS_REJECT_UNAUTHORIZED\s*[=:]\s*['\"]?0|"
                r"ssl[vV]erify\s*[=:]\s*false|strict-ssl\s*[=:]\s*false|InsecureSkipVerify\s*:\s*true|"
                r"_create_unverified_context|CERT_NONE|danger_accept_invalid_certs\(true\)|trusted-host|"
                r"insecure-skip-tls-verify|ssl_verify\s*[:=]\s*(?:false|0)|check_hostname\s*=\s*False|"
                r"\"insecure-registries\"|NoCheckCertificate|verify_ssl\s*[:=]\s*(?:false|False)|PYTHONHTTPSVERIFY\s*=\s*0"),
     None),
    ("edit.skip-test", Kind.SKIPS_CHECK, "it marks the failing test to be skipped instead of making it pass",
     re.compile(r"@pytest\.mark\.(?:skip|xfail)|@unittest\.skip|\bpytest\.skip\(|\b(?:it|test|describe)\.(?:skip|todo)\(|"
                r"\bx(?:it|test|describe)\(|#\[ignore\]|\bt\.Skip(?:Now|f)?\(|@Disabled\b|@Ignore\b|\[Ignore\]|"
                r"\bskip\s*\(\s*['\"]|\.skip\b\s*=\s*true"),
     None),
    ("edit.type-ignore", Kind.SKIPS_CHECK, "it silences the type checker on the line that failed",
     re.compile(r"#\s*type:\s*ignore|#\s*pyright:\s*ignore|@ts-ignore|@ts-nocheck|@ts-expect-error|#\s*mypy:\s*ignore-errors|"
                r"ignore_errors\s*=\s*[Tt]rue|\"strict\"\s*:\s*false|noImplicitAny\"\s*:\s*false|"
                r"\"skipLibCheck\"\s*:\s*true"),
     None),
    ("edit.lint-off", Kind.SKIPS_CHECK, "it turns off the lint rule that failed instead of meeting it",
     re.compile(r"eslint-disable|#\s*noqa|#\s*pylint:\s*disable|#\[allow\(|//\s*nolint|rubocop:disable|"
                r"#\s*nosec|NOLINT|@SuppressWarnings|#\s*ruff:\s*noqa|biome-ignore|prettier-ignore|"
                r"['\"][@\w/-]+['\"]\s*:\s*['\"]?(?:off|0)['\"]?|^\s*[@\w/-]+\s*=\s*['\"]?off['\"]?\s*$"),
     re.compile(r"\.(?:py|pyi|js|jsx|ts|tsx|mjs|cjs|rs|go|rb|java|kt|json|ya?ml|toml|cfg|ini)$|eslintrc|eslint\.config|"
                r"^<path>$")),
    ("edit.ci-skip", Kind.SKIPS_CHECK, "it lets the failing step pass in CI whatever happened",
     re.compile(r"continue-on-error\s*:\s*true|allow_failure\s*:\s*true|\|\|\s*true\b|--exit-zero"), None),
    ("edit.sandbox-off", Kind.DISABLES_SECURITY, "it turns off a sandbox or a security setting",
     re.compile(r"--no-sandbox|nodeIntegration\s*:\s*true|contextIsolation\s*:\s*false|webSecurity\s*:\s*false|"
                r"privileged\s*:\s*true|allowPrivilegeEscalation\s*:\s*true|seccomp[=:]\s*unconfined|"
                r"DEBUG\s*=\s*True|ALLOWED_HOSTS\s*=\s*\[\s*['\"]\*['\"]\s*\]|CORS_ORIGIN_ALLOW_ALL\s*=\s*True|"
                r"csrf_exempt|SECURE_SSL_REDIRECT\s*=\s*False|sandbox\s*=\s*false"),
     None),
)
_SHELLISH = re.compile(r"\.(?:sh|bash|zsh|ps1|bat|cmd)$|(?:^|/)(?:Makefile|Dockerfile|Justfile|Taskfile\.ya?ml)$|"
                       r"\.github/workflows/|\.gitlab-ci\.ya?ml$|package\.json$")
