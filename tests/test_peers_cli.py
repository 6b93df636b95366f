"""`commons peers` beside no daemon: entries the person adds and removes, kept in the database."""

import json

from commons.cli import main

KEY = "ab" * 32


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_added_peer_is_listed_and_removed(home, capsys):
    run(capsys, "init")
    assert run(capsys, "peers", "add", "127.0.0.1:7346", KEY)[0] == 0
    code, out, _ = run(capsys, "peers", "--json")
    assert code == 0 and any(p["transport_key"] == KEY and p["source"] == "added" for p in json.loads(out))
    code, out, _ = run(capsys, "peers", "remove", KEY, "--json")
    assert code == 0 and json.loads(out) == {"removed": KEY}
    _, out, _ = run(capsys, "peers", "--json")
    assert not any(p["transport_key"] == KEY for p in json.loads(out))


def test_removing_a_peer_that_was_never_added_says_so(home, capsys):
    run(capsys, "init")
    code, _, err = run(capsys, "peers", "remove", KEY)
    assert code == 1 and err.startswith("commons: error: no stored peer")


def test_a_malformed_peer_address_is_a_usage_error(home, capsys):
    run(capsys, "init")
    code, _, err = run(capsys, "peers", "add", "no-port-here", KEY)
    assert code == 2 and "HOST:PORT" in err
