"""The failure line says what failed; a compound command's failure belongs to the part that failed."""

from __future__ import annotations

from commons.core.learning.failure import FAILURE_CHARS, attribute, failure_line, is_informative, segments
from commons.demo.sessions._build import pip_pg_config_missing

MIX_TEST = """Getting extensions in current project...
Compiling 41 files (.ex)
    warning: variable "conn" is unused
    │
 12 │   def index(conn, params) do
    │
    error: undefined function render_totals/1 (expected SpotterWeb.DashboardLive to define such a function)
    │
** (CompileError) lib/spotter_web/live/dashboard_live.ex: cannot compile module SpotterWeb.DashboardLive"""


def test_preamble_progress_and_warnings_give_way_to_the_error_line():
    line, code = failure_line("Exit code 1\n" + MIX_TEST)
    assert line.startswith("error: undefined function render_totals/1") and code == 1

PIP_BUILD_FAILED = pip_pg_config_missing("psycopg2")


def test_a_build_pip_ran_in_a_subprocess_is_named_by_its_own_error_not_by_pips_frame():
    assert failure_line(PIP_BUILD_FAILED)[0] == "Error: pg_config executable not found."
    # A framed output that says nothing failed leaves pip's own line.
    quiet = PIP_BUILD_FAILED.replace("Error: pg_config executable not found.", "see the log")
    assert failure_line(quiet)[0] == "error: subprocess-exited-with-error"


def test_a_traceback_is_named_by_its_last_line():
    out = ("Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    import httpx\n"
           "ModuleNotFoundError: No module named 'httpx'")
    assert failure_line(out)[0] == "ModuleNotFoundError: No module named 'httpx'"


def test_pytest_short_summary_with_its_message_wins_over_headers():
    out = ("============ test session starts ============\nplatform linux -- Python 3.12.3\nrootdir: /x\n"
           "collected 3 items\n\ntests/test_a.py F..\n\n=== FAILURES ===\n___ test_a ___\nE   assert 1 == 2\n"
           "=== short test summary info ===\nFAILED tests/test_a.py::test_a - assert 1 == 2\n=== 1 failed ===")
    assert failure_line(out)[0] == "FAILED tests/test_a.py::test_a - assert 1 == 2"


def test_a_bare_marker_takes_the_line_after_it():
    assert failure_line("Exit code 1\nerror ->\n  config/dev.exs is missing the :port key")[0] == (
        "error -> config/dev.exs is missing the :port key")


def test_a_failed_pre_commit_hook_is_named_with_its_finding():
    out = ("[INFO] Stashing unstaged files to /tmp/patch.\nruff.......Passed\nruff-format.......Failed\n"
           "- hook id: ruff-format\n- files were modified by this hook\n\n1 file reformatted")
    assert failure_line(out)[0] == "hook ruff-format failed: files were modified by this hook"


def test_a_tool_validation_error_keeps_the_issue_not_its_header():
    out = ("<tool_use_error>InputValidationError: Edit failed due to the following issue:\n"
           "The required parameter `old_string` is missing</tool_use_error>")
    assert failure_line(out)[0] == "The required parameter `old_string` is missing"


def test_uninformative_lines_are_told_apart_from_informative_ones():
    for bad in ("", "Exit code 1", "Getting extensions in current project...", "Compiling 41 files (.ex)",
                "Checking 3 source files ...", "error ->", "error"):
        assert not is_informative(bad), bad
    assert is_informative("fatal: The current branch x has no upstream branch.")
    assert is_informative("error: externally-managed-environment")


def test_a_pre_commit_hook_failure_belongs_to_git_commit_not_git_add():
    out = "ruff-format......Failed\n- hook id: ruff-format\n- files were modified by this hook"
    assert attribute("git add -A && git commit -m 'x'", out) == "git commit -m 'x'"


def test_a_command_not_found_belongs_to_the_program_named():
    assert attribute("cd web && pnpm install && npm run build", "bash: pnpm: command not found") == "pnpm install"


def test_a_piped_failure_belongs_to_the_command_not_its_filter():
    out = "npm error code EUSAGE\nnpm error The `npm ci` command can only install with an existing package-lock.json"
    assert attribute("npm ci 2>&1 | tail -20", out) == "npm ci 2>&1"
    assert attribute("cd app && make test", "something broke") == "make test"


def test_segments_split_at_every_shell_separator():
    assert segments("a && b || c; d | e\nf") == ["a", "b", "c", "d", "e", "f"]


