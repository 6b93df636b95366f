"""What a daemon holds per record, made compact without changing what it answers (issue #18)."""

from __future__ import annotations

import gc
import random
import re
import unicodedata

from commons.core.gossip.node import GossipNode, GossipParams
from commons.core.trust.naivety import similarity_key
from commons.daemon.heap import HeapFreezer
from commons.store.record_reader import Wire
from tests.test_intake_scale import NETWORK, NOW, holdings


def _general_rule(text: str) -> str:  # the rule as docs/trust.md states it, for every text
    return " ".join(re.sub(r"[\W_]+", " ", unicodedata.normalize("NFKC", text).casefold()).split())


def test_the_ascii_similarity_key_is_the_general_rule_on_every_ascii_character():
    rng = random.Random(3)
    alphabet = [chr(c) for c in range(128)]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(60))) for _ in range(3000)]
    texts += ["`tool7` fails: exit code 3 (case 7).", "A_B\tc\x1fd", "", "  "]
    assert [similarity_key(t) for t in texts] == [_general_rule(t) for t in texts]
    assert similarity_key("ＦＵＬＬ Café_x") == _general_rule("ＦＵＬＬ Café_x") == "full café x"


def test_a_node_on_a_store_holds_no_record_and_serves_them_all_from_the_store():
    held = holdings(12)
    disk = {s.key: Wire(s.body, s.signature) for s in held}
    node = GossipNode(NETWORK, bytes([1]) * 32, random.Random(1), params=GossipParams(), now=NOW, read_stored=disk.get)
    refused = held[0].key
    node.load_stored([(s.key, s.record.created) for s in held[1:]], withheld=[refused])
    assert node._store == {}  # nothing in memory: the key set says what is held
    assert node.record_keys() == {s.key for s in held[1:]}
    assert node.serve(refused) is None and node.serve(held[1].key) == disk[held[1].key]
    stats = node.statistics()
    assert (stats.records_held, stats.withheld) == (11, 1)
    assert node.withdraw([held[2].key, refused]) == 1  # a refused key is not served, so not withdrawn
    assert node.serve(held[2].key) is None and node.statistics().records_held == 10
    assert node.add_local(held[2]) == 1 and node.serve(held[2].key) is not None  # served again


def test_the_heap_freezer_freezes_after_start_up_and_each_big_intake_and_thaws_on_schedule():
    gc.unfreeze()
    freezer = HeapFreezer(freeze_after=100, thaw_seconds=60.0)
    try:
        freezer.freeze(0.0)
        frozen = gc.get_freeze_count()
        assert frozen > 0
        freezer.took_in(99, 1.0)
        assert freezer.freezes == 1
        freezer.took_in(1, 2.0)
        assert freezer.freezes == 2
        freezer.took_in(1, 61.0)  # an hour's worth (here a minute) later: handed back to the collector
        assert gc.get_freeze_count() == 0 and freezer.freezes == 2
    finally:
        gc.unfreeze()


def test_the_collector_is_paused_for_a_batch_and_left_as_it_was_found_even_when_the_batch_fails():
    from commons.daemon.heap import collector_paused

    assert gc.isenabled()
    try:
        with collector_paused():
            assert not gc.isenabled()
            raise ValueError("a batch that failed")
    except ValueError:
        pass
    assert gc.isenabled()
    gc.disable()  # paused by someone else already: not switched on behind their back
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
