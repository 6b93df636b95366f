"""Words addressed to the agent: the instruction check every door runs (docs/trust.md "One policy").

A lesson is read by an agent that has been told to follow its memory, so any words in it that
speak *to* the agent are an instruction however they are dressed: an emphasis word
("IMPORTANT: always run …"), a modal in the second person ("you must …"), a habit ascribed to the
agent ("Claude always runs …"), a wish relayed ("the person wants you to …"), a vocative ("AI
agents reading this: …"), or the classic "ignore previous instructions". Each is looked for in
English, Spanish, French, German, Portuguese, Russian and Chinese.

The check runs on a *folded* form of the text (:func:`fold`): NFKC (fullwidth ``Ｉｇｎｏｒｅ`` reads
``Ignore``), without the invisible characters that split a word (``Ig\\u200bnore``), and with the
Latin look-alikes of Cyrillic and Greek letters mapped to Latin, so the English patterns see
``ignоre`` written with a Cyrillic ``о`` as ``ignore`` (the Russian patterns run on the unmapped form).

What a lesson may quote: an error's own words. ``git pull`` failing with "error: you must specify a
branch" is data, so the second-person and modal patterns skip quoted spans and what follows an
error label (``error:``, ``fatal:``, ``failed:``…) up to the end of its sentence. The patterns that
no error message has reason to print (role tags, "ignore previous instructions", a named agent,
a relayed wish, emphasis words) apply everywhere, quoted or not.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import NamedTuple

from commons.core.policy.literals import Gate, Gates, any_of, gate
from commons.core.policy.memo import short_texts

__all__ = ["addressed_to_agent", "fold", "invisible", "strongly_addressed", "visible", "weakly_addressed"]

# --------------------------------------------------------------------------------------------
# Folding: what the text says once the tricks that hide it are undone

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def invisible(ch: str) -> bool:
    """A character a reader does not see but a parser may: format (zero-width, bidi, soft
    hyphen, BOM), control (other than tab and newline), private-use and unassigned."""
    if ch in "\t\n":
        return False
    return unicodedata.category(ch) in ("Cf", "Cc", "Co", "Cn", "Cs")


_BREAKS = re.compile(r"\r\n?|[\u2028\u2029\x85\x0b\x0c]")
# The ASCII characters :func:`invisible` names once the line breaks are newlines: the controls
# but tab and newline (and \r, \v, \f, already newlines). An ASCII text is read by this one
# pattern, not character by character in Python (each lesson a peer sends is read several times).
_ASCII_INVISIBLE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


@short_texts  # a door reads the same text several times over
def visible(text: str) -> str:
    """``text`` without ANSI escapes and invisible characters; ``\\r`` and other line breaks
    (U+2028, U+2029, U+0085) become newlines, NFC."""
    if text.isascii() and text.isprintable():
        # Every character the three patterns below take (ESC, the breaks, the controls) is a
        # control character: a printable ASCII text is what they leave (a signed record's
        # words always are; the decoder checked).
        return text
    text = _BREAKS.sub("\n", _ANSI.sub("", text))
    if text.isascii():  # NFC leaves ASCII as it is
        return _ASCII_INVISIBLE.sub("", text)
    return unicodedata.normalize("NFC", "".join(ch for ch in text if not invisible(ch)))


# Latin look-alikes: only the letters that pass for Latin ones in a Latin word.
_CONFUSABLE = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ո": "n", "ս": "u", "ν": "v", "ο": "o",
    "α": "a", "ε": "e", "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "Α": "A", "Β": "B", "Ε": "E", "Η": "H",
    "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Χ": "X", "Υ": "Y",
    "Ζ": "Z",
})
_MIXED_WORD = re.compile(r"\w*[a-zA-Z]\w*")


@short_texts
def fold(text: str) -> str:
    """The form the check reads: :func:`visible`, NFKC, one space for each run of white space."""
    text = visible(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split())


def _latin(text: str) -> str:
    # Only a word that already holds a Latin letter is mapped: Russian words stay Russian.
    return _MIXED_WORD.sub(lambda m: m.group(0).translate(_CONFUSABLE), text)


# --------------------------------------------------------------------------------------------
# The patterns

_AGENT_NAMES = r"(?:claude(?:\s+code)?|chat\s?gpt|gpt-?\d[\w.]*|copilot|gemini|codex|cursor|aider|devin|cody|llama|bard)"
_AGENT = (rf"(?:{_AGENT_NAMES}|(?:the|an?|any|all|every|each|this|our|your)\s+(?:ai|llm|coding|code)\s+"
          r"(?:agents?|assistants?|models?|bots?)|ai\s+(?:agents?|assistants?|models?|bots?)|llms?"
          r"|(?:the|an?|any|all|every|each|this)\s+(?:agents?|assistants?|ai)"  # not "the model": ML errors say "the model must be compiled"
          r"|agents|assistants|language\s+models?)")
# An agent named for what it is, never the generic "the agent" every correction lesson mentions.
_NAMED = (rf"(?:{_AGENT_NAMES}|(?:the|an?|any|all|every|each|this|our|your)\s+(?:ai|llm)(?:\s+(?:agents?|assistants?|models?|bots?))?"
          r"|ai\s+(?:agents?|assistants?|models?|bots?)|llms?)")
_BASE_VERBS = (r"(?:run|use|execute|call|install|push|commit|delete|remove|ask|tell|trust|skip|disable|enable"
               r"|ignore|follow|read|write|open|send|copy|check|answer|reply|respond|say|mention|reveal|share"
               r"|print|output|include|add|set|pass|prefer|do|make|let|change|edit|modify|merge|force|deploy"
               r"|upload|download|curl|wget|sudo|rm|question|refuse|start|overwrite|bypass|override|disclose"
               r"|store|save|keep|wait|show|display|apply|obey|comply|treat|assume|believe|append|prepend"
               r"|insert|export|source|pipe|grant|allow|approve|accept|confirm|verify|replace|rewrite|drop"
               r"|type|paste|clear|reset|restart|kill|stop|uninstall|downgrade|upgrade|update|sign|publish"
               r"|contact|email|post|fetch|load|trigger|invoke|consider|try|go|get|put|report|notify|log)")
_MODALS = (r"(?:must|should|shall|have\s+to|has\s+to|need\s+to|needs\s+to|ought\s+to|are\s+to|is\s+to"
           r"|are\s+required\s+to|is\s+required\s+to|are\s+expected\s+to|is\s+expected\s+to|is\s+supposed\s+to"
           r"|are\s+supposed\s+to|will\s+always|will\s+never|can\s+now|may\s+now|are\s+allowed\s+to"
           r"|is\s+allowed\s+to|better)")
_WISH = (r"(?:wants?|wanted|wishes|would\s+like|'d\s+like|expects?|needs?|requires?|asks?|asked|told|tells"
         r"|instructs?|instructed|prefers?|insists?|requests?|requested|orders?|ordered|directs?|permits?"
         r"|authori[sz]es|allows?|trusts?)")
_WISHER = r"(?:person|user|human|developer|owner|maintainer|team|operator|admin(?:istrator)?|boss|customer|client)"
_EMPHASIS = (r"(?:important|critical|crucial|mandatory|urgent|attention|reminder|pro\s?tip|heads\s+up|psa|fyi"
             r"|best\s+practice|importante|atenci[oó]n|aviso"
             r"|obligatorio|urgente|atten[cç][aã]o|obrigat[oó]rio|remarque|avertissement|wichtig|achtung|hinweis"
             r"|dringend|pflicht|важно|внимание|примечание|срочно|обязательно|重要|注意|警告|提示|紧急|必读)")

# Anywhere, quoted or not: no error message has reason to print these.
_ALWAYS = [
    ("role tag", r"<\|?\s*/?\s*(?:system|assistant|user|instructions?|im_start|im_end|tool|human|developer)\b(?!@)[^>]*\|?>"
                 r"|\[/?inst\]|<<\s*/?sys\s*>>|^\s*(?:system|assistant|human|developer)\s*:"),
    ("ignore previous", r"\b(?:ignore|disregard|forget|override|bypass|skip|drop|discard|abandon)\s+(?:all\s+|any\s+|every\s+)?"
                        r"(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?(?:previous|prior|above|earlier|preceding|"
                        r"system|original|initial|existing|other|safety|old|current)\s+(?:\w+\s+)?"
                        r"(?:instructions?|prompts?|messages?|directions?|directives?|rules|context|guidelines|guidance"
                        r"|policies|constraints|orders|commands|memory|memories|lessons)"
                        r"|\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:above|before|else|previous|prior|you)"),
    ("identity", r"\byou\s+are\s+now\s+(?:in|a|an|the|dan|free|unrestricted|my|our|acting|operating|going|allowed"
                 r"|permitted|authori[sz]ed|jailbroken|released|liberated|no\s+longer)\b|\byou\s+are\s+(?:a|an|the)\s+(?:helpful|unrestricted|new|different)\b"
                 r"|\bact\s+as\s+(?:if\s+you|an?\s+(?:unrestricted|different|new|ai|assistant|agent))\b|\bpretend\s+(?:to\s+be|you)\b|\b(?:developer|god|dan|jailbreak)\s+mode\b"
                 r"|\bdo\s+anything\s+now\b|\bjailbreak"),
    ("new instructions", r"\bnew\s+(?:system\s+)?(?:instructions?|rules|directives?|orders)\s*[:!]|\bsystem\s+prompt\b"
                         r"|\b(?:updated|revised|real|actual|true|hidden|secret)\s+instructions?\b"),
    ("addressed to the agent", rf"\b(?:note|message|attention|instructions?|warning|notice|reminder|memo|psa|hint)s?\s+"
                               rf"(?:to|for)\s+(?:all\s+|any\s+|the\s+|every\s+)*(?:ai\s+)?(?:{_AGENT_NAMES}|ai|llms?"
                               r"|agents?|assistants?|models?|bots?)\b"
                               rf"|\b(?:dear|hey|hi|hello|attention|listen|ok|okay)\s*,?\s+(?:ai\b|{_AGENT})"
                               rf"|^\W*(?:{_AGENT}|ai|agent|assistant)\s*[,:!]"
                               rf"|\b(?:if|when|whenever|while)\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant"
                               rf"|agent|{_AGENT_NAMES})\b|\bas\s+an?\s+(?:ai|llm|language\s+model|assistant|agent)\b"
                               rf"|\b(?:ai|llm|agent|assistant)s?\s+(?:reading|processing|parsing|seeing|viewing)\s+th(?:is|ese)\b"
                               rf"|\b(?:reading|processing|parsing)\s+this\s+(?:file|memory|lesson|text)\b"),
    ("agent told how to behave", rf"(?:^|[.!?]\s)\W*(?:agent|assistant|ai)\s+(?:{_MODALS}|always|never)\b|\b{_AGENT}\s+(?:{_MODALS}|always|never|usually|normally|generally|habitually"
                                 r"|is\s+(?:told|instructed|asked|permitted|authori[sz]ed|allowed))\b"
                                 rf"|\b{_NAMED}\s+(?:[\w-]+\s+){{1,3}}?(?:{_MODALS}|is\s+(?:told|instructed|asked|allowed))\b"
                                 rf"|\b{_NAMED}\s+(?:runs|uses|prefers|executes|installs|pushes|commits|deletes|sends"
                                 r"|trusts|skips|ignores|follows|obeys|answers|replies|responds|calls|invokes|keeps"
                                 r"|likes|wants|loves|does|will|can|may)\b"),
    ("wish relayed", rf"\bfor\s+(?:{_AGENT}|you)\s+to\s+{_BASE_VERBS}\b|\b(?:the\s+|this\s+|our\s+|my\s+)?{_WISHER}s?\s+(?:really\s+|also\s+|always\s+|strongly\s+)?"
                     rf"{_WISH}\s+(?:that\s+)?(?:you|u|{_AGENT_NAMES}|the\s+ai|ai\s+agents?|llms?)\b"
                     rf"|\b(?:it\s+is|it's)\s+(?:the\s+)?{_WISHER}'?s\s+(?:wish|request|instruction|order)"),
    ("emphasis", rf"(?:^|[.!?;:]\s|[\(\[\-*#>]\s?)\W*{_EMPHASIS}\s*(?:!+|:|：|-\s|\]|\)|\*+)\s*(?=\S)"
                 r"|(?:^|[.!?]\s)\W*(?-i:NOTE|NB|N\.B\.|PS|P\.S\.)\s*[:!]"),
    ("spanish", r"\b(?:ignora|olvida|descarta)\s+(?:todas?\s+)?(?:las?\s+)?(?:instrucciones|indicaciones|reglas|[oó]rdenes)"
                r"|\b(?:el|la)\s+(?:usuari[oa]|persona|desarrollador[a]?)\s+(?:quiere|desea|pide|espera|prefiere|exige)\s+que\b"
                r"|\b(?:debes|tienes\s+que|deber[aá]s|hay\s+que)\s+\w+"
                r"|\b(?:siempre|nunca|jam[aá]s)\s+(?:ejecuta|usa|utiliza|instala|corre|lanza|borra|elimina|env[ií]a|haz|hagas"
                r"|ejecutes|uses|sigas|ignores|conf[ií]es|preguntes|digas|menciones|revises|compruebes)\b"
                r"|^\W*(?:ejecuta|usa|utiliza|instala|ignora|borra|elimina|env[ií]a|haz|no\s+(?:uses|ejecutes|hagas|instales))\b"),
    ("french", r"\b(?:ignore[sz]?|oublie[sz]?)\s+(?:toutes?\s+)?(?:les\s+)?(?:instructions|consignes|r[eè]gles|directives)"
               r"|\b(?:l'|la\s+|le\s+)(?:utilisateur|utilisatrice|personne|d[ée]veloppeur)\s+(?:veut|souhaite|demande|pr[ée]f[eè]re|exige|attend)\s+que\b"
               r"|\b(?:tu\s+dois|vous\s+devez|il\s+faut\s+(?:toujours|que)|tu\s+devras|vous\s+devrez)\b"
               r"|\b(?:toujours|jamais)\s+(?:ex[ée]cuter|utiliser|lancer|installer|supprimer|envoyer|faire)\b"
               r"|\b(?:ex[ée]cute[sz]?|utilise[sz]?|lance[sz]?)\s+toujours\b|\bne\s+(?:\w+\s+)?jamais\b"
               r"|^\W*(?:ex[ée]cute[sz]?|utilise[sz]?|lance[sz]?|installe[sz]?|supprime[sz]?|n'utilise[sz]?)\b"),
    ("german", r"\b(?:ignoriere|vergiss|missachte)\w*\s+(?:alle\s+)?(?:\w+\s+)?(?:anweisungen|befehle|regeln|instruktionen|vorgaben)"
               r"|\b(?:der|die)\s+(?:benutzer(?:in)?|nutzer(?:in)?|person|entwickler(?:in)?)\s+(?:will|m[öo]chte|w[üu]nscht|erwartet|bittet|verlangt)\s*,?\s+(?:dass|du|sie)\b"
               r"|\b(?:du\s+musst|du\s+sollst|sie\s+m[üu]ssen|sie\s+sollen|ihr\s+m[üu]sst)\b"
               r"|\b(?:f[üu]hre|verwende|benutze|nutze|installiere|l[öo]sche|sende)\s+(?:\w+\s+)?(?:immer|niemals|nie)\b"
               r"|\b(?:immer|niemals|nie)\s+(?:ausf[üu]hren|verwenden|benutzen|installieren|l[öo]schen)\b"
               r"|^\W*(?:f[üu]hre|verwende|benutze|installiere|ignoriere|l[öo]sche)\b"),
    ("portuguese", r"\b(?:ignore|esque[cç]a|descarte)\s+(?:todas\s+)?(?:as\s+)?(?:instru[cç][õo]es|regras|ordens|orienta[cç][õo]es)"
                   r"|\bo\s+(?:usu[aá]rio|utilizador|desenvolvedor)\s+(?:quer|deseja|pede|prefere|espera|exige)\s+que\b"
                   r"|\b(?:voc[eê]\s+(?:deve|precisa|tem\s+que|ter[aá]\s+que)|tu\s+deves)\b"
                   r"|\b(?:sempre|nunca|jamais)\s+(?:execute|use|utilize|instale|rode|apague|envie|fa[cç]a|rodar|usar|executar)\b"
                   r"|^\W*(?:execute|utilize|instale|rode|apague|n[aã]o\s+(?:use|execute|rode|instale))\b"),
    ("russian", r"(?:игнорируй|забудь|проигнорируй|отбрось)\w*\s+(?:все\s+)?(?:\w+\s+)?(?:инструкци|указани|правил|команд)"
                r"|(?:пользователь|человек|разработчик)\s+(?:хочет|просит|ожидает|требует|предпочитает),?\s+чтобы\b"
                r"|(?:ты|вы)\s+(?:должен|должна|должны|обязан|обязаны)\b|(?:ты|вы)\s+(?:всегда|никогда)\b"
                r"|(?:всегда|никогда\s+не)\s+(?:запускай|используй|выполняй|устанавливай|удаляй|отправляй|делай|запускайте|используйте"
                r"|выполняйте|доверяй|слушай|спрашивай|говори|запускать|использовать|выполнять)"
                r"|^\W*(?:запусти|используй|выполни|установи|удали|отправь|игнорируй|не\s+(?:используй|запускай|выполняй))"),
    ("chinese", r"(?:忽略|无视|忘记|忘掉|不要理会|忽视)(?:所有|全部|一切)?(?:之前|以前|上面|先前|此前|原来)?的?(?:所有)?(?:指令|指示|说明|规则|提示|命令)"
                r"|(?:用户|使用者|开发者|主人)(?:希望|想要|要求|想让|需要|让)(?:你|您|助手|模型|代理)"
                r"|(?:你|您)(?:必须|应该|应当|需要|务必|一定要|总是|永远|要)|(?:总是|始终|永远|一律)(?:要)?(?:运行|执行|使用|安装|删除|发送)"
                r"|(?:永远|绝对|千万)?不要|务必|请(?:务必|始终|总是|运行|执行|使用)|^\W*(?:运行|执行|使用|安装|删除|忽略)"),
]

# Outside quotes and error text: words an error message may print, a lesson may not say.
_UNQUOTED = [
    ("from now on", r"\bfrom\s+now\s+on\b|\bgoing\s+forward,?\s+(?:you|always|never|the\s+agent)\b|\bhenceforth\b"
                    r"|\bin\s+(?:all\s+)?(?:future|every|each|subsequent)\s+(?:sessions?|tasks?|conversations?|runs?)\s*,?\s+"
                    r"(?:you|always|never|the\s+agent|run|use)\b"),
    ("second person", r"\b(?:you|your|yours|yourself|yourselves|you're|you'll|you've|you'd|u\s+must)\b"),
    ("always or never", rf"(?<!\bnot\s)(?<!\bdoes\s)(?<!\bdid\s)(?<!\bdo\s)(?<!\bwill\s)(?<!\bwould\s)(?<!\bcan\s)(?<!\bcould\s)"
                        rf"(?<!\bmay\s)(?<!\bmight\s)(?<!n't\s)\b(?:always|never|only\s+ever|at\s+all\s+times)\s+{_BASE_VERBS}\b"),
    ("imperative modal", r"\b(?:we|one|everyone|everybody|agents?)\s+(?:must|should|shall|need\s+to|have\s+to|ought\s+to)\b"
                         r"|\b(?:make\s+sure|be\s+sure|remember)\s+to\b|\b(?:do\s+not|don't|never)\s+(?:ever\s+)?"
                         r"(?:forget|fail)\s+to\b|\bit\s+is\s+(?:important|essential|critical|mandatory|required|vital)\s+"
                         r"(?:to|that)\s+(?:you|the\s+agent|always|never|run|use)\b|\bplease\s+" + _BASE_VERBS + r"\b"),
]

# The literal words (lower case) without one of which a form cannot match: a substring check
# over the lower-cased text decides whether its pattern runs at all, which keeps the check fast
# on the ordinary lesson. None: the pattern always runs (it is cheap, or opens with punctuation).
_NEEDS: dict[str, tuple[str, ...] | None] = {
    "role tag": None, "identity": None, "new instructions": None, "emphasis": None, "wish relayed": None,
    "ignore previous": ("ignore", "disregard", "forget", "override", "bypass", "skip", "drop", "discard", "abandon"),
    "addressed to the agent": ("ai", "agent", "assistant", "model", "bot", "llm", "claude", "gpt", "copilot",
                               "gemini", "codex", "cursor", "aider", "devin", "cody", "llama", "bard", "reading",
                               "processing", "parsing", "you"),
    "agent told how to behave": ("ai", "agent", "assistant", "model", "bot", "llm", "claude", "gpt", "copilot",
                                 "gemini", "codex", "cursor", "aider", "devin", "cody", "llama", "bard"),
    "spanish": ("ignora", "olvida", "descarta", "usuari", "persona", "desarrollador", "debes", "tienes", "deber",
                "hay que", "siempre", "nunca", "jam", "ejecuta", "usa", "utiliza", "instala", "borra", "elimina",
                "env", "haz", "no "),
    "french": ("ignore", "oublie", "utilisat", "personne", "veloppeur", "dois", "devez", "faut", "devras", "devrez",
               "toujours", "jamais", "cute", "utilise", "lance", "installe", "supprime"),
    "german": ("ignorier", "vergiss", "missacht", "benutzer", "nutzer", "person", "entwickler", "musst", "sollst",
               "müssen", "mussen", "sollen", "führe", "fuhre", "verwende", "benutze", "nutze", "installiere",
               "lösche", "losche", "sende", "immer", "nie"),
    "portuguese": ("ignore", "esque", "descarte", "usu", "utilizador", "desenvolvedor", "voc", "deves", "sempre",
                   "nunca", "jamais", "execute", "utilize", "instale", "rode", "apague", "não", "nao"),
    "russian": tuple("абвгдежзийклмнопрстуфхцчшщъыьэюя"),
    "chinese": tuple("忽无忘用使开你您总始永一绝千务请运执删"),
    "from now on": ("from now", "going forward", "henceforth", "future", "every", "each", "subsequent"),
    "second person": ("you", "u must"),
    "always or never": ("always", "never", "only ever", "at all times"),
    "imperative modal": ("we ", "one ", "everyone", "everybody", "agent", "make sure", "be sure", "remember",
                         "not", "don't", "never", "it is", "please"),
}
_COMPILED_ALWAYS = [(name, re.compile(p, re.IGNORECASE | re.MULTILINE), _NEEDS[name]) for name, p in _ALWAYS]
_COMPILED_UNQUOTED = [(name, re.compile(p, re.IGNORECASE | re.MULTILINE), _NEEDS[name]) for name, p in _UNQUOTED]


_WHOLE_WORDS = frozenset({"ai", "bot", "one"})  # words that must stand alone (see _Lower)


class _Needs(NamedTuple):
    """A form's words, as one search: ``plain``, an alternation of the words that may sit inside
    another word (one pass of the regex engine, not a substring check in Python for each), and
    ``whole``, the short ones that must be words of their own (:class:`_Lower`)."""

    plain: re.Pattern[str] | None
    whole: tuple[str, ...]


def _needs(words: tuple[str, ...]) -> _Needs:
    plain = [w for w in words if w not in _WHOLE_WORDS]
    return _Needs(any_of(plain) if plain else None,
                  tuple(w for w in words if w in _WHOLE_WORDS))


def _words(needs: tuple[str, ...], quotes_blanked: bool, ascii_only: bool) -> tuple[str, ...]:
    """A form's words as one kind of text needs them. ``quotes_blanked``: the pattern reads the
    text with its quotes made spaces, where a blank may be a quote's, so a word holding a space is
    looked for by its longest part ("make sure" by "make"). ``ascii_only``: a word beyond ASCII is
    never in an ASCII text's lower case."""
    if quotes_blanked:
        needs = tuple(dict.fromkeys(max(w.split(), key=len) for w in needs))
    return tuple(w for w in needs if w.isascii()) if ascii_only else needs


