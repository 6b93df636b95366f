"""How the experiment's scripted agent reads advice: from words, as a person reads a note.

This module knows nothing of commons: not its lesson templates, not its command parsing. It
reads a note in ordinary English, however the sentence is built, for an agent about to run a
command, and answers what that agent asks: is this note about my command, and what does it say
worked instead? As a person reads, it starts from what it knows, its own command:

* **Commands** in a note are where Markdown writers put them: code spans, or quotes; a command
  written bare is found by its program's name (mine, or one after "use", "running", …).
* **About my command**: one of the note's commands has my program and subcommand and every
  literal word of it is one of mine (``pip install <package>`` is about ``pip install rich``;
  ``git push origin main`` is not about ``git pull``); with no command quoted, the note's words
  name my program and subcommand.
* **What worked** is another command of the note that its words speak well of: success words
  around it ("worked", "fixed it", "let the build finish", "unblocked"), or words leading to it
  ("use", "switching to", "running … instead", "resolved by", "after"). A command spoken ill of
  ("failed", "is blocked") is no fix, nor one the words only describe ("`git status` showed …").
* **A warned fix is not followed**: a note that says its fix destroys, deletes or disables
  something is a warning, not advice.
* **Which ones**: a note whose fix has a placeholder and that says which values it was seen for
  ("…, for psycopg2 and psycopg") is nearest my case when my value is among them, then a note for
  any value, and last one seen for other values only (`fit`): of two notes on my command, I take
  the nearer.
* **Placeholders** (``<package>``, ``{x}``, ``PACKAGE``) are filled from my command; one that
  names a file (``<path>``, ``<file>``) from the files my task has touched, which I know, or a
  file my command names; with neither, I have no file to give it, and the fix is nothing I can run.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_GOOD = re.compile(
    r"\b(?:work(?:s|ed|ing)?|succeed(?:s|ed)?|success(?:ful(?:ly)?)?|fix(?:es|ed)?|solve[sd]?|resolve[sd]?|"
    r"did the trick|does the trick|help(?:s|ed)?|went through|goes through|got past|gets past|pass(?:es|ed)?|"
    r"fine|cleanly|ran clean|runs clean|unblock(?:s|ed)?|complet(?:es|ed)|finish(?:es|ed)?|ok(?:ay)?|sorted|cleared|"
    r"solution|workaround|answer|the way|is how|instead|rather than|in place of|let(?:s)? (?:it|the \w+)|made (?:it|the \w+)|"
    r"gets? (?:it|the \w+) (?:going|working|to pass))\b", re.IGNORECASE)
_LEADS = re.compile(
    r"(?:\buse|\busing|\bused|\brun|\bran|\brunning|\brerun|\bafter|\bonce|\bfollowing|\bby|\bvia|\bwith|\btry|"
    r"\btried|\btrying|\bswitch(?:ed|ing)? to|\bmov(?:e|ed|ing) to|\bgo(?:ing)? with|\bwent with|\binstall(?:ing)?|"
    r"\bupdat(?:e|ed|ing)|\bmerg(?:e|ed|ing)|\brebas(?:e|ed|ing)|\bfix(?:ed)?|\bsolution|\bworkaround|\banswer|"
    r"\bwhat (?:worked|helped|fixed it|did it)|\bcalling|\btyping|\bdoing|\bprefer|\bneeds?|\bneeded|\bhave to|\bhas to|\bhad to|\bmust|\bshould|\bthe hyphenated|\bthe standalone|\bthe plain)"
    r"(?: (?:it|them|that|this|the|a|an|first|then|again|instead|just|plain|simply|is|was|with|by|via|:))*\W*$",
    re.IGNORECASE)
_BAD = re.compile(
    r"\b(?:fail(?:s|ed|ing|ure)?|error(?:s|ed)?|reject(?:s|ed)?|refus(?:es|ed)|complain(?:s|ed)?|broke|broken|"
    r"breaks|crash(?:es|ed)?|unavailable|missing|blocked|stopp?(?:s|ed)|could ?n[o']t|can ?n[o']t|unable|lacks?|"
    r"stale|out of date|too old|denied|not found|abort(?:s|ed)?|di(?:e|es|ed)|exit(?:s|ed)? (?:1|non-zero)|"
    r"invalid|problem|trouble|wrong|needs?|requires?|no plugin|is not a|isn'?t|does ?n[o']t|did ?n[o']t|"
    r"won'?t|never)\b", re.IGNORECASE)
# Success words under a negation are failure words: "did not help", "no fix".
_NEGATED = re.compile(r"\b(?:not|n't|no|never|nothing)\s+(?:\w+\s+)?(?:work|help|fix|solve|pass|succeed)\w*",
                      re.IGNORECASE)
# "`X` passed after `Y`", "`X` was fixed by `Y`": words after X that hand the success to the next command.
_HANDS_ON = re.compile(r"\b(?:after|once|following|fixed by|solved by|resolved by|sorted by|by running|"
                       r"until|when)\W*$", re.IGNORECASE)
_WARNING = re.compile(r"\b(?:risk(?:y|s)?|dangerous|unsafe|destroy(?:s|ed)?|wipe[sd]?|deletes?|erases?|"
                      r"disables?|turns? off|overwrites?|rewrites? (?:the )?(?:remote'?s? )?history|loses?|"
                      r"irreversibl[ey]|cannot be undone|not recommended|do(?:es)? not do this)\b", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"^(?:<[^<>\s]+>|\{[^{}\s]+\}|[A-Z][A-Z0-9_]{2,}|…|\.\.\.)$")
_CODE = re.compile(r"`([^`\n]+)`")
_QUOTED = re.compile(r"(?<![\w'])['\"“‘]([^'\"“”‘’\n]{2,120})['\"”’](?![\w'])")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[A-Z`'\"(])|\n+")
_WRAPPERS = {"sudo", "env", "command", "exec", "time", "nice"}
_RUNNERS = {"npx", "uvx", "bunx", "pnpx"}
# A bare command after words that lead to one: "switching to uv add httpx", "and uv add httpx went through".
_BARE_LED = re.compile(r"\b(?:use|using|run|running|ran|switch(?:ed|ing)? to|try|tried|with|and|then|but)\s+"
                       r"(?!(?:a|an|the|this|that|it|its|and|but|then|so)\b)([a-z][\w.+-]*(?:\s+[-\w./@:=<>{}]+){1,6})")
_BARE_STOP = re.compile(r"\s+(?:and|but|then|which|so|because|since|when|instead|worked|works|went|fixed|is|was|are|"
                        r"were|did|does|do|can|cannot|can't|could|won't|will|would|means|needs?|requires?|"
                        r"refuses?|fails?|failed|succeeded|gets?|got|hits?|gives?|gave|on|in|for|from|to|here|"
                        r"there|now|first|again)\b.*$", re.IGNORECASE)
# What explains a failure rather than judging the command before it: "…, because the push is rejected".
_REASON = re.compile(r"\b(?:because|since|as|when|whenever|if|otherwise)\b.*$", re.IGNORECASE)


@dataclass(frozen=True)
class Advice:
    """What one note says for an agent about to run a command."""

    about: bool  # the note is about that command
    fix: str  # the command it says worked ('' if none), placeholders as written
    failed: str = ""  # the note's command that is the agent's (to fill placeholders by position)
    warned: bool = False  # the note warns against its fix


@dataclass(frozen=True)
class _Span:
    sentence: int
    start: int
    end: int
    command: str


def words(command: str) -> list[str]:
    """A command's words as a shell would split them (a broken quote: on spaces)."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def program(command: str) -> tuple[str, str]:
    """A command's program and its first argument that is not a flag ('' if none)."""
    ws = [w for w in words(command) if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w)]
    while ws and ws[0] in _WRAPPERS:
        ws = ws[1:]
    # What a runner runs is the program: `python -m pytest` is pytest, `npx tsc` is tsc.
    while len(ws) > 1 and (ws[0] in _RUNNERS or (ws[0] in ("uv", "poetry", "pipx", "pdm") and ws[1] == "run")
                           or (re.fullmatch(r"python[0-9.]*|py", ws[0]) and ws[1] == "-m")):
        ws = ws[2:] if ws[1] in ("run", "-m") else ws[1:]
    if not ws:
        return "", ""
    head = ws[0].rsplit("/", 1)[-1]
    rest = next((w for w in ws[1:] if not w.startswith("-")), "")
    return head, rest


