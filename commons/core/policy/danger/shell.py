"""A tokenizer for the command lines a step runs: bash and sh, cmd and PowerShell.

It reads a line as a shell would far enough to know *what runs*: words with their quotes removed
(``'…'`` literal, ``"…"`` with ``\\`` escapes), commands joined by ``&&``, ``||``, ``;``, ``&``,
pipes and newlines, comments, redirections (their targets kept: ``>> ~/.bashrc`` changes a file),
here-documents (their body is the command's input), and the commands inside ``$(…)``, backticks,
``<(…)`` and the string of ``bash -c``/``cmd /c``/``powershell -Command``, which run too. Wrappers
that run another command are taken off so that the command itself is judged: assignments before a
command and ``env`` (kept as its environment), ``sudo``/``doas``/``runas`` (kept as ``privileged``),
``xargs``, ``nohup``, ``time``, ``nice``, ``timeout``, ``exec`` and the runners that start a
project's tool (``npx``, ``uv run``, ``poetry run``, ``python -m``, ``bundle exec``…).

Pure and total: any text gives a (maybe empty) tuple of `Command`, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

MAX_DEPTH = 4  # substitutions and -c strings inside each other, read this deep
OPERATORS = ("&&", "||", "|&", ";", "|", "&", "\n")

T = TypeVar("T")


class _made_once(Generic[T]):
    """A property made at its first reading and kept in the instance's ``__dict__`` (a frozen
    dataclass's too): every rule asks a command's program, most its arguments in lower case.
    ``functools.cached_property`` takes a lock on each first reading (Python 3.11), which costs
    more than most of what is made."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self._make = make
        self.__doc__ = make.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> _made_once[T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object, owner: type | None = None) -> T | _made_once[T]:
        if instance is None:
            return self
        value = instance.__dict__[self._name] = self._make(instance)
        return value


@dataclass(frozen=True)
class Command:
    """One simple command of a line, its wrappers taken off."""

    words: tuple[str, ...]  # the program first, quotes removed
    env: tuple[tuple[str, str], ...] = ()  # variables set for it (``X=1 cmd``, ``env X=1``, ``export X=1``)
    privileged: bool = False  # run through sudo, doas or runas
    joined: str = ""  # the operator before it ("" for the first)
    pipeline: int = 0  # commands joined by pipes share one number
    redirects: tuple[str, ...] = ()  # files its output is written to (``>``, ``>>``)
    stdin: str = ""  # a here-document's body
    inner: bool = False  # it runs inside a substitution or a -c string
    fed: tuple[Command, ...] = field(default=(), compare=False)  # commands whose output became its words

    @_made_once
    def program(self) -> str:
        """The program, as a name: its folder and ``.exe`` dropped, lower case."""
        if not self.words:
            return ""
        name = self.words[0].replace("\\", "/").rsplit("/", 1)[-1].lower()
        return name[:-4] if name.endswith((".exe", ".cmd", ".bat", ".ps1")) else name

    @property
    def args(self) -> tuple[str, ...]:
        return self.words[1:]

    @_made_once
    def lowered(self) -> tuple[str, ...]:
        """The arguments in lower case."""
        return tuple(a.lower() for a in self.words[1:])

    def positional(self) -> tuple[str, ...]:
        """The arguments that are no flags."""
        return tuple(a for a in self.args if not a.startswith("-") and not (len(a) > 1 and a[0] == "/" and a[1:].isalpha() and len(a) <= 3))

    @property
    def sub(self) -> str:
        """The first argument that is no flag (a sub-command: ``push`` of ``git push``)."""
        rest = self.positional()
        return rest[0].lower() if rest else ""

    def flag(self, *names: str) -> bool:
        """Whether a long flag (``--force``, ``--force=…``) or a short letter (``f`` in ``-rf``) is given."""
        for arg in self.args:
            low = arg.lower()
            for name in names:
                if name.startswith("-"):
                    if low == name or low.startswith(name + "="):
                        return True
                elif len(name) == 1 and re.fullmatch(r"-[A-Za-z]+", arg) and name in arg[1:]:
                    return True
        return False

    def option(self, name: str) -> str | None:
        """The value of ``--name=value`` or ``--name value``; None when not given."""
        args = self.args
        for i, arg in enumerate(args):
            if arg.lower().startswith(name + "="):
                return arg.split("=", 1)[1]
            if arg.lower() == name:
                return args[i + 1] if i + 1 < len(args) else ""
        return None

    def text(self) -> str:
        return " ".join(self.words)


# Wrappers that run the command after them (and how many of their own arguments to skip).
_PREFIXES = frozenset({"nohup", "time", "command", "builtin", "exec", "stdbuf", "ionice", "chronic", "caffeinate",
                       "unbuffer", "catchsegv", "torsocks", "proxychains", "proxychains4"})