def test_compiler_lines_of_other_languages_are_found_past_their_headers():
    assert failure_line("# example.com/app\n./main.go:12:2: undefined: render")[0] == "./main.go:12:2: undefined: render"
    assert failure_line("src/a.ts(12,5): error TS2322: Type 'string' is not assignable")[0].startswith("src/a.ts(12,5): error")
    assert failure_line("   Compiling app v0.1.0\nerror[E0382]: borrow of moved value: `x`")[0] == (
        "error[E0382]: borrow of moved value: `x`")
    assert failure_line("Exit code 127\nbash: line 1: pnpm: command not found")[0] == "bash: line 1: pnpm: command not found"


def test_refusals_interrupts_cascades_probes_and_bare_exit_codes_are_no_failures():
    from commons.core.learning.failure import not_a_failure

    assert not_a_failure("Bash", "rm -rf dist", "This command requires approval", "This command requires approval")
    assert not_a_failure("Bash", "git push", "Permission to use Bash with command git push has been denied.", "x y")
    assert not_a_failure("Edit", "/p/a.py", "The user doesn't want to proceed with this tool use.", "x y")
    assert not_a_failure("Bash", "ls", "[Request interrupted by user for tool use]", "x y")
    assert not_a_failure("Bash", "npm test", "Cancelled: parallel tool call Bash(npm run lint) errored", "x y")
    assert not_a_failure("Bash", "grep -rn TODO src", "Exit code 1", "Exit code 1") == "probe"
    assert not_a_failure("Bash", "cd /p && which pnpm", "Exit code 1\npnpm not found", "pnpm not found") == "probe"
    assert not_a_failure("Bash", "ls build/*.so", "ls: cannot access 'build/*.so': No such file or directory",
                         "ls: cannot access 'build/*.so': No such file or directory") == "probe"
    assert not_a_failure("Read", "/p/missing.md", "File does not exist.", "File does not exist.") == "probe"
    assert not_a_failure("Bash", "./run.sh", "Exit code 1", "Exit code 1") == "bare"
    # A probe that says more than "no" failed for real, and so did any other command.
    assert not not_a_failure("Bash", "grep -r x /root", "grep: /root: Permission denied", "grep: /root: Permission denied")
    assert not not_a_failure("Bash", "uv run pytest", "Exit code 1\nE   AssertionError: 1 != 2",
                             "E AssertionError: 1 != 2")


def test_a_call_a_reader_says_its_harness_refused_to_run_is_no_failure_whatever_the_reason_says():
    from commons.core.learning import NOT_RUN_OPENING
    from commons.core.learning.failure import not_a_failure

    reason = "`cargo publish` rejected: publishing needs the release checklist"  # a rule's own words
    assert not_a_failure("Bash", "cargo publish", NOT_RUN_OPENING + reason, reason) == "not run"
    assert not_a_failure("Bash", "cargo publish", reason, reason) == ""  # the words alone do not say it
    # Only at the output's opening: a program printing the words is no refusal.
    printed = f"Exit code 1\n{NOT_RUN_OPENING}3 tests skipped\nerror: build failed"
    assert not_a_failure("Bash", "make check", printed, "error: build failed") == ""


def test_the_shell_naming_the_program_that_failed_attributes_the_failure_to_it():
    assert attribute("cd build && make vsla_tests", "/bin/bash: line 1: cd: build: No such file or directory") == "cd build"
    assert attribute("git commit -am x && git push origin main",
                     "[main 1a2b3c4] x\n ! [rejected]        main -> main (non-fast-forward)") == "git push origin main"
    assert attribute("cmake .. && make -j4", "make[2]: *** [src/CMakeFiles/x.dir/a.c.o] Error 1") == "make -j4"


def test_a_command_whose_status_is_kept_and_re_raised_is_the_one_that_failed_not_the_exit():
    command = "go test ./... > /tmp/t.log 2>&1; status=$?; cat /tmp/t.log; exit $status"
    assert attribute(command, "--- FAIL: TestLogin (0.01s)\n    login_test.go:27: Error Trace:") == \
        "go test ./... > /tmp/t.log 2>&1"