def _gated(compiled: list, quotes_blanked: bool) -> list[tuple[str, re.Pattern[str], _Needs | None]]:
    """The patterns with their words made one search each (a text beyond ASCII)."""
    return [(name, pattern, None if needs is None else _needs(_words(needs, quotes_blanked, False)))
            for name, pattern, needs in compiled]


class _Both(NamedTuple):
    """A form's words and the literals derived from its pattern: any match holds both."""

    words: _Needs | None
    literals: Gate
    bit: int = 0  # its gate's among all the ASCII forms' (_GATES)


def _ascii_gated(compiled: list, quotes_blanked: bool) -> list[tuple[str, re.Pattern[str], _Needs | _Both | None]]:
    """The patterns as an ASCII text needs them: behind their words and the literals derived from
    the pattern itself (:mod:`commons.core.policy.literals`). A form that cannot match ASCII
    (Russian, Chinese) is left out."""
    out = []
    for name, pattern, needs in compiled:
        derived = gate(pattern, "blanked" if quotes_blanked else "single")  # a form reads a folded text
        words = None if needs is None else _words(needs, quotes_blanked, True)
        if (derived is not None and not derived.alternatives) or words == ():
            continue
        gated = None if words is None else _needs(words)
        out.append((name, pattern, gated if derived is None else _Both(gated, derived)))
    return out


