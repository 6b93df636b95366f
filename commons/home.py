"""Where a node keeps its keys, config and data.

``COMMONS_HOME=DIR`` puts everything in DIR, so several nodes can run on one machine. Without it,
config goes to the per-user config folder (``$XDG_CONFIG_HOME/commons``, by default
``~/.config/commons``) and keys and data to the per-user data folder (``$XDG_DATA_HOME/commons``,
by default ``~/.local/share/commons``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Home:
    config_dir: Path
    data_dir: Path

    @classmethod
    def from_environment(cls, environ: dict[str, str] | None = None) -> "Home":
        env = os.environ if environ is None else environ
        if env.get("COMMONS_HOME"):
            root = Path(env["COMMONS_HOME"]).expanduser().absolute()
            return cls(config_dir=root, data_dir=root / "data")
        user = Path.home()
        config_base = Path(env.get("XDG_CONFIG_HOME") or user / ".config")
        data_base = Path(env.get("XDG_DATA_HOME") or user / ".local" / "share")
        return cls(config_dir=config_base / "commons", data_dir=data_base / "commons")

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def keys_dir(self) -> Path:
        return self.data_dir / "keys"

    @property
    def database(self) -> Path:
        return self.data_dir / "commons.db"

    @property
    def archive_dir(self) -> Path:
        return self.data_dir / "archive"

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def daemon_file(self) -> Path:
        """Written by a running daemon: its pid and bound address, for `commons status`."""
        return self.data_dir / "daemon.json"

    @property
    def reports_dir(self) -> Path:
        return self.data_dir / "reports"