_PRIVILEGE = frozenset({"sudo", "doas", "pkexec", "gsudo"})
_SUDO_VALUED = frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"})
# Runners whose next word is the program they start, and the sub-commands that start it ("": the
# runner itself does).
_RUNNERS = {"npx": {""}, "bunx": {""}, "pnpx": {""}, "uvx": {""}, "pipx": {"run"}, "uv": {"run"}, "poetry": {"run"},
            "pipenv": {"run"}, "pdm": {"run"}, "hatch": {"run"}, "rye": {"run"}, "bundle": {"exec"}, "pnpm": {"exec", "dlx"},
            "yarn": {"dlx"}, "npm": {"exec"}, "conda": {"run"}, "mise": {"exec"}, "rtx": {"exec"}, "dotenv": {""},
            "xargs": {""}}
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish", "ash"})
# What bash's backslash is written before outside quotes; before anything else it is a Windows path.
_ESCAPABLE = frozenset(" \t'\"$`\\|&;()<>*?#![]{}~")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
# A run of characters each of which is only a word's (no quote, escape, substitution, comment,
# operator, redirection or white space; a digit only when no ``>`` follows it, as in ``2>``): read
# as one piece, not one turn of the lexer's loop each, which slices the rest of the line twice.
_PLAIN = re.compile(r"(?:[^\s\\'\"$<>`#&|;\d]|\d(?!>))+")
# What makes a line more than words between blanks (" ", tab, carriage return): a quote, an
# escape, a substitution, a comment, an operator, a redirection, a placeholder or another blank.
_SPECIAL = re.compile(r"[\\'\"$<>`#&|;]|(?![ \t\r])\s")
_PS_ENV = re.compile(r"^\$env:([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$", re.IGNORECASE | re.DOTALL)


@dataclass
class _Raw:
    words: list[str] = field(default_factory=list)
    redirects: list[str] = field(default_factory=list)
    stdin: str = ""
    fed: list[Command] = field(default_factory=list)


def _closing(text: str, start: int, open_: str, close: str) -> int:
    """The index of the ``close`` that ends a group opened just before ``start`` (quotes respected)."""
    depth, i, quote = 1, start, ""
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def _lex(line: str, depth: int) -> list[tuple[str, _Raw]]:
    """(operator before it, raw command) pairs of one line."""
    if _SPECIAL.search(line) is None:  # `npm ci`, `git push origin main`: words and blanks only
        words = line.split()
        return [("", _Raw(words))] if words else []
    return _lex_characters(line, depth)