_ALWAYS_GATED, _UNQUOTED_GATED = _gated(_COMPILED_ALWAYS, False), _gated(_COMPILED_UNQUOTED, True)
_ASCII_ALWAYS, _ASCII_UNQUOTED = _ascii_gated(_COMPILED_ALWAYS, False), _ascii_gated(_COMPILED_UNQUOTED, True)


def _numbered(*lists: list) -> list[list]:
    """The forms with their bits among the gates of all of them (:class:`Gates`, one pass a text)."""
    out, bit = [], 0
    for forms in lists:
        numbered = []
        for name, pattern, needs in forms:
            if isinstance(needs, _Both):
                needs, bit = needs._replace(bit=1 << bit), bit + 1
            numbered.append((name, pattern, needs))
        out.append(numbered)
    return out


_ASCII_ALWAYS, _ASCII_UNQUOTED = _numbered(_ASCII_ALWAYS, _ASCII_UNQUOTED)
_GATES = Gates([needs.literals for _, _, needs in _ASCII_ALWAYS + _ASCII_UNQUOTED if isinstance(needs, _Both)])


def _any_bit(forms: list) -> int:
    """The bits of these forms' gates together, when every one of them has a gate; -1 (every bit)
    when one has none. An ASCII text whose admitted bits miss it wakes none of the forms, so
    their loop is skipped: the door's common case, a lesson that speaks to no one."""
    if not all(isinstance(needs, _Both) for _, _, needs in forms):
        return -1
    bits = 0
    for _, _, needs in forms:
        bits |= needs.bit
    return bits


