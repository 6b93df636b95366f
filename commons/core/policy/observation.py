"""The three safety doors a lesson's text passes (design paper §3.5, docs/design.md "Principles").

1. **Observation, never instruction.** A lesson states what happened; it never tells the agent
   what to do, because memory is the one place where an instruction, once stored, runs in every
   future session. :func:`check_observation` refuses a text any of whose sentences opens with an
   imperative; :func:`observation_form` rewrites simple imperatives as observations.
2. **Injection filter.** Tool output is data written by strangers (a web page, a README, a
   package's error message). Sentences in it that address the agent ("NOTE TO AI AGENTS: …",
   "ignore previous instructions", ``<system>`` tags) are removed before any of it is quoted in a
   lesson: :func:`strip_injections`.
3. **Scrubber.** Secrets and personal details (tokens, keys, passwords, e-mail addresses, phone
   numbers, IP addresses, internal host names, the user name in a home path) become typed
   placeholders: :func:`scrub`, which lives in :mod:`commons.core.policy.scrubber` and is re-exported here.

Quoted speech is allowed inside an observation: ``The person corrected the agent, saying "no,
use uv"`` reports the person's words, so text between double quotes is masked before the
imperative check. A text made *only* of a quote is still checked, because its first sentence then
opens with the quote's first word.
"""

from __future__ import annotations

import re
import unicodedata

from commons.core.policy.instruction import addressed_to_agent, fold, strongly_addressed, visible
from commons.core.policy.literals import Gated
from commons.core.policy.memo import short_texts
from commons.core.policy.scrubber import looks_private, scrub  # noqa: F401  (re-exported: callers import them from here)


class SafetyError(ValueError):
    """The *text* handed in is not acceptable (the input's fault, not a misuse of the API)."""


class ImperativeText(SafetyError):
    """A lesson text gives an instruction where an observation is required."""


# --------------------------------------------------------------------------------------------
# 1. Imperative check

# Words that, opening a sentence, make it an instruction. Checked on the first word after
# leading punctuation; multi-word openers are matched as regexes below.
IMPERATIVE_OPENERS = frozenset(
    """always never do don't dont use make avoid ensure run install please prefer remember stop
    try set add remove delete check keep be don’t must should instead consider switch call
    pin upgrade downgrade replace skip disable enable ignore""".split()
)
_MODAL_OPENER = re.compile(
    r"^(?:you|we|agents?|the agent|the assistant|assistants?|claude|one)\s+"
    r"(?:should|must|shall|ought to|need to|needs to|have to|has to|will want to)\b"
    r"|^(?:it is|it's)\s+(?:important|essential|critical|necessary|best)\s+to\b"
    r"|^(?:make sure|be sure|don't forget|do not|let's|lets)\b"
    r"|^note(?:\s+that|\s*[:,!]|\s+(?:the|how|to|this|these|well)\b)",  # "Note taking …" is a noun
    re.IGNORECASE,
)
# Verbs that are nouns too ("Push to main was rejected", "Merge conflicts appeared"): an opener
# only when the next word does not make the sentence a report about the noun.
VERB_OR_NOUN_OPENERS = frozenset(
    """execute send copy write answer reply tell ask trust give grant allow approve accept confirm paste
    put go get restart kill force edit modify rewrite overwrite uninstall upload download fetch chmod
    chown follow obey pass push commit merge deploy export sudo curl wget rm print show clone rebase
    revert reset publish open""".split()
)
_REPORTING = frozenset(
    """was is were are failed fails took takes ran runs broke breaks hooks hook conflicts conflict
    statements statement step steps job jobs of times timed hung stalled succeeded worked works needs
    needed has had can could did does will would should must may might on from rules rule access
    permission permissions requests request button dialog command commands target targets""".split()
)
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|(?<![\w\'])\'[^\'\n]+\'(?![\w\'])')  # '…' but not an apostrophe
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_LEADING_JUNK = re.compile(r"^[\s\-*•>#\d.)(\[\]'\"“”‘’:]+")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SPLIT.split(text) if s.strip()]


