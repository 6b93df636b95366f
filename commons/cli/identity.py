"""`commons init`, `commons id`, `commons config`: a node's identity and settings."""

from __future__ import annotations

import argparse
import os
import dataclasses

from commons import identity
from commons.node.context import render_target
from commons.render.claude_code import ClaudeCodeTarget
from commons.cli.context import Context, add_json_flag, emit
from commons.cli.setup_agents import installed_agents
from commons.config import DEFAULT_NETWORK_KEY, default_config_text, toml_value
from commons.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "init",
        help="create this node's keys and a default config",
        description=(
            "Create the node's author key (signs records), transport key (the handshake; kept apart "
            "so peers cannot tie an address to an author) and hashing secret, each in a file of mode "
            "0600 that is never overwritten, a default config.toml and the database. On a home "
            "that is already initialised it changes nothing, says so and exits 0."
        ),
    )
    parser.add_argument(
        "--network-key",
        metavar="HEX",
        help="32-byte network key (64 hex chars) of a private commons; default: the public commons",
    )
    add_json_flag(parser)
    parser.set_defaults(handler=cmd_init)

    parser = subparsers.add_parser("id", help="print this node's public keys", description="Print the author and transport public keys.")
    add_json_flag(parser)
    parser.set_defaults(handler=cmd_id)

    parser = subparsers.add_parser(
        "config",
        help="show the effective configuration",
        description=("Show the configuration in effect, config.toml over the defaults, as TOML: any line "
                     "can be pasted into config.toml."),
    )
    add_json_flag(parser)
    parser.set_defaults(handler=cmd_config)


def _network_key(text: str | None) -> bytes:
    if text is None:
        return DEFAULT_NETWORK_KEY
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise UsageError("--network-key takes 64 hex characters (32 bytes)")
    return key


async def cmd_init(ctx: Context, args: argparse.Namespace) -> int:
    network_key = _network_key(args.network_key)
    paths = identity.key_paths(ctx.home).values()
    keys_only = all(path.exists() for path in paths)
    if keys_only and ctx.home.config_file.exists():  # a second `init` changes nothing and says so
        return _already_initialised(ctx, args)
    # Keys written before the rest of the home (restored from a backup, or a simulation's derived
    # ones) are kept: init makes the config and the store around them.
    created = ctx.identity if keys_only else identity.create(ctx.home)
    config_written = False
    if not ctx.home.config_file.exists():
        ctx.home.config_dir.mkdir(parents=True, exist_ok=True)
        ctx.home.config_file.write_text(default_config_text(network_key), encoding="utf-8")
        config_written = True
    elif args.network_key is not None:
        print(f"commons: note: {ctx.home.config_file} exists and was left as it is; set [network] key there")
    ctx.home.data_dir.mkdir(parents=True, exist_ok=True)
    async with await ctx.open_store():  # made now, so that reading commands work in a read-only home
        pass
    data = {
        "already_initialised": False,
        "author": created.author_public.hex(),
        "transport": created.transport_public.hex(),
        "config": str(ctx.home.config_file),
        "config_written": config_written,
        "keys": str(ctx.home.keys_dir),
    }
    target = render_target(ctx.config, ctx.home.data_dir / "memory", os.environ)
    data["render_target"] = target.name
    if isinstance(target, ClaudeCodeTarget):
        where = f"each project's Claude Code auto memory ({target.claude.projects_dir}/<project>/memory/MEMORY.md)"
    else:
        where = str(target.destinations(())[0].folder)
    data["agents"] = installed_agents()
    found = [name for name, here in data["agents"].items() if here]
    emit(
        args,
        data,
        f"created keys in {ctx.home.keys_dir}\n"
        f"author    {data['author']}\ntransport {data['transport']}\n"
        f"config    {ctx.home.config_file}" + ("" if config_written else " (kept)") + "\n"
        f"lessons   render into {where}"
        + (f"\nagents    {', '.join(found)} found: connect each with "
           + ", ".join(f"`commons setup {name}`" for name in found) if found else ""),
    )
    return 0


def _already_initialised(ctx: Context, args: argparse.Namespace) -> int:
    me = ctx.identity  # checks the key files
    if args.network_key is not None:
        print(f"commons: note: {ctx.home.config_file} was left as it is; set [network] key there")
    data = {"already_initialised": True, "author": me.author_public.hex(), "transport": me.transport_public.hex(),
            "config": str(ctx.home.config_file), "config_written": False, "keys": str(ctx.home.keys_dir)}
    emit(args, data, f"this home is already initialised (keys in {ctx.home.keys_dir}); nothing was changed\n"
                     f"author    {data['author']}\ntransport {data['transport']}")
    return 0


def cmd_id(ctx: Context, args: argparse.Namespace) -> int:
    me = ctx.identity
    data = {"author": me.author_public.hex(), "transport": me.transport_public.hex()}
    emit(args, data, f"author    {data['author']}\ntransport {data['transport']}")
    return 0


def _toml_lines(values: dict) -> list[str]:
    # TOML has no null: an unset value is shown as a comment
    return [f"{k} = {toml_value(v)}" if v is not None else f"# {k} is not set" for k, v in values.items()]


def cmd_config(ctx: Context, args: argparse.Namespace) -> int:
    config = ctx.config
    data = config.as_dict()
    data["peers"] = [dataclasses.asdict(p) for p in config.peers]

    def text() -> str:
        lines = [f"# {ctx.home.config_file}" + ("" if ctx.home.config_file.exists() else " (absent: defaults)")]
        for section, values in data.items():
            if section == "peers":
                for peer in values:
                    lines += ["", "[[peers]]"] + _toml_lines(peer)
                continue
            lines += ["", f"[{section}]"] + _toml_lines(values)
        return "\n".join(lines)

    emit(args, data, text)
    return 0