def test_the_failure_line_is_past_banners_warnings_progress_meters_usage_texts_carets_and_summaries():
    cases = {
        "** WARNING: connection is not using a post-quantum key exchange algorithm.\n"
        "** This session may be vulnerable to \"store now, decrypt later\" attacks.\n"
        "root@10.0.0.2: Permission denied (publickey).": "root@<ip>: Permission denied (publickey).",
        "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n"
        "                                 Dload  Upload   Total   Spent    Left  Speed\n"
        "  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0\n"
        "curl: (7) Failed to connect to localhost port 3000": "curl: (7) Failed to connect to localhost port 3000",
        "; <<>> DiG 9.18.1 <<>> nope.invalid\n;; global options: +cmd\n"
        ";; connection timed out; no servers could be reached": ";; connection timed out; no servers could be reached",
        "ls: unrecognized option: sort\nBusyBox v1.36.1 (2023-11-07) multi-call binary.\n\nUsage: ls [-1AaCxd]":
            "ls: unrecognized option: sort",
        "v20.11.1\n ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with \"frozen-lockfile\"":
            "ERR_PNPM_OUTDATED_LOCKFILE Cannot install with \"frozen-lockfile\"",
        "\x1b[0;36m[INFO]\x1b[0m Checking disks\n\x1b[0;31m[ERROR]\x1b[0m debootstrap not found":
            "[ERROR] debootstrap not found",
        "2025-08-24 20:28:12,806 - __main__ - INFO - Verbose logging enabled\nRuntimeError: no space left":
            "RuntimeError: no space left",
        # gcc's caret under a warning, then the linker's error
        "t.c: In function 'main':\nt.c:25:5: warning: implicit declaration of function 'f'\n"
        "   25 |     f();\n      |     ^~~~~~~~\n/usr/bin/ld: t.o: in function `main': t.c:(.text+0x1f): "
        "undefined reference to `sqrt'\ncollect2: error: ld returned 1 exit status":
            "/usr/bin/ld: t.o: in function `main': t.c:(.text+0x1f): undefined reference to `sqrt'",
        # compose pulling images, then the daemon's refusal
        "Pulling web (nginx:alpine)...\n 9ad163d2f668 Download complete\nERROR: failed to register layer: no space "
        "left on device": "ERROR: failed to register layer: no space left on device",
        # argparse's usage wrapped over lines, then its error
        "usage: tool [-h] [--transcript T]\n            [--local] [--output OUTPUT] [--quiet]\n"
        "tool: error: unrecognized arguments: --prompt": "tool: error: unrecognized arguments: --prompt",
        # Next.js's banner and environment list, then a type error
        "   ▲ Next.js 15.1.0\n   - Environments: .env.local\n   Creating an optimized production build ...\n"
        "Failed to compile.\n./app/page.tsx:12:3\nType error: Property 'x' does not exist on type 'Y'.":
            "Type error: Property 'x' does not exist on type 'Y'.",
        # go test's package summary before the error it summarises
        "FAIL\tapp/internal/auth [setup failed]\n# app/internal/auth\ninternal/auth/s_test.go:16:2: no required module "
        "provides package github.com/x/y; to add it:":
            "internal/auth/s_test.go:16:2: no required module provides package github.com/x/y; to add it:",
        # a program saying it could not, after a line that only warns
        "pg_ctl: another server might be running; trying to start server anyway\npg_ctl: could not start server":
            "pg_ctl: could not start server",
    }
    for output, line in cases.items():
        assert failure_line(output)[0] == line, output


def test_a_powershell_error_record_is_its_message_not_its_position_or_category_lines():
    record = ("Get-Content : Cannot find path 'C:\\repo\\notes.md' because it does not\r\nexist.\r\n"
              "At line:1 char:40\r\n+ Get-Content C:\\repo\\notes.md -Tail 5\r\n+ ~~~~~~~~~~~~~~\r\n"
              "    + CategoryInfo          : ObjectNotFound: (C:\\repo\\notes.md:String) [Get-Content], Exception\r\n"
              "    + FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.GetContentCommand\r\n")
    assert failure_line(record)[0] == "Get-Content : Cannot find path 'C:\\repo\\notes.md' because it does not exist."
    localised = "Get-Item : Не удается найти путь.\r\nстрока:2 знак:1\r\n+ Get-Item x\r\n+ ~~~~\r\n"
    assert failure_line(localised)[0] == "Get-Item : Не удается найти путь."


