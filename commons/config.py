"""config.toml: the person's file, read and validated, never written after `commons init`.

Each section is a frozen dataclass below; its fields are the keys the section accepts, with their
types and defaults. Loading refuses an unknown section or key, a wrong type or a bad value with a
message naming the file, the key and what was expected. State that the CLI changes (publishing on
or off, added peers, vetoes) lives in the database, not here.

Precedence, lowest first: built-in defaults, config.toml, then ``COMMONS_*`` environment variables
for the few settings that have one (``COMMONS_AT``), then command-line flags.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commons.clock import parse_time
from commons.core.gossip import GossipParams
from commons.core.recall import RecallParams
from commons.core.learning import SleepParams
from commons.core.trust import Policy, TrustPolicy
from commons.errors import ConfigError

# The public commons' network key. A private commons picks its own (`commons init --network-key`);
# records and handshakes of one network are refused by every other.
DEFAULT_NETWORK_KEY = bytes.fromhex("c0ffee5eed0c0a1a" * 4)


def _hex_key(value: str) -> bytes:
    try:
        key = bytes.fromhex(value)
    except ValueError:
        key = b""
    if len(key) != 32 or value != value.lower():
        raise ValueError("64 lowercase hex characters (a 32-byte key)")
    return key


def _host_port(value: str) -> tuple[str, int]:
    match = re.fullmatch(r"\[?([^\[\]]+?)\]?:(\d{1,5})", value)
    if not match or int(match.group(2)) > 65535:
        raise ValueError("HOST:PORT, e.g. 127.0.0.1:7346 or [::1]:7346")
    return match.group(1), int(match.group(2))


def _at_least(name: str, value: float, low: float) -> None:
    if value < low:
        raise ValueError(f"{name} ≥ {low}, got {value}")


def _between(value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise ValueError(f"a number from {low} to {high}")


@dataclass(frozen=True)
class NetworkConfig:
    key: str = DEFAULT_NETWORK_KEY.hex()  # the network identifier: records and handshakes of others are refused
    listen: str = "127.0.0.1:7346"  # where the daemon listens; 0.0.0.0 exposes it to every network you are on

    def __post_init__(self) -> None:
        _check("key", lambda: _hex_key(self.key))
        _check("listen", lambda: _host_port(self.listen))

    @property
    def key_bytes(self) -> bytes:
        return bytes.fromhex(self.key)


@dataclass(frozen=True)
class IngestConfig:
    # Folders searched for agent transcripts (Claude Code, Codex CLI, Gemini CLI; docs/agents.md).
    # "$CLAUDE_CONFIG_DIR", "$CODEX_HOME" and "$GEMINI_CLI_HOME" stand for those variables, or, when
    # one is not set, for ~/.claude, ~/.codex and ~ (commons.ingest.readers.ROOT_VARIABLES).
    roots: tuple[str, ...] = ("$CLAUDE_CONFIG_DIR/projects", "$CODEX_HOME/sessions", "$GEMINI_CLI_HOME/.gemini/tmp")
    poll_seconds: float = 30.0  # how often the daemon looks for new transcript bytes

    def __post_init__(self) -> None:
        _check("poll_seconds", lambda: _at_least("poll_seconds", self.poll_seconds, 0.1))


@dataclass(frozen=True)
class RenderConfig:
    # auto: a folder if `folder` is set, else each project's Claude Code auto memory when
    # ~/.claude/projects exists, else <data>/memory. claude-code | folder choose one outright.
    target: str = "auto"
    folder: str = ""  # the plain folder target's folder; empty: <data>/memory

    def __post_init__(self) -> None:
        def known(value: str) -> None:
            if value not in RENDER_TARGETS:
                raise ValueError(f"one of {', '.join(RENDER_TARGETS)}, got {value!r}")
        _check("target", lambda: known(self.target))


RENDER_TARGETS = ("auto", "claude-code", "folder")


@dataclass(frozen=True)
class SleepConfig:
    # Each default is the core's own (SleepParams), so a threshold has one source.
    at: str = "03:00"  # local time of the nightly sleep
    half_life_days: float = SleepParams.half_life_days
    archive_below: float = SleepParams.archive_below
    join_cosine: float = SleepParams.join_cosine
    confirm_cosine: float = SleepParams.verify_cosine
    prediction_window_days: float = SleepParams.window_days
    predict_at_strength: float = SleepParams.predict_min_strength

    def __post_init__(self) -> None:
        _check("at", lambda: _clock_time(self.at))
        _check("half_life_days", lambda: _at_least("half_life_days", self.half_life_days, 0.01))
        _check("join_cosine", lambda: _between(self.join_cosine, 0.0, 1.0))
        _check("confirm_cosine", lambda: _between(self.confirm_cosine, 0.0, 1.0))
        _check("prediction_window_days", lambda: _at_least("prediction_window_days", self.prediction_window_days, 0.01))

    def params(self) -> SleepParams:
        return SleepParams(half_life_days=self.half_life_days, archive_below=self.archive_below,
                           join_cosine=self.join_cosine, verify_cosine=self.confirm_cosine,
                           window_days=self.prediction_window_days, predict_min_strength=self.predict_at_strength)


def _clock_time(value: str) -> None:
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", value)
    if not match or int(match.group(1)) > 23 or int(match.group(2)) > 59:
        raise ValueError("a time of day HH:MM, e.g. 03:00")


@dataclass(frozen=True)
class RecallConfig:
    relevance: float = RecallParams.relevance_weight
    recency: float = RecallParams.recency_weight
    strength: float = RecallParams.strength_weight
    recency_half_life_days: float = RecallParams.recency_half_life_days

    def params(self) -> RecallParams:
        return RecallParams(relevance_weight=self.relevance, recency_weight=self.recency,
                            strength_weight=self.strength, recency_half_life_days=self.recency_half_life_days)


@dataclass(frozen=True)
class ModelConfig:
    endpoint: str = ""  # an OpenAI-compatible endpoint that may write lesson text; empty: off
    name: str = ""


@dataclass(frozen=True)
class TrustConfig:
    required: int = TrustPolicy.required  # independent confirmations that make a lesson common
    policy: str = TrustPolicy.policy.value  # open | web-of-trust | allowlist
    roots: tuple[str, ...] = ()  # keys trust starts from, besides this node's own author key
    authors: tuple[str, ...] = ()  # the person's own other agents: their lessons are common on arrival
    max_depth: int = TrustPolicy.max_depth  # how many vouches away from a root a key may be and still count
    max_per_voucher: int = TrustPolicy.max_per_voucher  # keys only one voucher reaches that may count for one lesson
    revocation_authorities: tuple[str, ...] = ()
    revocation_threshold: int = TrustPolicy.revocation_threshold
    # How many of a lesson's latest counted outcomes decide whether it is common (fade-out); the
    # window is never narrower than `required`, so promotion stays possible (docs/trust.md).
    recent_window: int = TrustPolicy.recent_window

    def __post_init__(self) -> None:
        _check("required", lambda: _at_least("required", self.required, 1))
        if self.policy not in ("open", "web-of-trust", "allowlist"):
            raise _BadValue("policy", "expected one of: open, web-of-trust, allowlist")
        for name in ("roots", "authors", "revocation_authorities"):
            for key in getattr(self, name):
                _check(name, lambda key=key: _hex_key(key))
        _check("max_depth", lambda: _at_least("max_depth", self.max_depth, 0))
        _check("max_per_voucher", lambda: _at_least("max_per_voucher", self.max_per_voucher, 1))
        _check("revocation_threshold", lambda: _at_least("revocation_threshold", self.revocation_threshold, 1))
        _check("recent_window", lambda: _at_least("recent_window", self.recent_window, 1))

    def trust_policy(self) -> TrustPolicy:
        def keys(values: tuple[str, ...]) -> frozenset[bytes]:
            return frozenset(bytes.fromhex(v) for v in values)

        return TrustPolicy(required=self.required, policy=Policy(self.policy), roots=keys(self.roots),
                           authors=keys(self.authors), max_depth=self.max_depth, max_per_voucher=self.max_per_voucher,
                           revocation_authorities=keys(self.revocation_authorities),
                           revocation_threshold=self.revocation_threshold, recent_window=self.recent_window)


@dataclass(frozen=True)
class ClockConfig:
    at: str = ""  # a fixed ISO time for this home (demos, experiments); empty: the real clock

    def __post_init__(self) -> None:
        if self.at:
            _check("at", lambda: parse_time(self.at))


@dataclass(frozen=True)
class GossipConfig:
    """The gossip timers a person (or a test) may shorten; the rest keep protocol/gossip.md's defaults."""

    sync_interval: float = GossipParams.sync_interval  # seconds between anti-entropy rounds with one random peer
    backoff_base: float = GossipParams.backoff_base  # seconds before redialing a peer after its first failure
    backoff_cap: float = GossipParams.backoff_cap  # the longest redial backoff
    max_peers: int = GossipParams.max_peers  # sessions the daemon dials up to
    fanout: int = GossipParams.fanout  # peers a new record's key is announced to
    discovery: bool = True  # advertise and browse _commons._tcp on the LAN when listening beyond loopback
    idle_timeout: float = GossipParams.idle_timeout  # a session from which nothing arrives for this long is closed (0: never)
    evict_idle: float = GossipParams.evict_idle  # with every slot taken, a newcomer may take the slot of a session idle this long
    # Per peer: records asked for, accepted unsolicited and served per second (a token bucket this
    # deep). The default keeps one peer from flooding a node; a node catching up on a commons of
    # 10^5 records from a peer it trusts may lift it.
    records_per_second: float = GossipParams.records_per_second
    records_burst: int = GossipParams.records_burst
    max_half_open: int = 64  # inbound connections still in their handshake, from everyone
    max_half_open_per_address: int = 8  # the same, from one IP address

    def __post_init__(self) -> None:
        _check("sync_interval", lambda: _at_least("sync_interval", self.sync_interval, 0.1))
        _check("backoff_base", lambda: _at_least("backoff_base", self.backoff_base, 0.1))
        _check("backoff_cap", lambda: _at_least("backoff_cap", self.backoff_cap, self.backoff_base))
        _check("max_peers", lambda: _at_least("max_peers", self.max_peers, 1))
        _check("fanout", lambda: _at_least("fanout", self.fanout, 1))
        _check("idle_timeout", lambda: _at_least("idle_timeout", self.idle_timeout, 0))
        _check("evict_idle", lambda: _at_least("evict_idle", self.evict_idle, 0))
        _check("records_per_second", lambda: _at_least("records_per_second", self.records_per_second, 1))
        _check("records_burst", lambda: _at_least("records_burst", self.records_burst, 1))
        _check("max_half_open", lambda: _at_least("max_half_open", self.max_half_open, 1))
        _check("max_half_open_per_address", lambda: _at_least("max_half_open_per_address",
                                                              self.max_half_open_per_address, 1))

    def params(self) -> GossipParams:
        return dataclasses.replace(GossipParams(), sync_interval=self.sync_interval, backoff_base=self.backoff_base,
                                   backoff_cap=self.backoff_cap, max_peers=self.max_peers, fanout=self.fanout,
                                   idle_timeout=self.idle_timeout, evict_idle=self.evict_idle,
                                   records_per_second=self.records_per_second, records_burst=self.records_burst)


