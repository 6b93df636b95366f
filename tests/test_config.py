from pathlib import Path

import pytest

from commons.config import DEFAULT_NETWORK_KEY, Config, default_config_text, load_config, parse_config
from commons.errors import ConfigError


def test_missing_config_file_gives_defaults(tmp_path: Path):
    assert load_config(tmp_path / "absent.toml") == Config()


def test_default_config_text_loads_back_with_its_network_key():
    key = bytes(range(32))
    config = parse_config(default_config_text(key))
    assert config.network.key_bytes == key
    assert config.trust == Config().trust


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[trust]\nrequired = 'three'\n", "trust.required: expected an integer"),
        ("[trust]\nrequired = 0\n", "trust.required"),
        ("[nonsense]\nx = 1\n", "nonsense: unknown key"),
        ("[sleep]\nhalf_lfe_days = 3\n", "sleep.half_lfe_days: unknown key"),
        ("[sleep]\nat = '25:00'\n", "sleep.at: expected a time of day"),
        ("[network]\nkey = 'abc'\n", "network.key: expected 64 lowercase hex"),
        ("[[peers]]\naddress = 'example.org'\ntransport_key = '" + "ab" * 32 + "'\n", "peers[0].address"),
        ("[[peers]]\naddress = 'example.org:7346'\n", "peers[0].transport_key: missing"),
        ("[trust]\npolicy = 'anyone'\n", "trust.policy: expected one of"),
        ("[ingest]\nroots = 'one'\n", "ingest.roots: expected a list"),
        ("not toml at all [", "not valid TOML"),
    ],
)
def test_bad_config_names_file_key_and_expectation(text: str, named: str):
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "/home/me/config.toml")
    assert str(caught.value).startswith("/home/me/config.toml: ")
    assert named in str(caught.value)


def test_integers_are_accepted_where_numbers_are_expected():
    assert parse_config("[sleep]\nhalf_life_days = 30\n").sleep.half_life_days == 30.0


def test_peers_are_read_in_order():
    text = "".join(
        f"[[peers]]\naddress = '127.0.0.1:{7000 + i}'\ntransport_key = '{bytes([i]) .hex() * 32}'\n" for i in range(3)
    )
    peers = parse_config(text).peers
    assert [p.address for p in peers] == ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"]


def test_default_network_key_is_the_public_commons():
    assert Config().network.key_bytes == DEFAULT_NETWORK_KEY
