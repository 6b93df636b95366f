"""The key-value rule: a value after a key that names a secret, in every common syntax.

``DB_PASSWORD=…`` (env), ``password: …`` (YAML, headers), ``"api_key": "…"`` (JSON),
``--token …`` and ``--password=…`` (command-line flags), ``X-Api-Key: …``. The key decides the
placeholder (``<password>``, ``<token>``, ``<secret>``) and stays; code that merely *names* a
secret (``token = tokenizer.next()``, ``def f(password: str)``, ``f(secret=match)``) is left alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from commons.core.policy.rule import Kind, Marks, Rule, plain_value, secret_like

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
    helper class kind source mount ref prefix suffix separator regex pattern label marker
    placeholder example description help doc""".split()
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


KEY_VALUE = re.compile(
    r"""(?P<k>(?<![\w.\-])-{0,2}[A-Za-z_][\w.\-]{0,63})(?P<kq>["']?)"""
    r"""(?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)"""
    r"""(?:"(?P<v1>[^"\n]{1,256})"|'(?P<v2>[^'\n]{1,256})'|`(?P<v3>[^`\n]{1,256})`"""
    r"""|(?P<v4>[^\s"'`,;&<>(){}\[\]]{1,256}))"""
)
KV_STEMS = ("pass", "pwd", "secret", "token", "key", "cred", "auth", "sess", "sid")
_LINE_START = re.compile(r"(?:^|\n)[ \t\-#]*$")  # YAML, headers: "password: x" opens a line


_KEY_BACK = re.compile(r"[\w.\-]{0,64}\Z")
_STEM_TAIL = re.compile(r"[\w.\-]*(?P<w>)[\"']?[ \t]*(?P<sep>:=|=>|=|:)")
# A flag that takes its value after a space (--password X). The pattern opens with a literal so
# the regex engine skips to each "-"; the lookbehind then keeps only a word's first dash.
_FLAG = re.compile(r"-(?<=[\s\"'=(]-)-?(?P<k>[A-Za-z][\w.\-]*)[ \t]+[^\s\-]")


def _key_value_spans(marks: Marks) -> Iterator[tuple[int, int, Kind]]:
    # Each key holds a secret's stem; finding the stems with str.find and matching from the
    # key's start keeps the regex off the rest of the text.
    text = marks.text
    if marks.lower is None:
        marks = Marks(text.lower())  # positions only need to be close: the key is matched again
    starts = set()
    lower = marks.lower
    for stem in KV_STEMS:
        if lower is not None and stem not in lower:  # most texts hold one stem or none: no positions listed for the rest
            continue
        for i in marks.keyword(stem):
            tail = _STEM_TAIL.match(text, i)
            if tail is None:
                continue  # "tokenizer.next()", "the key point": no separator after the key
            ks = _KEY_BACK.search(text, max(0, i - 64), i).start()
            if _secret_key_kind(text[ks:tail.end("w")], tail.group("sep")) is None:
                continue  # "input_tokens": 12 names a count
            starts.add(ks)
    for m in _FLAG.finditer(("\n" + text) if text.startswith("-") else text):
        if _secret_key_kind(m.group("k"), " ") is not None:
            starts.add(m.start() - (1 if text.startswith("-") else 0))
    done = -1
    for ks in sorted(starts):
        if ks < done:
            continue
        m = KEY_VALUE.match(text, ks)
        if m is None:
            continue
        key, sep = m.group("k"), m.group("sep")
        kind = _secret_key_kind(key, sep.strip() or " ")
        if kind is None:
            continue
        group = next(g for g in ("v1", "v2", "v3", "v4") if m.group(g) is not None)
        value = m.group(group)
        if plain_value(value):
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
            if value.isalpha() and re.match(r"[ \t]+[a-z]", text[m.end():m.end() + 2]):
                continue  # prose about a flag: "the --username and --password options"
        elif bare == ":" and not (quoted or m.group("kq")):
            at_line_start = bool(_LINE_START.search(text, max(0, m.start() - 40), m.start()))
            if not secret_like(value):
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
    def bare(s: str) -> str:
        return re.sub(r"[\W_]+", "", s).lower()

    name = bare(key.rsplit(".", 1)[-1])
    # "serverAuth" for SERVER_AUTH, "my-client-secret" for client_secret: the value spells the key
    spelled = bool(name) and (name == bare(value) or (name in bare(value)
                                                        and not any(c.isdigit() for c in value)))
    return spelled or bool(_FILE_NAME.fullmatch(value))


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
