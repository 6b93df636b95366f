"""The rules about the machine: files deleted, permissions opened, privileges raised, global
configuration changed."""

from __future__ import annotations

import re

from commons.core.policy.danger.shell import Command, tokenize
from commons.core.policy.danger.git import git_sub, is_git
from commons.core.policy.danger.rule import (
    DB_FILE, PKG_MANAGERS, TEST_FILE, Step, applies_to, regenerable, targets_of,
)


@applies_to("rm", "remove-item", "ri", "del", "rmdir", "rd", "erase", "find", "shred", "wipefs", "mkfs", "dd")
def rm_tree(command: Command, step: Step) -> bool:
    program, args = command.program, command.args
    if program == "rm" and (command.flag("--recursive", "r", "R")):
        if command.flag("--no-preserve-root"):
            return True
        return not all(regenerable(t) for t in targets_of(command)) or not targets_of(command)
    if program in ("remove-item", "ri", "rm", "del", "rmdir", "rd", "erase") and any(
            a.lower() in ("-recurse", "-r", "-rec") for a in args):
        targets = [a for a in args if not a.startswith("-")]
        return not targets or not all(regenerable(t) for t in targets)
    if program in ("rd", "rmdir", "del", "erase") and any(a.lower() in ("/s", "/q", "/f") for a in args):
        targets = [a for a in args if not a.startswith("/") or len(a) > 3]
        return not targets or not all(regenerable(t) for t in targets)
    if program == "find" and ("-delete" in args or ("-exec" in args and any(a in ("rm", "shred") for a in args))):
        names = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-name", "-iname")]
        return not names or not all(regenerable(n.replace("*", "x")) or n.startswith("*.py") for n in names)
    return program in ("shred", "wipefs", "mkfs", "dd") and (program != "dd" or any(a.startswith("of=/dev/") for a in args))


@applies_to("rm", "remove-item", "del", "unlink", "ri", "erase", "git")
def rm_data(command: Command, step: Step) -> bool:
    """A database file, the repository's own history, or everything in a folder."""
    if command.program not in ("rm", "remove-item", "del", "unlink", "ri", "erase") and not is_git(command, "rm"):
        return False
    targets = [t for t in targets_of(command) if t.lower() != "rm"]
    return any(DB_FILE.search(t) or t.rstrip("/") in (".git", "*", ".*") or t.endswith("/*") and not regenerable(t[:-2])
               for t in targets)


_DELETES = frozenset({"rm", "remove-item", "del", "unlink", "ri", "erase", "shred"})


def deletes_files(line: str) -> bool:
    """Whether a step deletes a file or folder a tool does not make again (``rm``, ``git rm``,
    ``Remove-Item``, ``del``)."""
    return any((c.program in _DELETES or is_git(c, "rm")) and not all(regenerable(t) for t in targets_of(c) if t.lower() != "rm")
               for c in tokenize(line))


@applies_to("rm", "remove-item", "del", "unlink", "ri", "git")
def rm_test(command: Command, step: Step) -> bool:
    if command.program not in ("rm", "remove-item", "del", "unlink", "ri") and not is_git(command, "rm"):
        return False
    return any(TEST_FILE.search(t) and not regenerable(t) for t in targets_of(command) if t.lower() != "rm")


@applies_to("chmod", "icacls")
def world_writable(command: Command, step: Step) -> bool:
    if command.program == "chmod":
        modes = [a for a in command.args if not a.startswith("-") or re.fullmatch(r"-[rwxXst]+", a)]
        mode = modes[0] if modes else ""
        if re.fullmatch(r"0?[0-7]?[0-7][0-7][2367]", mode) or re.search(r"(?:^|,)(?:a|o|ugo)?[+=]\w*w", mode) \
                and (mode.startswith(("a", "o", "+")) or "o" in mode.split("+")[0]):
            return True
        if re.fullmatch(r"0?[4-7][0-7]{3}", mode) or re.search(r"[ug]\+\w*s", mode):
            return True  # setuid / setgid
        return False
    if command.program == "icacls":
        return any(re.match(r"(?:everyone|\*s-1-1-0|users):", a, re.IGNORECASE) for a in command.args) \
            and "/grant" in command.lowered
    return False


@applies_to("chown", "chgrp", "takeown")
def owns_system(command: Command, step: Step) -> bool:
    if command.program in ("chown", "chgrp") and command.flag("--recursive", "R"):
        return any(re.match(r"^/(?:usr|etc|var|opt|bin|lib|Library|System)?/?$|^/usr/", t) for t in targets_of(command)[1:])
    return command.program in ("takeown",) and "/r" in command.lowered


def sudo_tools(command: Command, step: Step) -> bool:
    if not command.privileged:
        return False
    program = command.program
    if program in PKG_MANAGERS or program in _SHELLS_AND_SCRIPTS or program.startswith(("./", "python")):
        return True
    if program in ("npm", "node", "bash", "sh") or command.words[0].startswith(("./", "../", "~/", "<path>")):
        return True
    return program in ("su", "visudo") or (program == "chmod" and world_writable(command, step))


