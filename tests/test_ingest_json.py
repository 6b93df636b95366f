"""Transcript lines read by msgspec first, json after: the same values as json alone, every time.

``readers.json_value`` hands what msgspec refuses to ``json.loads``; what msgspec accepts must be
what json would have read, to the type (``1`` is not ``1.0`` nor ``True``), the key order of
every object and the value a repeated key keeps. Values are compared as typed trees.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commons.ingest.readers import json_record, json_value


def typed(value: Any) -> Any:
    """``value`` as a tree that equality cannot blur: each node its type's name, floats by repr
    (nan equals nan; -0.0 is not 0.0), objects as their items in order."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    return (type(value).__name__, value)


def outcome(read, data: bytes) -> tuple:
    try:
        return ("value", typed(read(data)))
    except (ValueError, RecursionError) as error:
        return ("error", type(error).__name__)


def json_record_by_json_alone(line: bytes) -> dict | None:
    """What json_record answered before msgspec read first: json.loads alone."""
    try:
        rec = json.loads(line)
    except UnicodeDecodeError:
        try:
            rec = json.loads(line.decode("utf-8", errors="replace"))
        except ValueError:
            return None
    except ValueError:
        return None
    return rec if isinstance(rec, dict) else None


scalars = st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2**80), max_value=2**80) | st.floats() | st.text()
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
                      max_leaves=8)


@st.composite
def object_texts(draw) -> bytes:
    """A JSON object written by hand, so that its keys may repeat (json.dumps never repeats one)."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(["a", "b", "é", "\U0001f600", ""]), values), max_size=5))
    ascii_only = draw(st.booleans())
    text = "{" + ",".join(f"{json.dumps(k, ensure_ascii=ascii_only)}:{json.dumps(v, ensure_ascii=ascii_only)}"
                          for k, v in pairs) + "}"
    return text.encode("utf-8", "surrogatepass")


# Bytes that sit on a border between the two readers: whitespace json does and does not skip,
# control characters, a BOM, invalid and surrogate UTF-8, number and escape fragments.
BORDER_BYTES = [b" ", b"\t", b"\r", b"\x0b", b"\x0c", b"\x00", b"\x01", b"\x7f", b"\xef\xbb\xbf", b"\xff", b"\xc0\x80",
                b"\xed\xa0\x80", b"\xe2\x82", b"NaN", b"Infinity", b"-", b"1e400", b"0", b".", b"e", b"\\", b"\\u",
                b"\\ud800", b"\\udc00", b'"', b",", b":", b"{", b"}", b"[", b"]"]


@st.composite
def mutated(draw) -> bytes:
    data = bytearray(draw(object_texts() | values.map(lambda v: json.dumps(v).encode())))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        piece = draw(st.sampled_from(BORDER_BYTES))
        if draw(st.booleans()) and at < len(data):
            data[at : at + len(piece)] = piece
        else:
            data[at:at] = piece
    return bytes(data)


@settings(max_examples=150, deadline=None)
@given(st.one_of(values.map(lambda v: json.dumps(v).encode()),
                 values.map(lambda v: json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass")),
                 object_texts(), mutated(), st.binary(max_size=40)))
def test_json_value_reads_what_json_reads_and_refuses_what_it_refuses(data: bytes) -> None:
    assert outcome(json_value, data) == outcome(json.loads, data)


@settings(max_examples=100, deadline=None)
@given(st.one_of(object_texts(), mutated()))
def test_json_record_gives_what_json_alone_gave(line: bytes) -> None:
    assert outcome(json_record, line) == outcome(json_record_by_json_alone, line)


@pytest.mark.parametrize("line", [
    b'{"x":NaN}', b'{"x":-Infinity}', b'{"x":1e400}',  # json reads them; msgspec does not
    b'{"x":"\\ud800"}', b'{"x":"\xed\xa0\x80"}',  # a lone surrogate, escaped and in UTF-8 (surrogatepass)
    b'\xef\xbb\xbf{"x":1}', '{"x":1}'.encode("utf-16"),  # a BOM; UTF-16, which json detects
    b'{"x":"caf\xe9"}',  # invalid UTF-8: the byte replaced, the line kept
    b'{"a":1,"b":2,"a":3}', b'{"x":123456789012345678901234567890}', b'{"x":-0.0,"y":1.0,"z":true}',
    b'{"x":"a\x01b"}', b'{"x":1} x', b'[1, 2]', b'"text"',  # not an object: no record
])
def test_json_record_of_a_line_on_the_border_is_what_json_alone_gave(line: bytes) -> None:
    assert outcome(json_record, line) == outcome(json_record_by_json_alone, line)


def test_a_line_nested_deeper_than_json_takes_fails_as_json_failed() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    assert outcome(json_value, deep) == outcome(json.loads, deep) == ("error", "RecursionError")