def test_a_failure_line_carries_on_where_it_is_a_header_or_wrapped_and_keeps_the_end_of_a_long_chain():
    assert failure_line("Error HH8: There's one or more errors in your config file:\n\n"
                        "  * Invalid account: #0 for network: testnet - private key too short\n")[0] == (
        "Error HH8: There's one or more errors in your config file: Invalid account: #0 for network: testnet - "
        "private key too short")
    assert failure_line("Error: The virtual environment was not created successfully because ensurepip is not\n"
                        "available.  On Debian/Ubuntu systems, you need to install the python3-venv\n")[0].endswith(
        "because ensurepip is not available. On Debian/Ubuntu systems, you need to install the python3-venv")
    chain = ("ERROR: for web Cannot start service web: failed to create task for container: failed to create shim "
             "task: OCI runtime create failed: runc create failed: unable to start container process: error during "
             "container init: unable to apply apparmor profile: apparmor failed to apply profile: open "
             "/proc/thread-self/attr/apparmor/exec: read-only file system: unknown")
    line = failure_line(chain)[0]
    assert line.startswith("ERROR: for web Cannot start service web") and "apparmor failed to apply profile" in line
    assert len(line) <= FAILURE_CHARS


def test_windows_output_in_utf16_and_a_powershell_parser_error_are_read():
    utf16 = "Exit code 1\n" + "Access is denied.\r\n".encode("utf-16-le").decode("latin-1")
    assert failure_line(utf16)[0] == "Access is denied."
    parser = ("Exit code 1\nAt line:1 char:134\n+ ... -Body (@{model='x'; stream=} | ConvertTo-Json)\n"
              "+                                     ~\nMissing statement after '=' in hash literal.\n"
              "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException\n")
    assert failure_line(parser)[0] == "Missing statement after '=' in hash literal."


def test_a_validation_error_of_a_tools_arguments_names_the_field_and_its_issue():
    text = ("Error executing tool list_dir: 1 validation error for applyArguments\nrecursive\n"
            "  Field required [type=missing, input_value={'path': '.'}, input_type=dict]")
    assert failure_line(text)[0].startswith("recursive Field required")


def test_a_non_zero_exit_the_sandbox_reported_as_a_denial_is_judged_on_what_the_command_printed():
    from commons.core.learning.failure import not_a_failure, sandboxed_output

    def wrapped(code: int, text: str) -> str:
        body = text.replace("\n", "\\n")
        return ("failed in sandbox LinuxSeccomp with execution error: Denied { output: ExecToolCallOutput { "
                f'exit_code: {code}, stdout: StreamOutput {{ text: "{body}", truncated_after_lines: None }}, '
                f'stderr: StreamOutput {{ text: "", truncated_after_lines: None }}, aggregated_output: StreamOutput '
                f'{{ text: "{body}", truncated_after_lines: None }}, duration: 62.8ms, timed_out: false }} }}')

    # rg that matched nothing: exit 1, nothing printed — a probe, not a sandbox failure.
    no_match = wrapped(1, "")
    assert sandboxed_output(no_match) == ""
    assert not_a_failure("Bash", "rg -n DefaultFunc internal", no_match, no_match[:140])
    # The command's own error inside the wrapper is still a failure, and its lines are the output's.
    build = wrapped(2, "# app/internal\ninternal/x.go:3:2: undefined: Foo")
    assert sandboxed_output(build) == "# app/internal\ninternal/x.go:3:2: undefined: Foo"
    assert not_a_failure("Bash", "go build ./...", build, build[:140]) == ""
    assert sandboxed_output("Error: Operation not permitted") is None


def test_a_stylesheet_or_minified_code_a_request_printed_is_no_failure_line():
    from commons.core.learning.failure import failure_line

    css = (".tracking-wider{--tw-tracking:var(--tracking-wider);letter-spacing:var(--tracking-wider)}"
           ".hyphens-auto{-webkit-hyphens:auto;hyphens:auto}.whitespace-nowrap{white-space:nowrap}"
           ".font-sans{font-family:ui-sans-serif, system-ui, Segoe UI Emoji, Noto Color Emoji}")
    said = "Invoke-WebRequest : The remote server returned an error: (403) Forbidden."
    assert failure_line(f"{css}\n{said}")[0] == said
    assert failure_line(f".whitespace-nowrap{{white-space:nowrap}}.whitespace-pre{{white-space:pre}}\n{said}")[0] == said
    # An error object with a sentence in it is a message, braces or not.
    api = '{"error":{"code":403,"message":"The caller does not have permission","status":"PERMISSION_DENIED"}}'
    assert failure_line(api)[0] == api
    c_error = "src/a.c:3:1: error: expected ';' before '}' token"
    assert failure_line(f"{c_error}\n  for (i = 0; i < n; i++) {{ x; }}")[0].startswith(c_error)