# `sudo make install` is how built software is installed; what a script or a language's package
# manager runs as root is not reviewed by anyone.
_SHELLS_AND_SCRIPTS = frozenset({"sh", "bash", "zsh", "su", "python", "python3", "node", "perl", "ruby", "php"})


def sudoers(command: Command, step: Step) -> bool:
    if any(r.startswith(("/etc/sudoers", "/etc/doas")) for r in command.redirects):
        return True
    if command.program == "tee" and any(a.startswith("/etc/sudoers") for a in command.args):
        return True
    if command.program == "usermod" and any(g in command.lowered for g in ("sudo", "wheel", "root", "admin")):
        return True
    if command.program in ("net", "net1") and "localgroup" in command.lowered and "administrators" in command.lowered:
        return True
    return command.program in ("setcap",) or "NOPASSWD" in " ".join(command.args)


@applies_to("start-process", "runas", "su")
def elevate(command: Command, step: Step) -> bool:
    low = command.lowered
    if command.program == "start-process" and "-verb" in low and "runas" in low:
        return True
    return command.program == "runas" or (command.program == "su" and not command.privileged)


# --------------------------------------------------------------------------------------------
# Global configuration

_RC_FILES = re.compile(r"(?:^|/)(?:\.bashrc|\.bash_profile|\.zshrc|\.zprofile|\.profile|\.config/fish/config\.fish|"
                       r"\.npmrc|\.yarnrc|\.gitconfig|\.pip/pip\.conf|\.config/pip/pip\.conf|pip\.ini|\.condarc|"
                       r"\.cargo/config(?:\.toml)?|\.docker/config\.json|/etc/[\w./-]+|\.ssh/config)$")


def rc_files(command: Command, step: Step) -> bool:
    targets = list(command.redirects)
    if command.program == "tee":
        targets += [a for a in command.args if not a.startswith("-")]
    if command.program in ("sed", "perl") and command.flag("i", "--in-place"):
        targets += [a for a in command.args if not a.startswith("-")][1:]
    if command.program in ("cp", "mv", "ln", "install"):
        targets += list(command.positional()[-1:])
    if command.program in ("add-content", "set-content", "out-file") and any("$profile" in a.lower() for a in command.args):
        return True
    return any(_RC_FILES.search(t.replace("$HOME", "~")) and not t.startswith("./") for t in targets)


# What `git config` is told when it only reads (or edits by hand): no setting is written then.
_READING_CONFIG = frozenset({"--get", "--get-all", "--list", "-l", "get", "list", "ls", "--show-origin", "--get-regexp",
                             "--show", "show", "--unset-all", "--edit"})


def global_config(command: Command, step: Step) -> bool:
    program, low = command.program, command.lowered
    if program == "git" and git_sub(command) == "config":
        return any(a in ("--global", "--system") for a in low) and not any(a in _READING_CONFIG for a in low)
    if program in ("npm", "pnpm") and command.sub in ("config", "set") and (command.sub == "set" or "set" in low[:3]):
        return not any(a in ("--location=project", "--location", "project") for a in low)
    if program == "yarn" and command.sub == "config" and "set" in low:
        return True  # yarn 1 writes ~/.yarnrc; berry's -H the home one, plain set the project's (.yarnrc.yml)
    if program in ("pip", "pip3") and command.sub == "config" and any(a in ("set", "unset") for a in low):
        return not any(a in ("--site",) for a in low)
    if program == "poetry" and command.sub == "config" and len(command.positional()) > 2:
        return "--local" not in low and "--list" not in low
    if program in ("conda", "mamba") and command.sub == "config" and any(a.startswith(("--set", "--add", "--remove",
                                                                                         "--append", "--prepend")) for a in low):
        return "--env" not in low and "--file" not in low
    if program == "go" and command.sub == "env" and "-w" in low:
        return True
    if program in ("rustup",) and command.sub in ("default",):
        return True
    if program in ("pyenv", "rbenv", "nodenv", "jenv", "goenv") and command.sub == "global":
        return True
    if program == "nvm" and low[:2] == ("alias", "default"):
        return True
    if program in ("update-alternatives",) and any(a in ("--set", "--install", "--config") for a in low):
        return True
    if program in ("setx",) or (program == "[environment]::setenvironmentvariable"):
        return True
    if any("setenvironmentvariable(" in w.lower() and ("'machine'" in w.lower() or "'user'" in w.lower() or
                                                       "machine" in w.lower()) for w in command.words):
        return True
    if program in ("sysctl",) and ("-w" in low or "--write" in low or any("=" in a for a in low)):
        return True
    if program == "defaults" and command.sub == "write":
        return True
    if program == "reg" and command.sub in ("add", "delete", "import") and any(a.startswith(("hklm", "hkey_local_machine"))
                                                                               for a in low):
        return True
    if program == "launchctl" and command.sub in ("setenv", "config"):
        return True
    if program in ("npm", "pnpm", "yarn", "bun") and command.privileged and command.flag("--global", "g"):
        return True
    return False
