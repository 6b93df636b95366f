"""The failure line past what agents and consoles wrap round a command's output: Codex's sandbox
frame, padded console rows, package managers' and image builders' progress."""

from __future__ import annotations

from commons.core.learning.failure import failure_line


def test_a_codex_sandbox_frame_docker_progress_and_a_logged_warning_give_way_to_what_failed():
    sandboxed = ("failed in sandbox: # ./...\npattern ./...: open /home/dev/.cache/go-build/26/2645-d: permission denied\n"
                 "go: failed to trim cache: open /home/dev/.cache/go-build/trim.txt: permission denied\n")
    assert failure_line(sandboxed)[0].startswith("pattern ./...: open ~/.cache/go-build/26/2645-d: permission denied")
    assert failure_line("failed in sandbox: ")[0] == "failed in sandbox:"  # nothing printed: the frame is all it says
    compose = ("Exit code 1\ntime=\"2025-10-06T11:12:52+02:00\" level=warning msg=\"the attribute `version` is obsolete\"\n"
               " minio Pulling \n 9824c27679d3 Pulling fs layer \n 9824c27679d3 Verifying Checksum \n minio Pulled \n"
               "fork/exec /usr/local/lib/docker/cli-plugins/docker-buildx: no such file or directory")
    assert failure_line(compose)[0] == "fork/exec /usr/local/lib/docker/cli-plugins/docker-buildx: no such file or directory"


def test_a_powershell_console_captured_without_line_ends_and_a_record_holding_a_web_page_are_read():
    pad = " " * 60
    expand = ("Exit code 1\n\n    Directory: C:\\Users\\dev\\Documents" + pad + "Mode                 LastWriteTime"
              "         Length Name" + pad + "d-----          4/3/2026   3:10 AM                extracted" + pad +
              "Expand-Archive : .exe is not a supported archive file format. .zip is the only supported archive file "
              "format." + pad + "At line:1 char:91" + pad + "+ ... _extracted; Expand-Archive -Path \"C:\\setup.exe\" ..."
              + pad + "+                 ~~~~~~~~~~~~~~~~~~~~" + pad + "+ CategoryInfo          : InvalidArgument: (.exe:"
              "String) [Expand-Archive], IOException" + pad)
    assert failure_line(expand)[0].startswith("Expand-Archive : .exe is not a supported archive file format.")
    page = "\n".join(["Exit code 1", "Invoke-WebRequest : <!DOCTYPE html><html lang=\"en\"><head><meta charSet=\"utf-8\"/>"]
                     + [f".c{n}{{color:#00000{n % 10}}}" for n in range(40)]
                     + ["At line:1 char:1", "+ Invoke-WebRequest -Uri \"https://example.com/setup.exe\" ...",
                        "+ ~~~~~~~~~~~~~~~~~", "    + CategoryInfo          : InvalidOperation: (:) [Invoke-WebRequest], WebException"])
    assert failure_line(page)[0].startswith("Invoke-WebRequest : <!DOCTYPE html>")
    caret = ("Exit code 1\nAt line:1 char:134\r\n+ ... -Body (@{model='llama3.2:3b'; stream=} | Conv ...\r\n+" + " " * 60
             + "~\r\nMissing statement after '=' in hash literal.\r\n    + CategoryInfo          : ParserError: (:) []")
    assert failure_line(caret)[0] == "Missing statement after '=' in hash literal."


def test_apt_and_wget_progress_and_buildkit_step_prefixes_give_way_to_the_error():
    apt = ("Exit code 100\nWARNING: apt does not have a stable CLI interface. Use with caution in scripts.\n\n"
           "Hit:1 http://archive.ubuntu.com/ubuntu jammy InRelease\nGet:2 http://archive.ubuntu.com/ubuntu jammy-updates "
           "InRelease [119 kB]\nFetched 119 kB in 1s (150 kB/s)\nReading package lists... Done\nBuilding dependency tree...\n"
           "Reading state information...\nE: Unable to locate package libfoo-dev")
    assert failure_line(apt)[0] == "E: Unable to locate package libfoo-dev"
    wget = ("Exit code 8\n--2025-01-01 10:00:00--  https://example.com/x.tar.gz\nResolving example.com (example.com)... "
            "93.184.216.34\nConnecting to example.com (example.com)|93.184.216.34|:443... connected.\n"
            "HTTP request sent, awaiting response... 404 Not Found\n2025-01-01 10:00:01 ERROR 404: Not Found.")
    assert failure_line(wget)[0] == "HTTP request sent, awaiting response... 404 Not Found"
    build = ('Exit code 1\n#0 building with "default" instance using docker driver\n#1 [internal] load build definition '
             "from Dockerfile\n#1 transferring dockerfile: 32B done\n#5 [2/4] RUN pip install -r requirements.txt\n"
             "#5 2.345 ERROR: Could not find a version that satisfies the requirement foo==9\n"
             '#5 ERROR: process "/bin/sh -c pip install -r requirements.txt" did not complete successfully: exit code: 1')
    assert failure_line(build)[0] == "ERROR: Could not find a version that satisfies the requirement foo==9"