def _lex_characters(line: str, depth: int) -> list[tuple[str, _Raw]]:
    """:func:`_lex`, a character (or a run of plain ones) at a time: what any line needs."""
    out: list[tuple[str, _Raw]] = []
    raw, word, has_word, joined = _Raw(), [], False, ""
    pending_redirect = False
    heredocs: list[str] = []
    i, n = 0, len(line)

    def end_word() -> None:
        nonlocal word, has_word, pending_redirect
        if has_word:
            text = "".join(word)
            if pending_redirect:
                raw.redirects.append(text)
                pending_redirect = False
            else:
                raw.words.append(text)
        word, has_word = [], False

    def end_command(op: str) -> None:
        nonlocal raw, joined
        end_word()
        if raw.words or raw.redirects or raw.stdin:
            out.append((joined, raw))
            joined = op
        elif op in ("|", "|&") or not out:
            joined = op or joined
        raw = _Raw()

    def substitute(body: str, shown: str) -> None:
        nonlocal has_word
        if depth < MAX_DEPTH:
            raw.fed.extend(_commands(body, depth + 1, inner=True))
        word.append(shown)
        has_word = True

    while i < n:
        plain = _PLAIN.match(line, i)
        if plain is not None:  # what the last branch below would add one character at a time
            word.append(plain.group())
            has_word = True
            i = plain.end()
            continue
        c = line[i]
        if c == "\\" and i + 1 < n:
            if line[i + 1] == "\n":
                i += 2
                continue
            if line[i + 1] not in _ESCAPABLE:
                # `.\dist`, `C:\src`: a Windows path (cmd, PowerShell), where `\` is no escape.
                word.append(c)
                has_word = True
                i += 1
                continue
            word.append(line[i + 1])
            has_word = True
            i += 2
            continue
        if c == "'":
            end = line.find("'", i + 1)
            end = n if end < 0 else end
            word.append(line[i + 1:end])
            has_word = True
            i = end + 1
            continue
        if c == '"':
            i += 1
            has_word = True
            while i < n and line[i] != '"':
                if line[i] == "\\" and i + 1 < n and line[i + 1] in '"\\$`':
                    word.append(line[i + 1])
                    i += 2
                    continue
                if line.startswith("$(", i):
                    close = _closing(line, i + 2, "(", ")")
                    substitute(line[i + 2:close], line[i:close + 1])
                    i = close + 1
                    continue
                if line[i] == "`":
                    close = line.find("`", i + 1)
                    close = n if close < 0 else close
                    substitute(line[i + 1:close], line[i:close + 1])
                    i = close + 1
                    continue
                word.append(line[i])
                i += 1
            i += 1
            continue
        if line.startswith("$(", i) or line.startswith("<(", i) or line.startswith(">(", i):
            close = _closing(line, i + 2, "(", ")")
            substitute(line[i + 2:close], line[i:close + 1])
            i = close + 1
            continue
        if c == "`":
            close = line.find("`", i + 1)
            close = n if close < 0 else close
            substitute(line[i + 1:close], line[i:close + 1])
            i = close + 1
            continue
        if c == "#" and not has_word:
            stop = line.find("\n", i)
            i = n if stop < 0 else stop
            continue
        if line.startswith("<<", i) and not line.startswith("<<<", i):
            found = re.match(r"<<-?\s*(['\"]?)([A-Za-z_]\w*)\1", line[i:])
            if found:
                end_word()
                heredocs.append(found.group(2))
                i += len(found.group(0))
                continue
        if c == "\n" and heredocs:
            tag = heredocs.pop(0)
            stop = re.search(rf"\n[ \t]*{re.escape(tag)}[ \t]*(?:\n|$)", line[i:])
            body_end = i + (stop.start() if stop else n - i)
            raw.stdin += line[i + 1:body_end]
            i = body_end + (len(stop.group(0)) if stop else 0)
            end_command("\n")
            continue
        placeholder = re.match(r"<[\w-]{1,20}>", line[i:])  # a lesson's placeholder (`<branch>`) is a word
        if placeholder:
            word.append(placeholder.group(0))
            has_word = True
            i += len(placeholder.group(0))
            continue
        redirect = re.match(r"(?:\d|&)?>>?(?!&)|\d?>&\d|<(?![<(])", line[i:])
        if redirect and (not has_word or re.fullmatch(r"\d", "".join(word))):
            if has_word and re.fullmatch(r"\d", "".join(word)):
                word, has_word = [], False
            end_word()
            token = redirect.group(0)
            if "&" in token and token[-1].isdigit():  # 2>&1: a copy, no file
                i += len(token)
                continue
            pending_redirect = token.startswith((">", "&", "1", "2")) and ">" in token
            if not pending_redirect:  # an input file: a word of no interest, skipped
                pending_redirect = False
                i += len(token)
                while i < n and line[i] in " \t":
                    i += 1
                while i < n and line[i] not in " \t\n;&|":
                    i += 1
                continue
            i += len(token)
            continue
        op = next((o for o in OPERATORS if line.startswith(o, i)), "")
        if op:
            end_command(op)
            i += len(op)
            continue
        if c in " \t\r":
            end_word()
            i += 1
            continue
        word.append(c)
        has_word = True
        i += 1
    end_command("")
    return out


