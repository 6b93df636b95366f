"""The node's context: what every service of a home needs (config, identity, folders, thresholds).

Built once per command or daemon from the home (``Setup.for_node``) and passed to the services of
``commons.node``; it holds no connection and no state that changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from commons.config import Config
from commons.core import sleep as core
from commons.core.hashing import episode_hash
from commons.core.lessons import WriteText
from commons.core.recall import RecallParams
from commons.home import Home
from commons.identity import Identity
from commons.node.model_hook import model_hook


@dataclass(frozen=True)
class Setup:
    """What the loop needs from a home: thresholds, folders, the hashing secret, the model hook."""

    sleep: core.SleepParams
    recall: RecallParams
    memory_folder: Path
    reports_dir: Path
    hash_secret: bytes
    write_text: WriteText | None = None
    # The node itself, for the commons side (peer review, the common layer, signing); without it
    # the loop is the local one alone.
    identity: Identity | None = None
    config: Config | None = None

    @classmethod
    def for_node(cls, config: Config, home: Home, identity: Identity) -> "Setup":
        """The full setup of a node: the local loop and its commons side."""
        return cls.from_config(config, home, identity.hash_secret, identity=identity)

    @classmethod
    def from_config(cls, config: Config, home: Home, hash_secret: bytes,
                    identity: Identity | None = None) -> "Setup":
        s = config.sleep
        params = core.SleepParams(
            half_life_days=s.half_life_days, archive_below=s.archive_below, join_cosine=s.join_cosine,
            verify_cosine=s.confirm_cosine, window_days=s.prediction_window_days,
            predict_min_strength=s.predict_at_strength)
        r = config.recall
        recall = RecallParams(relevance_weight=r.relevance, recency_weight=r.recency,
                              strength_weight=r.strength, recency_half_life_days=r.recency_half_life_days)
        folder = Path(config.render.folder).expanduser() if config.render.folder else home.data_dir / "memory"
        hook = model_hook(config.model.endpoint, config.model.name) if config.model.endpoint else None
        return cls(params, recall, folder, home.reports_dir, hash_secret, hook, identity,
                   config if identity is not None else None)

    def hash_episode(self, uid: str) -> bytes:
        return episode_hash(self.hash_secret, uid)

