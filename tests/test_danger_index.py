"""The rule table indexed by program (`commons.core.policy.danger.rule.RuleIndex`) answers as the
plain loop over every rule does: the same danger (rule, kind, risk) or none, on the corpus, the safe
look-alikes and thousands of commands made from them (flags reordered, wrappers and variables put
before, words quoted, pipes and redirections added, the program swapped for another)."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

from commons.core.policy import danger
from commons.core.policy.danger import RULES, Command, tokenize
from commons.core.policy.danger import shell
from commons.core.policy.danger.rule import Step
from tests.test_danger import SAFE_LOOK_ALIKES

FIXTURES = Path(__file__).parent / "fixtures" / "danger"
DECLARED = sorted({p for rule in RULES for p in rule.programs or ()})
# Programs no rule names, and names of a declared one as a command line may write them.
OTHERS = ["hg", "tool7", "ls", "make", "Git.exe", "/usr/bin/git", "C:\\Tools\\Docker.exe", "./manage.py", "RM", "sudo",
          "env", "npx", "<path>", "'manage.py\n'", "manage.py\n", "<path>\n", "$(curl -fsSL https://x.example/i.sh)", "kubectl.cmd"]
PREFIXES = ["sudo ", "sudo -E ", "sudo -u root ", "doas ", "env FOO=1 ", "FOO=1 BAR=2 ", "nice -n 5 ", "timeout 10 ",
            "time ", "nohup ", "exec ", "npx ", "uv run ", "poetry run ", "python -m ", "xargs ", "HUSKY=0 ",
            "NODE_TLS_REJECT_UNAUTHORIZED=0 ", "PIP_BREAK_SYSTEM_PACKAGES=1 ", "export GIT_SSL_NO_VERIFY=1; "]
BEFORE = ["curl -fsSL https://x.example/i.sh | ", "wget -qO- https://x.example/i.sh | ", "cat dump.sql | ",
          "echo 'DROP TABLE users;' | ", "curl -o i.sh https://x.example/i.sh && ", "cd /tmp && ", "false || "]
AFTER = [" | sh", " | sudo bash", " || true", " || :", " && echo ok", "; ls", " > /etc/hosts", " >> ~/.bashrc",
         " 2>&1", " | tee /etc/sudoers.d/x", " &", "\nrm -rf src", " | psql"]


# Steps rules are true of that the corpus has none of.
MORE = ["helm uninstall web", "su - postgres", "runas /user:Administrator cmd", "Start-Process pwsh -Verb RunAs",
        "./manage.py flush", "django-admin reset_db", "git rm -r --cached data.sqlite3"]


def corpus_steps() -> list[str]:
    steps = list(SAFE_LOOK_ALIKES) + MORE
    for name in ("corpus.json", "written_after.json"):
        for case in json.loads((FIXTURES / name).read_text(encoding="utf-8"))["cases"]:
            steps += [case["failed"], case["fix"]] + ([case["then"]] if case["then"] else [])
            if case.get("edit"):
                steps.append(case["edit"]["new_string"])
    return [s for s in dict.fromkeys(steps) if s != "Edit"]


def _quote(word: str, rng: random.Random) -> str:
    return rng.choice([f"'{word}'", f'"{word}"', word]) if "'" not in word and '"' not in word else word


def mutate(step: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 3)):
        words = step.split(" ")
        how = rng.randrange(9)
        if how == 0:
            step = " ".join([rng.choice(DECLARED + OTHERS), *words[1:]])
        elif how == 1 and len(words) > 2:
            rest = words[1:]
            rng.shuffle(rest)
            step = " ".join([words[0], *rest])
        elif how == 2:
            step = rng.choice(PREFIXES) + step
        elif how == 3:
            step = " ".join(_quote(w, rng) for w in words)
        elif how == 4:
            step = rng.choice(BEFORE) + step
        elif how == 5:
            step = step + rng.choice(AFTER)
        elif how == 6 and "'" not in step:
            step = rng.choice([f"bash -c '{step}'", f"sudo sh -c '{step}'", f"$({step})", f"powershell -Command {step}",
                               f"cmd /c {step}", f'sh -c "{step}"'])
        elif how == 7 and len(words) > 1:
            del words[rng.randrange(1, len(words))]
            step = " ".join(words)
        else:
            step = " ".join(words[:1] + [rng.choice(words)] + words[1:])
    return step


def texts() -> list[str]:
    rng = random.Random(31)
    corpus = corpus_steps()
    return corpus + [mutate(rng.choice(corpus), rng) for _ in range(4000)]


def _outcome(line: str, rules_of) -> object:
    try:
        return danger._shell(line, rules_of)
    except (ValueError, IndexError, RecursionError) as error:  # what `classify` turns into None
        return type(error)


def test_the_indexed_table_gives_every_step_the_danger_the_plain_loop_gives():
    every = texts()
    assert len(every) > 4000
    differ = [line for line in every if _outcome(line, danger.INDEX.of) != _outcome(line, lambda command: RULES)]
    assert differ == []
    classed = sum(_outcome(line, danger.INDEX.of) is not None for line in every)
    assert 0.3 * len(every) < classed < 0.9 * len(every)  # the mutants are neither all safe nor all dangerous


def _left_out(rule, command: Command, step: Step) -> bool:
    """Whether the index leaves ``rule`` out for ``command`` though it is true of it (or raises)."""
    if rule in danger.INDEX.of(command):
        return False
    try:
        return bool(rule.test(command, step))
    except Exception:  # a rule left out must not have raised either: the plain loop would stop there
        return True


def test_a_rule_that_declares_its_programs_is_false_of_every_other_program():
    wrong = []
    for line in texts():
        commands = tokenize(line)
        step = Step(line, commands)
        wrong += [(rule.id, line) for command in commands for rule in RULES if _left_out(rule, command, step)]
    assert wrong == []


def test_a_command_a_rule_is_true_of_is_true_of_no_program_it_does_not_declare():
    # Each command of the corpus that a declaring rule is true of, run by every other program
    # instead, and as that program's sub-command (`rm x.db` as `git rm x.db`).
    true = []
    for line in corpus_steps():
        commands = tokenize(line)
        step = Step(line, commands)
        true += [(rule, command, step) for command in commands for rule in RULES
                 if rule.programs is not None and rule.test(command, step)]
    assert len({rule.id for rule, _, _ in true}) == sum(rule.programs is not None for rule in RULES)
    wrong = []
    for rule, command, step in true:
        for program in DECLARED + OTHERS:
            for words in ((program, *command.words[1:]), (program, *command.words)):
                other = dataclasses.replace(command, words=words)
                commands = tuple(other if c is command else c for c in step.commands)
                if _left_out(rule, other, Step(step.text, commands)):
                    wrong.append((rule.id, " ".join(words)))
    assert wrong == []


def test_a_command_of_no_declared_program_meets_only_the_rules_of_any_program():
    (tool,) = tokenize("tool7 --force -rf /")
    assert danger.INDEX.of(tool) == tuple(r for r in RULES if r.programs is None)
    (git,) = tokenize("sudo git push --force")
    assert {r.id for r in danger.INDEX.of(git)} >= {"git.push-force", "git.reset-hard"}
    assert "docker.prune" not in {r.id for r in danger.INDEX.of(git)}
    assert [r.id for r in danger.INDEX.of(git)] == [r.id for r in RULES if r in danger.INDEX.of(git)]  # the table's order


def test_a_line_of_words_and_blanks_is_read_as_the_lexer_reads_it_a_character_at_a_time():
    rng = random.Random(5)
    pieces = ["git", "push", "-rf", "--force", "x=1", "a1", "2", "9x", "/usr/bin/env", "C:/x", "*.py", "~", "(", ")",
              "{a,b}", "é", "!", "?", "%TEMP%", "@ts", "+main", " ", "  ", "\t", "\r", "\x0b", "\x1c", "\xa0", "\u2003",
              "\n", "#", "'", "$", ">", "2>", "<", "|", "&", ";", "\\", "`"]
    lines = corpus_steps() + ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(3000)]
    plain = 0
    for line in lines:
        assert shell._lex(line, 0) == shell._lex_characters(line, 0), repr(line)
        plain += shell._SPECIAL.search(line) is None
    assert plain > 300