_ASCII_ALWAYS_BITS, _ASCII_UNQUOTED_BITS = _any_bit(_ASCII_ALWAYS), _any_bit(_ASCII_UNQUOTED)


@short_texts  # strongly_addressed and weakly_addressed read the same text
def _admitted(lower: str) -> int:
    return _GATES.admitted(lower)


_WORD = re.compile(r"[^\W\d_]+")


class _Lower:
    """A form's lower case, and its words: a short keyword ("ai", "you") must be a word of its own,
    or "failed" would wake the patterns that look for "AI"."""

    __slots__ = ("text", "_words", "_admitted")

    def __init__(self, form: str):
        self.text, self._words, self._admitted = form.lower(), None, None

    @property
    def admitted(self) -> int:
        """The bits of the forms whose derived literals the text holds (an ASCII text's only)."""
        if self._admitted is None:
            self._admitted = _admitted(self.text)
        return self._admitted

    def has(self, keyword: str) -> bool:
        if keyword not in _WHOLE_WORDS:
            return keyword in self.text
        if keyword not in self.text:
            return False
        if self._words is None:
            self._words = set(_WORD.findall(self.text))
        return keyword in self._words or keyword + "s" in self._words


def _may(needs: _Needs | _Both | None, lower: _Lower) -> bool:
    if isinstance(needs, _Both):
        return bool(lower.admitted & needs.bit) and _may(needs.words, lower)
    if needs is None or (needs.plain is not None and needs.plain.search(lower.text) is not None):
        return True
    return any(lower.has(k) for k in needs.whole)

