"""The node's context: what every service of a home needs, built once from the home.

A process builds one (``commons.node.home_context.HomeContext.node``), the daemon one for its life, the MCP
server one per connection; the services of ``commons.node`` take it as their first argument after
the store. It is frozen: thresholds, folders and keys do not change under a running service. The one
thing in it that moves is the trust evaluation it owns (``trust``), which is remade only when the
records held change (``commons.node.trust.TrustEvaluation``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from commons.clock import Clock, SystemClock
from commons.config import Config
from commons.core.learning import SleepParams
from commons.core.records import episode_hash
from commons.core.learning import WriteText
from commons.core.recall import RecallParams
from commons.home import Home
from commons.identity import Identity
from commons.node.model_hook import model_hook
from commons.node.trust import TrustEvaluation
from commons.render.claude_code import ClaudeCodeTarget
from commons.render.folder import FolderTarget
from commons.render.target import RenderTarget


@dataclass(frozen=True)
class NodeContext:
    """A home's config and folders, its keys, its clock, the thresholds its services run with."""

    config: Config
    home: Home
    clock: Clock
    sleep: SleepParams
    recall: RecallParams
    memory_folder: Path  # the plain folder target's folder (`[render] folder`, else <data>/memory)
    hash_secret: bytes  # keys episode hashes (the identity's, or a test's without one)
    write_text: WriteText | None = None  # the local model's hook, when [model] names one
    # The node itself, for the commons side (peer review, the common layer, signing); without it
    # the loop is the local one alone and there is no trust to evaluate.
    identity: Identity | None = None
    trust: TrustEvaluation | None = None
    # Where lessons are rendered (commons/render/target.py); the plain folder when not given.
    render_target: RenderTarget | None = field(default=None, compare=False)

    @property
    def target(self) -> RenderTarget:
        return self.render_target if self.render_target is not None else FolderTarget(self.memory_folder)

    @classmethod
    def for_node(cls, config: Config, home: Home, identity: Identity, clock: Clock | None = None) -> NodeContext:
        """The full context of a node: the local loop and its commons side."""
        return cls.local(config, home, identity.hash_secret, clock, identity=identity)

    @classmethod
    def local(cls, config: Config, home: Home, hash_secret: bytes, clock: Clock | None = None, *,
              identity: Identity | None = None, environ: Mapping[str, str] | None = None) -> NodeContext:
        """A context from a home's config; without ``identity``, the local loop alone. ``environ``
        (default: this process's) says where the person's Claude Code folder is."""
        folder = Path(config.render.folder).expanduser() if config.render.folder else home.data_dir / "memory"
        hook = model_hook(config.model.endpoint, config.model.name) if config.model.endpoint else None
        evaluation = TrustEvaluation(identity.author_public, config.trust.trust_policy()) if identity is not None else None
        target = render_target(config, folder, os.environ if environ is None else environ)
        return cls(config, home, clock or SystemClock(), config.sleep.params(), config.recall.params(), folder,
                   hash_secret, hook, identity, evaluation, target)

    @property
    def reports_dir(self) -> Path:
        return self.home.reports_dir

    @property
    def network(self) -> bytes:
        return self.config.network.key_bytes

    def hash_episode(self, uid: str) -> bytes:
        return episode_hash(self.hash_secret, uid)


def render_target(config: Config, folder: Path, environ: Mapping[str, str]) -> RenderTarget:
    """The target `[render] target` names. ``auto``: the plain folder when `[render] folder` is
    set, else Claude Code's per-project auto memory when its ``projects/`` folder exists (Claude
    Code has run here), else the plain folder (<data>/memory)."""
    choice = config.render.target
    if choice == "auto":
        claude = ClaudeCodeTarget.locate(environ)
        choice = "claude-code" if not config.render.folder and claude.claude.projects_dir.is_dir() else "folder"
        if choice == "claude-code":
            return claude
    if choice == "claude-code":
        return ClaudeCodeTarget.locate(environ)
    return FolderTarget(folder)
