"""The git rules: history rewritten or pushed over, work thrown away, hooks and signing skipped."""

from __future__ import annotations


from commons.core.policy.danger.shell import Command
from commons.core.policy.danger.rule import SHARED_BRANCHES, Step, applies_to, env_of


def is_git(command: Command, *subs: str) -> bool:
    return command.program == "git" and git_sub(command) in subs


def git_sub(command: Command) -> str:
    args = list(command.args)
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-c", "-C", "--git-dir", "--work-tree") and args:
            args.pop(0)
    return args[0].lower() if args else ""


def git_settings(command: Command) -> tuple[str, ...]:
    """The ``-c key=value`` settings given to git for one call."""
    args = command.args
    return tuple(args[i + 1].lower() for i, a in enumerate(args[:-1]) if a == "-c")


@applies_to("git")
def push_force(command: Command, step: Step) -> bool:
    if not is_git(command, "push"):
        return False
    if command.flag("--force", "f") or any(a.startswith("+") and len(a) > 1 for a in command.positional()[1:]):
        return True
    if command.flag("--force-with-lease", "--force-if-includes"):
        refs = command.positional()[2:]  # push, the remote, then refspecs
        if command.flag("--all", "--mirror"):
            return True
        if not refs:
            return True  # the branch pushed is the current one, which may be a shared one
        return any(SHARED_BRANCHES.match(ref.split(":")[-1].removeprefix("refs/heads/")) for ref in refs)
    return command.flag("--mirror", "--delete", "d") or any(a.startswith(":") and len(a) > 1 for a in command.positional()[2:])


@applies_to("git")
def reset_hard(command: Command, step: Step) -> bool:
    return is_git(command, "reset") and command.flag("--hard", "--merge", "--keep") and "--keep" not in command.args


@applies_to("git")
def clean(command: Command, step: Step) -> bool:
    return is_git(command, "clean") and command.flag("--force", "f") and not command.flag("--dry-run", "n")


@applies_to("git")
def discard(command: Command, step: Step) -> bool:
    if is_git(command, "checkout", "restore"):
        args = command.args
        whole = {".", ":/", "*", "-A", ":(top)"}
        if git_sub(command) == "restore" and command.flag("--staged", "S") and not command.flag("--worktree", "W"):
            return False
        after = args[args.index("--") + 1:] if "--" in args else command.positional()[1:]
        return any(a in whole for a in after) or (command.flag("--force", "f") and git_sub(command) == "checkout")
    return is_git(command, "stash") and len(command.positional()) > 1 and command.positional()[1].lower() in ("drop", "clear")


@applies_to("git")
def branch_delete(command: Command, step: Step) -> bool:
    return is_git(command, "branch") and ("-D" in command.args or (command.flag("--delete", "d") and command.flag("--force", "f")))


@applies_to("git-filter-repo", "bfg", "git")
def history_rewrite(command: Command, step: Step) -> bool:
    if command.program in ("git-filter-repo", "bfg"):
        return True
    if is_git(command, "filter-branch", "filter-repo", "replace"):
        return True
    if is_git(command, "reflog") and "expire" in command.lowered:
        return True
    if is_git(command, "gc") and any(a.startswith("--prune=now") for a in command.args):
        return True
    return is_git(command, "update-ref") and command.flag("d")


@applies_to("git", "pre-commit")
def no_verify(command: Command, step: Step) -> bool:
    if command.program == "git" and git_sub(command) in ("commit", "push", "merge", "am", "rebase", "cherry-pick", "revert"):
        env = env_of(command, step)
        if command.flag("--no-verify") or (git_sub(command) == "commit" and command.flag("n")):
            return True
        if env.get("HUSKY") == "0" or env.get("HUSKY_SKIP_HOOKS") or env.get("SKIP") or env.get("PRE_COMMIT_ALLOW_NO_CONFIG"):
            return True
        return any(c.startswith("core.hookspath=") for c in git_settings(command))
    if command.program == "pre-commit" and command.sub == "uninstall":
        return True
    if command.program == "git" and git_sub(command) == "config" and "core.hookspath" in command.lowered:
        return True
    return False


@applies_to("git")
def no_sign(command: Command, step: Step) -> bool:
    if command.program == "git" and (command.flag("--no-gpg-sign") or "commit.gpgsign=false" in git_settings(command)):
        return True
    low = command.lowered
    return is_git(command, "config") and any(k in low for k in ("commit.gpgsign", "tag.gpgsign")) and "false" in low
