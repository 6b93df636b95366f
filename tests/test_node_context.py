"""The node's context: built from a home's config, and the trust evaluation it owns."""

import nacl.signing
import pytest

from commons.config import Config, RecallConfig, SleepConfig, TrustConfig
from commons.core.recall.scoring import RecallParams
from commons.core.records import Lesson, LessonKind, Prediction, Scope, day_of, sign
from commons.core.learning.sleep import SleepParams
from commons.core.trust.evaluation import LessonStatus, TrustPolicy
from commons.home import Home
from commons.node.context import NodeContext
from commons.node.trust import TrustEvaluation
from commons.store import records as record_store
from commons.store.db import Store

NETWORK = bytes(32)
NOW = 20_000 * 86400.0
ME = nacl.signing.SigningKey(bytes(range(32)))
PEER = nacl.signing.SigningKey(bytes(range(1, 33)))


def lesson(key: nacl.signing.SigningKey, text: str):
    return sign(Lesson(network=NETWORK, author=bytes(key.verify_key), created=day_of(NOW), kind=LessonKind.ERROR,
                       text=text, scope=Scope.SHARED, topics=("pip",),
                       prediction=Prediction("pip install", "externally-managed-environment")), key)


@pytest.fixture
async def store(aio, tmp_path):
    opened = await Store.open(tmp_path / "commons.db")
    yield opened
    await opened.close()


def test_config_sections_build_the_core_params_with_the_core_defaults():
    assert SleepConfig().params() == SleepParams()
    assert RecallConfig().params() == RecallParams()
    assert TrustConfig().trust_policy() == TrustPolicy()
    tuned = SleepConfig(half_life_days=10.0, confirm_cosine=0.7).params()
    assert (tuned.half_life_days, tuned.verify_cosine) == (10.0, 0.7)


def test_a_context_without_identity_has_no_trust_to_evaluate(tmp_path):
    home = Home(tmp_path / "config", tmp_path / "data")
    node = NodeContext.local(Config(), home, b"\0" * 32)
    assert node.trust is None and node.identity is None
    assert node.memory_folder == home.data_dir / "memory"
    assert node.sleep == SleepParams() and node.recall == RecallParams()


async def test_the_evaluation_is_kept_until_a_record_arrives_then_made_again(store):
    evaluation = TrustEvaluation(bytes(ME.verify_key), TrustPolicy())
    await record_store.add_received(store, [lesson(PEER, "pip install fails on Debian 12")], NOW)
    first = await evaluation.held(store, NOW)
    assert await evaluation.held(store, NOW + 60) is first  # nothing changed: the same evaluation
    arrived = lesson(PEER, "pip install --user fails as well")
    await record_store.add_received(store, [arrived], NOW + 120)
    second = await evaluation.held(store, NOW + 180)
    assert second is not first
    assert second.state(arrived.id).status is LessonStatus.CANDIDATE
    assert await evaluation.held(store, NOW + 2 * 86400.0) is not second  # a new day: standing may change
