"""Placeholders for what is particular to one session, so the same pitfall joins into one lesson.

`generalise(text, project_names)` replaces, in a lesson's text and its prediction, what differs
between two meetings of the same pitfall: branch names (``<branch>``), paths (``<path>``), the
project's own names in any case form (``<project>``), host names and addresses (``<host>``), ports
(``<port>``), process ids (``<pid>``) and line numbers and counts (``<n>``). Versions, flags,
package and tool names are kept: they are what makes a lesson about a tool useful to others.

`project_aliases` turns a project's working directories into every name it goes by: the repo name,
the worktree's name (``spotter-gqc``), and module-case variants (``SpotterWeb`` → ``spotter``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

_BRANCH = re.compile(
    r"""(?x)
    (?P<a>\b(?:current\ branch|branch|upstream|origin|checkout(?:\ -b)?|switch(?:\ -c)?|-b|-c)\s+)
    (?P<b>(?!(?:is|has|to|of|the|with|and|set|as|upstream|origin|branch|-)\b)[\w][\w./\-]*)
    """
)
_REFSPEC = re.compile(r"(?P<a>\s)(?P<b>[\w][\w.\-/]*)(?P<c>\s+->\s+)(?P<d>[\w][\w.\-/]*)")
_URL = re.compile(r"\b(?:https?|ssh|git)://[^\s'\"`)]+")
_HOST_PORT = re.compile(r"\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|[a-z0-9\-]+(?:\.[a-z0-9\-]+)+):(\d{2,5})\b", re.I)
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
_HOSTNAME = re.compile(r"\b[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.(?:local|lan|internal|corp|home|example|com|net|org|io|dev)\b", re.I)
_PORT = re.compile(r"\b(port)\s+\d{2,5}\b", re.I)
_PID = re.compile(r"\b(pid|process|PID)\s*[:=]?\s*\d+\b")
_PATH = re.compile(r"(?<![\w<])(?:~|\.{1,2})?(?:/[\w.\-@+]+){2,}/?|(?<![\w/<])[\w.\-]+(?:/[\w.\-]+)+\.\w{1,5}\b|(?<![\w/<.])[\w\-]+\.(?:py|ex|exs|js|ts|tsx|rs|go|rb|toml|json|lock|yml|yaml|md|cfg|ini|txt|sh)\b(?!\.)")
_KEEP_FILES = frozenset({
    "pyproject.toml", "package.json", "package-lock.json", "mix.exs", "cargo.toml", "setup.py",
    "setup.cfg", "tox.ini", "pytest.ini", "conftest.py", "uv.lock", "poetry.lock", "go.mod",
    "requirements.txt", "makefile", "dockerfile", ".pre-commit-config.yaml", "tsconfig.json",
    "mix.lock", "cargo.lock", "yarn.lock", "pnpm-lock.yaml", "gemfile", ".formatter.exs",
})  # fmt: skip
# Libraries named like a file ("xterm.js", "chart.js"): the same name everywhere, not a path.
_KEEP_LIBRARIES = frozenset({
    "node.js", "xterm.js", "vue.js", "next.js", "nuxt.js", "chart.js", "three.js", "d3.js", "express.js",
    "react.js", "ember.js", "backbone.js", "moment.js", "socket.io", "alpine.js", "htmx.js", "p5.js",
    "pdf.js", "highlight.js", "video.js", "leaflet.js", "babylon.js", "deno.js", "bun.js", "svelte.js",
})  # fmt: skip
_LINE_NO = re.compile(r"(?<=<path>):\d+(?::\d+)?\b|\b(line|lines)\s+\d+\b", re.I)
_COUNT = re.compile(r"\b\d+(?=\s+(?:files?|tests?|errors?|failures?|failed|passed|items?|warnings?|"
                    r"source\ files|examples?|modules?|packages?|seconds?|ms)\b)", re.I)
_HEX = re.compile(r"\b[0-9a-f]{12,}\b")


_HOLDER = re.compile(r"<[^<>\s]+>")  # a placeholder, as generalising writes them: <path>, <package>


def fills(want: str, got: str) -> bool:
    """Whether the word ``got`` of a concrete command is the word ``want`` of a generalised one:
    the same, or ``want`` with each ``<placeholder>`` standing for any run of non-space characters,
    a whole word or part of one (``<package>-binary`` is ``psycopg2-binary``, ``<path>`` any path)."""
    if want == got:
        return True
    parts = _HOLDER.split(want)
    return len(parts) > 1 and re.fullmatch(r"\S+".join(map(re.escape, parts)), got) is not None


def _common_words() -> frozenset[str]:
    text = (Path(__file__).with_name("common_words.txt")).read_text(encoding="utf-8")
    return frozenset(w for line in text.splitlines() if not line.startswith("#") for w in line.split())


COMMON_WORDS = _common_words()
# Folders that hold projects rather than being one: their names never stand for a project.
_CONTAINERS = frozenset({"src", "home", "users", "work", "code", "repos", "projects", "tmp", "wt", "desktop",
                         "documents", "downloads", "dev", "git", "github", "workspace", "workspaces", "sites"})


def is_distinctive_name(name: str) -> bool:
    """A name (or a part of one) that can only be the project's: not a common word, not a number."""
    low = name.lower()
    return len(low) >= 3 and low not in COMMON_WORDS and low not in _CONTAINERS and not low.isdigit()


