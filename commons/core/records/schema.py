"""Each record type's body as a msgspec Struct, made from its field spec: what C checks first.

msgspec decodes MessagePack into typed Structs in C, refusing on the way every value of the wrong
msgpack type (a bool or a float where an int belongs, a string where bytes do), a key of the
wrong length, a day out of bounds, an enum value that is not a member, an unknown or missing key,
and trailing bytes. What it does not check is left to the decoder ``compiled.py`` generates (text
rules, sorted tuples, relations) and to the canonical check: the Struct encoded again must be the
very bytes received, which refuses a repeated key (msgspec keeps the last), keys out of order and
every longer form msgpack allows.

One Struct per record type, tagged by its ``type`` key; the ``fix`` of a version 2 body is a field
that is UNSET (left out when encoded) in version 1, so one Struct reads both versions and the
generated decoder of each version checks that the fix is there exactly when it must be.
Nothing here is re-exported: ``codec.py`` is the door.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

import msgspec
from msgspec import UNSET, Meta, UnsetType

from commons.core.records.types import FIELD_SPECS, KEY_BYTES, Field, Kind, RecordType

_Key = Annotated[bytes, Meta(min_length=KEY_BYTES, max_length=KEY_BYTES)]
_Day = Annotated[int, Meta(ge=0, lt=2**32)]


class PredictionStruct(msgspec.Struct, forbid_unknown_fields=True):
    situation: str
    outcome: str


class FixStruct(msgspec.Struct, forbid_unknown_fields=True):
    tool: str
    failed: str
    step: str


def _wire_type(rule: Field) -> tuple[Any, bool]:
    """The msgspec type of a field's wire value, and whether the field may be left out (UNSET)."""
    kind = rule.kind
    simple = {Kind.KEY: _Key, Kind.OPTIONAL_KEY: Union[_Key, None], Kind.DAY: _Day, Kind.BOOL: bool,
              Kind.TEXT: str, Kind.PREDICTION: PredictionStruct}
    if kind in simple:
        return simple[kind], False
    if kind is Kind.CHOICE:
        return rule.choices, False
    if kind is Kind.TEXTS:
        return Annotated[tuple[str, ...], Meta(max_length=rule.most)], False
    if kind is Kind.KEYS:
        return Annotated[tuple[_Key, ...], Meta(max_length=rule.most)], False
    if kind is Kind.FIX:
        return Union[FixStruct, UnsetType], True
    return Union[rule.choices, UnsetType], True  # OPTIONAL_CHOICE: the verification's fix


def body_struct(rtype: RecordType, layout: tuple[str, ...], wire_names: dict[str, str]) -> type[msgspec.Struct]:
    """The Struct of a type's body; ``layout`` is the body's keys after ``type`` in the order of
    the version that has them all (``v`` first), ``wire_names`` a field's wire key where it
    differs from its name."""
    rules = {wire_names.get(rule.name, rule.name): rule for rule in FIELD_SPECS[rtype] if isinstance(rule, Field)}
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = [("v", int)]
    for key in layout[1:]:
        wire_type, may_be_absent = _wire_type(rules[key])
        fields.append((key, wire_type, UNSET) if may_be_absent else (key, wire_type))
    # kw_only: a field that may be left out stands before required ones, in wire order.
    return msgspec.defstruct(f"{rtype.name.title()}Body", fields, tag_field="type", tag=rtype.value,
                             kw_only=True, forbid_unknown_fields=True)


def body_decoder(structs: list[type[msgspec.Struct]]) -> msgspec.msgpack.Decoder:
    """One strict decoder for the Structs of every type (a union tagged by ``type``)."""
    return msgspec.msgpack.Decoder(Union[tuple(structs)], strict=True)  # type: ignore[valid-type]


ENCODER = msgspec.msgpack.Encoder()
DecodeError = msgspec.DecodeError
UNSET_VALUE = UNSET
