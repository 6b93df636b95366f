"""Commands that run a command elsewhere (`adb shell`, `docker exec`, `kubectl exec`, `ssh`), options
that take a value before a sub-command, a program's own word on what failed, and harness lines that
mean a call never ran."""

from __future__ import annotations

import pytest

from commons.core.learning.evidence import OpenFailure, StepKind, advance, opened, step_kind
from commons.core.learning.failure import failure_line, is_probe, not_a_failure, segments
from commons.core.learning.scope import command_head, remote_command


@pytest.mark.parametrize(("command", "head"), [
    ("adb -s emulator-5554 shell id", "adb shell"),
    ("adb -s emulator-5554 remount", "adb remount"),
    ("git -C /work/repo status --short", "git status"),
    ("kubectl -n prod get pods", "kubectl get"),
    ("make -C build test", "make test"),
    ("docker --context remote ps", "docker ps"),
    ("pnpm --filter web build", "pnpm build"),
    ("git --no-pager log -5", "git log"),  # a flag takes no value: the next word is the sub-command
    ("adb devices", "adb devices"),
])
def test_an_options_value_before_the_sub_command_is_not_taken_for_the_sub_command(command, head):
    assert command_head("Bash", command) == head


@pytest.mark.parametrize(("command", "inner"), [
    ('adb -s emulator-5554 shell "ls -la /sbin/ 2>&1" 2>&1', "ls -la /sbin/ 2>&1"),
    ("adb shell getprop ro.build.type", "getprop ro.build.type"),
    ("docker exec -it -u root web cat /etc/hosts", "cat /etc/hosts"),
    ("kubectl exec -n prod api-7f -- ls /app", "ls /app"),
    ("ssh -p 2222 me@host 'uptime'", "uptime"),
    ("adb -s emulator-5554 push a.apk /data/local/tmp/", None),
    ("docker ps -a", None),
])
def test_the_command_a_call_runs_on_a_device_in_a_container_or_on_a_host_is_read_from_it(command, inner):
    assert remote_command(command) == inner


def test_what_runs_on_the_device_or_in_the_container_decides_what_the_call_does():
    for target in ['adb -s emulator-5554 shell "pm path com.example.app 2>&1" 2>&1', "adb shell getprop ro.debuggable",
                   'adb -s emulator-5554 shell "ls -la /data/app/" 2>&1', "adb -s emulator-5554 devices",
                   "docker exec web ls /app", "adb shell dumpsys package com.example.app"]:
        assert step_kind("Bash", target) is StepKind.READ_ONLY, target
    for target in ['adb shell "setprop persist.sys.x 1; stop adbd"', "docker exec web rm -rf /app/cache",
                   "adb -s emulator-5554 push a.apk /data/local/tmp/", "adb -s emulator-5554 remount"]:
        assert step_kind("Bash", target) is StepKind.STATE_CHANGING, target


def test_a_look_elsewhere_on_the_same_device_is_no_retry_of_a_denied_look_nor_a_fix_of_another_command():
    def fixes(failed: str, then: str) -> list:
        state = opened((), OpenFailure(uid="u1", tool="Bash", command=failed, hint="", failure="Permission denied"))
        _, done = advance(state, "Bash", then, ok=True)
        return [r.resolution for r in done]

    assert fixes('adb -s emulator-5554 shell "ls /data/data/com.example/ 2>&1" 2>&1',
                 "adb -s emulator-5554 shell 'ls -la /data/app/'") == []
    assert fixes("adb -s emulator-5554 remount 2>&1", "adb -s emulator-5554 shell 'pm path com.example'") == []
    # The same command tried again on the device, changed, is still its retry, and its change the fix.
    found = fixes('adb shell "pm install /data/local/tmp/a.apk"', 'adb shell "pm install -r /data/local/tmp/a.apk"')
    assert [r.command for r in found] == ['adb shell "pm install -r /data/local/tmp/a.apk"']
    # Picking the device is how `adb shell` is tried again when more than one is attached.
    found = fixes('adb shell "id; getprop ro.build.type"', 'adb -s emulator-5554 shell "id; getprop ro.build.type"')
    assert [r.command for r in found] == ['adb -s emulator-5554 shell "id; getprop ro.build.type"']
    # In another container it is another step.
    assert fixes("docker exec web pip install x", "docker exec db pip install --user x") == []


def test_a_look_on_the_device_that_finds_nothing_is_a_probe_and_a_denied_one_is_not():
    assert is_probe('adb -s emulator-5554 shell "ls -la /sbin/ 2>&1" 2>&1',
                    "Exit code 1\nls: /sbin/: No such file or directory")
    assert is_probe('adb -s emulator-5554 shell "su --help 2>&1" 2>&1',
                    "Exit code 127\n/system/bin/sh: su: inaccessible or not found")
    assert not is_probe('adb -s emulator-5554 shell "ls /data/data/com.example/ 2>&1" 2>&1',
                        "Exit code 1\nls: /data/data/com.example/: Permission denied")


def test_with_no_failure_marker_the_line_where_a_program_of_the_command_names_itself_says_what_failed():
    listing = ("Exit code 1\nList of devices attached\nemulator-5554\tdevice\nemulator-5556\toffline\n\n"
               "adb: more than one device/emulator\n")
    assert failure_line(listing, "adb devices 2>&1")[0] == "adb: more than one device/emulator"
    unzip = ("Exit code 9\nArchive:  magisk.zip\n  End-of-central-directory signature not found.  Either this file is not\n"
             "  a zipfile, or it constitutes one disk of a multi-part archive.\n"
             "unzip:  cannot find zipfile directory in one of magisk.zip or\n        magisk.zip.zip, and cannot find x.\n")
    assert failure_line(unzip, "unzip -o magisk.zip -d magisk")[0].startswith("unzip: cannot find zipfile directory")
    # A line of that shape from a program the command did not run is no such word.
    assert failure_line("Exit code 1\nSome banner.\nname: value\n", "make all")[0] == "Some banner."


def test_a_call_auto_mode_could_not_judge_safe_was_never_run():
    output = ("claude-opus-4-8 is temporarily unavailable, so auto mode cannot determine the safety of Bash right now. "
              "Wait briefly and then try this action again.")
    assert not_a_failure("Bash", "./rootAVD.sh", output, failure_line(output)[0]) == "not run"


def test_a_loggers_error_record_yields_to_a_programs_own_error_line():
    started = ("Exit code 1\nINFO         | Android emulator version 36.4.10.0\n"
               "ERROR        | Setting read-only feature 'GLAsyncSwap' to '0'\n"
               "USER_INFO    | Emulator is performing a full startup.\nerror: more than one device/emulator\n")
    assert failure_line(started, "adb wait-for-device shell id")[0] == "error: more than one device/emulator"
    alone = "Exit code 1\nINFO         | Android emulator version 36.4.10.0\nERROR        | Unknown AVD name [x]\n"
    assert failure_line(alone, "emulator -avd x")[0] == "ERROR | Unknown AVD name [x]"