def test_nix_realising_a_shell_and_package_managers_summaries_give_way_to_what_failed():
    develop = ("Process exited with code 2\nOutput:\nbuilding '/nix/store/r3vxvn5c40-nix-shell-env.drv'...\n"
               '[error] No parser could be inferred for file "/home/dev/kernel/src/main.rs".\n')
    assert failure_line(develop)[0] == '[error] No parser could be inferred for file "~/kernel/src/main.rs".'
    shell = ("these 2 paths will be fetched (8.96 MiB download, 34.36 MiB unpacked):\n  /nix/store/rfv7q14hb-cargo-1.91.1\n"
             "  /nix/store/lvfzw4map-rustc-wrapper-1.91.1\ncopying path '/nix/store/rfv7q14hb-cargo-1.91.1' from "
             "'https://cache.nixos.org'...\nUpdating crates.io index\nLocking 149 packages to latest compatible versions\n"
             "Adding axum v0.7.9 (available: v0.8.8)\nBlocking waiting for file lock on package cache\n"
             "Compiling serde v1.0.228\nerror[E0382]: borrow of moved value: `sender`")
    assert failure_line(shell)[0] == "error[E0382]: borrow of moved value: `sender`"
    npm = ("npm WARN deprecated inflight@1.0.6: This module is not supported, and leaks memory.\n"
           "added 312 packages, and audited 313 packages in 9s\n54 packages are looking for funding\n"
           "run `npm fund` for details\nfound 0 vulnerabilities\nsh: 1: vite: Permission denied")
    assert failure_line(npm)[0] == "sh: 1: vite: Permission denied"
    pnpm = ("Progress: resolved 212, reused 200, downloaded 0, added 0\nPackages: +212\n"
            "WARN deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported\nDone in 2.1s\n"
            "ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  web@0.1.0 build: `vite build`")
    assert failure_line(pnpm)[0].startswith("ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL")
    pip = ("Requirement already satisfied: numpy in ./.venv/lib/python3.12/site-packages (2.1.0)\n"
           "Obtaining file:///home/dev/ledger\nFound existing installation: ledger 0.1.0\nAttempting uninstall: ledger\n"
           "Successfully uninstalled ledger-0.1.0\nerror: subprocess-exited-with-error")
    assert failure_line(pip)[0].startswith("error: subprocess-exited-with-error")


def test_eslints_crash_banner_vitests_failure_headers_and_playwrights_web_server_give_way_to_the_cause():
    eslint = ("> web@0.1.0 lint\n> eslint \"src/**/*.{ts,tsx}\"\n\n\nOops! Something went wrong! :(\n\nESLint: 9.39.1\n\n"
              "ESLint couldn't find an eslint.config.(js|mjs|cjs) file.\n\nFrom ESLint v9.0.0, the default configuration "
              "file is now eslint.config.js.\n")
    assert failure_line(eslint)[0] == "ESLint couldn't find an eslint.config.(js|mjs|cjs) file."
    vitest = (" RUN  v2.1.9 /home/dev/web\n\n ❯ src/hooks/use.test.ts (3 tests | 3 failed) 3ms\n   × use (spec) > starts empty 2ms\n"
              "     → document is not defined\n\n⎯⎯⎯⎯ Failed Tests 3 ⎯⎯⎯⎯\n\n FAIL  src/hooks/use.test.ts > use (spec) > "
              "starts empty\nReferenceError: document is not defined\n ❯ render node_modules/pure.js:257:5\n")
    assert failure_line(vitest)[0] == "ReferenceError: document is not defined"
    playwright = ("> web@0.1.0 test:e2e\n> playwright test\n\n\x1b[2m[WebServer] \x1b[22m\x1b[31merror when starting dev "
                  "server:\n\x1b[2m[WebServer] \x1b[22mError: listen EPERM: operation not permitted 127.0.0.1:5173\n"
                  "\x1b[2m[WebServer] \x1b[22m at Server.setupListenHandle (node:net:1918:21)\x1b[39m\n"
                  "Error: Process from config.webServer was not able to start. Exit code: 1\n")
    assert "listen EPERM: operation not permitted 127.0.0.1:5173" in failure_line(playwright)[0]
