"""Regenerate protocol/vectors/records.json: record encoding, id and signature test vectors.

    .venv/bin/python protocol/vectors/generate_records.py          # rewrite the file
    .venv/bin/python protocol/vectors/generate_records.py --check  # exit 1 if it is out of date

Every input is fixed (keys are Ed25519 seeds derived from labels with SHA-256, the receiver's day is
a constant), so the output is byte-for-byte stable; tests/conformance/test_records_vectors.py fails
when the file and this script disagree. Each invalid case has exactly one defect: a body that is
built wrong on purpose is still hashed and signed correctly by its author, so that the flag names
the one thing a receiver must catch. The script refuses to write a case that commons' own
``verify`` judges differently from what the case says.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path
from typing import Any

# Run as a plain script from a checkout: make the repository's `commons` importable without install.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.vectors.vectorfile import command, regenerate  # noqa: E402

import msgpack
import nacl.signing
from blake3 import blake3

from commons.core.records.hashing import episode_hash, evidence_hash
from commons.core.records import (
    MAX_FIX_STEP_BYTES,
    MAX_FIX_TOOL_BYTES,
    Fix,
    FixSeen,
    MAX_BODY_BYTES,
    MAX_PARENTS,
    MAX_TOPIC_BYTES,
    MAX_TOPICS,
    InvalidRecord,
    Lesson,
    LessonKind,
    Outcome,
    Prediction,
    Problem,
    RecordType,
    Revocation,
    Scope,
    TargetKind,
    Verification,
    Vouch,
    encode_body,
    verify,
)

VECTORS_PATH = Path(__file__).with_name("records.json")
REGENERATE = command(Path(__file__))

COMMENT = (
    "Record vectors for commons (spec: protocol/PROTOCOL.md). Keys are Ed25519 key pairs from 32-byte "
    "seeds: seed = SHA-256('commons record vector <name>') for the names 'author' and 'other'; keyed hashes use the secret SHA-256('commons record vector secret'). Every case is "
    "judged by a receiver on network network_key_hex whose current UTC day is `today`, as if the sender "
    "had named id_hex as the record's id. body_hex is the record body as sent; signed_message_hex is "
    "'commons/v1/' || type || '\\n' (signing[type] for the four known types) || BLAKE3-256(body), the "
    "true id, and signature_hex is the author's Ed25519 signature over it unless the comment says "
    "otherwise. public_key_hex is the author key named in the body. Each invalid case has exactly one "
    "defect, and flags holds the one Problem a receiver reports for it; a body built wrong on purpose "
    "is still hashed and signed correctly, so only that defect can refuse it. keyed_hashes are BLAKE3 "
    "keyed-mode hashes (key = secret) of domain || 0x00 || data. Regenerate with: " + REGENERATE
)

NETWORK_KEY = bytes.fromhex("c0ffee5eed0c0a1a" * 4)  # the public commons (commons.config.DEFAULT_NETWORK_KEY)
OTHER_NETWORK_KEY = hashlib.sha256(b"commons record vector other network").digest()
TODAY = 20000  # 2024-10-04, the receiver's day for every case
CREATED = TODAY - 3


def _seed(name: str) -> bytes:
    return hashlib.sha256(f"commons record vector {name}".encode()).digest()


AUTHOR = nacl.signing.SigningKey(_seed("author"))
OTHER = nacl.signing.SigningKey(_seed("other"))
SECRET = _seed("secret")
AUTHOR_PK = bytes(AUTHOR.verify_key)
OTHER_PK = bytes(OTHER.verify_key)
# The order of the Ed25519 group: S + L is the same signature in a malleable, non-canonical form.
ED25519_L = 2**252 + 27742317777372353535851937790883648493


def _id(label: str) -> bytes:
    """A stand-in record id (a parent, a revoked record): any 32 bytes will do."""
    return blake3(f"commons record vector id {label}".encode()).digest()


EPISODES = tuple(sorted(episode_hash(SECRET, f"episode-{i}") for i in range(16)))
PARENTS = tuple(sorted(_id(f"parent-{i}") for i in range(MAX_PARENTS)))


# --- bodies built by hand ----------------------------------------------------------------------


class Map(list):
    """An ordered msgpack map as (key, value) pairs, so that order and repeats can be chosen."""


class Raw(bytes):
    """Bytes that go into a body as they are: a value encoded some non-canonical way."""


def pack(value: Any, *, map16: bool = False) -> bytes:
    """msgpack in shortest form, except where a Raw value or map16 asks for another."""
    if isinstance(value, Raw):
        return bytes(value)
    if isinstance(value, Map):
        head = b"\xde" + struct.pack(">H", len(value)) if map16 or len(value) > 15 else bytes([0x80 | len(value)])
        return head + b"".join(pack(k) + pack(v) for k, v in value)
    if isinstance(value, list):
        head = b"\xdc" + struct.pack(">H", len(value)) if len(value) > 15 else bytes([0x90 | len(value)])
        return head + b"".join(pack(v) for v in value)
    return msgpack.packb(value, use_bin_type=True)


def pairs(record: Any) -> Map:
    """A valid record's body as an editable Map."""
    return msgpack.unpackb(encode_body(record), object_pairs_hook=Map, raw=False)