def project_aliases(project_paths: Iterable[str]) -> tuple[str, ...]:
    """Every name the projects at ``project_paths`` go by, longest first: the project folder's
    name (and its parent's when the folder is a worktree or a part named like the parent,
    ``spotter/spotter-gqc``, or a generic part such as ``backend``), its parts split at
    ``-``/``_``/``.`` and module-case forms split at capitals (``SpotterWeb`` → ``spotter``).

    Only distinctive names (`_distinctive`): a part that is a common word ("Code", "Windows",
    "power", "user", "impact") is never taken for the project's name."""
    names: set[str] = set()
    for path in project_paths:
        parts = [p for p in path.replace("\\", "/").rstrip("/").split("/") if p]
        if not parts:
            continue
        chosen = [parts[-1]]
        if len(parts) >= 2 and (not is_distinctive_name(parts[-1]) or parts[-1].lower().startswith(parts[-2].lower())):
            chosen.append(parts[-2])
        for part in chosen:
            if part.lower() in _CONTAINERS:
                continue
            if is_distinctive_name(part):
                names.add(part)
            for piece in re.split(r"[-_.]", part) + re.findall(r"[A-Z][a-z0-9]+", part):
                if len(piece) >= 4 and is_distinctive_name(piece):
                    names.add(piece)
    return tuple(sorted(names, key=lambda n: (-len(n), n)))


# Hosts every user of a tool meets (forges, package registries): naming them is not particular,
# and a lesson about `git push` to github.com or `pip install` from pypi.org reads better with it.
_PUBLIC_HOSTS = frozenset({
    "github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "pypi.org", "files.pythonhosted.org",
    "test.pypi.org", "registry.npmjs.org", "npmjs.com", "www.npmjs.com", "registry.yarnpkg.com",
    "crates.io", "static.crates.io", "index.crates.io", "docker.io", "registry-1.docker.io", "hub.docker.com",
    "ghcr.io", "quay.io", "proxy.golang.org", "sum.golang.org", "pkg.go.dev", "rubygems.org", "hex.pm",
    "repo.hex.pm", "repo.maven.apache.org", "repo1.maven.org", "api.nuget.org", "packagist.org",
    "deb.debian.org", "archive.ubuntu.com", "objects.githubusercontent.com", "raw.githubusercontent.com",
    # Go module paths name packages, the same for everyone.
    "golang.org", "google.golang.org", "gopkg.in", "go.uber.org", "k8s.io", "sigs.k8s.io", "go.etcd.io",
})  # fmt: skip
# A dotted quad right after one of these is a version ("Version 1.2.3.4", "pkg==1.2.3.4"), not an address.
_VERSION_BEFORE = re.compile(r"(?:\bversion|\bv|==|>=|<=|~=|@|\bbuild)\s*$", re.IGNORECASE)


def _is_public(host: str) -> bool:
    return host.lower().rstrip(".") in _PUBLIC_HOSTS


def _url(m: re.Match[str]) -> str:
    scheme, _, rest = m.group(0).partition("://")
    host, slash, path = rest.partition("/")
    if not _is_public(host.rpartition("@")[2]):
        return "<host>"
    return f"{scheme}://{host.rpartition('@')[2]}" + ("/<path>" if path.strip("/") else slash)


