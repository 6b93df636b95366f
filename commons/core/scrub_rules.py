"""The scrubber's rules: which text is a secret or a personal detail, and what replaces it.

Each :class:`Rule` is a regular expression, the literal keywords without which it cannot match
(its prefilter), the group whose text is replaced (``v``; the rest of the match is context that
stays, so ``password=hunter2`` becomes ``password=<password>``) and an optional ``accept``
check that turns away look-alikes (a version ``1.2.3.4`` is not an address). Order matters:
where two rules claim overlapping text the earlier one wins, so specific formats come first.

Formats follow the public rule sets of gitleaks and detect-secrets (Yelp), written anew and
widened where agent sessions show secrets in other places (a password in prose, a Docker
``auth`` value, ``mysql -pSECRET``). docs/privacy.md says how to add a rule.
"""

from __future__ import annotations

import functools
import ipaddress
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
        groups = [g for g in self.pattern.groupindex if g.startswith("v")] or [0]
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
            found = self._anchors[pattern] = [m.start() for m in pattern.finditer(self.text)]
        return found


def token_start(text: str, p: int, cap: int = 256) -> int:
    """Where the whitespace-free run of ``text`` that holds position ``p`` begins (at most ``cap`` back)."""
    lo = max(0, p - cap)
    ws = max(text.rfind(" ", lo, p), text.rfind("\n", lo, p), text.rfind("\t", lo, p))
    return ws + 1 if ws >= 0 else lo


def _rule(name: str, kind: Kind, pattern: str, keywords: str = "", accept: Accept | None = None,
          flags: int = 0, anchors: tuple[str, ...] = (), before: int = 0, after: int | None = 512) -> Rule:
    return Rule(name, kind, re.compile(pattern, flags), tuple(keywords.split()), accept,
                tuple(re.compile(a) for a in anchors), before, after)


# --------------------------------------------------------------------------------------------
# Checks that turn look-alikes away


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values()) if s else 0.0


def _mixed(s: str) -> bool:
    """A key mixes digits and letters; a word or an identifier in code usually does not."""
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


def _mixed_value(m: re.Match[str]) -> bool:
    return _mixed(m.group("v"))


_NOT_A_VALUE = frozenset(
    """none null nil true false yes no undefined required optional empty redacted hidden masked
    changeme_not_set unset invalid expired missing wrong incorrect correct ok provided
    password passwd pass pwd pw secret token apikey api_key""".split()
)
_TEMPLATE = re.compile(r"^(?:\$|\{\{|%\(|#\{|\*{3,}|x{3,}$|\.{3}|<|~/|\[redacted|#[0-9a-f]{3,8}\b)", re.I)
_CODE_EXPR = re.compile(r"^[A-Za-z_][\w.]*\s*[(\[]|^(?:os|self|this|process|settings|config|env)\.")


def _plain_value(value: str) -> bool:
    """Whether ``value`` names no secret: empty, a word like "none", a template or code."""
    v = value.strip().strip("'\"`")
    return (len(v) < 3 or v.lower() in _NOT_A_VALUE or bool(_TEMPLATE.match(v))
            or bool(_CODE_EXPR.match(v)))


def _secret_like(value: str) -> bool:
    """A bare word in running text is a secret only if it looks like one."""
    return (len(value) >= 6 and (_mixed(value) or bool(re.search(r"[!@#$%^&*+=?]", value)))) or (
        len(value) >= 16 and entropy(value) >= 3.5)


# --------------------------------------------------------------------------------------------
# key = value, in every common syntax

_SECRET_WORDS = frozenset(
    "password passwd passphrase passcode pass secret token apikey apitoken authtoken auth "
    "credential credentials accesstoken refreshtoken sessiontoken clientsecret privatekey "
    "secretkey accesskey signingkey masterkey accountkey".split()
)
_SECRET_SUFFIXES = ("password", "passwd", "secret", "token", "apikey", "passphrase")
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"),
                           ("auth", "key"), ("account", "key"), ("client", "secret"),
                           ("signing", "key"), ("encryption", "key"), ("master", "key"),
                           ("db", "pwd"), ("mysql", "pwd"), ("sql", "pwd"), ("user", "pwd")})
