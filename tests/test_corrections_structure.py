"""Corrections found from the structure, in any language: the person pushing back on what the agent
had just said or done; and `make corrections-report`, which scores that against a census."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commons.ingest.corrections import AgentTurn, asks, claims_done, corrects
from commons.ingest.corrections_bench import main, score_set
from tests.transcripts import session

DONE_ZH = AgentTurn(said="已完成修改。新的备忘录会插入到表格最上面。测试结果：新记录已创建成功。",
                    acted="Bash python3 memo.py add", claimed_done=True)
SHORTCUT_ES = AgentTurn(said="En macOS con teclado español latinoamericano: `Cmd + /` comenta la línea.")
FIXED_FR = AgentTurn(said="J'ai corrigé le calcul de la moyenne, les tests passent.", acted="Edit src/meteo.ts",
                     claimed_done=True)
FIXED_DE = AgentTurn(said="Ich habe den Export repariert, er sollte jetzt funktionieren.", acted="Edit export.py",
                     claimed_done=True)
MOVED_EN = AgentTurn(said="The installer is blocked in Downloads. I'll move it to the temp folder and run it from there.",
                     acted="Bash Move-Item -Path Downloads/setup.exe -Destination $env:TEMP")
LAYOUT_EN = AgentTurn(said="The right panel now resizes with the window.", acted="Edit GroupLayout.tsx",
                      claimed_done=True)


@pytest.mark.parametrize("text, turn", [
    ("测试效果不佳，写入还是在最后一行", DONE_ZH),
    ("别改表格的位置，写入还是在最后一行", DONE_ZH),  # 别 "don't" opening the clause  # the agent's "at the top": still the last row
    ("我在飞书回复了，表格并没有更新", DONE_ZH),
    ("no anduvo, estoy en PyCharm con keybinds de VSCode", SHORTCUT_ES),
    ("Perfecto, pero no resolvió lo de las oraciones", SHORTCUT_ES),
    ("ça ne marche toujours pas, la moyenne est fausse", FIXED_FR),
    ("das funktioniert immer noch nicht", FIXED_DE),
    ("it is still not resizing even though there is space on its right side", LAYOUT_EN),
    ("yes but the right panel does not expand on resize", LAYOUT_EN),
    ("same error again when I resize it", LAYOUT_EN),  # a repetition beside a failure
    ("this is fundamentally WRONG, check the documentation", MOVED_EN),  # one push-back word, shouted
    ("I ALREADY pointed you at the exe in the repo root", MOVED_EN),  # what the person had already said
])
def test_a_push_back_on_the_agents_last_turn_is_a_correction_in_any_language(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    ("备忘录增加功能：推送时显示序号字段的内容", DONE_ZH),  # the next feature
    ("继续", DONE_ZH),
    ("我把文档主名字改为：Twork助手文档，备忘录表格名字不变。注意识别", DONE_ZH),  # 识别 "recognise": no 别 "don't"
    ("como se calcula el rango de valores de una columna numerica?", SHORTCUT_ES),
    ("Merci, maintenant ajoute la température du soir", FIXED_FR),
    ("oui, vérifie bien si ce qu'on a fait hors du plan ne crée pas de conflits", FIXED_FR),  # "du" is no "you" here
    ("i updated the todo.md can you read it again.", LAYOUT_EN),  # "again" alone asks for the thing once more
    ("yes, and remember: uv, never pip, in this repo", LAYOUT_EN),
    ("We are implementing the next feature:\n- registration\n- tickets\n- do NOT break the UI", LAYOUT_EN),
])
def test_a_next_request_a_question_or_an_approval_is_not_a_correction(text, turn):
    assert not corrects(text, turn)


ASKED_EN = AgentTurn(said="I can move the agents to the shared pool too. Shall I do that?", acted="Edit agents.toml",
                     asked=True)
BUILT_EN = AgentTurn(said="The build passes and the page renders.", acted="Bash npm run build", claimed_done=True)


@pytest.mark.parametrize("text, turn", [
    ("no - leave it with the local agents", ASKED_EN),  # the answer to the agent's question
    ("nope, keep them where they are", ASKED_EN),
    ("i think good no errors", BUILT_EN),  # a failure word negated: all went well
    ("sin errores, gracias", BUILT_EN),
    ("PERFECT CLAUDE, let's fix the bug in the CSV cell next", BUILT_EN),  # agreeing, then the next task
    ("I want an html page of this pre-order form, but keep it short", BUILT_EN),
])
def test_an_answer_to_the_agents_question_a_negated_failure_or_agreement_then_a_request_is_no_correction(text, turn):
    assert not corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    ("no, you broke the layout: it still fails to render", ASKED_EN),  # asked, and it still fails
    ("i don't want member standings, but i would like the member list", ASKED_EN),
])
def test_after_a_question_a_push_back_beyond_the_no_is_still_a_correction(text, turn):
    assert corrects(text, turn)


DONE_JA = AgentTurn(said="検索ボックスを修正しました。これで都市名と国名の両方でヒットします。", acted="Edit scripts/search.js",
                   claimed_done=True)
DONE_KO = AgentTurn(said="로그인 버튼을 수정했습니다. 이제 정상적으로 동작합니다.", acted="Edit login.tsx", claimed_done=True)


@pytest.mark.parametrize("text, turn", [
    ("変わってないみたい", DONE_JA),  # the claimed change did not happen
    ("まだヒットしないね", DONE_JA),
    ("そこじゃない。戻して", DONE_JA),  # an undo, in so many words
    ("ボタンの文字がはみ出してるんだけど", DONE_JA),  # a failure, with the "but" a complaint ends on
    ("この枠いらないね", DONE_JA),  # not wanted, pointing at what the agent made
    ("この文字、大きすぎるね", DONE_JA),  # too much, of what the agent made
    ("아직 안 돼요", DONE_KO),
    ("revert that, the old layout was better", DONE_JA),
])
def test_a_push_back_after_a_claim_in_japanese_or_korean_is_a_correction(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    ("地図をズームできないかな", DONE_JA),  # "can't you…?": a request
    ("ここに曜日も追加できない？", DONE_JA),
    ("色の塗りだけではなくて、数字も30分ずらして", DONE_JA),  # "not only… but": an addition
    ("この数字をもう少し大きくして", DONE_JA),
])
def test_a_negated_question_that_asks_or_a_not_only_addition_is_not_a_correction(text, turn):
    assert not corrects(text, turn)


@pytest.mark.parametrize("said", ["設定画面を修正しました。", "已修复登录问题。", "Listo, ya quedó arreglado el filtro.",
                                  "J'ai corrigé le calcul.", "Der Fehler ist behoben.", "버그를 수정했습니다."])
def test_an_agent_claims_done_in_other_languages(said):
    assert claims_done(said)


@pytest.mark.parametrize("said", ["どちらの方式にしましょうか？", "ファイルを読み込んでいます", "¿Querés que lo pruebe?"])
def test_a_question_or_work_under_way_claims_nothing(said):
    assert not claims_done(said)


def test_the_agent_asked_when_its_last_words_end_on_a_question():
    assert asks(ASKED_EN.said) and asks("Both options work:\n\n- A\n- B\n\nWhich do you prefer? I can do either.")
    assert not asks(BUILT_EN.said) and not asks("Why did it fail? The lock was stale.\n\nI removed it and the push passed.")


def test_the_first_message_of_a_session_corrects_nothing():
    assert not corrects("no, this still does not work", AgentTurn(first=True))


# -- the bench, on a set written here ----------------------------------------------------------

# (what the agent said, what it ran, what the person then said, whether the census calls it a correction)
EXCHANGES = [
    ("I moved the entry to CHANGELOG.md.", "Edit CHANGELOG.md", "no, the changelog lives in docs/CHANGES.md", True),
    ("已完成：新记录写在表格最上面。", "Bash python3 memo.py add", "写入还是在最后一行，没有更新", True),
    ("Listo, el atajo es Cmd + /.", "", "no anduvo, sigue sin comentar la línea", True),
    ("Le graphique est corrigé.", "Edit chart.ts", "mais il ne s'affiche toujours pas", True),
    ("The tests pass now.", "Bash npm test", "they still fail on my machine with the same error", True),
    ("Der Build ist jetzt grün.", "Bash make", "nein, der Build schlägt immer noch fehl", True),
    ("I added the retry loop.", "Edit client.py", "thanks, now add a timeout too", False),
    ("Done: the page renders the table.", "Edit page.tsx", "增加一个功能：每天九点推送", False),
    ("Aquí está el resumen.", "", "como se imprime el tipo de una columna?", False),
    ("Le déploiement est terminé.", "Bash deploy.sh", "parfait, merci", False),
]


def _census_set(root: Path) -> Path:
    folder = root / "fixture-set"
    projects = folder / "home" / ".claude" / "projects" / "-home-dev-ledger"
    census = []
    for n, (said, ran, reply, is_correction) in enumerate(EXCHANGES):
        s = session(projects, n + 1, f"exchange-{n}")
        s.path = projects / f"{s.sid}.jsonl"
        census.append({"session": s.sid, "uuid_or_index": s.user("make the change we discussed"), "index": 0,
                       "text": "make the change we discussed", "is_correction": False, "why": "first message"})
        if ran:
            s.tool(ran.split()[0], {"command": ran} if ran.startswith("Bash") else {"file_path": ran.split()[1]}, "ok")
        s.say(("text", said))
        census.append({"session": s.sid, "uuid_or_index": s.user(reply), "index": 1, "text": reply,
                       "is_correction": is_correction, "why": "written for this test"})
        s.write()
    (folder / "corrections.json").write_text(json.dumps(census, ensure_ascii=False), encoding="utf-8")
    return folder


def test_the_bench_finds_the_corrections_of_a_census_above_the_bars(tmp_path):
    score = score_set(_census_set(tmp_path))
    assert score.labelled == 6 and score.messages == 20
    assert score.precision is not None and score.precision >= 0.8
    assert score.recall is not None and score.recall >= 0.7


def test_the_bench_reports_held_out_sets_apart(tmp_path, capsys):
    _census_set(tmp_path)
    assert main(["--sets", str(tmp_path), "--held-out", "fixture-set", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pooled"]["sets"] == [] and data["held_out"]["sets"] == ["fixture-set"]
    assert data["held_out"]["labelled"] == 6


def test_the_bench_with_no_set_says_where_it_looked_and_exits_2(tmp_path, capsys):
    assert main(["--sets", str(tmp_path)]) == 2
    assert str(tmp_path) in capsys.readouterr().err


def _corrections_after(tmp_path: Path, interrupt: bool) -> list[str]:
    from commons.core.learning import CorrectionEpisode
    from commons.ingest.claude_code import parse

    s = session(tmp_path, 3, f"ui-{interrupt}")
    s.user("make the payroll page work end to end")
    s.say(("text", "I'll restyle the payroll page first, then wire the wallet button."))
    s.tool("Edit", {"file_path": "app/payroll/page.tsx"}, "ok")
    if interrupt:
        s.interrupt()
    s.user("focus on the backend, I will handle the frontend")
    s.write()
    return [e.said for e in parse(s.path.read_bytes()).episodes if isinstance(e, CorrectionEpisode)]


def test_a_redirect_right_after_the_person_interrupted_the_agent_is_a_correction(tmp_path):
    assert _corrections_after(tmp_path, interrupt=True) == ["focus on the backend, I will handle the frontend"]
    assert _corrections_after(tmp_path, interrupt=False) == []  # the same words, the agent not stopped


SUPERVISED_EN = AgentTurn(said="I will keep supervising BROTHER and SISTER; the quarantine plan is done.", claimed_done=True)


@pytest.mark.parametrize("text", [
    "SISTER SAYS: I've confirmed the flag is real, with one important correction: template.md is not deleted",
    "Codex wrote: no, the branch still fails its checks",
    "Message from Codex: this is wrong, the PR is not closed",
    "> no, it still fails\n> the tests do not build",  # quoted lines only
])
def test_another_partys_words_the_person_passes_on_are_not_their_correction(text):
    assert not corrects(text, SUPERVISED_EN)


@pytest.mark.parametrize("text", [
    "I said: no quarantine, it still fails",  # the person restating their own words
    "you said it was done, but it still fails",
    "no, this is wrong. The reviewer says: keep the PR open",  # the person's words first, a quote after
    "from now on: never say it is done while it still fails",  # "from …:" opens no quote
    "it says: permission denied, it still fails",  # a program's words, reported by the person
    "the terminal says: still the same error",
])
def test_the_persons_own_words_beside_a_quote_still_correct(text):
    assert corrects(text, SUPERVISED_EN)


ASKED_TRANSCRIPT = AgentTurn(said="I could not fetch the transcript. Is it visible on the video's page? If it is, let me know.",
                             asked=True)


def test_capitals_joined_into_one_name_are_no_raised_voice():
    assert not corrects("Store what YouTube gives you in the IDAHO-VAULT repo, named like the Adobe files",
                        ASKED_TRANSCRIPT)
    assert not corrects("set MAX_RETRIES in the CONFIG_FILE you read", ASKED_TRANSCRIPT)
    assert corrects("this is fundamentally WRONG, check the documentation", MOVED_EN)  # still one push-back word


COMPOSED_EN = AgentTurn(said="Run it again from the repo root:\n\n```bash\ndocker compose up --build\n```", acted="Edit compose.yaml")


@pytest.mark.parametrize("text", [
    "dependency failed to start: container lms-go-minio-1 has no healthcheck configured",
    "Refused to apply style from 'https://cdn.example/tailwind.min.css' because its MIME type is not a supported "
    "stylesheet MIME type",
    "Error: ENOENT: no such file or directory, mkdir '/home/dev/.claude/plugins'",
])
def test_a_programs_failure_pasted_alone_is_one_failure_not_the_person_negating(text):
    assert not corrects(text, COMPOSED_EN)


@pytest.mark.parametrize("text, turn", [
    ("no, it still says t.serialize is not a function", COMPOSED_EN),  # the person's own no, beside the program's
    ("the build does not work: module not found", COMPOSED_EN),
])
def test_a_programs_failure_beside_the_persons_own_push_back_still_corrects(text, turn):
    assert corrects(text, turn)


SEVERAL_QUESTIONS_EN = AgentTurn(said="A few questions before I plan:\n\n1. Should runs be sandboxed?\n2. Where do workspaces "
                                      "live on disk?\n3. Which formats must the viewer show?", asked=True)
SEVERAL_QUESTIONS_JA = AgentTurn(said="確認させてください。\n1. 保存先はどこにしますか？\n2. 認証は必要ですか？", asked=True)


@pytest.mark.parametrize("text, turn", [
    ("one at a time please", SEVERAL_QUESTIONS_EN),  # how the agent asks, after it asked three at once
    ("thanks. let's take them one-at-a-time", SEVERAL_QUESTIONS_EN),
    ("uno por uno, por favor", SEVERAL_QUESTIONS_EN),
    ("一つずつお願いします", SEVERAL_QUESTIONS_JA),
    ("hold on, stay with the first one until we settle it", SEVERAL_QUESTIONS_EN),  # the person halts the agent
    ("from now on use uv, not pip", LAYOUT_EN),  # a standing rule for how the agent works
    ("from now on answer in English", BUILT_EN),  # or talks
    ("de ahora en adelante usá pnpm", BUILT_EN),
    ("今後はpnpmを使って", DONE_JA),
    ("以后每次新建的记录都写在最上面，但是不能重复写入", DONE_ZH),
])
def test_a_rule_for_how_the_agent_works_or_talks_is_a_correction(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    ("Make these changes one at a time, and think about each before you start it:\n- zoom\n- pan", LAYOUT_EN),
    ("please finish the remaining changes without asking, one at a time", BUILT_EN),
])
def test_one_at_a_time_in_a_request_for_work_is_no_correction(text, turn):
    assert not corrects(text, turn)  # no questions were put at once: it says how to do the next work


QUESTION_ONLY_EN = AgentTurn(said="Question 4:\n\nKernel language: Node.js, Python, Go, or Rust? Any strong preference?",
                             asked=True)


@pytest.mark.parametrize("text", [
    "I'm leaning Rust for the type system. Definitely not Go. Python could be OK.",
    "That seems fine. I don't have strong framework preferences.",
    "Allow them, and limit the shell so that a slip-up doesn't freeze the machine.",
    "that set is fine for now; let's not worry about custom formats yet",
])
def test_the_answer_to_a_turn_that_only_asked_is_no_correction_though_it_says_not(text):
    assert not corrects(text, QUESTION_ONLY_EN)  # its "not" is about the choices offered, not the agent's work


@pytest.mark.parametrize("text", [
    "no, the kernel still fails to build, look at that first",
    "STOP asking and fix the broken build",
])
def test_after_a_turn_that_only_asked_a_failure_or_a_halt_still_corrects(text):
    assert corrects(text, QUESTION_ONLY_EN)


def test_a_programs_failure_pasted_right_after_a_claim_of_done_is_a_correction():
    pasted = ("me@laptop web % npm run test:e2e\n\n> web@0.1.0 test:e2e\n> playwright test\n\n"
              "Error: Cannot find module '@playwright/test'\nRequire stack:\n- /a/spec.ts\n- /a/transform.js\n- /a/loader.js")
    assert corrects(pasted, BUILT_EN)
    assert not corrects(pasted, COMPOSED_EN)  # no claim of done to contradict: a failure reported, as above
    assert not corrects("   Tandem Orchestrator: Not found\n   Bridge: ready\n", BUILT_EN)  # a status line, no failure


@pytest.mark.parametrize("text, turn", [
    ("그런데 지금 만든 화면은 제가 그린 시안이랑 전혀 상관없어요", DONE_KO),  # "but", and 없: "has nothing to do with"
    ("5초마다 한 번씩 뽑혀야 하는데 가끔 두 번씩 뽑혀요", DONE_KO),  # "it should … but"
    ("日曜日のはずなのに土曜日と表示されています", DONE_JA),  # "it should be … yet"
])
def test_an_unmet_expectation_or_an_absence_in_korean_or_japanese_is_a_correction(text, turn):
    assert corrects(text, turn)


def test_no_problem_in_korean_is_no_correction():
    assert not corrects("문제없이 잘 돼요, 고마워요", DONE_KO)


def test_a_standing_rule_in_the_first_message_of_a_session_corrects_nothing():
    assert not corrects("from now on answer in English", AgentTurn(first=True))


RESTARTED_EN = AgentTurn(said="Fixed the UI Dockerfile so the container can start. Rebuild with `docker compose up --build`.",
                         acted="Edit apps/ui/Dockerfile", claimed_done=True)


@pytest.mark.parametrize("text", [
    "The poker API is very slow to stop",
    "Now the UI container is taking a long time to stop",
    "the page hangs after I log in and the table is stuck",
])
def test_slow_hanging_or_stuck_right_after_a_claim_of_done_is_a_correction(text):
    assert corrects(text, RESTARTED_EN)


def test_a_request_to_make_something_fast_is_no_correction():
    assert not corrects("Next, add a cache so the lobby loads faster", RESTARTED_EN)


@pytest.mark.parametrize("text", [
    "Now getting this error from UI in browser (index):1 Uncaught TypeError: Failed to resolve module specifier",
    "Now seeing this error in API: auth.denied { reason: 'Invalid token' }",
    "now I'm getting the same error when I reload",
])
def test_now_opening_a_report_of_what_the_person_sees_contradicts_a_claim_of_done(text):
    from commons.ingest.corrections import contradicts

    assert contradicts(text) and corrects(text, RESTARTED_EN)


def test_now_opening_the_next_request_does_not_contradict():
    from commons.ingest.corrections import contradicts

    assert not contradicts("now add error handling for empty files")


@pytest.mark.parametrize("text", [
    "After logging in, I'm getting stuck on a page saying \"Signing in...\"",
    "When I refresh my browser, I get disconnected from the game and the table gets stuck",
])
def test_stuck_after_a_claim_of_done_contradicts_it(text):
    from commons.ingest.corrections import contradicts

    assert contradicts(text) and corrects(text, RESTARTED_EN)


# -- the structure read in more languages; each case fails if its rule or its markers go --------------

FIXED_IT = AgentTurn(said="Ho sistemato il filtro, ora funziona.", acted="Edit filter.py", claimed_done=True)
FIXED_NL = AgentTurn(said="De export is gerepareerd.", acted="Edit export.py", claimed_done=True)
FIXED_TR = AgentTurn(said="Giriş butonu düzeltildi.", acted="Edit login.tsx", claimed_done=True)
FIXED_ID = AgentTurn(said="Tombol login sudah diperbaiki.", acted="Edit login.tsx", claimed_done=True)
FIXED_VI = AgentTurn(said="Tôi đã sửa nút đăng nhập.", acted="Edit login.tsx", claimed_done=True)
FIXED_TH = AgentTurn(said="แก้ปุ่มล็อกอินเรียบร้อยแล้ว", acted="Edit login.tsx", claimed_done=True)
FIXED_RU = AgentTurn(said="Готово, экспорт исправлен.", acted="Edit export.py", claimed_done=True)
FIXED_PL = AgentTurn(said="Naprawiłem eksport.", acted="Edit export.py", claimed_done=True)
DONE_EN = AgentTurn(said="I updated the login handler; all tests pass now.", acted="Bash npm test", claimed_done=True)
INFO_EN = AgentTurn(said="The project uses Vite. To start it, run `npm run dev` in the frontend folder.")


@pytest.mark.parametrize("text, turn", [
    ("è sbagliato, il totale è ancora zero", FIXED_IT),  # it: wrong, still
    ("het is nog steeds kapot", FIXED_NL),  # nl: still broken
    ("hâlâ çalışmıyor", FIXED_TR),  # tr: still does not work
    ("masih tidak bisa login", FIXED_ID),  # id: still cannot
    ("vẫn không đăng nhập được", FIXED_VI),  # vi: still not
    ("ยังใช้ไม่ได้เลย", FIXED_TH),  # th: still does not work
    ("mada ugokanai yo", DONE_JA),  # ja, romanized: still does not move
    ("опять ошибка при экспорте", FIXED_RU),  # ru: an error again
    ("nadal jest błąd", FIXED_PL),  # pl: still an error
])
def test_a_push_back_after_a_claim_is_read_in_italian_dutch_turkish_indonesian_vietnamese_thai_romaji(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    ("it's the same, the tooltip still flickers on hover", LAYOUT_EN),
    ("Sorry to say it's the same.", LAYOUT_EN),
    ("sigue igual", AgentTurn(said=SHORTCUT_ES.said, acted="Edit keybindings.json")),
    ("c'est pareil", FIXED_FR),
    ("还是一样", DONE_ZH),
    ("同じです", DONE_JA),
    ("똑같아요", DONE_KO),
    ("то же самое", FIXED_RU),
])
def test_a_result_unchanged_after_the_agent_acted_is_a_correction(text, turn):
    assert corrects(text, turn)


def test_the_same_in_a_request_is_no_report_of_an_unchanged_result():
    assert not corrects("use the same colour as the header for the footer", LAYOUT_EN)
    assert not corrects("it's the same", AgentTurn(said="Hello! What shall we build today?"))  # nothing acted on


@pytest.mark.parametrize("text, turn", [
    ("always have agents working, there is always something they can do", ASKED_EN),
    ("please work without asking for approval, you are authorized", ASKED_EN),
    ("siempre corré los tests antes de decir que está listo", SHORTCUT_ES),
    ("toujours lancer les tests avant de dire que c'est fini", FIXED_FR),
    ("聞かずに全部進めて", AgentTurn(said="どちらの方式にしましょうか？", asked=True)),  # after the agent asked again
    ("不用问我，直接做", AgentTurn(said="要我先备份数据吗？", asked=True)),
    ("항상 테스트를 먼저 돌려", DONE_KO),
    ("всегда запускай тесты перед коммитом", FIXED_RU),
])
def test_a_standing_rule_for_how_the_agent_works_is_a_correction(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    ("the page is blank", DONE_EN),  # what the agent claimed does not hold: one marker, read as a contradiction
    ("I'm getting a 500 when I hit /api/login", DONE_EN),
    ("I don't see any change", DONE_EN),
    ("hmm the tests are red now", DONE_EN),
    ("I can't find the new endpoint in routes.py", DONE_EN),
    ("il totale è sbagliato", FIXED_IT),  # a failure word alone, in a language `contradicts` does not read
    ("hasilnya salah", FIXED_ID),
])
def test_a_single_report_that_the_claimed_work_fails_contradicts_the_claim(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text", ["please revert that", "can you undo the last change", "por favor, deshacé eso",
                                  "please roll back the migration"])
def test_an_undo_is_a_correction_even_when_it_opens_as_a_request(text):
    assert corrects(text, DONE_EN)


@pytest.mark.parametrize("text, turn", [
    ("don't forget to update the README too", DONE_EN),
    ("别忘了更新文档", DONE_ZH),
    ("no te olvides de actualizar el README", SHORTCUT_ES),
    ("READMEも更新するのを忘れないでね", DONE_JA),
])
def test_a_reminder_is_an_addition_not_a_correction(text, turn):
    assert not corrects(text, turn)


@pytest.mark.parametrize("text", [
    "追加ってボタンじゃなくて、枠内をクリックしたら追加できるようにして",  # ja: "instead of a button … make it so"
    "버튼 대신 링크로 바꿔 주세요",  # ko: a link instead of a button, please
])
def test_a_message_that_ends_asking_for_a_change_instead_of_something_is_a_request(text):
    assert not corrects(text, DONE_JA)


def test_a_failure_before_a_request_that_ends_the_message_is_still_a_correction():
    assert corrects("ちょっとはみ出てるね。フォントを小さくして", DONE_JA)
    assert corrects("日本の都市がないね。国名でも検索できるようにして", DONE_JA)  # absent, then the next wish


def test_a_pasted_programs_not_is_not_the_person_negating_the_agent():
    pasted = "npm ERR! code ENOENT\nnpm ERR! syscall open\nnpm ERR! enoent Could not read package.json"
    assert not corrects(pasted, INFO_EN)  # the person's own run fails: a new problem, not push-back
    traceback = 'Traceback (most recent call last):\n  File "app.py", line 3\nModuleNotFoundError: No module named "flask"'
    assert corrects(traceback, DONE_EN) and not corrects(traceback, INFO_EN)  # after a claim of done, it contradicts it


@pytest.mark.parametrize("text, turn", [
    ("the app won't start", DONE_EN),
    ("it's worse now", DONE_EN),
    ("the button overlaps the header", DONE_EN),
    ("the text is cut off", DONE_EN),
    ("expo says: Unable to resolve module ./wallet", DONE_EN),
    ("you're overcomplicating this", DONE_EN),
    ("build fails with TS2345", DONE_EN),  # "build" opens it, but names what failed: no next task
    ("ahora está peor", AgentTurn(said="Listo, ya quedó arreglado el filtro.", claimed_done=True)),
    ("c'est pire qu'avant", FIXED_FR),
    ("文字が重なってる", DONE_JA),
    ("按钮和标题重叠了", DONE_ZH),
    ("더 나빠졌어요", DONE_KO),
    ("стало хуже", FIXED_RU),
])
def test_a_result_reported_broken_worse_or_overlapping_after_a_claim_is_a_correction(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text", ["build the settings page next", "run the migrations and seed the db",
                                  "add an option to restore the default settings"])
def test_a_request_that_opens_with_a_verb_is_the_next_task(text):
    assert not corrects(text, DONE_EN)


@pytest.mark.parametrize("text, turn", [
    ("use the existing auth module instead", DONE_EN),
    ("usa el módulo de auth existente en su lugar", AgentTurn(said="Agregué un módulo de auth nuevo.", acted="Edit auth.ts")),
    ("nimm stattdessen das bestehende Modul", FIXED_DE),
    ("代わりに既存のモジュールを使って", DONE_JA),
    ("вместо этого используй существующий модуль", FIXED_RU),
])
def test_a_redirection_in_place_of_what_the_agent_did_is_a_correction(text, turn):
    assert corrects(text, turn)


def test_instead_of_naming_what_it_replaces_is_no_redirection_of_the_agent():
    assert not corrects("for the next page, websockets instead of polling would be nice", DONE_EN)
    assert not corrects("use the existing auth module instead", INFO_EN)  # the agent did nothing to replace


@pytest.mark.parametrize("text, turn", [
    ("you removed my comments", DONE_EN),
    ("put the comments back", DONE_EN),
    ("borraste mis comentarios", AgentTurn(said="Listo, limpié el archivo.", claimed_done=True, acted="Edit a.py")),
    ("tu as supprimé mes commentaires", FIXED_FR),
    ("你把注释删了", DONE_ZH),
    ("ты удалил мои комментарии", FIXED_RU),
    ("I don't want a cache", DONE_EN),  # what the person wants, restated against what was done
    ("no quiero caché", AgentTurn(said="Agregué una caché.", claimed_done=True, acted="Edit cache.ts")),
    ("我不要缓存", DONE_ZH),
])
def test_blaming_the_agent_for_what_it_removed_or_refusing_what_it_added_is_a_correction(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("said", ["แก้ไขปุ่มล็อกอินเรียบร้อยแล้วครับ", "Ho sistemato il filtro.", "De export is opgelost.",
                                  "Giriş butonu düzeltildi.", "Tombol login sudah diperbaiki.", "Tôi đã sửa nút đăng nhập.",
                                  "Naprawiłem eksport, działa."])
def test_an_agent_claims_done_in_thai_italian_dutch_turkish_indonesian_vietnamese_polish(said):
    assert claims_done(said)


@pytest.mark.parametrize("said", ["Sto leggendo il file.", "Saya sedang membaca file.", "กำลังอ่านไฟล์ครับ"])
def test_work_under_way_in_those_languages_claims_nothing(said):
    assert not claims_done(said)


@pytest.mark.parametrize("text, corrected", [
    ("ยังใช้ไม่ได้ครับ", True),  # still does not work
    ("ผิดครับ ต้องเป็นหน้า home", True),  # wrong
    ("ไม่ต้องแก้ไฟล์นั้น", True),  # no need to touch that file: a prohibition at the head of the clause
    ("ทำยังไงให้ปุ่มเป็นสีแดง", False),  # ยังไง "how": no ยัง "still"
    ("ขอบคุณครับ ต่อไปเพิ่มหน้า settings", False),  # thanks, then the next page
    ("ช่วยเพิ่มปุ่ม logout ด้วย", False),  # please add a logout button
    ("ใช้ได้แล้วครับ ขอบคุณ", False),  # it works now, thanks
])
def test_thai_replies_after_a_claim_are_read_by_their_structure(text, corrected):
    turn = AgentTurn(said="แก้ไขปุ่มล็อกอินเรียบร้อยแล้วครับ", acted="Edit login.tsx", claimed_done=True)
    assert corrects(text, turn) is corrected


def test_a_polite_japanese_can_you_is_a_request_not_a_question_that_lowers_the_score():
    from commons.ingest.corrections import pushback_score
    long_wish = "この地図のデザインは好きじゃない。国境のデータで描き直して。"
    assert pushback_score(long_wish + "以上の内容で実装できますか", DONE_JA) > pushback_score(long_wish + "どちらが良いですか", DONE_JA)


@pytest.mark.parametrize("text, turn", [
    ("please don't touch the config files", DONE_EN),  # a ban after "please": no next task
    ("let's go back to the previous version", DONE_EN),  # an undo after "let's"
    ("scrap that, do it with CSS only", DONE_EN),
    ("vuelve a la versión anterior", AgentTurn(said="Listo, cambié el diseño.", claimed_done=True, acted="Edit a.css")),
    ("改回之前的样子", DONE_ZH),
    ("前のバージョンに戻して", DONE_JA),
    ("you misunderstood, I want to keep both", DONE_EN),
    ("你理解错了", DONE_ZH),
    ("勘違いしてるね", DONE_JA),
    ("I see no difference", DONE_EN),
    ("why is it still using port 3000?", DONE_EN),  # a why beside a persistence: no mere question
])
def test_a_ban_an_undo_a_misunderstanding_or_a_why_it_persists_is_a_correction(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text", ["when I go back to the home screen, show the list",
                                  "let's go back to the plan: next is the API", "please leave a comment in the PR"])
def test_going_back_somewhere_or_leaving_something_is_no_undo_or_ban(text):
    assert not corrects(text, DONE_EN)


SUMMARY_EN = AgentTurn(said="Implemented the wallet screen in app/wallet.tsx and wired the balance query.",
                       acted="Bash npx tsc --noEmit", claimed_done=True)


@pytest.mark.parametrize("text", [
    'the error message should say "invalid amount"',
    "for failed transactions, show a retry button",
    "the bug tracker link goes in the footer",
    "the empty state needs an illustration",
    "el mensaje de error debería decir 'monto inválido'",
    "错误信息要显示金额无效",
    "エラーメッセージは赤で表示して",
])
def test_a_failure_word_that_names_a_thing_to_build_contradicts_no_claim(text):
    assert not corrects(text, SUMMARY_EN)


@pytest.mark.parametrize("text", ["I get an error message when I log in", "the error page shows up after login",
                                  "there's an error message on the login screen"])
def test_an_error_message_met_after_a_claim_contradicts_it(text):
    assert corrects(text, SUMMARY_EN)


def test_a_list_of_what_is_still_wrong_after_it_is_the_same_is_a_correction_not_a_specification():
    observed = "\n- the tooltip flickers\n- the handle is too small\n- resizing jumps"
    assert corrects("It's the same. What I see:" + observed, LAYOUT_EN)
    assert corrects("Sigue igual. Lo que veo:" + observed, LAYOUT_EN)
    assert not corrects("Next, the panel:" + observed, LAYOUT_EN)  # the same list, as the next work


@pytest.mark.parametrize("text, turn", [("sai cosa? aggiungiamo anche il logout", FIXED_IT),  # it "sai" (you know): no vi "sai"
                                        ("sai rồi", FIXED_VI)])  # vi: wrong
def test_a_marker_of_one_language_is_not_read_in_another(text, turn):
    assert corrects(text, turn) is (turn is FIXED_VI)


def test_a_question_that_ends_on_its_particle_not_a_mark_scores_as_a_question():
    from commons.ingest.corrections import pushback_score
    turn = AgentTurn(said="ตั้งค่าหน้าเมนูเรียบร้อยแล้วครับ", acted="Edit menu.tsx", claimed_done=True)
    for statement, question in [("ไม่มีปุ่ม logout", "ไม่มีปุ่ม logout ไหมครับ"), ("ログアウトボタンがない", "ログアウトボタンはないですか"),
                                ("로그아웃 버튼이 없어", "로그아웃 버튼이 없나요")]:
        assert pushback_score(question, turn) < pushback_score(statement, turn)


@pytest.mark.parametrize("text", ["abhi bhi kaam nahi kar raha", "ainda não funciona, continua igual"])
def test_a_push_back_in_romanized_hindi_or_portuguese_is_a_correction(text):
    assert corrects(text, AgentTurn(said="Fixed the export.", acted="Edit export.py", claimed_done=True))


MULTI_DONE_EN = AgentTurn(said="Implemented the change in lib/app/customers.ex only. No mix commands were run, as requested.",
                          claimed_done=True)
USE_MIX = ("Use mix to update all dependencies for this project. I don't care about compatibility, just make sure that "
           "mix.exs uses the latest versions and update all dependencies. Apart from mix.exs dont touch any code, you can "
           "run mix commands all you want.")


@pytest.mark.parametrize("text, turn, corrected", [
    (USE_MIX, MULTI_DONE_EN, False),  # a tool for a purpose opens the next task, its bans and all
    ("use uv to add httpx to the project, and don't edit the lock file by hand", MULTI_DONE_EN, False),
    ("use the existing auth module instead", DONE_EN, True),  # another thing to use, set against what was done
    ("Now I get these lint errors: 41:12 error 'error' is defined but never used", DONE_EN, True),
])
def test_use_a_tool_to_do_something_opens_the_next_task_and_use_x_instead_still_corrects(text, turn, corrected):
    assert corrects(text, turn) is corrected