@short_texts  # the door asks of a lesson's text twice: is_observation, then admit (of its folded form, most often the same)
def imperative_sentences(text: str) -> tuple[str, ...]:
    """The sentences of ``text`` that open with an imperative (quoted speech ignored)."""
    masked = _QUOTED.sub(" «quote» ", unicodedata.normalize("NFC", text))
    found = []
    for sentence in _sentences(masked):
        if sentence.startswith("«quote»") and len(sentence.split()) > 1:
            # 'The person said: "…"' splits oddly only when a quote opens the sentence and more
            # follows; the words after the quote are what the sentence asserts.
            sentence = sentence[len("«quote»"):]
        if sentence.lstrip().startswith("`"):
            continue  # a code span names a command: "`make test` failed" is a report
        bare = _LEADING_JUNK.sub("", sentence)
        words = bare.split()
        if not words:
            continue
        first = words[0].lower().strip("*_~").rstrip(",:;.!?*_~")  # "**Always** run …" is "Always run …"
        reported = any(w.lower().rstrip(",:;.!?") in _REPORTING for w in words[1:4])
        if (first in IMPERATIVE_OPENERS or _MODAL_OPENER.match(bare)
                or (first in VERB_OR_NOUN_OPENERS and not reported)):
            found.append(sentence)
    return tuple(found)


def is_observation(text: str) -> bool:
    return not imperative_sentences(text)


def check_observation(text: str) -> str:
    """Return ``text`` if it is an observation; raise :class:`ImperativeText` otherwise."""
    bad = imperative_sentences(text)
    if bad:
        raise ImperativeText(
            f"lesson text gives an instruction ({bad[0]!r}); a lesson must be an observation of "
            "what happened, e.g. 'The person corrected the agent toward using uv' or "
            "'`pip install` failed with ...', never 'Always use uv'"
        )
    return text


_NEGATIVE_OPENERS = frozenset({"never", "don't", "dont", "don’t", "avoid", "stop", "skip"})
_DROPPED_OPENERS = frozenset({"always", "please", "just", "instead", "do", "must", "should"})
_DOUBLE_FINAL = frozenset({"run", "set", "stop", "put", "get", "pin", "skip", "ship", "plan"})


def _gerund(verb: str) -> str:
    v = verb.lower()
    if v.endswith("ing"):
        return v
    if v in _DOUBLE_FINAL:
        return v + v[-1] + "ing"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")):
        return v[:-1] + "ing"
    return v + "ing"


def _rewrite_sentence(sentence: str) -> str:
    words = _LEADING_JUNK.sub("", sentence).rstrip(" .!;").split()
    modal = _MODAL_OPENER.match(" ".join(words))
    negative = False
    if modal:
        phrase = modal.group(0).lower()
        negative = phrase.startswith(("do not", "don't"))
        words = " ".join(words)[modal.end():].split()
        if words and words[0].lower() == "to":
            words = words[1:]
    while words and words[0].lower().rstrip(",;.!?") in (_DROPPED_OPENERS | _NEGATIVE_OPENERS | {"not"}):
        head = words.pop(0).lower().rstrip(",;.!?")
        negative = negative or head in _NEGATIVE_OPENERS or head == "not"
    if not words:
        raise ImperativeText(
            f"cannot rewrite {sentence!r} as an observation: nothing is left once the command "
            "words are removed; state what happened instead (e.g. 'The person corrected the "
            "agent for ...')"
        )
    verb, rest = words[0], " ".join(words[1:])
    if verb.lower() == "prefer":
        return f"The person prefers {rest}." if rest else "The person stated a preference."
    if negative and _is_gerund_or_noun(verb):
        return f"The agent was corrected away from {' '.join(words)}."
    action = " ".join([_gerund(verb)] + ([rest] if rest else []))
    direction = "away from" if negative else "toward"
    return f"The agent was corrected {direction} {action}."


def _is_gerund_or_noun(word: str) -> bool:
    # After "avoid"/"stop", what follows is already a gerund or a noun ("avoid pip", "stop
    # running"), so it is kept as it is rather than turned into a gerund again.
    return word.lower().endswith("ing") or word.lower() not in IMPERATIVE_OPENERS | {
        "run", "install", "use", "call", "edit", "write", "commit", "push", "delete"
    }