def test_a_printer_of_a_guessed_path_and_an_edit_of_a_missing_file_are_probes():
    from commons.core.learning.failure import not_a_failure

    missing = "Exit code 2\nsed: can't read package.json: No such file or directory"
    assert not_a_failure("Bash", "cd app && sed -n '1,200p' package.json", missing, missing) == "probe"
    assert not_a_failure("Bash", "awk 'NR<40' src/main.rs", "awk: cannot open src/main.rs (No such file or directory)",
                         "awk: cannot open src/main.rs (No such file or directory)") == "probe"
    assert not_a_failure("Bash", "wc -l docs/*.md", "wc: 'docs/*.md': No such file or directory", "x y") == "probe"
    assert not_a_failure("Edit", "/p/notes.md", "<tool_use_error>File does not exist.</tool_use_error>",
                         "File does not exist.") == "probe"
    # A printer that failed otherwise failed for real; Write makes the file an edit wants.
    syntax = "awk: line 1: syntax error at or near }"
    assert not_a_failure("Bash", "awk '{print $1' data.txt", syntax, syntax) == ""
    assert not_a_failure("Write", "/p/x.md", "File does not exist.", "File does not exist.") == ""


def test_a_powershell_record_a_narrow_console_wrapped_is_read_from_its_head_past_geminis_frame():
    record = ("Output: source : The term 'source' is not \nrecognized as the name of a \ncmdlet, function, script file, "
              "or \noperable program. Check the \nspelling of the name, or if a \npath was included, verify that \n"
              "the path is correct and try again.\nAt line:1 char:1\n+ source ./agent.sh\n+ ~~~~~~\n"
              "    + CategoryInfo          : ObjectNotFound: (source:String) [], CommandNotFoundException\n"
              "Exit Code: 1\nProcess Group PGID: 29816")
    line = failure_line(record)[0]
    assert line.startswith("source : The term 'source' is not recognized as the name of a cmdlet")


def test_a_writability_probe_a_remote_looked_up_and_a_search_of_a_missing_path_are_probes():
    from commons.core.learning.failure import not_a_failure

    denied = "touch: /Users/dev/.rustup/tmp/perm_test: Operation not permitted"
    assert not_a_failure("Bash", "touch ~/.rustup/tmp/perm_test && rm ~/.rustup/tmp/perm_test", denied, denied) == "probe"
    # The part that failed, attributed, and the call it was part of.
    assert not_a_failure("Bash", "touch ~/.rustup/tmp/perm_test", "Now using node v22.20.0 (npm v10.9.3)\n" + denied,
                         denied, call="touch ~/.rustup/tmp/perm_test && rm ~/.rustup/tmp/perm_test") == "probe"
    # A file made to stay is a change that failed.
    assert not not_a_failure("Bash", "touch src/new.py", "touch: src/new.py: Permission denied", "touch: x y")
    no_remote = ("fatal: 'origin' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\n"
                 "Please make sure you have the correct access rights\nand the repository exists.")
    assert not_a_failure("Bash", "git ls-remote --heads origin | grep -E 'refs/heads/12-x$'", no_remote,
                         "fatal: 'origin' does not appear to be a git repository") == "probe"
    assert not not_a_failure("Bash", "git push origin main", no_remote, "fatal: 'origin' does not appear to be a git x")
    missing = "rg: internal/mcp/server.go: IO error for operation on internal/mcp/server.go: No such file or directory (os error 2)"
    assert not_a_failure("Bash", "rg -n handleInitialize internal/mcp/server.go", missing, missing) == "probe"
    # Patterns read as paths beside the matches found: rg was misused, not asked whether a file is there.
    misused = ("rg: T021: No such file or directory (os error 2)\nspecs/tasks.md:93:## Phase 4: User Story 2\n"
               "specs/tasks.md:160:- **User Story 2 (Phase 4)**: May begin once Foundational is done")
    assert not not_a_failure("Bash", 'rg -n "Phase 4" -n "T021" specs/tasks.md', misused,
                             "rg: T021: No such file or directory (os error 2)")


def test_a_version_asked_of_a_program_not_installed_is_a_probe_and_its_use_is_a_failure():
    from commons.core.learning.failure import not_a_failure

    missing = "Exit code 127\nbash: pnpm: command not found"
    assert not_a_failure("Bash", "pnpm --version", missing, "bash: pnpm: command not found") == "probe"
    assert not_a_failure("Bash", "cd web && pnpm -v", missing, "bash: pnpm: command not found") == "probe"
    assert not not_a_failure("Bash", "pnpm install", missing, "bash: pnpm: command not found")