def _commandish(text: str) -> bool:
    first = text.split()[0] if text.split() else ""
    return bool(re.fullmatch(r"[A-Za-z0-9_./~-][\w./~+:@=-]*", first)) and not text.rstrip().endswith((".", ":"))


def _spans(n: int, sentence: str, mine: str) -> list[_Span]:
    """The commands written in a sentence, in order."""
    found = [_Span(n, m.start(), m.end(), m.group(1).strip()) for m in _CODE.finditer(sentence)]
    if not found:
        found = [_Span(n, m.start(), m.end(), m.group(1).strip()) for m in _QUOTED.finditer(sentence)
                 if _commandish(m.group(1)) and len(m.group(1).split()) >= 2]
    if found:
        return [s for s in found if s.command]
    head = program(mine)[0]
    bare = []
    if head:  # my own program, written bare: as far as its words are mine, else up to a stop word
        my_words = set(words(mine))
        for m in re.finditer(rf"(?<![\w./-]){re.escape(head)}\b", sentence):
            tail = re.split(r"[,;:()]|\.(?:\s|$)", sentence[m.start():], maxsplit=1)[0].split()
            if len(tail) > 1 and tail[1] in my_words:
                kept = [w for w in tail if w in my_words or _PLACEHOLDER.match(w)]
                command = " ".join(tail[:next((i for i, w in enumerate(tail) if w not in kept), len(tail))])
            else:
                command = _BARE_STOP.sub("", " ".join(tail)).strip()
            bare.append(_Span(n, m.start(), m.start() + len(command), command))
    for m in _BARE_LED.finditer(sentence):  # another command, after words that lead to one
        command = _BARE_STOP.sub("", re.split(r"[,;:()]|\.(?:\s|$)", m.group(1), maxsplit=1)[0]).strip()
        if not any(s.start <= m.start(1) < s.end for s in bare):
            bare.append(_Span(n, m.start(1), m.start(1) + len(command), command))
    return sorted(bare, key=lambda s: s.start)


