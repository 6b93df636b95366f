"""Record real sessions of Claude Code, Codex and Gemini CLI against the fake model, as test fixtures.

``make record-agents`` (or ``python -m tests.agents.record``) installs the CLIs from npm into a
scratch folder (``--npm-dir``, kept between runs), then, for each agent, in a throwaway HOME:

1. lays out a small git project (``check.py`` fails until ``config.ini`` exists),
2. starts the fake model on 127.0.0.1 (`tests.agents.fake_model`) and points the CLI at it
   (Claude Code: ``ANTHROPIC_BASE_URL``; Codex: a model provider's ``base_url`` in
   ``$CODEX_HOME/config.toml``; Gemini: ``GOOGLE_GEMINI_BASE_URL``),
3. runs the CLI headless twice in the same session: "run the checks in this project" (a failed
   call, a fix, a retry that passes), then, resumed, the person's correction "no, that is wrong:
   use uv instead of pip in this project",
4. copies the transcript the CLI wrote into ``tests/fixtures/agents/<agent>-<version>/``, at the
   path it has under the agent's folder, with the scratch folder replaced by ``/home/ada`` (in the
   text and in Claude Code's folder name), so nothing of this machine is committed.

A new CLI release is checked the same way: ``make record-agents VERSIONS="claude-code=2.2.0"``,
then ``pytest tests/test_agent_recordings.py``. Not part of ``make test``: CI has no npm packages.
The model server talks only to loopback; the CLIs are told to send nothing else (telemetry, update
checks off), and their HOME is a scratch folder, so the person's own configs are never read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from commons.integrations import codex as codex_config
from tests.agents import fake_model

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "agents"
PACKAGES = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex", "gemini": "@google/gemini-cli"}
VERSIONS = {"claude-code": "2.1.197", "codex": "0.171.0", "gemini": "0.61.0"}
BINARIES = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}
TASK = "run the checks in this project"
SCRUBBED_HOME = "/home/ada"
PROJECT = "tidepool"
RUN_TIMEOUT = 180.0
CODEX_CONFIG_FIXTURE = "config-after-codex-features-enable.toml"
CODEX_DIRECT_MODEL = "gpt-5.5"  # a model Codex 0.171 gives exec_command and apply_patch as tools

CHECK_PY = '''import pathlib
import sys

if not pathlib.Path("config.ini").exists():
    print("error: config.ini not found: the checks read [checks] mode from it", file=sys.stderr)
    sys.exit(1)
print("3 checks passed")
'''


@dataclass(frozen=True)
class Scratch:
    """One agent's throwaway machine: a HOME and the project the session runs in."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.home / "code" / PROJECT

    def lay_out(self) -> None:
        self.project.mkdir(parents=True)
        (self.project / "check.py").write_text(CHECK_PY)
        (self.project / "requirements.txt").write_text("requests==2.32.3\n")
        git = ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.invalid"]
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=self.project, check=True)
        subprocess.run([*git, "add", "."], cwd=self.project, check=True)
        subprocess.run([*git, "commit", "-qm", "checks"], cwd=self.project, check=True)


