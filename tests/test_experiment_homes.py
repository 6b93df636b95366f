"""The harness keeps one context per node across its commands (simulations.experiment.homes): each
command still runs at its own --at, and a config the harness changes is read again."""

from __future__ import annotations

from commons.clock import parse_time
from simulations.experiment.homes import Node


def test_a_node_kept_across_commands_runs_each_at_its_own_time(tmp_path):
    node = Node("a", tmp_path / "a", secrets_from="1/a")
    node.init()
    node.cli("id", "--json")  # the context is made by a first command, then kept
    context = node._context
    for at in ("2026-11-03T03:00:00Z", "2026-11-04T03:45:00Z"):
        node.cli("lessons", "--status", "all", "--json", at=at)
        assert node._context is context
        assert context.now() == context.node.clock.now() == parse_time(at)


def test_a_config_the_harness_changes_is_what_the_next_command_reads(tmp_path):
    node = Node("a", tmp_path / "a", secrets_from="1/a")
    node.init()
    assert node.cli("config", "--json")["gossip"]["sync_interval"] != 0.2
    node.configure({"gossip": {"sync_interval": 0.2}})
    assert node.cli("config", "--json")["gossip"]["sync_interval"] == 0.2