def replaced(body: Map, key: str, value: Any) -> Map:
    return Map((k, value if k == key else v) for k, v in body)


def raw_str(data: bytes) -> Raw:
    """A msgpack str holding arbitrary bytes (which need not be UTF-8)."""
    return Raw(bytes([0xA0 | len(data)]) + data if len(data) < 32 else b"\xd9" + bytes([len(data)]) + data)


# --- the records the cases start from ----------------------------------------------------------


def lesson(**changes: Any) -> Lesson:
    fields: dict[str, Any] = dict(
        network=NETWORK_KEY,
        author=AUTHOR_PK,
        created=CREATED,
        kind=LessonKind.ERROR,
        text="pip install fails on Python 3.13 with numpy<2: no wheel, and the source build needs a compiler.",
        scope=Scope.SHARED,
        topics=("numpy", "pip", "python"),
        prediction=Prediction("pip install numpy<2 on Python 3.13", "the build fails for want of a C compiler"),
    )
    fields.update(changes)
    return Lesson(**fields)


def largest_lesson(**changes: Any) -> Lesson:
    """A lesson with every field at its limit."""
    return lesson(
        text="é" * 200,
        topics=tuple(chr(ord("a") + i) * MAX_TOPIC_BYTES for i in range(MAX_TOPICS)),
        prediction=Prediction("s" * 200, "o" * 200),
        parents=PARENTS,
        episodes=EPISODES,
        supersedes=_id("earlier version"),
        kind=LessonKind.CORRECTION,
        **changes,
    )


def verification(**changes: Any) -> Verification:
    lesson_id = _id("verified lesson")
    fields: dict[str, Any] = dict(
        network=NETWORK_KEY,
        author=AUTHOR_PK,
        created=CREATED,
        lesson=lesson_id,
        outcome=Outcome.CONFIRMED,
        evidence=evidence_hash(SECRET, lesson_id, "episode-7"),
        received=CREATED - 10,
        observed=CREATED - 2,
        naive=True,
    )
    fields.update(changes)
    return Verification(**fields)


def revocation(**changes: Any) -> Revocation:
    fields: dict[str, Any] = dict(
        network=NETWORK_KEY,
        author=AUTHOR_PK,
        created=CREATED,
        target=_id("poisoned lesson"),
        target_kind=TargetKind.RECORD,
        reason="the lesson tells agents to disable TLS verification",
    )
    fields.update(changes)
    return Revocation(**fields)


def vouch(**changes: Any) -> Vouch:
    fields: dict[str, Any] = dict(network=NETWORK_KEY, author=AUTHOR_PK, created=CREATED, subject=OTHER_PK)
    fields.update(changes)
    return Vouch(**fields)


# --- cases -------------------------------------------------------------------------------------


def domain_tag(type_name: str) -> bytes:
    return f"commons/v1/{type_name}\n".encode()


class Cases:
    def __init__(self) -> None:
        self.tests: list[dict[str, Any]] = []

    def add(
        self,
        comment: str,
        body: Any,
        flag: Problem | None = None,
        *,
        type_name: str | None = None,
        signer: nacl.signing.SigningKey = AUTHOR,
        public_key: bytes = AUTHOR_PK,
        claimed_id: bytes | None = None,
        signature: bytes | None = None,
    ) -> None:
        """One case: body is a record (encoded canonically), a Map (packed) or bytes (as they are)."""
        if isinstance(body, (Lesson, Verification, Revocation, Vouch)):
            type_name = type_name or body.type.value
            body = encode_body(body)
        elif isinstance(body, Map):
            type_name = type_name or dict(body)["type"]
            body = pack(body)
        assert type_name is not None, comment
        rid = blake3(body).digest()
        message = domain_tag(type_name) + rid
        if signature is None:
            signature = signer.sign(message).signature
        case = {
            "tcId": len(self.tests) + 1,
            "comment": comment,
            "type": type_name,
            "body_hex": body.hex(),
            "id_hex": (claimed_id or rid).hex(),
            "public_key_hex": public_key.hex(),
            "signed_message_hex": message.hex(),
            "signature_hex": signature.hex(),
            "result": "valid" if flag is None else "invalid",
            "flags": [] if flag is None else [flag.value],
        }
        _check_against_commons(case)
        self.tests.append(case)