def test_a_here_document_written_into_a_folder_not_made_yet_is_a_failure_not_a_probe():
    from commons.core.learning.failure import not_a_failure, redirect_targets

    write = "cat <<'EOF' > /work/app/src/engine/types.ts\nexport const f = (a: number) => a > 1;\nEOF"
    zsh = "Exit code 1\nzsh:1: no such file or directory: /work/app/src/engine/types.ts"
    assert redirect_targets(write) == ["/work/app/src/engine/types.ts"]  # not the `=>`/`>` of the body
    assert not_a_failure("Bash", write, zsh, "zsh:1: no such file or directory: /work/app/src/engine/types.ts") == ""
    bash = "Exit code 1\nbash: line 1: notes/today.md: No such file or directory"
    assert not_a_failure("Bash", "echo done >> notes/today.md", bash, bash.splitlines()[1]) == ""
    # Reading a guessed path is still a probe, whatever it does with what it read.
    missing = "Exit code 1\ncat: src/old.ts: No such file or directory"
    assert not_a_failure("Bash", "cat src/old.ts > /dev/null", missing, missing.splitlines()[1]) == "probe"
    assert not_a_failure("Bash", "cat src/old.ts 2>&1", missing, missing.splitlines()[1]) == "probe"


def test_the_cause_before_gits_remote_trailer_is_the_failure_line():
    trailer = ("fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\n"
               "and the repository exists.")
    no_host = "Exit code 128\nssh: Could not resolve hostname github.com: -65563\r\n" + trailer
    assert failure_line(no_host)[0] == "ssh: Could not resolve hostname github.com: -65563"
    refused = "git@github.com: Permission denied (publickey).\n" + trailer
    assert failure_line(refused)[0] == "git@github.com: Permission denied (publickey)."
    # With nothing before it, the trailer is what git said.
    assert failure_line("Exit code 128\n" + trailer)[0] == "fatal: Could not read from remote repository."


def test_a_javascript_or_java_stack_frame_is_not_carried_onto_the_exception_message():
    node = ("Exit code 1\n> app@ test /p\n> vitest run\n\n/p/node_modules/vitest/vitest.mjs:2\nimport './dist/cli-wrapper.js'\n"
            "       ^^^^^^^^^^^^^^^^^^^^^^^\n\nSyntaxError: Unexpected string\n"
            "    at Module._compile (internal/modules/cjs/loader.js:760:23)\n"
            "    at internal/main/run_main_module.js:21:11\nnpm ERR! Test failed.  See above for more details.")
    assert failure_line(node)[0] == "SyntaxError: Unexpected string"
    eslint = ("Oops! Something went wrong! :(\n\nESLint: 8.57.1\n\nTypeError: Module.createRequire is not a function\n"
              "    at Object.<anonymous> (/p/node_modules/@eslint/eslintrc/dist/eslintrc.cjs:2404:26)")
    assert failure_line(eslint)[0] == "TypeError: Module.createRequire is not a function"
    java = "Exception in thread main java.lang.IllegalStateException: no config\n\tat com.x.App.main(App.java:10)"
    assert failure_line(java)[0] == "Exception in thread main java.lang.IllegalStateException: no config"
    # A message wrapped onto a line of words is still read whole.
    wrapped = "error: externally-managed-environment because ensurepip is not\navailable on this system."
    assert failure_line(wrapped)[0].endswith("is not available on this system.")


def test_sed_that_took_its_script_for_a_file_failed_and_is_no_probe_of_a_missing_path():
    from commons.core.learning.failure import not_a_failure

    command = "sed -i '' 's|volcano.sh/apis v1.12.1|volcano.sh/apis v1.13.1|g' go.mod"
    output = "Exit code 2\ngsed: can't read s|volcano.sh/apis v1.12.1|volcano.sh/apis v1.13.1|g: No such file or directory"
    line = failure_line(output, command)[0]
    assert not_a_failure("Bash", command, output, line) == ""
    assert line.startswith("gsed: can't read s|volcano.sh/apis")
    # Its file missing is still a look at a guessed path.
    missing = "Exit code 2\nsed: can't read go.mod: No such file or directory"
    assert not_a_failure("Bash", "sed -i 's/a/b/g' go.mod", missing, missing) == "probe"
