"""The machinery of the scrubber's rules: what was found (:class:`Kind`), how a rule finds it
(:class:`Rule`), where in a text a rule may look (:class:`Marks`), and the checks on a value
that several rules share.

A rule is a regular expression, the literal keywords or literal-led anchors without which it
cannot match (its prefilter), the group whose text is replaced (``v``; the rest of the match is
context that stays, so ``password=hunter2`` becomes ``password=<password>``) and an optional
``accept`` check that turns away look-alikes (a version ``1.2.3.4`` is not an address).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum

class Kind(Enum):
    """What was found; the value is the placeholder that replaces it."""

    PRIVATE_KEY = "<private-key>"
    GITHUB_TOKEN = "<github-token>"
    GITLAB_TOKEN = "<gitlab-token>"
    AWS_KEY = "<aws-key>"
    AWS_SECRET = "<aws-secret>"
    GCP_KEY = "<gcp-key>"
    AZURE_KEY = "<azure-key>"
    SLACK_TOKEN = "<slack-token>"
    SLACK_WEBHOOK = "<slack-webhook>"
    STRIPE_KEY = "<stripe-key>"
    OPENAI_KEY = "<openai-key>"
    ANTHROPIC_KEY = "<anthropic-key>"
    HUGGINGFACE_TOKEN = "<huggingface-token>"
    NPM_TOKEN = "<npm-token>"
    PYPI_TOKEN = "<pypi-token>"
    DOCKER_TOKEN = "<docker-token>"
    DOCKER_AUTH = "<docker-auth>"
    SENDGRID_KEY = "<sendgrid-key>"
    TWILIO_KEY = "<twilio-key>"
    JWT = "<jwt>"
    PASSWORD = "<password>"
    TOKEN = "<token>"
    SECRET = "<secret>"
    EMAIL = "<email>"
    PHONE = "<phone>"
    IP = "<ip>"
    HOST = "<host>"
    USER_AT_HOST = "<user@host>"
    NAME = "<name>"
    ADDRESS = "<address>"
    NATIONAL_ID = "<national-id>"
    BANK = "<bank-details>"
    HOME = "~"  # "/home/alice/x" -> "~/x": the path still reads, the user name is gone


Accept = Callable[[re.Match[str]], "Kind | None | bool"]


@dataclass(frozen=True)
class Rule:
    """One format. ``keywords`` (lower-case literals) and ``anchors`` (patterns with a literal
    start, which the regex engine finds fast) mark where a match can be; the full pattern then
    runs only in a window around each mark: from ``before`` characters ahead of the
    whitespace-free run holding the mark to ``after`` characters past it (None: to the end).
    A rule with neither runs over the whole text."""

    name: str
    kind: Kind
    pattern: re.Pattern[str]
    keywords: tuple[str, ...] = ()
    accept: Accept | None = None  # False/None rejects; a Kind overrides ``kind``
    anchors: tuple[re.Pattern[str], ...] = ()
    before: int = 0
    after: int | None = 512

    def windows(self, marks: Marks) -> list[tuple[int, int]]:
        text, n = marks.text, len(marks.text)
        if not (self.keywords or self.anchors) or marks.lower is None:
            return [(0, n)]
        found = [p for k in self.keywords for p in marks.keyword(k)]
        found += [p for a in self.anchors for p in marks.anchor(a)]
        out: list[tuple[int, int]] = []
        for p in sorted(found):
            lo = max(0, token_start(text, p) - self.before)
            hi = n if self.after is None else min(n, p + self.after)
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], max(hi, out[-1][1]))
            else:
                out.append((lo, hi))
        return out

    def spans(self, marks: Marks) -> Iterator[tuple[int, int, Kind]]:
        # The replaced text is the first value group (named v, v_…) that took part; the rest of
        # the match is context that stays.
        groups = _value_groups(self.pattern)
        text = marks.text
        n = len(text)
        for lo, hi in self.windows(marks):
            pos = lo
            while pos < hi and (m := self.pattern.search(text, pos, hi)) is not None:
                # A rejected match must not hide one that starts inside it ("with the password
                # is X": "with the password" + "is" is turned away, "password is X" is not), so
                # the scan resumes one character on; an accepted one resumes at its end.
                pos = m.start() + 1
                if m.end() == hi < n:  # the window may have cut it short: see it whole
                    m = self.pattern.match(text, m.start())
                    if m is None:
                        continue
                group = next((g for g in groups if m.start(g) >= 0), None)
                if group is None:
                    continue
                start, end = m.span(group)
                if text.startswith("<", start):  # already a placeholder
                    continue
                kind = self.kind
                if self.accept is not None:
                    verdict = self.accept(m)
                    if not verdict:
                        continue
                    if isinstance(verdict, Kind):
                        kind = verdict
                pos = max(m.end(), pos)
                yield start, end, kind


@functools.lru_cache(maxsize=None)
def _value_groups(pattern: re.Pattern[str]) -> tuple[str | int, ...]:
    """A rule's value groups (named v, v_…), in order, or the whole match (0) where it has none:
    read once per pattern, not once per text."""
    return tuple(g for g in pattern.groupindex if g.startswith("v")) or (0,)


class Marks:
    """Where each keyword and anchor occurs in one text: found once, shared by every rule."""

    __slots__ = ("text", "lower", "_keywords", "_anchors")

    def __init__(self, text: str):
        self.text = text
        lower = text.lower()
        # A few letters lower-case to two characters; then positions would not line up, and
        # every rule runs over the whole text instead.
        self.lower: str | None = lower if len(lower) == len(text) else None
        self._keywords: dict[str, list[int]] = {}
        self._anchors: dict[re.Pattern[str], list[int]] = {}

    def keyword(self, k: str) -> list[int]:
        found = self._keywords.get(k)
        if found is None:
            found = []
            if self.lower is not None:
                i = self.lower.find(k)
                while i >= 0:
                    found.append(i)
                    i = self.lower.find(k, i + 1)
            self._keywords[k] = found
        return found

    def anchor(self, pattern: re.Pattern[str]) -> list[int]:
        found = self._anchors.get(pattern)
        if found is None:
            lit = literal(pattern)
            if lit is None:
                found = [m.start() for m in pattern.finditer(self.text)]
            else:  # str.find is several times faster than the regex engine on a plain literal
                found, i = [], self.text.find(lit)
                while i >= 0:
                    found.append(i)
                    i = self.text.find(lit, i + 1)
            self._anchors[pattern] = found
        return found


@functools.lru_cache(maxsize=None)
def literal(pattern: re.Pattern[str]) -> str | None:
    """The plain string an anchor pattern matches, if it is one (``SG\\.`` is ``SG.``)."""
    text = re.sub(r"\\(.)", r"\1", pattern.pattern)
    return text if re.escape(text) == pattern.pattern else None


_META = frozenset(".^$*+?{}[]\\|()")


_INLINE = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"))


def scoped(pattern: re.Pattern[str]) -> str:
    """``pattern`` as one alternative of a larger pattern: a group with its own flags, so that
    joined with others by ``|`` it matches just where it matches alone."""
    flags = "".join(letter for flag, letter in _INLINE if pattern.flags & flag)
    return f"(?{flags}:{pattern.pattern})" if flags else f"(?:{pattern.pattern})"


@functools.lru_cache(maxsize=None)
def lead(pattern: re.Pattern[str]) -> str | None:
    """The literal text every match of an anchor pattern starts with (``gh[pousr]_`` → ``gh``),
    or None: a ``str.find`` for it rules the pattern out without running the regex engine."""
    whole = literal(pattern)
    if whole is not None:
        return whole
    p, out, i, depth = pattern.pattern, [], 0, 0
    for c in p:  # an alternation at the top makes no prefix common to every match
        depth += (c == "(") - (c == ")")
        if c == "|" and depth == 0:
            return None
    while i < len(p):
        c = p[i]
        if c == "\\":
            if i + 1 < len(p) and not p[i + 1].isalnum():  # an escaped punctuation mark is itself
                out.append(p[i + 1])
                i += 2
                continue
            break
        if c in _META:
            break
        out.append(c)
        i += 1
    if i < len(p) and p[i] in "*?{" and out:  # a quantifier makes the last literal optional
        out.pop()
    return "".join(out) or None


def token_start(text: str, p: int, cap: int = 256) -> int:
    """Where the whitespace-free run of ``text`` that holds position ``p`` begins (at most ``cap`` back)."""
    lo = max(0, p - cap)
    ws = max(text.rfind(" ", lo, p), text.rfind("\n", lo, p), text.rfind("\t", lo, p))
    return ws + 1 if ws >= 0 else lo


def make_rule(name: str, kind: Kind, pattern: str, keywords: str = "", accept: Accept | None = None,
          flags: int = 0, anchors: tuple[str, ...] = (), before: int = 0, after: int | None = 512) -> Rule:
    return Rule(name, kind, re.compile(pattern, flags), tuple(keywords.split()), accept,
                tuple(re.compile(a) for a in anchors), before, after)


# --------------------------------------------------------------------------------------------
# Checks that turn look-alikes away


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values()) if s else 0.0


def mixed(s: str) -> bool:
    """A key mixes digits and letters; a word or an identifier in code usually does not."""
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


def mixed_value(m: re.Match[str]) -> bool:
    return mixed(m.group("v"))


_NOT_A_VALUE = frozenset(
    """none null nil true false yes no undefined required optional empty redacted hidden masked
    changeme_not_set unset invalid expired missing wrong incorrect correct ok provided
    password passwd pass pwd pw secret token apikey api_key basic bearer""".split()
)
_TEMPLATE = re.compile(r"^(?:\$|\{\{|%\(|#\{|x{3,}$|\.{3}|<|~/|\[redacted|#[0-9a-f]{3,8}\b)|\*{3,}", re.I)
_CODE_EXPR = re.compile(r"^[A-Za-z_][\w.]*\s*[(\[]|^(?:os|self|this|process|settings|config|env)\.")


def plain_value(value: str) -> bool:
    """Whether ``value`` names no secret: empty, a word like "none", a template or code."""
    v = value.strip().strip("'\"`")
    return (len(v) < 3 or v.lower() in _NOT_A_VALUE or bool(_TEMPLATE.search(v))
            or bool(_CODE_EXPR.match(v)))


def secret_like(value: str) -> bool:
    """A bare word in running text is a secret only if it looks like one."""
    return (len(value) >= 6 and (mixed(value) or bool(re.search(r"[!@#$%^&*+=?]", value)))) or (
        len(value) >= 16 and entropy(value) >= 3.5)