@dataclass(frozen=True)
class LogConfig:
    """The daemon's own log file, <data>/logs/daemon.log (stderr, or the journal, gets every line too)."""

    max_bytes: int = 5_000_000  # daemon.log is rotated when it would grow past this (0: never rotated)
    backups: int = 3  # rotated files kept: daemon.log.1 … daemon.log.N (at least 1)

    def __post_init__(self) -> None:
        _check("max_bytes", lambda: _at_least("max_bytes", self.max_bytes, 0))
        _check("backups", lambda: _at_least("backups", self.backups, 1))


@dataclass(frozen=True)
class PeerEntry:
    address: str
    transport_key: str

    def __post_init__(self) -> None:
        _check("address", lambda: _host_port(self.address))
        _check("transport_key", lambda: _hex_key(self.transport_key))


@dataclass(frozen=True)
class Config:
    network: NetworkConfig = field(default_factory=NetworkConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    render: RenderConfig = field(default_factory=RenderConfig)
    sleep: SleepConfig = field(default_factory=SleepConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    trust: TrustConfig = field(default_factory=TrustConfig)
    clock: ClockConfig = field(default_factory=ClockConfig)
    gossip: GossipConfig = field(default_factory=GossipConfig)
    log: LogConfig = field(default_factory=LogConfig)
    peers: tuple[PeerEntry, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --- validation --------------------------------------------------------------------------------


class _BadValue(Exception):
    def __init__(self, key: str, expected: str):
        super().__init__(expected)
        self.key = key
        self.expected = expected  # the whole complaint, e.g. "expected an integer"


def _check(key: str, test: typing.Callable[[], object]) -> None:
    try:
        test()
    except ValueError as error:
        raise _BadValue(key, f"expected {error}") from None


_TYPE_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _convert(value: Any, hint: Any, where: str) -> Any:
    """Check a TOML value against a field's type; return it in the dataclass's form."""
    origin = typing.get_origin(hint)
    if origin is tuple:
        (item_hint, _ellipsis) = typing.get_args(hint)
        if not isinstance(value, list):
            raise _BadValue(where, f"expected a list of {_describe(item_hint)}")
        return tuple(_convert(item, item_hint, f"{where}[{i}]") for i, item in enumerate(value))
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise _BadValue(where, "expected a table")
        return _build(hint, value, where)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is not hint:
        raise _BadValue(where, f"expected {_describe(hint)}")
    return value


def _describe(hint: Any) -> str:
    if dataclasses.is_dataclass(hint):
        return "tables with " + ", ".join(f.name for f in dataclasses.fields(hint))
    return _TYPE_WORDS.get(hint, str(hint))


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    """A table's field types, resolved once a class: resolving compiles every annotation written
    as a string, which cost a short command (the experiment runs a thousand) more than reading
    the file did."""
    return typing.get_type_hints(cls)


def _build(cls: type, table: dict[str, Any], where: str) -> Any:
    hints = _field_types(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    for key in table:
        if key not in known:
            raise _BadValue(f"{where}.{key}" if where else key, "unknown key (known: " + ", ".join(sorted(known)) + ")")
    values = {key: _convert(value, hints[key], f"{where}.{key}" if where else key) for key, value in table.items()}
    required = [f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING and f.name not in values]
    if required:
        raise _BadValue(f"{where}.{required[0]}" if where else required[0], "missing; this key is required")
    try:
        return cls(**values)
    except _BadValue as bad:
        raise _BadValue(f"{where}.{bad.key}" if where else bad.key, bad.expected) from None


def parse_config(text: str, source: str = "config.toml") -> Config:
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    try:
        return _build(Config, table, "")
    except _BadValue as bad:
        raise ConfigError(f"{source}: {bad.key}: {bad.expected}") from None


def load_config(path: Path) -> Config:
    """The config of a home; defaults when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot be read: {error}") from None
    return parse_config(text, str(path))


def default_config_text(network_key: bytes) -> str:
    """The config.toml `commons init` writes: the network key set, every other default shown."""
    lines = [
        "# commons configuration. This file is yours: commons reads it and never writes it again.",
        "# Every key below shows its default; uncomment to change. `commons config` shows the result.",
        "",
        "[network]",
        f'key = "{network_key.hex()}"',
    ]
    defaults = Config()
    for section in dataclasses.fields(Config):
        value = getattr(defaults, section.name)
        if not dataclasses.is_dataclass(value):
            continue
        if section.name != "network":
            lines += ["", f"# [{section.name}]"]
        for item in dataclasses.fields(value):
            if section.name == "network" and item.name == "key":
                continue
            lines.append(f"# {item.name} = {toml_value(getattr(value, item.name))}")
    lines += [
        "",
        "# Peers to dial at start (also `commons peers add`):",
        "# [[peers]]",
        '# address = "192.0.2.10:7346"',
        '# transport_key = "<64 hex characters: the peer\'s `commons id` transport key>"',
        "",
    ]
    return "\n".join(lines)


def toml_value(value: Any) -> str:
    """``value`` as TOML writes it (what `commons config` prints can be pasted into config.toml)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return repr(value)
    raise TypeError(f"no TOML for {type(value).__name__}")
