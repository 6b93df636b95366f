"""Claude Code's folders, as Claude Code lays them out: its config folder, project slugs, auto memory.

What this module answers, for a path or a transcript:

- :class:`ClaudeHome` — the config folder (``$CLAUDE_CONFIG_DIR``, else ``~/.claude``), its
  ``projects/`` folder, the user settings file and the user-scope MCP file (``.claude.json``).
- :func:`slug` — the name Claude Code gives a project folder under ``projects/``: every character
  that is not an ASCII letter or digit becomes ``-``; past 200 characters the slug is cut and a hash
  of the path is appended. :meth:`ClaudeHome.project_folder` prefers the folder that exists.
- :func:`project_at` — the :class:`Project` a path belongs to. Auto memory is keyed by Claude Code's
  canonical git root (`canonical_root`): the main working tree, so every worktree and subfolder of
  one repository shares one folder; a bare repository's folder for its worktrees; a moved,
  unrepaired worktree's own folder; outside git the folder itself is the project.
- :func:`auto_memory` — where that project's auto memory lives and whether it is on, from the
  ``autoMemoryDirectory`` / ``autoMemoryEnabled`` settings in the scopes Claude Code reads them from.
- :func:`transcript_project` — the project of a transcript, from the ``cwd`` it records.

The rules are pure functions over strings and mappings (:func:`slug`, :func:`name_variants`,
:func:`resolve_auto_memory`); reading git metadata and settings files is kept to a few functions
that only read (no ``git`` subprocess: a `SessionEnd` hook must answer in milliseconds).
"""

from __future__ import annotations

import configparser
import json
import os
import re
import struct
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

CONFIG_DIR_ENV = "CLAUDE_CONFIG_DIR"
DISABLE_AUTO_MEMORY_ENV = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
MAX_SLUG = 200  # Claude Code's MAX_SANITIZED_LENGTH: longer slugs are cut and hashed
MEMORY_INDEX = "MEMORY.md"
TRANSCRIPT_HEAD = 256 * 1024  # bytes of a transcript searched for its `cwd`

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")


# -- the config folder -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaudeHome:
    """Claude Code's per-user folder and the files commons reads or edits in it."""

    config_dir: Path  # ~/.claude, or $CLAUDE_CONFIG_DIR
    user_config_file: Path  # ~/.claude.json (user-scope MCP servers), or $CLAUDE_CONFIG_DIR/.claude.json

    @classmethod
    def locate(cls, environ: Mapping[str, str] | None = None, home: Path | None = None) -> "ClaudeHome":
        env = os.environ if environ is None else environ
        user = home if home is not None else Path(env.get("HOME") or Path.home())
        if env.get(CONFIG_DIR_ENV):
            config_dir = Path(env[CONFIG_DIR_ENV]).expanduser()
            return cls(config_dir=config_dir, user_config_file=config_dir / ".claude.json")
        return cls(config_dir=user / ".claude", user_config_file=user / ".claude.json")

    @property
    def projects_dir(self) -> Path:
        return self.config_dir / "projects"

    @property
    def user_memory_file(self) -> Path:
        """The user's CLAUDE.md: loaded in full into every session of every project."""
        return self.config_dir / "CLAUDE.md"

    @property
    def settings_file(self) -> Path:
        """User settings: hooks, permissions, autoMemory* for every project."""
        return self.config_dir / "settings.json"

    def project_folder(self, path: str | os.PathLike[str]) -> Path:
        """``projects/<slug>/`` for ``path``. A slug past 200 characters ends in a hash of the
        path; a folder that exists with the same 200-character prefix wins (Claude Code itself
        looks for one, as older versions hashed differently), else the computed name."""
        name = slug(path)
        folder = self.projects_dir / name
        if len(name) <= MAX_SLUG or folder.exists():
            return folder
        prefix = name[:MAX_SLUG] + "-"
        try:
            found = sorted(p for p in self.projects_dir.iterdir() if p.name.startswith(prefix))
        except OSError:
            found = []
        return found[0] if len(found) == 1 else folder