# A key ending in one of these names something about the secret, not the secret itself.
_ABOUT_SECRET = frozenset(
    """file path dir url uri endpoint length len size count type name id ids env var field header
    hint policy prompt required expiry expires expiration ttl method mode format limit min max
    timeout enabled version cmd command reset stdin rotation strategy provider store manager
    helper class kind source mount ref""".split()
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _key_parts(key: str) -> list[str]:
    # In a dotted key the last segment names the value: "db.password" is one, "Token.Keyword"
    # (a syntax-highlighting style) is not.
    last = key.strip("-").rsplit(".", 1)[-1]
    return [p.lower() for p in re.split(r"[_\-]+", _CAMEL.sub("_", last)) if p]


_SESSION_KEYS = frozenset({"sessionid", "phpsessid", "jsessionid", "sid", "connectsid"})


@functools.lru_cache(maxsize=4096)  # keys repeat: the same few hundred names fill a session
def _secret_key_kind(key: str, sep: str = "=") -> Kind | None:
    parts = _key_parts(key)
    if "".join(parts) in _SESSION_KEYS:
        # a session cookie (sessionid=…) logs in whoever holds it; a "sessionId" field in a
        # JSON record names a conversation
        return Kind.TOKEN if sep == "=" else None
    if not parts or parts[-1] in _ABOUT_SECRET or "public" in parts:
        return None
    hit = [p for p in parts if p in _SECRET_WORDS or p.endswith(_SECRET_SUFFIXES)]
    pairs = [pair for pair in zip(parts, parts[1:]) if pair in _SECRET_PAIRS]
    if not hit and not pairs:
        return None
    joined = "".join(parts)
    if "pass" in joined or "pwd" in joined:
        return Kind.PASSWORD
    if "token" in joined or parts == ["auth"]:
        return Kind.TOKEN
    return Kind.SECRET


_KEY_VALUE = re.compile(
    r"""(?P<k>(?<![\w.\-])-{0,2}[A-Za-z_][\w.\-]{0,63})(?P<kq>["']?)"""
    r"""(?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)"""
    r"""(?:"(?P<v1>[^"\n]{1,256})"|'(?P<v2>[^'\n]{1,256})'|`(?P<v3>[^`\n]{1,256})`"""
    r"""|(?P<v4>[^\s"'`,;&<>(){}\[\]]{1,256}))"""
)
_KV_STEMS = ("pass", "pwd", "secret", "token", "key", "cred", "auth", "sess", "sid")
_LINE_START = re.compile(r"(?:^|\n)[ \t\-#]*$")  # YAML, headers: "password: x" opens a line


_KEY_BACK = re.compile(r"[\w.\-]{0,64}\Z")
_STEM_TAIL = re.compile(r"[\w.\-]*(?P<w>)[\"']?(?:[ \t]*(?P<sep>:=|=>|=|:)|(?P<space>[ \t]+)[^\s\-])")


def _key_value_spans(marks: Marks) -> Iterator[tuple[int, int, Kind]]:
    # Each key holds a secret's stem; finding the stems with str.find and matching from the
    # key's start keeps the regex off the rest of the text.
    text = marks.text
    if marks.lower is None:
        marks = Marks(text.lower())  # positions only need to be close: the key is matched again
    starts = set()
    for stem in _KV_STEMS:
        for i in marks.keyword(stem):
            tail = _STEM_TAIL.match(text, i)
            if tail is None:
                continue  # "tokenizer.next()", "the key point": no separator after the key
            ks = _KEY_BACK.search(text, max(0, i - 64), i).start()
            if tail.group("space") and not text.startswith("-", ks):
                continue  # a value after a space belongs to a command-line flag only
            if _secret_key_kind(text[ks:tail.end("w")], tail.group("sep") or " ") is None:
                continue  # "input_tokens": 12 names a count
            starts.add(ks)
    done = -1
    for ks in sorted(starts):
        if ks < done:
            continue
        m = _KEY_VALUE.match(text, ks)
        if m is None:
            continue
        key, sep = m.group("k"), m.group("sep")
        kind = _secret_key_kind(key, sep.strip() or " ")
        if kind is None:
            continue
        group = next(g for g in ("v1", "v2", "v3", "v4") if m.group(g) is not None)
        value = m.group(group)
        if _plain_value(value):
            continue
        quoted = group != "v4"
        if _names_itself(key, value) or (not quoted and _type_annotation(text, m, value)):
            continue
        if not quoted and text.startswith(("[", "(", "."), m.end()):
            continue  # "password=parts['password']", "auth=merge(auth)": code, not a literal
        bare = sep.strip()
        if not bare:  # "--password X": only a command-line flag takes its value after a space
            if not key.startswith("-") or value.startswith("-"):
                continue
        elif bare == ":" and not (quoted or m.group("kq")):
            at_line_start = bool(_LINE_START.search(text, max(0, m.start() - 40), m.start()))
            if not _secret_like(value):
                if not at_line_start or sep[0] in " \t":
                    continue  # prose: "unexpected token: IDENTIFIER"; "Pass :meth:"
                if value.isalpha() and re.match(r"[ \t]+[A-Za-z]", text[m.end():m.end() + 2]):
                    continue  # a docstring: "refresh_token: The refresh token to use."
        elif not quoted and re.fullmatch(r"[A-Za-z_][\w.]*", value) and (
                sep != "=" or not (key.isupper() or key.startswith("-") or any(c.isdigit() for c in value))):
            # code: "token = new_token", "f(secret=match)" pass a variable; an environment
            # assignment (POSTGRES_PASSWORD=mysecretpassword) or a flag sets a literal
            continue
        done = m.end()
        yield m.start(group), m.end(group), kind


_FILE_NAME = re.compile(r"[\w\-]+\.(?:key|pem|secret|json|txt|ya?ml|toml|env|crt|cer|p12|pfx|jks|gpg|asc|pub)")
_TYPE_NAMES = frozenset("str bytes int bool float bytearray object dict list tuple set any none".split())


def _names_itself(key: str, value: str) -> bool:
    """``AUTH = "await-client-auth"``, ``"hash_secret": "hash.secret"``: a name, not a secret."""
    v = value.lower().replace("-", "_").replace(".", "_")
    return v == key.strip("-").lower().replace("-", "_") or bool(_FILE_NAME.fullmatch(value))


def _type_annotation(text: str, m: re.Match[str], value: str) -> bool:
    """``token: TrioToken | None = …``, ``secret: bytes``: Python annotates, it assigns nothing."""
    if not m.group("sep").strip().startswith(":") or not re.fullmatch(r"[A-Za-z_][\w.]*", value):
        return False
    follows = text[m.end():m.end() + 3]
    if follows.startswith(("[", " |", " =", ",", ")")):
        return True
    if any(c.isdigit() for c in value):
        return False
    camel = value[0].isupper() and any(c.isupper() for c in value[1:]) and len(value) < 16
    return (value.lower() in _TYPE_NAMES or "." in value or camel
            or follows.startswith(("[", " |", " =", ",", ")")))


class KeyValueRule(Rule):
    """``key=value`` in env, YAML, JSON, CLI-flag and header syntax; the key decides the kind."""

    def spans(self, marks: Marks) -> Iterator[tuple[int, int, Kind]]:
        return _key_value_spans(marks)


# --------------------------------------------------------------------------------------------
# Addresses, numbers and paths

_VERSION_BEFORE = re.compile(r"(?:\bv|version\s*|[=<>~!]=|[\^@~]|\w-|python|node|go)\s*$", re.I)


def _ipv4(m: re.Match[str]) -> bool:
    octets = [int(o) for o in m.group("v").split(".")]
    if all(o < 10 for o in octets):
        return False  # 1.2.3.4 and 8.8.8.8: a version, or a public resolver that names no one
    if octets[0] in (0, 127, 255):
        return False  # 0.0.0.0, loopback and netmasks: the same on every machine
    if octets[:3] in ([192, 0, 2], [198, 51, 100], [203, 0, 113]):
        return False  # RFC 5737 documentation ranges: examples, never anyone's host
    before = m.string[max(0, m.start() - 12):m.start()]
    return not _VERSION_BEFORE.search(before)


def _ipv6(m: re.Match[str]) -> bool:
    raw = m.group("v").split("%")[0]
    if not any(c.isdigit() for c in raw) or sum(1 for g in raw.split(":") if g) < 2:
        return False  # "dead::beef", "a[::2]": code, not an address
    try:
        addr = ipaddress.IPv6Address(raw)
    except ValueError:
        return False  # 10:15:30 is a time, aa:bb:cc a fragment
    return not (addr.is_loopback or addr.is_unspecified)


def _phone(m: re.Match[str]) -> bool:
    v = m.group("v")
    if (re.fullmatch(r"\+\d+\.\d+", v) or re.match(r"\+\d{4}-\d\d-\d\d", v)
            or m.string.startswith(("j", "e", "E"), m.end())):
        return False  # +4.0614962j, +1.5e10: numbers in code and output
    return 8 <= sum(c.isdigit() for c in v) <= 15


_NOT_MAIL_TLDS = frozenset("png jpg jpeg gif svg webp js ts py css json lock md txt html".split())


def _email(m: re.Match[str]) -> bool:
    local, _, domain = m.group("v").partition("@")
    return local.lower() != "git" and domain.rsplit(".", 1)[-1].lower() not in _NOT_MAIL_TLDS


_CODE_NAMES = frozenset("threading self this window thread asyncio contextvars werkzeug flask "
                        "django request g app ctx version parsed prospective first last lower upper "
                        "value obj config settings spec item node py path os".split())
_CODE_AFTER = re.compile(r"\s*(?:is\b|==|!=|=[^=]|\(|\)|,|\]|\[)")


def _internal_host(m: re.Match[str]) -> bool:
    labels = m.group("v").split(".")
    if labels[0].lower() in _CODE_NAMES or any("_" in label for label in labels):
        return False  # host names have no underscores; "version.local" is an attribute
    return not _CODE_AFTER.match(m.string, m.end())


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_.]*")  # no digits: a name in code, not a secret
_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _prose_secret(m: re.Match[str]) -> bool:
    value = m.group("v")
    if value.upper() in ("YES", "NO") or _plain_value(value):
        return False  # MySQL's "(using password: YES)" says whether one was given, not which
    if "." in value and _IDENTIFIER.fullmatch(value):
        return False  # "token is Token.Name.Function": code
    return bool(m.group("q")) or _secret_like(value)