def _ip(m: re.Match[str]) -> str:
    if _VERSION_BEFORE.search(m.string, max(0, m.start() - 12), m.start()):
        return m.group(0)
    return "<host>"


def generalise(text: str, project_names: Iterable[str] = ()) -> str:
    """``text`` with what is particular to one session replaced by placeholders (module docstring)."""
    out = _URL.sub(_url, text)
    out = _PATH.sub(_path, out)  # before hosts: "lib/a.ex:12" is a file and a line, not a host and a port
    out = _LINE_NO.sub(_line_no, out)
    out = _HOST_PORT.sub("<host>:<port>", out)
    out = _IP.sub(_ip, out)
    out = _PORT.sub(r"\1 <port>", out)
    out = _PID.sub(r"\1 <pid>", out)
    out = _REFSPEC.sub(lambda m: f"{m['a']}{_ref(m['b'])}{m['c']}{_ref(m['d'])}", out)
    out = _BRANCH.sub(_branch, out)
    names = sorted({n for n in project_names if n and len(n) >= 3}, key=len, reverse=True)
    if names:
        pattern = re.compile(r"(?<![<\w])(?:" + "|".join(re.escape(n) for n in names) + r")(?:[A-Z]\w*)?(?![\w>])",
                             re.IGNORECASE)
        out = pattern.sub("<project>", out)
    out = _HOSTNAME.sub(_hostname, out)
    out = _COUNT.sub("<n>", out)
    out = _HEX.sub("<n>", out)
    return out


# The system's own folders are the same on every machine of a kind: "/usr/lib/python3/dist-packages"
# says something about the platform, nothing about the person.
_SYSTEM_PATH = re.compile(r"^/(?:usr|etc|opt|bin|sbin|lib|lib64|var/lib|proc|sys|dev)(?:/|$)")
# A tool's own cache in the home folder ("~/.cache/pip", "/home/ana/.npm/_cacache") is where that tool
# keeps it on every machine: kept with the home written `~`, so a lesson that cleared a cache says
# which (and a peer's door can see that clearing it destroys nothing, issue #26).
_CACHES = r"(?P<cache>\.cache/[\w.\-]+|\.npm(?:/_cacache)?|\.cargo/registry|\.gradle/caches|\.m2/repository|Library/Caches/[\w.\-]+)"
_TOOL_CACHE = re.compile(r"^(?:~|\$HOME|/home/[^/]+|/Users/[^/]+)/" + _CACHES + r"/?$")
# Such a cache as a generalised text names it: nothing of the person's in it (commons.core.learning.scope).
TOOL_CACHE_NAMED = re.compile(r"(?<![\w.~])~/" + _CACHES + r"(?![\w/.\-])")


def _path(m: re.Match[str]) -> str:
    value = m.group(0)
    if _SYSTEM_PATH.match(value) and not re.search(r"/(?:home|Users)/", value):
        return value
    if cache := _TOOL_CACHE.match(value):
        return f"~/{cache['cache']}"
    name = value.rstrip("/").rsplit("/", 1)[-1]
    if name.lower() in _KEEP_FILES or value.lower() in _KEEP_LIBRARIES:  # named the same everywhere
        return name
    if value.startswith(("./.venv", ".venv")):
        return value
    return "<path>"


def _line_no(m: re.Match[str]) -> str:
    return f"{m.group(1)} <n>" if m.group(1) else ":<n>"


_SHARED_BRANCHES = frozenset({"main", "master", "HEAD", "develop", "trunk"})


def _ref(name: str) -> str:
    return name if name in _SHARED_BRANCHES else "<branch>"


def _branch(m: re.Match[str]) -> str:
    name = m["b"]
    if name.startswith("<") or name in _SHARED_BRANCHES:
        return m.group(0)
    return f"{m['a']}<branch>"


def _hostname(m: re.Match[str]) -> str:
    value = m.group(0)
    if _is_public(value):
        return value
    # Package and module names look like host names ("socket.io", "lodash.merge"): only names
    # with a site-like ending and no file extension are hosts.
    if value.count(".") == 1 and value.split(".")[-1].lower() in {"io", "dev", "com", "org", "net"}:
        return value if value.split(".")[0].lower() in {"socket", "next", "vue", "chart", "three", "node"} else "<host>"
    return "<host>"