def slug(path: str | os.PathLike[str]) -> str:
    """Claude Code's folder name for a project path: ``/home/ada/spotter_web`` → ``-home-ada-spotter-web``.

    Every UTF-16 code unit that is not an ASCII letter or digit becomes ``-`` (so an emoji costs
    two); past :data:`MAX_SLUG` characters the slug keeps its first 200 and appends ``-`` and the
    base-36 of a 31-multiplier hash of the original path, as the npm build of Claude Code does.
    """
    text = os.fspath(path)
    units = _utf16_units(text)
    sanitized = "".join(chr(u) if u < 128 and _NOT_ALNUM.match(chr(u)) is None else "-" for u in units)
    if len(sanitized) <= MAX_SLUG:
        return sanitized
    return f"{sanitized[:MAX_SLUG]}-{_base36(abs(_java_hash(units)))}"


def _utf16_units(text: str) -> tuple[int, ...]:
    data = text.encode("utf-16-le", "surrogatepass")
    return struct.unpack(f"<{len(data) // 2}H", data)


def _java_hash(units: Sequence[int]) -> int:
    """``h = (h << 5) - h + unit | 0`` over the code units: a signed 32-bit result."""
    h = 0
    for unit in units:
        h = (h * 31 + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, rest = divmod(n, 36)
        out = digits[rest] + out
        if not n:
            return out


# -- git checkouts and projects --------------------------------------------------------------------


@dataclass(frozen=True)
class GitCheckout:
    """The git working tree around a path, read from ``.git`` without running git."""

    toplevel: Path  # the working tree that contains the path (a linked worktree's own folder)
    main_root: Path  # the main working tree: every linked worktree of the repository shares it
    common_dir: Path  # the repository's shared git folder (refs, config, worktrees/)

    @property
    def is_linked_worktree(self) -> bool:
        return self.toplevel != self.main_root


def find_checkout(path: str | os.PathLike[str]) -> GitCheckout | None:
    """The checkout ``path`` is in, or None outside git (or when its ``.git`` cannot be read).

    The folder is the nearest one above ``path`` holding a ``.git`` (a folder or a file, links
    followed), and its project root is Claude Code's *canonical* git root (`canonical_root`)."""
    start = Path(os.path.abspath(os.fspath(path)))
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_dir():
                return GitCheckout(toplevel=folder, main_root=folder, common_dir=dot_git)
            if dot_git.is_file():
                return _linked_checkout(folder, dot_git)
        except OSError:
            return None
    return None


def _linked_checkout(folder: Path, dot_git: Path) -> GitCheckout:
    """A ``.git`` file: a linked worktree (of a checkout or of a bare repository), or a submodule."""
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        first = ""
    git_dir = (folder / first[len("gitdir:") :].strip()).resolve() if first.startswith("gitdir:") else dot_git
    try:
        common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        common = git_dir
    return GitCheckout(toplevel=folder, main_root=canonical_root(folder), common_dir=common)


def canonical_root(folder: Path) -> Path:
    """The folder Claude Code keys a checkout's project by, for the folder holding its ``.git``
    (Claude Code 2.1.197's canonical git root, read in its code):

    - a ``.git`` folder, or a ``.git`` file that is no linked worktree (a submodule, whose git
      folder is not under ``<common>/worktrees/``): the folder itself;
    - a linked worktree whose ``gitdir`` file points back at it: the main checkout (the common git
      folder's parent), or, for a worktree of a **bare** repository (the common folder is not named
      ``.git``), the bare repository's folder itself;
    - a worktree **moved** without ``git worktree repair`` (its ``gitdir`` file names the old place):
      the worktree's own folder.
    """
    try:
        text = (folder / ".git").read_text(encoding="utf-8").strip()
        if not text.startswith("gitdir:"):
            return folder
        git_dir = Path(os.path.normpath(folder / text[len("gitdir:") :].strip()))
        common = Path(os.path.normpath(git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()))
        if git_dir.parent != common / "worktrees":
            return folder
        back = (git_dir / "gitdir").read_text(encoding="utf-8").strip()
        if os.path.realpath(back) != os.path.join(os.path.realpath(folder), ".git"):
            return folder
        return common if common.name != ".git" else common.parent
    except (OSError, UnicodeDecodeError):
        return folder


@dataclass(frozen=True)
class Project:
    """A project as Claude Code keys it, and the names a lesson may call it by.

    ``root`` is the main working tree's folder (or the folder itself outside git); ``slug`` names its
    ``~/.claude/projects/<slug>/`` folder, where its auto memory lives; ``names`` are the spellings
    of the repository's name that text about it may use — the folder, the ``origin`` remote's
    repository name and each linked worktree's folder, each in its kebab, snake, Pascal and camel
    case (``spotter-web``, ``spotter_web``, ``SpotterWeb``, ``spotterWeb``) — for scope detection.
    """

    root: Path
    slug: str
    names: tuple[str, ...]


def project_at(path: str | os.PathLike[str]) -> Project:
    """The project ``path`` belongs to. A path that no longer exists is its own project."""
    checkout = find_checkout(path)
    if checkout is None:
        root = Path(os.path.abspath(os.fspath(path)))
        return Project(root=root, slug=slug(root), names=name_variants(root.name))
    main = checkout.main_root.name
    bases = [main.removesuffix(".git") or main, _origin_name(checkout.common_dir), *_worktree_names(checkout)]
    names: list[str] = []
    for base in bases:
        names += [n for n in name_variants(base) if n not in names]
    return Project(root=checkout.main_root, slug=slug(checkout.main_root), names=tuple(names))


def name_variants(name: str) -> tuple[str, ...]:
    """``spotter-web`` → (spotter-web, spotter_web, SpotterWeb, spotterWeb, spotterweb); the name
    itself first. Names are split at ``-``, ``_``, ``.``, spaces and case changes."""
    if not name:
        return ()
    words = [w.lower() for w in _WORD.findall(name)]
    variants = [name]
    if words:
        variants += [
            "-".join(words), "_".join(words), "".join(w.capitalize() for w in words),
            words[0] + "".join(w.capitalize() for w in words[1:]), "".join(words),
        ]  # fmt: skip
    return tuple(dict.fromkeys(variants))


def _origin_name(common_dir: Path) -> str:
    """The repository name in the ``origin`` remote's URL (``…/spotter-web.git`` → spotter-web)."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read(common_dir / "config", encoding="utf-8")
        url = parser.get('remote "origin"', "url", fallback="")
    except (OSError, configparser.Error, UnicodeDecodeError):
        return ""
    tail = re.split(r"[/:\\]", url.strip().rstrip("/"))[-1]
    return tail[: -len(".git")] if tail.endswith(".git") else tail


def _worktree_names(checkout: GitCheckout) -> list[str]:
    """Folder names of the repository's linked worktrees (from ``<common>/worktrees/*/gitdir``)."""
    names = [checkout.toplevel.name] if checkout.is_linked_worktree else []
    try:
        entries = sorted((checkout.common_dir / "worktrees").iterdir())
    except OSError:
        return names
    for entry in entries:
        try:
            target = Path((entry / "gitdir").read_text(encoding="utf-8").strip())
        except OSError:
            continue
        if target.parent.name and target.parent.name not in names:
            names.append(target.parent.name)
    return names


# -- auto memory -----------------------------------------------------------------------------------


class SettingsScope(Enum):
    """Where a Claude Code setting was read from, lowest precedence first."""

    USER = "user"  # ~/.claude/settings.json
    PROJECT = "project"  # <project>/.claude/settings.json (checked in, shared with the team)
    LOCAL = "local"  # <project>/.claude/settings.local.json (this person only)
    MANAGED = "managed"  # the organisation's managed-settings.json

    @property
    def needs_trust(self) -> bool:
        """Claude Code takes ``autoMemoryDirectory`` from a project's own settings (shared or local)
        only in a folder the person trusted (or in ``-p`` mode), so an untrusted repository cannot
        redirect memory writes."""
        return self in (SettingsScope.PROJECT, SettingsScope.LOCAL)


# The order Claude Code looks for `autoMemoryDirectory`: managed, then (trusted) local and project,
# then user settings.
_MEMORY_DIRECTORY_ORDER = (SettingsScope.MANAGED, SettingsScope.LOCAL, SettingsScope.PROJECT, SettingsScope.USER)
COWORK_MEMORY_ENV = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"  # a memory folder over every setting
REMOTE_MEMORY_ENV = "CLAUDE_CODE_REMOTE_MEMORY_DIR"  # the folder `projects/<slug>/memory` is kept under


@dataclass(frozen=True)
class AutoMemory:
    """A project's auto-memory folder and whether Claude Code loads it."""

    folder: Path
    enabled: bool
    decided_by: str  # what chose `enabled`: "default", a settings file, or the environment variable

    @property
    def index(self) -> Path:
        return self.folder / MEMORY_INDEX


def memory_directory(value: object, home: Path, *, expand_home: bool = True) -> Path | None:
    """An ``autoMemoryDirectory`` as Claude Code accepts it: ``~/`` is the home folder (a path that
    climbs out of it is refused), and the result must be absolute; anything else is ignored."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value
    if expand_home and text.startswith(("~/", "~\\")):
        rest = os.path.normpath(text[2:] or ".")
        if rest in (".", "..") or rest.startswith(".." + os.sep):
            return None
        text = os.path.join(home, text[2:])
    normal = os.path.normpath(text).rstrip("/\\")
    if not os.path.isabs(normal) or len(normal) < 3 or normal.startswith(("//", "\\\\")) or "\x00" in normal:
        return None
    return Path(normal)


def resolve_auto_memory(
    default_folder: Path,
    layers: Sequence[tuple[SettingsScope, str, Mapping[str, object]]],
    environ: Mapping[str, str],
    *,
    home: Path,
    trusted: bool = True,
) -> AutoMemory:
    """The effective auto memory from settings ``layers`` (scope, file name, parsed settings).

    ``autoMemoryDirectory``: ``CLAUDE_COWORK_MEMORY_PATH_OVERRIDE`` over everything, then managed,
    then the project's local and shared settings (only when ``trusted``), then user settings.
    ``autoMemoryEnabled``: the highest scope that sets it (managed > local > project > user);
    ``CLAUDE_CODE_DISABLE_AUTO_MEMORY=1`` turns it off over any setting.
    """
    by_scope: dict[SettingsScope, Mapping[str, object]] = {}
    for scope, _, settings in layers:
        by_scope.setdefault(scope, settings)
    folder = memory_directory(environ.get(COWORK_MEMORY_ENV), home, expand_home=False)
    for scope in _MEMORY_DIRECTORY_ORDER:
        if folder is not None:
            break
        if scope in by_scope and (trusted or not scope.needs_trust):
            folder = memory_directory(by_scope[scope].get("autoMemoryDirectory"), home)
    ordered = sorted(layers, key=lambda layer: list(SettingsScope).index(layer[0]), reverse=True)
    enabled, decided_by = True, "default"
    for scope, name, settings in ordered:
        value = settings.get("autoMemoryEnabled")
        if isinstance(value, bool):
            enabled, decided_by = value, name
            break
    if environ.get(DISABLE_AUTO_MEMORY_ENV, "").strip().lower() in ("1", "true", "yes"):
        enabled, decided_by = False, DISABLE_AUTO_MEMORY_ENV
    return AutoMemory(folder=folder or default_folder, enabled=enabled, decided_by=decided_by)


def trusts_folder(claude: ClaudeHome, folder: Path) -> bool:
    """Whether the person accepted Claude Code's trust dialog for ``folder`` or a folder above it
    (``projects.<path>.hasTrustDialogAccepted`` in ``~/.claude.json``)."""
    config = read_settings(claude.user_config_file) or {}
    projects = config.get("projects") if isinstance(config.get("projects"), dict) else {}
    here = Path(os.path.normpath(os.path.abspath(folder)))
    for candidate in (here, *here.parents):
        entry = projects.get(str(candidate))
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            return True
    return False


def settings_files(claude: ClaudeHome, workdir: Path) -> list[tuple[SettingsScope, Path]]:
    """The settings files Claude Code reads for a session in ``workdir``, lowest precedence first."""
    return [
        (SettingsScope.USER, claude.settings_file),
        (SettingsScope.PROJECT, workdir / ".claude" / "settings.json"),
        (SettingsScope.LOCAL, workdir / ".claude" / "settings.local.json"),
        (SettingsScope.MANAGED, _managed_settings_file()),
    ]


def _managed_settings_file() -> Path:
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    if sys.platform == "win32":
        return Path(os.environ.get("ProgramData", r"C:\ProgramData")) / "ClaudeCode" / "managed-settings.json"
    return Path("/etc/claude-code/managed-settings.json")


def read_settings(path: Path) -> dict[str, object] | None:
    """A settings file's object; None when it is absent, unreadable or not a JSON object (Claude
    Code reports those itself; a reader of them must not stop over it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def auto_memory(
    project: Project,
    claude: ClaudeHome,
    *,
    workdir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> AutoMemory:
    """Where ``project``'s auto memory lives and whether it is on, for a session run in ``workdir``
    (default: the project's root; a worktree's own ``.claude/settings*.json`` apply to it). The
    project's own ``autoMemoryDirectory`` counts where the person trusted the folder, as it does for
    Claude Code's interactive sessions (``-p`` sessions take it in any folder)."""
    env = os.environ if environ is None else environ
    where = workdir if workdir is not None else project.root
    layers = []
    for scope, path in settings_files(claude, where):
        settings = read_settings(path)
        if settings is not None:
            layers.append((scope, str(path), settings))
    home = Path(env.get("HOME") or Path.home())
    base = Path(env[REMOTE_MEMORY_ENV]) if env.get(REMOTE_MEMORY_ENV) else claude.config_dir
    default = ClaudeHome(base, claude.user_config_file).project_folder(project.root) / "memory"
    return resolve_auto_memory(default, layers, env, home=home, trusted=trusts_folder(claude, where))


# -- transcripts -----------------------------------------------------------------------------------


def transcript_cwd(transcript: Path, limit: int = TRANSCRIPT_HEAD) -> str | None:
    """The working directory a transcript records (its first record with a ``cwd``), or None."""
    try:
        with transcript.open("rb") as f:
            head = f.read(limit)
    except OSError:
        return None
    for line in head.splitlines():
        if b'"cwd"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("cwd"), str) and record["cwd"]:
            return record["cwd"]
    return None


def transcript_slug(transcript: Path) -> str | None:
    """The ``<slug>`` of ``projects/<slug>/…`` a transcript is kept under (subagents' included)."""
    for folder in transcript.parents:
        if folder.parent.name == "projects":
            return folder.name
    return None


def folder_of_slug(name: str, root: Path = Path("/"), *, budget: int = 2000) -> Path | None:
    """The one existing folder whose slug is ``name``, found by walking down from ``root``; None if
    there is none, more than one, the slug was cut and hashed, or ``budget`` folders were listed.

    A slug cannot be decoded (``-`` stands for ``/``, ``.``, ``_``, spaces and dashes alike), but
    the folders on disk tell which reading is real.
    """
    if len(name) > MAX_SLUG or not name.startswith("-"):
        return None
    found: list[Path] = []
    stack = [(root, name)]
    while stack and budget > 0 and len(found) < 2:
        folder, rest = stack.pop()
        if not rest:
            found.append(folder)
            continue
        budget -= 1
        try:
            entries = sorted(e for e in folder.iterdir() if e.is_dir())
        except OSError:
            continue
        for entry in entries:
            part = "-" + slug(entry.name)
            if rest.startswith(part) and (len(rest) == len(part) or rest[len(part)] == "-"):
                stack.append((entry, rest[len(part) :]))
    return found[0] if len(found) == 1 and budget > 0 else None


def transcript_project(transcript: Path, cwd: str | None = None) -> Project | None:
    """The project a transcript belongs to, resolved to its git root: from ``cwd`` (the hook's
    input), else the ``cwd`` the transcript records, else the one folder on disk whose slug names
    its ``projects/<slug>/`` folder. None when none of them is known."""
    where = cwd or transcript_cwd(transcript)
    if where:
        return project_at(where)
    name = transcript_slug(transcript)
    folder = folder_of_slug(name) if name else None
    return project_at(folder) if folder else None