def _check_against_commons(case: dict[str, Any]) -> None:
    try:
        verify(
            bytes.fromhex(case["body_hex"]),
            bytes.fromhex(case["signature_hex"]),
            network=NETWORK_KEY,
            today=TODAY,
            claimed_id=bytes.fromhex(case["id_hex"]),
        )
        flags: list[str] = []
    except InvalidRecord as error:
        flags = [error.problem.value]
    if flags != case["flags"]:
        raise SystemExit(f"case {case['tcId']} ({case['comment']}): commons says {flags}, the case {case['flags']}")


def valid_cases(c: Cases) -> None:
    c.add("lesson: no parents, no episodes, supersedes nil", lesson())
    c.add(
        "lesson: parents, episodes and supersedes set",
        lesson(parents=PARENTS[:2], episodes=EPISODES[:3], supersedes=_id("earlier version"), kind=LessonKind.CORRECTION),
    )
    c.add("lesson: kind insight, scope local", lesson(kind=LessonKind.INSIGHT, scope=Scope.LOCAL))
    c.add("lesson: no topics", lesson(topics=()))
    c.add("lesson: text exactly 400 bytes (str16)", lesson(text="a" * 400))
    c.add("lesson: text of 1 byte", lesson(text="."))
    c.add(
        "lesson: text exactly 400 bytes of 3-byte CJK plus one ASCII byte",
        lesson(text="依" * 133 + "x"),
    )
    c.add(
        "lesson: accents (NFC), CJK and emoji in text, topics and prediction",
        lesson(
            text="Ça marche: `café` ≠ `cafe`; 日本語のパスで失敗する 🚀👩‍💻",
            topics=("café", "日本語", "🐍"),
            prediction=Prediction("ファイル名に絵文字 📁", "l'outil échoue"),
        ),
    )
    c.add("lesson: newline is the one control character allowed", lesson(text="first line\nsecond line"))
    c.add(
        "lesson: U+2028 LINE SEPARATOR is not a control character (category Zl)",
        lesson(text="one\u2028two"),
    )
    c.add(
        "lesson: 8 topics of exactly 40 bytes",
        lesson(topics=tuple(chr(ord("a") + i) * MAX_TOPIC_BYTES for i in range(MAX_TOPICS))),
    )
    c.add("lesson: topics sorted by code point (uppercase before lowercase)", lesson(topics=("Zsh", "bash", "zsh")))
    c.add("lesson: 16 parents (array16) and 16 episodes", lesson(parents=PARENTS, episodes=EPISODES))
    c.add("lesson: 15 parents (the largest fixarray)", lesson(parents=PARENTS[:15]))
    c.add("lesson: prediction parts of exactly 200 bytes", lesson(prediction=Prediction("s" * 200, "é" * 100)))
    c.add("lesson: the largest body (every field at its limit; a uint32 created day would add 2 bytes)",
          largest_lesson())
    c.add("lesson: created tomorrow (today + 1) is within the tolerance", lesson(created=TODAY + 1))
    c.add("lesson: created day 0 (1970-01-01, positive fixint)", lesson(created=0))
    c.add("lesson: created day 200 (uint8)", lesson(created=200))
    c.add("verification: confirmed, naive", verification())
    c.add("verification: failed, not naive (a corroboration)", verification(outcome=Outcome.FAILED, naive=False))
    c.add(
        "verification: received, observed and created on the same day",
        verification(received=CREATED, observed=CREATED),
    )
    c.add("revocation: of a record", revocation())
    c.add(
        "revocation: of a key, reason exactly 280 bytes",
        revocation(target=OTHER_PK, target_kind=TargetKind.KEY, reason="r" * 279 + "\n"),
    )
    c.add("vouch: for another key", vouch())