def _literal(word: str) -> bool:
    return not _PLACEHOLDER.match(word) and word not in {"&&", "||", "|", ";"}


def is_mine(command: str, mine: str) -> bool:
    """``command`` (from a note) is the command I am about to run, as the note writes it."""
    head, sub = program(mine)
    their_head, their_sub = program(command)
    if not head or their_head != head:
        return False
    if their_sub and not _PLACEHOLDER.match(their_sub) and their_sub != sub:
        return False
    mine_words = set(words(mine))
    return all(w in mine_words for w in words(command) if _literal(w))


def _score(before: str, after: str, hands_on: bool) -> int:
    """How well the words around a command speak of it: > 0 it worked, < 0 it failed.
    ``hands_on``: the next command is another fix-like one, so "passed after" hands the success on."""
    after = _REASON.sub("", after[:90])
    negated = len(_NEGATED.findall(after))
    good = len(_GOOD.findall(_NEGATED.sub(" ", after))) + (2 if _LEADS.search(before[-50:]) else 0)
    bad = len(_BAD.findall(after[:60])) + negated
    if hands_on and _HANDS_ON.search(after[:40]) and not re.match(r"\W*(?:after|once)\W+(?:it|that|this)\b", after[:40]):
        good -= 1  # "`X` passed after `Y`": the success is Y's
    return good - bad


def read_note(text: str, mine: str) -> Advice:
    """What a note says for an agent about to run ``mine``."""
    sentences = _SENTENCE.split(text)
    spans = [s for n, sentence in enumerate(sentences) for s in _spans(n, sentence, mine)]
    if not spans:
        return Advice(False, "")
    own = [s for s in spans if is_mine(s.command, mine)]
    head, sub = program(mine)
    said = set(re.findall(r"[\w./@+:=-]+", text.lower()))
    # With none of its commands mine, the note's words must name my program and subcommand (in any
    # form of the word: "installing" for install).
    named = head.lower() in said and (not sub or any(w.startswith(sub.lower()[:max(4, len(sub) - 2)]) for w in said))
    about = bool(own) or (named and not any(program(s.command)[0] == head for s in spans))
    if not about:
        return Advice(False, "")
    others = [s for s in spans if s not in own and program(s.command)[0]
              and s.command.strip() != mine.strip()]
    scored = []
    for span in others:
        sentence = sentences[span.sentence]
        same = [s for s in spans if s.sentence == span.sentence]
        i = same.index(span)
        before = sentence[same[i - 1].end if i else 0:span.start]
        after = sentence[span.end:same[i + 1].start if i + 1 < len(same) else len(sentence)]
        if i + 1 == len(same) and span.sentence + 1 < len(sentences) and not _spans(
                span.sentence + 1, sentences[span.sentence + 1], mine):
            after += " " + sentences[span.sentence + 1]  # "… `X`. It worked."
        hands_on = i + 1 < len(same) and same[i + 1] not in own
        scored.append((_score(before, after, hands_on), span, after))
    best = max(scored, key=lambda x: x[0], default=None)
    if best is None or best[0] <= 0:
        return Advice(True, "", own[0].command if own else "")
    score, fix, after = best
    later = " ".join(sentences[fix.sentence + 1:])
    warned = bool(_WARNING.search(after) or _WARNING.search(later))
    return Advice(True, fix.command, own[0].command if own else "", warned)