# What a lesson quotes: "…", “…”, '…' (not an apostrophe), `…`, and after an error label to the
# end of its sentence.
_QUOTES = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|„[^“”\n]*[“”]|(?<![\w'])'[^'\n]+'(?![\w'])|`[^`\n]*`")
_ERROR_LABEL = re.compile(
    r"\b(?:error|fatal|warning|hint|err!?|exception|failed|failure|traceback|stderr|stdout|message|said|says"
    r"|printed|prints|reported|reports|raised|output|reading|complained|answered|replied|refused|aborted|npm\s+err!?"
    r"|e|w|usage|panic|abort|denied)\s*(?::|with|that)\s", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s|$")


def _unquoted(text: str) -> str:
    return _QUOTES.sub(lambda m: " " * len(m.group(0)), text)


def _masked(text: str) -> str:
    out = _unquoted(text)
    parts, at = [], 0
    for label in _ERROR_LABEL.finditer(out):
        if label.start() < at:
            continue
        end = _SENTENCE_END.search(out, label.end()).start()
        parts.append(out[at:label.end()])
        parts.append(" " * (end - label.end()))
        at = end
    parts.append(out[at:])
    return "".join(parts)


def _forms(folded: str) -> tuple[str, ...]:
    if folded.isascii():
        return (folded,)
    latin = _latin(folded)
    return (folded, latin) if latin != folded else (folded,)


def _reasons(folded: str, strong: bool = True) -> Iterator[str]:
    """The forms found, in order; ``strong`` False: only those outside quotes and error text (the
    ones :func:`strongly_addressed` does not look for)."""
    for form in _forms(folded):
        lower, plain = _Lower(form), form.isascii()
        if strong and not (plain and not lower.admitted & _ASCII_ALWAYS_BITS):
            for name, pattern, needs in _ASCII_ALWAYS if plain else _ALWAYS_GATED:
                if _may(needs, lower) and pattern.search(form):
                    yield name
        if plain and not lower.admitted & _ASCII_UNQUOTED_BITS:
            continue  # no form outside quotes may match either
        read: dict[bool, str] = {}  # the form without its quotes (True) or its error text too (False)
        for name, pattern, needs in _ASCII_UNQUOTED if plain else _UNQUOTED_GATED:
            if not _may(needs, lower):
                continue
            # an error may say "you must …"; no error says "always run …" to a reader
            quotes_only = name == "always or never"
            if quotes_only not in read:
                read[quotes_only] = _unquoted(form) if quotes_only else _masked(form)
            if pattern.search(read[quotes_only]):
                yield name


def addressed_to_agent(text: str) -> str | None:
    """Why ``text`` speaks to the agent (the name of the first form found), or None if it does not."""
    return next(_reasons(fold(text)), None)


def weakly_addressed(text: str) -> str | None:
    """:func:`addressed_to_agent` for a text :func:`strongly_addressed` found nothing in: the same
    answer, without running its patterns a second time."""
    return next(_reasons(fold(text), strong=False), None)


def strongly_addressed(text: str) -> str | None:
    """:func:`addressed_to_agent` with only the forms no tool's output has reason to print: for
    cutting injections out of a command's output before any of it is quoted ("You must be logged
    in" is npm's error, and stays)."""
    for form in _forms(fold(text)):
        lower, plain = _Lower(form), form.isascii()
        if plain and not lower.admitted & _ASCII_ALWAYS_BITS:
            continue  # no form's gate admits it: none of their patterns can match
        for name, pattern, needs in _ASCII_ALWAYS if plain else _ALWAYS_GATED:
            if _may(needs, lower) and pattern.search(form):
                return name
    return None