def signature_cases(c: Cases) -> None:
    good = lesson()
    good_sig = bytearray(AUTHOR.sign(domain_tag("lesson") + blake3(encode_body(good)).digest()).signature)
    flipped = bytes(good_sig[:10]) + bytes([good_sig[10] ^ 1]) + bytes(good_sig[11:])
    c.add("bad signature: one bit of R flipped", good, Problem.BAD_SIGNATURE, signature=flipped)
    flipped_s = bytes(good_sig[:40]) + bytes([good_sig[40] ^ 0x80]) + bytes(good_sig[41:])
    c.add("bad signature: one bit of S flipped", good, Problem.BAD_SIGNATURE, signature=flipped_s)
    c.add("bad signature: 64 zero bytes", good, Problem.BAD_SIGNATURE, signature=bytes(64))
    c.add("bad signature: truncated to 63 bytes", good, Problem.BAD_SIGNATURE, signature=bytes(good_sig[:63]))
    s = int.from_bytes(good_sig[32:], "little") + ED25519_L
    c.add(
        "bad signature: malleable S + L (non-canonical S must be refused)",
        good,
        Problem.BAD_SIGNATURE,
        signature=bytes(good_sig[:32]) + s.to_bytes(32, "little"),
    )
    c.add("wrong key: a lesson naming the author, signed by another key", good, Problem.BAD_SIGNATURE, signer=OTHER)
    c.add("wrong key: a vouch naming the author, signed by its subject", vouch(), Problem.BAD_SIGNATURE, signer=OTHER)
    body = encode_body(good)
    c.add(
        "bad signature: over the id alone, without the domain tag",
        good,
        Problem.BAD_SIGNATURE,
        signature=AUTHOR.sign(blake3(body).digest()).signature,
    )
    c.add(
        "bad signature: over the body instead of tag || id",
        good,
        Problem.BAD_SIGNATURE,
        signature=AUTHOR.sign(body).signature,
    )
    ver = verification()
    c.add(
        "bad signature: a verification signed under the lesson domain tag",
        ver,
        Problem.BAD_SIGNATURE,
        signature=AUTHOR.sign(domain_tag("lesson") + blake3(encode_body(ver)).digest()).signature,
    )