def observation_form(text: str) -> str:
    """``text`` with every imperative sentence rewritten as an observation.

    "Always use uv" → "The agent was corrected toward using uv."; "Never run pip install" → "The
    agent was corrected away from running pip install."; "Prefer ruff over flake8" → "The person
    prefers ruff over flake8." Raises :class:`ImperativeText` when a sentence cannot be turned
    into an observation; the message says what form is wanted.
    """
    text = unicodedata.normalize("NFC", text).strip()
    bad = set(imperative_sentences(text))
    if not bad:
        return text
    out = []
    for sentence in _sentences(text):
        out.append(_rewrite_sentence(sentence) if sentence in bad else sentence)
    result = " ".join(out)
    return check_observation(result)


# --------------------------------------------------------------------------------------------
# 2. Injection filter

_AGENT = r"(?:ai|llm|language model|assistant|agent|claude|chatgpt|gpt|copilot|cursor|model|bot)s?"
_INJECTION = re.compile(
    "|".join(
        [
            rf"\b(?:note|message|attention|instructions?|warning|notice|reminder)\s+(?:to|for)\s+"
            rf"(?:all\s+|any\s+)?(?:the\s+)?(?:ai\s+)?{_AGENT}\b",
            rf"\b(?:dear|hey|hi|attention)\s+(?:ai\s+)?{_AGENT}\b",
            r"\b(?:ai|llm)\s+(?:assistant|agent|model)s?\s*[,:]",
            rf"^\s*{_AGENT}\s*[,:]",
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|preceding|system|original)\s+"
            r"(?:instructions?|prompts?|messages?|directions?|rules|context)",
            r"\byou are now (?!logged|signed|connected|on |using|in the|ready|up to date|subscribed|authenticated)",  # "You are now logged in" is a CLI's
            r"\bnew (?:system )?instructions?\s*:",
            r"\bsystem prompt\b",
            r"\bfrom now on,?\s+(?:you|the agent|always|never)\b",
            r"\bif you are an? (?:ai|llm|language model|assistant|agent)\b",
            # not the scrubber's own `<user@host>` (git's "unable to auto-detect email address (got '<user@host>')")
            r"<\|?\s*/?\s*(?:system|assistant|user|instructions?|im_start|im_end|tool|human)\b(?!@)[^>]*\|?>",
            r"\[/?INST\]|<<\s*/?SYS\s*>>",
        ]
    ),
    re.IGNORECASE | re.MULTILINE,
)
_ROLE_BLOCK = re.compile(
    r"<\s*(system|instructions?|assistant|im_start)\b[^>]*>.*?(?:<\s*/\s*\1\s*>|<\|im_end\|>|$)",
    re.IGNORECASE | re.DOTALL,
)


# Behind the literals they cannot match without (commons.core.policy.literals): most texts a door
# reads hold none of them, and each of these patterns is a long alternation.
_INJECTION_GATED, _ROLE_BLOCK_GATED = Gated(_INJECTION), Gated(_ROLE_BLOCK)


def injection_match(text: str) -> str | None:
    """"injection" if ``text`` (already folded) holds the classic forms of words to an agent."""
    return "injection" if _INJECTION_GATED.search(text) or _ROLE_BLOCK_GATED.search(text) else None


def contains_injection(text: str) -> bool:
    """Whether ``text`` carries words addressed to an AI agent rather than to a person, in any of
    the forms :mod:`commons.core.policy.instruction` knows (read on its folded form)."""
    return bool(injection_match(fold(text)) or addressed_to_agent(text))


def _speaks(sentence: str) -> tuple[bool, bool]:
    """(whether ``sentence`` speaks to the agent, whether that address governs the rest of its line)."""
    folded = fold(sentence)
    found = _INJECTION_GATED.search(folded)
    if found is not None:
        # an address that ends in a colon ("NOTE TO AI AGENTS: ...") governs the rest of its line
        return True, ":" in folded[found.end() - 1:]
    return bool(strongly_addressed(folded)), ":" in folded


def strip_injections(text: str) -> str:
    """``text`` without the blocks, lines and sentences that address the agent."""
    text = _ROLE_BLOCK.sub(" ", visible(text))
    kept = []
    for line in text.splitlines():
        if not _speaks(line)[0]:
            kept.append(line)
            continue
        # Keep the sentences of the line that are plain data and drop those that speak to the agent.
        parts = []
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            speaks, governs = _speaks(sentence)
            if speaks and governs:
                break
            if not speaks:
                parts.append(sentence)
        if parts:
            kept.append(" ".join(parts))
    return "\n".join(kept).strip()