def _bearer(m: re.Match[str]) -> bool:
    value = m.group("v").rstrip("})]")
    if _plain_value(value) or _SNAKE.fullmatch(value):
        return False  # "'Authorization': v4auth_header}" names a variable
    return _mixed(value) or entropy(value) >= 3.0


def _not_plain(m: re.Match[str]) -> bool:
    return not _plain_value(m.group("v"))


# --------------------------------------------------------------------------------------------
# The rules, most specific first

_V = r"(?P<v>{})"
RULES: tuple[Rule, ...] = (
    _rule("pem-private-key", Kind.PRIVATE_KEY,
          r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?"
          r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?=\"\s*[,}])|\Z)",
          "private", flags=re.S, before=40, after=None),
    _rule("github", Kind.GITHUB_TOKEN,
          r"\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
          anchors=(r"gh[pousr]_", r"github_pat_")),
    _rule("gitlab", Kind.GITLAB_TOKEN,
          r"\bgl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent|oas)-[A-Za-z0-9_\-]{20,}",
          anchors=(r"gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent|oas)-",)),
    _rule("aws-access-key-id", Kind.AWS_KEY,
          r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])"
          r"[A-Z0-9]{16}(?![A-Z0-9])", anchors=(r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA|3T)[A-Z0-9]{16}",)),
    _rule("gcp-api-key", Kind.GCP_KEY, r"\bAIza[0-9A-Za-z_\-]{35}(?![\w\-])", anchors=(r"AIza",)),
    _rule("slack-webhook", Kind.SLACK_WEBHOOK,
          r"hooks\.slack\.com/(?:services|workflows|triggers)/" + _V.format(r"[A-Za-z0-9_/\-]{16,}"),
          "hooks.slack.com"),
    _rule("slack-token", Kind.SLACK_TOKEN,
          r"\bxox[abposre]-[A-Za-z0-9\-]{10,}|\bxapp-\d-[A-Za-z0-9\-]{10,}", anchors=(r"x(?:ox[abposre]|app)-",)),
    _rule("stripe", Kind.STRIPE_KEY, r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}|\bwhsec_[A-Za-z0-9]{20,}",
          "_live_ _test_ whsec_"),
    _rule("anthropic", Kind.ANTHROPIC_KEY, r"\bsk-ant-[A-Za-z0-9_\-]{16,}", "sk-"),
    _rule("openai", Kind.OPENAI_KEY,
          r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", "sk-",
          lambda m: _mixed(m.group(0))),  # a long hyphenated name is not a key
    _rule("huggingface", Kind.HUGGINGFACE_TOKEN, r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,}\b", anchors=(r"hf_", r"api_org_")),
    _rule("npm", Kind.NPM_TOKEN, r"\bnpm_[A-Za-z0-9]{30,}\b", "npm_"),
    _rule("pypi", Kind.PYPI_TOKEN, r"\bpypi-AgE[A-Za-z0-9_\-]{20,}|\bpypi-[A-Za-z0-9_\-]{50,}", "pypi-"),
    _rule("docker-hub", Kind.DOCKER_TOKEN, r"\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}", "dckr_"),
    _rule("sendgrid", Kind.SENDGRID_KEY, r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}", anchors=(r"SG\.",)),
    _rule("twilio", Kind.TWILIO_KEY, r"\b(?:SK|AC)[0-9a-fA-F]{32}\b",
          anchors=(r"SK[0-9a-fA-F]{8}", r"AC[0-9a-fA-F]{8}")),
    _rule("vendor-token", Kind.TOKEN,
          r"\b(?:ya29\.[A-Za-z0-9_\-]{20,}|dop_v1_[a-f0-9]{64}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"
          r"|glc_[A-Za-z0-9+/]{32,}|lin_api_[A-Za-z0-9]{40}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}"
          r"|AGE-SECRET-KEY-1[0-9A-Z]{58})",
          "ya29. dop_v1_ shp glc_ lin_api_ sq0 age-secret-key-"),
    _rule("jwt", Kind.JWT, r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", anchors=(r"eyJ",)),
    _rule("docker-auth", Kind.DOCKER_AUTH,
          r"""(?i)["']?(?:auth|identitytoken|registrytoken)["']?\s*:\s*["']"""
          + _V.format(r"[A-Za-z0-9+/=_\-.]{8,}") + "[\"']",
          anchors=(r"auth[\"']?\s*:\s*[\"']", r"oken[\"']?\s*:\s*[\"']"), before=16, after=600),
    _rule("azure-key", Kind.AZURE_KEY,
          r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecret)\s*=\s*" + _V.format(r"[A-Za-z0-9+/=]{16,}")
          + r"|\bSharedAccessSignature\s*=\s*(?P<v_sas>[^;\s\"']+)|[?&]sig=(?P<v_sig>[A-Za-z0-9%+/=]{16,})",
          "accountkey sharedaccess sharedsecret sig="),
    _rule("aws-secret-access-key", Kind.AWS_SECRET,
          r"(?i)(?:aws[\w .\-]{0,20}?secret|secret[ _\-]?access[ _\-]?key)[\w .\-\[\]\"']{0,24}?"
          r"[=:\s]\s*[\"']?" + _V.format(r"[A-Za-z0-9/+]{40}") + r"(?![A-Za-z0-9/+=])",
          "secret", _mixed_value, before=30, after=200),
    _rule("url-credentials", Kind.PASSWORD,
          r"\b[a-z][a-z0-9+.\-]*://[^\s/:@<>\"']*:" + _V.format(r"[^\s/<>\"']+") + "@", "://",
          _not_plain),
    _rule("authorization-header", Kind.TOKEN,
          r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
          r"(?:(?:bearer|basic|token|digest|bot|apikey|sso-key|negotiate)\s+)?"
          + _V.format(r"[^\s\"',<]{6,}"), "authorization", _bearer, before=8),
    _rule("bearer", Kind.TOKEN, r"(?i)\bbearer\s+" + _V.format(r"[A-Za-z0-9._~+/\-]{12,}=*"),
          "bearer", _bearer),
    _rule("mysql-attached-password", Kind.PASSWORD,
          r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p" + _V.format(r"[^\s'\"]+"), "mysql mariadb",
          after=2000),
    _rule("sshpass", Kind.PASSWORD, r"\bsshpass\s+-p\s*['\"]?" + _V.format(r"[^\s'\"]+"), "sshpass"),
    _rule("curl-user", Kind.PASSWORD,
          r"\b(?:curl|wget|http)\b[^\n|;]*?\s(?:-u|--user)\s*['\"]?[^\s:'\"]+:" + _V.format(r"[^\s'\"@]+"),
          "curl wget", _not_plain, after=2000),
    _rule("netrc", Kind.PASSWORD, r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+" + _V.format(r"\S+"),
          "machine", _not_plain,
          after=600),
    KeyValueRule("key-value", Kind.SECRET, _KEY_VALUE, _KV_STEMS),
    _rule("password-in-prose", Kind.PASSWORD,
          r"(?i)\b(?:(?:password|passphrase|passcode|secret|token|api key|access key)\s+"
          r"(?:is|was|is now|is set to|was set to|should be|to|of|as|->)"
          r"|(?:using|with|use|try)\s+(?:the\s+)?(?:password|passphrase)\s*:?)\s+"
          r"(?P<q>[\"'`]?)" + _V.format(r"[^\s\"'`]+?") + r"(?P=q)(?=[.,;:)]?(?:\s|$))",
          "password passphrase passcode", _prose_secret, before=24, after=200,
          # anchors open with a literal, which the regex engine finds fast
          anchors=tuple(rf"{w}\s+(?:is|was|should|to|of|as|->)\s" for w in ("ecret", "oken", "key", "Key"))),
    _rule("email", Kind.EMAIL,
          _V.format(r"\b[A-Za-z0-9._%+\-]+@(?:[A-Za-z0-9\-]+\.)+[A-Za-z]{2,}\b"), "@", _email),
    _rule("user-at-host", Kind.USER_AT_HOST,
          r"(?<![\w.@\-])" + _V.format(r"[a-z_][a-z0-9_\-]{0,31}@[A-Za-z0-9][\w\-]*(?:\.[\w\-]+)*")
          + r"(?=:\s?[~/])", "@"),
    _rule("home-path", Kind.HOME,
          r"(?<![\w.\-])" + _V.format(r"/(?:home|Users|var/home)/[^/\s'\"`:;,()<>\[\]{}|*?\\]+"),
          anchors=(r"/home/", r"/Users/"), after=300),
    _rule("home-path-windows", Kind.HOME,
          _V.format(r"(?i:\b[a-z]:(?:\\\\|\\|/)(?:users|documents and settings)(?:\\\\|\\|/))"
                    r"[^\\/\s'\"`:;,<>|*?]+"),
          anchors=(r":[\\/]+(?:[Uu]sers|Documents and Settings)[\\/]",), before=24, after=300),
    _rule("home-path-tilde", Kind.HOME, r"(?<![\w~/])" + _V.format(r"~[a-z_][a-z0-9_\-]*") + r"(?=/)",
          anchors=(r"~[a-z_]",), after=64),
    _rule("ipv6", Kind.IP,
          r"(?<![\w:.])" + _V.format(r"(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%[\w.]+)?")
          + r"(?![\w:])", "", _ipv6,
          # "::" or four colons: a time (10:15:30) has two and never wakes the rule
          anchors=(r"::", r":[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:"), after=60),
    _rule("ipv4", Kind.IP,
          r"(?<![\w.])" + _V.format(r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}")
          + r"(?!\.?\d|\w)", "", _ipv4, anchors=(r"\.\d{1,3}\.\d{1,3}\.\d",), after=20),
    _rule("phone", Kind.PHONE,
          r"(?<![\w+.\-/])" + _V.format(
              r"\+[1-9]\d{0,2}(?:[ .\-]?\(?\d{1,4}\)?){2,5}"
              r"|\(\d{3}\)[ ]?\d{3}[ .\-]\d{4}|\d{3}-\d{3}-\d{4}|\d{3}\.\d{3}\.\d{4}")
          + r"(?![\w.\-]?\d)", "", _phone,
          anchors=(r"\+[1-9]", r"\(\d{3}\) ?\d{3}[ .\-]\d{4}", r"-\d{3}-\d{4}", r"\.\d{3}\.\d{4}"), after=30),
    _rule("internal-host", Kind.HOST,
          r"(?i)(?<![\w.\-@/])" + _V.format(
              r"(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+"
              r"(?:internal|local|lan|intranet|corp|localdomain|home\.arpa)")
          + r"(?![\w\-(]|\.[a-z])", "",
          _internal_host, anchors=(r"\.(?:internal|local|lan|intranet|corp|home\.arpa)\b",)),
)