def structure_cases(c: Cases) -> None:
    body = encode_body(lesson())
    c.add("truncated: last byte missing", body[:-1], Problem.MALFORMED, type_name="lesson")
    c.add("truncated: half the body", body[: len(body) // 2], Problem.MALFORMED, type_name="lesson")
    c.add("malformed: empty body", b"", Problem.MALFORMED, type_name="lesson")
    c.add("malformed: an array, not a map", pack(list(v for _, v in pairs(vouch()))), Problem.MALFORMED, type_name="vouch")
    c.add("malformed: an empty map", b"\x80", Problem.MALFORMED, type_name="lesson")
    c.add("malformed: the reserved byte 0xc1", b"\xc1", Problem.MALFORMED, type_name="lesson")
    c.add(
        "malformed: created is an ext value (fixext4, timestamp)",
        replaced(pairs(lesson()), "created", Raw(b"\xd6\xff" + struct.pack(">I", CREATED * 86400))),
        Problem.MALFORMED,
    )
    c.add(
        "malformed: prediction is an array, not a map",
        replaced(pairs(lesson()), "prediction", ["situation", "outcome"]),
        Problem.MALFORMED,
    )
    c.add("trailing bytes: one zero byte after the body", body + b"\x00", Problem.TRAILING_BYTES, type_name="lesson")
    c.add("trailing bytes: the body twice", body + body, Problem.TRAILING_BYTES, type_name="lesson")

    base = pairs(lesson())
    c.add("non-canonical integer: v as uint8 (0xcc 0x01)", replaced(base, "v", Raw(b"\xcc\x01")), Problem.NON_CANONICAL)
    c.add(
        "non-canonical integer: created as uint32 where uint16 fits",
        replaced(base, "created", Raw(b"\xce" + struct.pack(">I", CREATED))),
        Problem.NON_CANONICAL,
    )
    c.add(
        "non-canonical integer: created 100 as uint16 where a fixint fits",
        replaced(pairs(lesson(created=100)), "created", Raw(b"\xcd\x00\x64")),
        Problem.NON_CANONICAL,
    )
    c.add("non-canonical map: map16 header for the 13-entry body", Raw(pack(base, map16=True)), Problem.NON_CANONICAL, type_name="lesson")
    prediction = prediction_of(base)
    c.add(
        "non-canonical map: map16 header for the prediction",
        replaced(base, "prediction", Raw(pack(prediction, map16=True))),
        Problem.NON_CANONICAL,
    )
    c.add(
        "non-canonical string: text as str8 where a fixstr fits",
        replaced(pairs(lesson(text="short")), "text", Raw(b"\xd9\x05short")),
        Problem.NON_CANONICAL,
    )
    c.add(
        "non-canonical string: the key 'type' as str16",
        Map([(Raw(b"\xda\x00\x04type"), "lesson")] + base[1:]),
        Problem.NON_CANONICAL,
        type_name="lesson",
    )
    c.add(
        "non-canonical bytes: author as bin16",
        replaced(base, "author", Raw(b"\xc5\x00\x20" + AUTHOR_PK)),
        Problem.NON_CANONICAL,
    )
    c.add(
        "non-canonical array: topics as array16 with 3 entries",
        replaced(base, "topics", Raw(b"\xdc\x00\x03" + b"".join(pack(t) for t in ("numpy", "pip", "python")))),
        Problem.NON_CANONICAL,
    )
    c.add("non-canonical array: topics not sorted", replaced(base, "topics", ["pip", "numpy"]), Problem.NON_CANONICAL)
    c.add("non-canonical array: a topic repeated", replaced(base, "topics", ["pip", "pip"]), Problem.NON_CANONICAL)
    c.add(
        "non-canonical array: parents not sorted",
        replaced(base, "parents", [PARENTS[1], PARENTS[0]]),
        Problem.NON_CANONICAL,
    )
    c.add("duplicate key: text twice", Map(base[:6] + [("text", "again")] + base[6:]), Problem.DUPLICATE_KEY)
    c.add(
        "duplicate key: situation twice in the prediction",
        replaced(base, "prediction", Map(prediction + [("situation", "again")])),
        Problem.DUPLICATE_KEY,
    )
    c.add(
        "bad field: keys reordered (text before kind)",
        Map(base[:4] + [base[5], base[4]] + base[6:]),
        Problem.BAD_FIELD,
    )
    c.add("bad field: supersedes missing instead of nil", Map(k for k in base if k[0] != "supersedes"), Problem.BAD_FIELD)
    c.add("bad field: an extra key", Map(base[:-1] + [("extra", 1)] + base[-1:]), Problem.BAD_FIELD)


def value_cases(c: Cases) -> None:
    base = pairs(lesson())
    c.add("oversize: text of 401 bytes", replaced(base, "text", "a" * 401), Problem.OVERSIZE)
    c.add("oversize: text of 134 CJK characters (402 bytes)", replaced(base, "text", "依" * 134), Problem.OVERSIZE)
    c.add("oversize: a topic of 41 bytes", replaced(base, "topics", ["t" * 41]), Problem.OVERSIZE)
    c.add("oversize: 9 topics", replaced(base, "topics", [f"topic{i}" for i in range(9)]), Problem.OVERSIZE)
    c.add("oversize: 17 parents", replaced(base, "parents", sorted(_id(f"p{i}") for i in range(17))), Problem.OVERSIZE)
    c.add(
        "oversize: 17 episodes",
        replaced(base, "episodes", sorted(episode_hash(SECRET, f"e{i}") for i in range(17))),
        Problem.OVERSIZE,
    )
    c.add(
        "oversize: prediction situation of 201 bytes",
        replaced(base, "prediction", Map([("situation", "s" * 201), ("outcome", "o")])),
        Problem.OVERSIZE,
    )
    c.add("oversize: reason of 281 bytes", replaced(pairs(revocation()), "reason", "r" * 281), Problem.OVERSIZE)
    # Text is at most 400 bytes, so no valid record comes near MAX_BODY_BYTES; this body is built to
    # be one byte over it, with the 3-byte str16 header of a long text.
    text_bytes = MAX_BODY_BYTES + 1 - (len(pack(replaced(base, "text", ""))) - 1 + 3)
    c.add("oversize: a body of 4097 bytes", replaced(base, "text", "a" * text_bytes), Problem.OVERSIZE)
    c.add("unknown version: v 3", replaced(base, "v", 3), Problem.UNKNOWN_VERSION)
    c.add("unknown version: v 0", replaced(pairs(vouch()), "v", 0), Problem.UNKNOWN_VERSION)
    c.add("unknown type: 'poll'", replaced(pairs(vouch()), "type", "poll"), Problem.UNKNOWN_TYPE)
    c.add("unknown type: 'Lesson' (types are lowercase)", replaced(base, "type", "Lesson"), Problem.UNKNOWN_TYPE)
    c.add("id mismatch: the id of another record", lesson(), Problem.ID_MISMATCH, claimed_id=_id("another"))
    wrong = bytearray(blake3(encode_body(lesson())).digest())
    wrong[31] ^= 1
    c.add("id mismatch: the true id with its last bit flipped", lesson(), Problem.ID_MISMATCH, claimed_id=bytes(wrong))
    c.add("not NFC: e + U+0301 COMBINING ACUTE in text", replaced(base, "text", "cafe\u0301"), Problem.NOT_NFC)
    c.add("not NFC: U+212B ANGSTROM SIGN in a topic", replaced(base, "topics", ["\u212b"]), Problem.NOT_NFC)
    c.add("not NFC: U+2126 OHM SIGN in a reason", replaced(pairs(revocation()), "reason", "10 \u2126"), Problem.NOT_NFC)
    c.add("future: created today + 2", lesson(created=TODAY + 2), Problem.FUTURE)
    c.add("future: a verification created today + 30", verification(created=TODAY + 30), Problem.FUTURE)
    c.add("wrong network: a lesson of another network", lesson(network=OTHER_NETWORK_KEY), Problem.WRONG_NETWORK)
    c.add("wrong network: a vouch of another network", vouch(network=OTHER_NETWORK_KEY), Problem.WRONG_NETWORK)
    c.add("invalid UTF-8: byte 0xff in text", replaced(base, "text", raw_str(b"caf\xff")), Problem.INVALID_UTF8)
    c.add("invalid UTF-8: overlong '/' (0xc0 0xaf)", replaced(base, "text", raw_str(b"a\xc0\xafb")), Problem.INVALID_UTF8)
    c.add(
        "invalid UTF-8: an encoded lone surrogate U+D800 (0xed 0xa0 0x80)",
        replaced(base, "text", raw_str(b"a\xed\xa0\x80")),
        Problem.INVALID_UTF8,
    )
    c.add("invalid UTF-8: in a topic", replaced(base, "topics", [raw_str(b"\xe6\x97")]), Problem.INVALID_UTF8)
    for char, name in (("\x00", "NUL"), ("\t", "TAB"), ("\r", "CR"), ("\x7f", "DEL"), ("\x85", "NEL (C1)")):
        c.add(f"control character: {name} in text", replaced(base, "text", f"a{char}b"), Problem.BAD_FIELD)
    c.add("control character: ESC in a topic", replaced(base, "topics", ["\x1b[31m"]), Problem.BAD_FIELD)
    c.add("bad field: empty text", replaced(base, "text", ""), Problem.BAD_FIELD)
    c.add("bad field: unknown kind 'warning'", replaced(base, "kind", "warning"), Problem.BAD_FIELD)
    c.add("bad field: unknown scope 'public'", replaced(base, "scope", "public"), Problem.BAD_FIELD)
    c.add("bad field: author of 31 bytes", replaced(base, "author", AUTHOR_PK[:31]), Problem.BAD_FIELD)
    c.add("bad field: author as a str, not bin", replaced(base, "author", AUTHOR_PK.hex()), Problem.BAD_FIELD)
    c.add("bad field: a parent of 33 bytes", replaced(base, "parents", [PARENTS[0] + b"\x00"]), Problem.BAD_FIELD)
    c.add("bad field: supersedes as empty bin", replaced(base, "supersedes", b""), Problem.BAD_FIELD)
    c.add("bad field: topics mixing str and bin", replaced(base, "topics", ["pip", b"pip"]), Problem.BAD_FIELD)
    c.add("bad field: created negative (-1)", replaced(base, "created", -1), Problem.BAD_FIELD)
    c.add("bad field: created as float64", replaced(base, "created", float(CREATED)), Problem.BAD_FIELD)
    c.add("bad field: created 2^32 (uint64)", replaced(base, "created", 2**32), Problem.BAD_FIELD)
    c.add("bad field: naive as 1, not true", replaced(pairs(verification()), "naive", 1), Problem.BAD_FIELD)
    c.add(
        "bad field: verification observed before received",
        replaced(pairs(verification()), "observed", CREATED - 11),
        Problem.BAD_FIELD,
    )
    c.add(
        "bad field: verification created before observed",
        replaced(pairs(verification()), "created", CREATED - 3),
        Problem.BAD_FIELD,
    )
    c.add("bad field: unknown outcome 'maybe'", replaced(pairs(verification()), "outcome", "maybe"), Problem.BAD_FIELD)
    c.add("bad field: revocation target_kind 'author'", replaced(pairs(revocation()), "target_kind", "author"), Problem.BAD_FIELD)
    c.add("bad field: a vouch for its own author", replaced(pairs(vouch()), "subject", AUTHOR_PK), Problem.BAD_FIELD)
    c.add(
        "bad field: prediction with keys in the wrong order",
        replaced(base, "prediction", Map(reversed(prediction_of(base)))),
        Problem.BAD_FIELD,
    )


def type_confusion_cases(c: Cases) -> None:
    """Every field of every type given a value of the wrong msgpack type that Python's loose
    equality would let through (``True == 1 == 1.0``, ``hash(True) == hash(1)``): each must be
    refused, or one record would have two valid bodies, and two ids."""
    for record in (lesson(parents=PARENTS[:1], episodes=EPISODES[:1], supersedes=_id("earlier")),
                   verification(), revocation(), vouch()):
        base = pairs(record)
        name = record.type.value
        for key, value in base:
            if key == "type":
                c.add(f"type confusion: {name} type as true", replaced(base, key, True), Problem.UNKNOWN_TYPE,
                      type_name=name)
                continue
            flag = Problem.UNKNOWN_VERSION if key == "v" else Problem.BAD_FIELD
            if type(value) is bool:  # naive: the integers that equal the booleans
                for wrong in (1, 0):
                    if (key, wrong) != ("naive", 1):  # naive as 1 is a value case already
                        c.add(f"type confusion: {name} {key} as {wrong}, not a boolean", replaced(base, key, wrong), flag)
                continue
            whole = Problem.MALFORMED if isinstance(value, Map) else flag  # a nested map must be a map
            c.add(f"type confusion: {name} {key} as true", replaced(base, key, True), whole)
            if type(value) is int:
                c.add(f"type confusion: {name} {key} as false", replaced(base, key, False), flag)
                if (name, key) != ("lesson", "created"):  # created as float64 is a value case already
                    c.add(f"type confusion: {name} {key} as float64 {value}.0", replaced(base, key, float(value)), flag)
            elif type(value) is list:
                c.add(f"type confusion: {name} {key} holding true", replaced(base, key, [True]), flag)
            elif isinstance(value, Map):
                for part, _ in value:
                    c.add(f"type confusion: {name} {key}.{part} as true",
                          replaced(base, key, replaced(value, part, True)), flag)


FIX = Fix("Bash", "pip install <package>", "uv add <package>")


def with_entry(body: Map, after: str, key: str, value: Any) -> Map:
    """``body`` with one entry more, placed after the entry ``after``."""
    out = Map()
    for k, v in body:
        out.append((k, v))
        if k == after:
            out.append((key, value))
    return out


def without(body: Map, key: str) -> Map:
    return Map((k, v) for k, v in body if k != key)


def version_2_cases(c: Cases) -> None:
    """Version 2: a lesson that names its fix, a verification that says what happened to it; and
    the old/new mix, which is refused: each version has its own entries, and a record has one body
    (a record without a fix is version 1, whose body every node understands)."""
    named = lesson(fix=FIX)
    c.add("version 2 lesson: names its fix", named)
    c.add("version 2 lesson: fix of the largest size (tool 40 bytes, failed and step 200)",
          lesson(fix=Fix("t" * MAX_FIX_TOOL_BYTES, "f" * MAX_FIX_STEP_BYTES, "é" * (MAX_FIX_STEP_BYTES // 2))))
    c.add("version 2 lesson: the largest body (every field at its limit, the fix too)",
          largest_lesson(fix=Fix("t" * MAX_FIX_TOOL_BYTES, "f" * MAX_FIX_STEP_BYTES, "s" * MAX_FIX_STEP_BYTES)))
    for seen in FixSeen:
        c.add(f"version 2 verification: {seen.value}", verification(fix=seen))
    base, v1 = pairs(named), pairs(lesson())
    fix_map = dict(base)["fix"]
    c.add("mix: version 2 lesson with fix nil (a lesson without a fix is version 1)",
          replaced(base, "fix", None), Problem.BAD_FIELD)
    c.add("mix: version 2 lesson without the fix entry", without(base, "fix"), Problem.BAD_FIELD)
    c.add("mix: version 1 lesson with a fix entry", replaced(base, "v", 1), Problem.BAD_FIELD)
    c.add("mix: version 1 lesson with fix nil", with_entry(v1, "supersedes", "fix", None), Problem.BAD_FIELD)
    c.add("mix: version 2 lesson with the fix entry last", with_entry(without(base, "fix"), "created", "fix", fix_map),
          Problem.BAD_FIELD)
    c.add("version 2 lesson: fix not a map", replaced(base, "fix", "uv add <package>"), Problem.MALFORMED)
    c.add("version 2 lesson: fix keys in another order",
          replaced(base, "fix", Map([("step", FIX.step), ("tool", FIX.tool), ("failed", FIX.failed)])),
          Problem.BAD_FIELD)
    c.add("version 2 lesson: fix without its tool", replaced(base, "fix", Map(without(fix_map, "tool"))),
          Problem.BAD_FIELD)
    c.add("version 2 lesson: fix step empty", replaced(base, "fix", replaced(fix_map, "step", "")), Problem.BAD_FIELD)
    c.add("version 2 lesson: fix step of 201 bytes",
          replaced(base, "fix", replaced(fix_map, "step", "s" * (MAX_FIX_STEP_BYTES + 1))), Problem.OVERSIZE)
    c.add("version 2 lesson: fix tool of 41 bytes",
          replaced(base, "fix", replaced(fix_map, "tool", "t" * (MAX_FIX_TOOL_BYTES + 1))), Problem.OVERSIZE)
    c.add("version 2 lesson: fix failed holding a control character",
          replaced(base, "fix", replaced(fix_map, "failed", "pip\x07install")), Problem.BAD_FIELD)
    c.add("version 2 lesson: fix step not NFC",
          replaced(base, "fix", replaced(fix_map, "step", "cafe\u0301")), Problem.NOT_NFC)
    vbase = pairs(verification(fix=FixSeen.CONFIRMED))
    c.add("mix: version 2 verification with fix nil", replaced(vbase, "fix", None), Problem.BAD_FIELD)
    c.add("mix: version 2 verification without the fix entry", without(vbase, "fix"), Problem.BAD_FIELD)
    c.add("mix: version 1 verification with a fix entry", replaced(vbase, "v", 1), Problem.BAD_FIELD)
    c.add("version 2 verification: fix 'confirmed' (not one of its values)", replaced(vbase, "fix", "confirmed"),
          Problem.BAD_FIELD)
    c.add("version 2 verification: fix as true", replaced(vbase, "fix", True), Problem.BAD_FIELD)
    c.add("mix: version 2 verification entries under version 3", replaced(vbase, "v", 3), Problem.UNKNOWN_VERSION)
    c.add("unknown version: a vouch of version 2 (only lessons and verifications have one)",
          replaced(pairs(vouch()), "v", 2), Problem.UNKNOWN_VERSION)
    c.add("unknown version: a revocation of version 2", replaced(pairs(revocation()), "v", 2),
          Problem.UNKNOWN_VERSION)


def prediction_of(body: Map) -> Map:
    return dict(body)["prediction"]


def keyed_hash_cases() -> list[dict[str, Any]]:
    lesson_id = _id("verified lesson")
    return [
        {
            "function": "episode",
            "domain": "commons/episode",
            "secret_hex": SECRET.hex(),
            "data_hex": b"episode-7".hex(),
            "comment": "episode_uid 'episode-7'",
            "hash_hex": episode_hash(SECRET, "episode-7").hex(),
        },
        {
            "function": "evidence",
            "domain": "commons/evidence",
            "secret_hex": SECRET.hex(),
            "data_hex": (lesson_id + b"episode-7").hex(),
            "comment": "lesson id || episode_uid 'episode-7'",
            "hash_hex": evidence_hash(SECRET, lesson_id, "episode-7").hex(),
        },
        {
            "function": "episode",
            "domain": "commons/episode",
            "secret_hex": _seed("other secret").hex(),
            "data_hex": b"episode-7".hex(),
            "comment": "the same episode under another node's secret",
            "hash_hex": episode_hash(_seed("other secret"), "episode-7").hex(),
        },
    ]


def build() -> dict[str, Any]:
    cases = Cases()
    valid_cases(cases)
    signature_cases(cases)
    structure_cases(cases)
    value_cases(cases)
    type_confusion_cases(cases)
    version_2_cases(cases)
    return {
        "_comment": COMMENT,
        "signing": {t.value: t.domain_tag.hex() for t in RecordType},
        "reconcile_tags": {t.value: t.tag for t in RecordType},
        "network_key_hex": NETWORK_KEY.hex(),
        "today": TODAY,
        "numberOfTests": len(cases.tests),
        "tests": cases.tests,
        "keyed_hashes": keyed_hash_cases(),
    }


def render() -> str:
    """The JSON text of records.json, exactly as main() writes it."""
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return regenerate(argv, generator=Path(__file__), path=VECTORS_PATH, render=render)


if __name__ == "__main__":
    sys.exit(main())