def base_env(scratch: Scratch) -> dict[str, str]:
    """A clean environment: the scratch HOME, no proxy, nothing of the person's own."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch.home), "TERM": "dumb",
            "LANG": "C.UTF-8", "NO_COLOR": "1", "CI": "1"}


def run(argv: list[str], scratch: Scratch, env: dict[str, str], log: Path, ok: tuple[int, ...] = (0,)) -> str:
    done = subprocess.run(argv, cwd=scratch.project, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          stdin=subprocess.DEVNULL)
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(argv)}\n-- exit {done.returncode}\n-- stdout\n{done.stdout}\n-- stderr\n{done.stderr}\n")
    if done.returncode not in ok:
        raise RuntimeError(f"{argv[0]} exited {done.returncode}: {(done.stderr or done.stdout).strip()[-800:]} (log: {log})")
    return done.stdout


# -- each agent ------------------------------------------------------------------------------------


def record_claude_code(binary: Path, scratch: Scratch, base_url: str, log: Path) -> list[Path]:
    env = base_env(scratch) | {
        "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-fake", "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
    }  # fmt: skip
    tools = ["--allowedTools", "Bash Write Edit Read", "--output-format", "json"]
    first = json.loads(run([str(binary), "-p", TASK, *tools], scratch, env, log))
    run([str(binary), "-p", fake_model.CORRECTION, "--resume", first["session_id"], *tools], scratch, env, log)
    return sorted((scratch.home / ".claude" / "projects").rglob("*.jsonl"))


def record_codex(binary: Path, scratch: Scratch, base_url: str, log: Path) -> list[Path]:
    codex_home = scratch.home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model_provider = "fake"\ncheck_for_update_on_startup = false\n\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{base_url}/v1"\nwire_api = "responses"\n'
        'env_key = "FAKE_MODEL_KEY"\n\n[analytics]\nenabled = false\n'
    )
    env = base_env(scratch) | {"CODEX_HOME": str(codex_home), "FAKE_MODEL_KEY": "fake"}
    flags = ["--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"]
    # Two sessions: the default model, which runs its tools from JavaScript (`exec`, "code mode"),
    # and an older model that calls `exec_command` and `apply_patch` directly.
    for model in ([], ["--model", CODEX_DIRECT_MODEL]):
        (scratch.project / "config.ini").unlink(missing_ok=True)
        run([str(binary), "exec", *model, *flags, TASK], scratch, env, log)
        run([str(binary), "exec", "resume", "--last", *model, *flags, fake_model.CORRECTION], scratch, env, log)
    # Codex writing its own config after `commons setup codex`: `codex features enable` adds a
    # table, which lands inside commons' block (as the TUI's [tui] notices do); undo is tested on it.
    (codex_home / "config.toml").write_text(codex_config.with_mcp_server(
        'model = "gpt-5.5"\n', "config.toml", "/usr/local/bin/commons", ["mcp"], {}))
    listed = run([str(binary), "features", "list"], scratch, env, log)
    feature = next(line.split()[0] for line in listed.splitlines() if line.split() and line.split()[-1] == "false")
    run([str(binary), "features", "enable", feature], scratch, env, log)
    shutil.copy(codex_home / "config.toml", scratch.home / ".codex" / CODEX_CONFIG_FIXTURE)
    return [*sorted((codex_home / "sessions").rglob("rollout-*.jsonl")), codex_home / CODEX_CONFIG_FIXTURE]


def record_gemini(binary: Path, scratch: Scratch, base_url: str, log: Path) -> list[Path]:
    gemini_dir = scratch.home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    (gemini_dir / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }, indent=2))  # fmt: skip
    # The folder is trusted the way Gemini itself records it (headless runs refuse an untrusted one).
    (gemini_dir / "trustedFolders.json").write_text(json.dumps({str(scratch.project): "TRUST_FOLDER"}, indent=2))
    env = base_env(scratch) | {"GEMINI_API_KEY": "fake", "GOOGLE_GEMINI_BASE_URL": base_url}
    flags = ["--approval-mode", "yolo", "--output-format", "json"]
    run([str(binary), "-p", TASK, *flags], scratch, env, log)
    run([str(binary), "-p", fake_model.CORRECTION, "--resume", "latest", *flags], scratch, env, log)
    # A checkpoint of the chat, as `/chat save` writes it; Gemini then exits 42 ("not supported in
    # non-interactive mode"), having saved it (and written the resumed chat's restatement again).
    run([str(binary), "-p", "/chat save before-uv", "--resume", "latest", *flags], scratch, env, log, ok=(0, 42))
    return sorted(p for p in (gemini_dir / "tmp").rglob("*.json*")
                  if p.suffix in (".json", ".jsonl") and p.name.startswith(("session-", "checkpoint-")))


RECORDERS: dict[str, Callable[[Path, Scratch, str, Path], list[Path]]] = {
    "claude-code": record_claude_code, "codex": record_codex, "gemini": record_gemini,
}  # fmt: skip


# -- installing, scrubbing, writing ------------------------------------------------------------------


def install(npm_dir: Path, agent: str, version: str) -> Path:
    """The CLI's binary, installed from npm into ``npm_dir/<agent>-<version>`` when not there yet."""
    folder = npm_dir / f"{agent}-{version}"
    binary = folder / "node_modules" / ".bin" / BINARIES[agent]
    if not binary.exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"name": "record-agents", "private": true}\n')
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", f"{PACKAGES[agent]}@{version}"], cwd=folder,
                       check=True, timeout=900)
    return binary


