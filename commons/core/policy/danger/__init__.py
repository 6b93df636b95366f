"""Dangerous steps: which fixes destroy data or history, raise privileges, turn off a security check,
skip a check, run code from the network or change global configuration (issue #26).

A lesson names what made a failure go away; some of what makes a failure go away is worse than the
failure (``git push --force origin main`` for a rejected push, ``curl … | sudo sh`` for a missing
tool, ``NODE_TLS_REJECT_UNAUTHORIZED=0`` for a certificate error). :func:`classify` says whether a
step is one, which rule says so, its `Kind` and what it destroys or disables, in a sentence a
person reads. :func:`dangerous_advice` asks the same of a lesson's text (a peer's lesson has no
structured fix, only its words).

- ``shell``: the tokenizer (bash/sh, cmd, PowerShell; quotes, operators, substitutions, wrappers);
- ``rule``: a danger's `Kind`, the `Step` a rule reads, a `Rule`, and what several rules read;
- ``git``, ``system`` (files, permissions, privileges, global configuration), ``checks`` (security
  checks, checks skipped, code from the network), ``infra`` (containers, clusters, infrastructure,
  databases): each family's tests;
- ``rules``: the table, in order, and the safe look-alikes decided beside it.

Pure and total: no I/O, and any text gives a `Danger` or None, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from commons.core.policy.danger.rule import Kind, Rule, Step
from commons.core.policy.danger.rules import EDIT_RULES, INDEX, RULES, SHELLISH
from commons.core.policy.danger.system import deletes_files
from commons.core.policy.memo import short_texts
from commons.core.policy.danger.shell import Command, tokenize

MAX_STEP_CHARS = 4000  # a step longer than this is read this far (a lesson's step is ≤ 120)

__all__ = ["Command", "Danger", "Kind", "RULES", "Rule", "classify", "dangerous_advice", "tokenize"]


@dataclass(frozen=True)
class Danger:
    """Why a step is dangerous: the rule that classed it, its kind, and what it destroys or disables."""

    rule: str
    kind: Kind
    risk: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule, "kind": self.kind.value, "risk": self.risk}

    @classmethod
    def from_json(cls, body: dict[str, str]) -> Danger | None:
        """None for a body this version cannot read (a kind it does not know)."""
        try:
            return cls(str(body["rule"]), Kind(str(body["kind"])), str(body["risk"]))
        except (KeyError, ValueError):
            return None


# How a step names an edit (`commons.core.learning.evidence.step_of`): the tool, the file, and
# what was written after ": ".
_EDIT = re.compile(r"^(Edit|MultiEdit|Write|NotebookEdit|str_replace_based_edit_tool|replace|write_file|apply_patch|"
                   r"create_file|edit_file)\s+(\S+?)(?::\s+(.*))?$", re.DOTALL)


def _edit(tool: str, path: str, text: str) -> Danger | None:
    for rule, kind, risk, pattern, paths in EDIT_RULES:
        if (paths is None or paths.search(path)) and pattern.search(text):
            return Danger(rule, kind, risk)
    if SHELLISH.search(path) and text:
        return _shell(re.sub(r"^\s*(?:-\s*)?(?:run:|RUN\s|\"\w+\"\s*:\s*\")", "", text))
    return None


def _shell(line: str, rules_of: Callable[[Command], Sequence[Rule]] = INDEX.of) -> Danger | None:
    """The first rule of the table that is true of a command of the line, the commands in order.
    ``rules_of``: the rules a command meets (its program's and any program's; a test passes every rule)."""
    commands = tokenize(line)
    step = Step(line, commands)
    for command in commands:
        for rule in rules_of(command):
            if rule.test(command, step):
                return Danger(rule.id, rule.kind, rule.risk)
    return None


@short_texts  # lessons name the same few steps (`git push`, `npm ci`) again and again
def classify(step: str, tool: str = "") -> Danger | None:
    """The danger of a step as a lesson names it (a shell command, or ``Edit <path>: <text>``),
    or None for a step none of the rules class. ``tool``: the tool that ran it, when known."""
    step = step[:MAX_STEP_CHARS]
    edit = _EDIT.match(step.strip())
    if edit and (not tool or tool.lower() not in ("bash", "shell", "powershell", "cmd")):
        return _edit(edit.group(1), edit.group(2), edit.group(3) or "")
    try:
        return _shell(step)
    except (ValueError, IndexError, RecursionError):  # never expected; a classifier must not stop a night
        return None


_TEST_RUN = re.compile(r"(?:^|\s|/)(?:pytest|py\.test|jest|vitest|mocha|rspec|phpunit|unittest)\b|"
                       r"\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b|\b(?:cargo|go|mix|dotnet|deno|make)\s+test\b")
_SPAN = re.compile(r"`([^`\n]{2,300})`")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
_FAILED_AFTER = re.compile(r"^\s+(?:failed|was refused|exited|timed out|was rejected)\b")
_CORRECTED_BEFORE = re.compile(r"corrected the agent's\s*$")
# Words from which a command may start in prose ("… always run curl -fsSL … | sh before …").
_STARTS = re.compile(r"(?<![\w./-])(?:sudo|curl|wget|iwr|irm|iex|git|rm|chmod|chown|npm|pnpm|yarn|pip3?|uv|poetry|"
                     r"cargo|docker|kubectl|terraform|export|set|setx|\$env:|psql|mysql|python3?|node|Remove-Item|"
                     r"Set-ExecutionPolicy|Invoke-WebRequest|Invoke-Expression|rd|del|NODE_TLS_REJECT_UNAUTHORIZED|"
                     r"GIT_SSL_NO_VERIFY|PIP_\w+|prisma|alembic|rails|helm)(?![\w-])")
_CLAUSES = re.compile(r"(?<=[.;,!?])\s+|\s+(?:before|after|then|and then|or)\s+")


@short_texts  # the door reads a peer's lesson, and the render and publishing the same words again
def dangerous_advice(text: str) -> Danger | None:
    """The danger of a step a lesson's text names as what worked, or None.

    Every code span is a step, but the one a lesson reports as what failed (``"`git push` failed
    with …"``) and the command a correction reports the person corrected. Outside spans, the
    prose is read from each word a command may start with to the end of its clause, the quoted
    error text left out (an error's hint is no advice)."""
    text = text[:MAX_STEP_CHARS]
    # An error's words may hold backticks of their own, which pair with a span's: the spans are
    # read with the quoted error text left in, and again with it left out.
    unquoted = _unquoted(text, '""')  # the very text when it quotes nothing: its spans read once
    return _spans_advice(text) or (_spans_advice(unquoted) if unquoted != text else None) or _prose_advice(text)


def _unquoted(text: str, blank: str) -> str:
    """``text`` with each quoted error text made ``blank``: the text itself, without running the
    pattern, when it holds neither quote mark a quotation opens with."""
    return _QUOTED.sub(blank, text) if '"' in text or "“" in text else text


def _spans_advice(text: str) -> Danger | None:
    failed = ""
    for match in _SPAN.finditer(text):
        if not text[:match.start()].strip() and _FAILED_AFTER.match(text[match.end():]):
            failed = match.group(1)
            continue
        if _CORRECTED_BEFORE.search(text[:match.start()]):
            continue
        danger = classify(match.group(1))
        if danger is None and _TEST_RUN.search(failed) and deletes_files(match.group(1)):
            # `<path>` hides which file went, but a failing test run made to pass by deleting one
            # is the failing test deleted.
            danger = next(Danger(r.id, r.kind, r.risk) for r in RULES if r.id == "fs.rm-test")
        if danger is not None:
            return danger
    return None


def _prose_advice(text: str) -> Danger | None:
    prose = _unquoted(text, " ")
    if "`" in prose:  # a span needs its backticks
        prose = _SPAN.sub(" ", prose)
    if _STARTS.search(prose) is None:  # a word a clause's command starts from is one of the prose's
        return None
    for clause in _CLAUSES.split(prose):
        for start in _STARTS.finditer(clause):
            danger = classify(clause[start.start():].rstrip(".,;!? "))
            if danger is not None:
                return danger
    return None