_IN_WORD = re.compile(r"<[a-z][\w-]*>")  # a placeholder that is part of a word
_FILE_HOLDER = re.compile(r"(?i)^[<{]?(?:path|file|filename|files|paths|file_?path)[>}]?$")
_FILE = re.compile(r"^[\w.~-]*[/\w-]+\.\w{1,5}$|/")  # a word that names a file: tests/test_x.py, src/, go.mod


def fill(fix: str, failed: str, mine: str, touched: tuple[str, ...] = ()) -> str:
    """``fix`` with its placeholders filled from ``mine``: by position against ``failed``, else the
    word of mine that the note does not name (a package, a branch); a placeholder that names a
    file, by the files my task ``touched``, else by the words of mine that name files. With none,
    a file placeholder has nothing to stand for (a commit message is no file to format): '' (no
    fix I can run)."""
    fix_words, theirs, my_words = words(fix), words(failed), words(mine)
    bound = {w: my_words[i] for i, w in enumerate(theirs) if _PLACEHOLDER.match(w) and i < len(my_words)}
    named = set(theirs) | set(fix_words)
    spare = [w for w in my_words if w not in named and not w.startswith("-")]
    out = []
    for w in fix_words:
        if _PLACEHOLDER.match(w) and w not in {"…", "..."}:
            if _FILE_HOLDER.match(w) and w not in bound:
                files = touched or tuple(x for x in spare if _FILE.search(x))
                if not files:
                    return ""
                out.extend(files)
                continue
            w = bound.get(w) or (spare[-1] if spare else w)
        elif _IN_WORD.search(w) and spare:  # a placeholder within a word: `<package>-binary`
            w = _IN_WORD.sub(lambda m: bound.get(m.group(0)) or spare[-1], w)
        out.append(w)
    return " ".join(shlex.quote(w) if w and not re.fullmatch(r"[\w./@%+:=,~&|;<>{}-]+", w) else w for w in out)


# "…, for psycopg2 and psycopg": the values a note was seen for (words, not "for the CI", "for any package").
_SEEN_FOR = re.compile(r"\bfor\s+([\w.+-]+(?:(?:\s*,\s*|,?\s+(?:and|or)\s+)[\w.+-]+)*)", re.IGNORECASE)
_NO_VALUES = frozenset({"a", "an", "the", "any", "every", "all", "each", "this", "that", "these", "those", "it",
                        "them", "me", "you", "us", "now", "example", "instance", "some", "one", "other", "another",
                        "my", "your", "our", "its", "their", "no", "good", "sure", "which", "what", "whatever"})


def values_named(text: str) -> frozenset[str]:
    """The values a note says it was seen for ("for psycopg2 and psycopg"); none when it names none."""
    found: set[str] = set()
    for m in _SEEN_FOR.finditer(text):
        items = [w for w in re.split(r"\s*,\s*|,?\s+(?:and|or)\s+", m.group(1)) if w]
        # The list ends where the sentence goes on ("for psycopg2 or psycopg, a plain …").
        ends = next((i for i, w in enumerate(items) if w.lower() in _NO_VALUES or w.isdigit()), len(items))
        found.update(w.lower().strip(".") for w in items[:ends])
    return frozenset(found)


def _mine_among(advice: Advice, text: str, mine: str) -> bool | None:
    """Whether the value my command gives a note's placeholder is one it says it was seen for
    (None: its fix has no placeholder, or it names no values)."""
    if not any(_PLACEHOLDER.match(w) or _IN_WORD.search(w) for w in words(advice.fix)):
        return None
    values = values_named(text)
    if not values:
        return None
    named = set(words(advice.failed)) | set(words(advice.fix))
    return any(w.lower() in values for w in words(mine) if w not in named and not w.startswith("-"))


NAMES_MY_VALUE, FOR_ANY_VALUE, FOR_OTHER_VALUES = 2, 1, 0  # how near a note is to my case (`fit`)


def fit(text: str, mine: str) -> int:
    """How near a note about my command is to my case: it says it was seen for my very value (the
    package I install), it is for any value, or it was seen for other values only."""
    among = _mine_among(read_note(text, mine), text, mine)
    return FOR_ANY_VALUE if among is None else NAMES_MY_VALUE if among else FOR_OTHER_VALUES


def advice_for(text: str, mine: str, touched: tuple[str, ...] = ()) -> str:
    """The command a note tells an agent about to run ``mine`` (its task having changed the files
    ``touched``) to run instead ('' if none)."""
    advice = read_note(text, mine)
    if not advice.about or not advice.fix or advice.warned:
        return ""
    return fill(advice.fix, advice.failed, mine, touched)