def _unwrap(words: list[str], env: list[tuple[str, str]]) -> tuple[list[str], bool, str]:
    """The words with wrappers taken off: (words, privileged, the string of a -c to read too)."""
    privileged = False
    while words:
        first = words[0]
        low = first.replace("\\", "/").rsplit("/", 1)[-1].lower()
        assign = _ASSIGN.match(first)
        ps_env = _PS_ENV.match(first)
        if assign:
            env.append((assign.group(1), assign.group(2)))
            words = words[1:]
            continue
        if ps_env:
            value = ps_env.group(2)
            if value is None and len(words) >= 3 and words[1] == "=":
                value, words = words[2], words[3:]
            else:
                words = words[1:]
            env.append((ps_env.group(1), value or ""))
            continue
        if low in ("export", "set", "setenv") and len(words) > 1 and (_ASSIGN.match(words[1]) or low == "setenv"):
            if low == "setenv" and len(words) > 2:
                env.append((words[1], words[2]))
            else:
                env.extend((m.group(1), m.group(2)) for w in words[1:] if (m := _ASSIGN.match(w)))
            return [], privileged, ""
        if low in _PRIVILEGE:
            privileged = True
            words = words[1:]
            while words and words[0].startswith("-"):
                flag = words[0]
                words = words[1:]
                if flag in ("-i", "-s", "--login", "--shell"):
                    return ["sh", *words], True, " ".join(words)
                if flag in _SUDO_VALUED and words:
                    words = words[1:]
            continue
        if low == "runas":
            privileged = True
            words = [w for w in words[1:] if not w.lower().startswith(("/user:", "/savecred", "/noprofile", "/env"))]
            if words:
                return [low, *words], True, words[-1]
            continue
        if low == "env":
            words = words[1:]
            while words and (words[0].startswith("-") or _ASSIGN.match(words[0])):
                assign = _ASSIGN.match(words[0])
                if assign:
                    env.append((assign.group(1), assign.group(2)))
                elif words[0] in ("-u", "--unset", "-C", "--chdir") and len(words) > 1:
                    words = words[1:]
                words = words[1:]
            continue
        if low in _PREFIXES:
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[1:]
            continue
        if low in ("nice", "timeout", "watch"):
            words = words[1:]
            while words and (words[0].startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", words[0])):
                if words[0] in ("-n", "-s", "-k", "--signal", "--kill-after") and len(words) > 1:
                    words = words[1:]
                words = words[1:]
            continue
        subs = _RUNNERS.get(low, ())
        sub = "" if "" in subs else words[1] if len(words) > 1 and words[1] in subs else None
        if sub is not None and len(words) > 1 + bool(sub):
            words = words[1 + bool(sub):]
            while words and words[0].startswith("-"):
                value = words[0] in ("-p", "--package", "--with", "-I", "-n", "-L", "-P", "--from", "-a", "-d", "-s",
                                     "-E", "--arg-file", "--delimiter")
                words = words[1 + value:] if len(words) > 1 + value else []
            continue
        if low in ("python", "python3", "py") and len(words) > 2 and words[1] == "-m":
            words = words[2:]
            continue
        break
    return words, privileged, ""


def _inline_script(words: list[str]) -> str:
    """The string a shell, cmd or PowerShell is told to run (``bash -c '…'``, ``cmd /c …``)."""
    if not words:
        return ""
    low = words[0].replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    rest = words[1:]
    if low in _SHELLS:
        for i, w in enumerate(rest):
            if re.fullmatch(r"-[a-z]*c[a-z]*", w) and i + 1 < len(rest):
                return rest[i + 1]
        return ""
    if low == "cmd":
        for i, w in enumerate(rest):
            if w.lower() in ("/c", "/k", "/s/c"):
                return " ".join(rest[i + 1:])
        return ""
    if low in ("powershell", "pwsh"):
        for i, w in enumerate(rest):
            if w.lower() in ("-command", "-c", "-com", "-encodedcommand") and i + 1 < len(rest):
                return " ".join(rest[i + 1:])
        return ""
    return ""


def _commands(line: str, depth: int, inner: bool) -> tuple[Command, ...]:
    found: list[Command] = []
    pipeline = 0
    for number, (joined, raw) in enumerate(_lex(line, depth)):
        if number and joined not in ("|", "|&"):
            pipeline += 1
        env: list[tuple[str, str]] = []
        words, privileged, script = _unwrap(list(raw.words), env)
        script = script or _inline_script(words)
        command = _command(tuple(words), tuple(env), privileged, joined, pipeline, tuple(raw.redirects), raw.stdin,
                           inner, tuple(raw.fed))
        found.append(command)
        found.extend(raw.fed)
        if script and depth < MAX_DEPTH:
            nested = _commands(script, depth + 1, inner=True)
            found.extend(c if not privileged else _privileged(c) for c in nested)
    return tuple(found)


def _command(words: tuple[str, ...], env: tuple[tuple[str, str], ...], privileged: bool, joined: str, pipeline: int,
             redirects: tuple[str, ...], stdin: str, inner: bool, fed: tuple[Command, ...]) -> Command:
    """``Command(...)`` of these fields, built as the record decoder builds records: the frozen
    dataclass's ``__init__`` sets each of its nine fields through ``object.__setattr__``, which
    costs several times one ``__dict__`` (the tokenizer makes a command for every step a lesson names)."""
    command = _new(Command)
    _set(command, "__dict__", {"words": words, "env": env, "privileged": privileged, "joined": joined,
                               "pipeline": pipeline, "redirects": redirects, "stdin": stdin, "inner": inner, "fed": fed})
    return command


_new = object.__new__
_set = object.__setattr__


def _privileged(command: Command) -> Command:
    return Command(command.words, command.env, True, command.joined, command.pipeline, command.redirects,
                   command.stdin, command.inner, command.fed)


def tokenize(line: str) -> tuple[Command, ...]:
    """Every command ``line`` runs, in order, the ones inside substitutions and -c strings after
    the command that holds them."""
    return _commands(line, 0, inner=False)