def installed_version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=120).stdout
    found = re.search(r"\d+\.\d+\.\d+", out)
    return found.group(0) if found else "unknown"


def claude_slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def scrub(text: str, scratch: Scratch) -> str:
    """The transcript with the scratch HOME replaced by ``/home/ada``, also where Claude Code spelled
    it as a folder name, or JSON escaped it."""
    home = str(scratch.home)
    for real in {home, os.path.realpath(home)}:
        text = text.replace(real, SCRUBBED_HOME).replace(claude_slug(real), claude_slug(SCRUBBED_HOME))
    return text


def fixture_path(transcript: Path, scratch: Scratch, agent: str, version: str) -> Path:
    relative = scrub(str(transcript.relative_to(scratch.home)), scratch)
    return FIXTURES / f"{agent}-{version}" / relative


def record(agent: str, version: str, npm_dir: Path, keep: bool) -> list[Path]:
    binary = install(npm_dir, agent, version)
    actual = installed_version(binary)
    root = Path(tempfile.mkdtemp(prefix=f"record-{agent}-"))
    scratch = Scratch(root)
    scratch.lay_out()
    log = root / "session.log"
    server = fake_model.serve(0, root / "requests.jsonl", str(scratch.project))
    try:
        base_url = f"http://127.0.0.1:{server.server_address[1]}"
        transcripts = RECORDERS[agent](binary, scratch, base_url, log)
    finally:
        server.shutdown()
        server.server_close()
    if not transcripts:
        raise RuntimeError(f"{agent} {actual} wrote no transcript (log: {log})")
    out_dir = FIXTURES / f"{agent}-{actual}"
    shutil.rmtree(out_dir, ignore_errors=True)
    written = []
    for transcript in transcripts:
        target = fixture_path(transcript, scratch, agent, actual)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(scrub(transcript.read_text(encoding="utf-8"), scratch), encoding="utf-8")
        written.append(target)
    if keep:
        print(f"{agent}: scratch kept in {root}", file=sys.stderr)
    else:
        shutil.rmtree(root, ignore_errors=True)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record real agent sessions against the fake model as fixtures.")
    parser.add_argument("agents", nargs="*", default=list(RECORDERS), choices=list(RECORDERS),
                        help="which agents to record (default: all three)")
    parser.add_argument("--version", action="append", default=[], metavar="AGENT=VERSION",
                        help=f"the npm version to record (default: {', '.join(f'{a}={v}' for a, v in VERSIONS.items())})")
    parser.add_argument("--npm-dir", type=Path, default=Path(tempfile.gettempdir()) / "commons-record-agents",
                        help="where the CLIs are installed from npm (kept between runs)")
    parser.add_argument("--keep", action="store_true", help="keep each scratch HOME (its path goes to stderr)")
    args = parser.parse_args(argv)
    versions = dict(VERSIONS)
    for spec in args.version:
        agent, _, version = spec.partition("=")
        if agent not in VERSIONS or not version:
            parser.error(f"--version takes AGENT=VERSION with AGENT one of {', '.join(VERSIONS)}: {spec!r}")
        versions[agent] = version
    for agent in args.agents:
        for path in record(agent, versions[agent], args.npm_dir, args.keep):
            print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
