"""How the agent is told to work on (without asking) is a correction only after it asked; a harness
echo of an unknown slash command is not the person's; "一直" (all along) is persistence."""

from __future__ import annotations

import pytest

from commons.ingest.corrections import AgentTurn, corrects, is_person_text

CONCLUDED = AgentTurn(said="结论：Google 从未官方发布过带 root 的 AVD 镜像，所有镜像都是生产签名的 release 版本。",
                      acted="Read /home/u/.android/avd/x.avd/config.ini")
ASKED_ZH = AgentTurn(said="等待启动完成后再验证 root。这个启动策略是否合理？", asked=True)
ASKED_EN = AgentTurn(said="Step 4 waits for the boot to complete. Does this look right?", asked=True)


@pytest.mark.parametrize("text", [
    "基于sdk 36的google avd进行magisk root修补,确保adb root有权限,闭环调试验证好后再结束，不要停下来问我",
    "Patch the image with Magisk and verify adb root works; don't stop to ask me.",
])
def test_a_new_task_told_to_go_on_without_asking_when_the_agent_asked_nothing_is_no_correction(text):
    assert not corrects(text, CONCLUDED)


@pytest.mark.parametrize(("text", "turn"), [
    ("可以,后续你自动完成,无需询问，决策都采用你认为最好的", ASKED_ZH),
    ("ok, do the rest yourself and don't stop to ask me", ASKED_EN),
])
def test_after_the_agent_asked_being_told_to_go_on_without_asking_is_a_correction(text, turn):
    assert corrects(text, turn)


def test_claude_codes_answer_to_an_unknown_slash_command_is_not_the_persons_text():
    assert not is_person_text("Unknown skill: btw")
    assert not is_person_text("Unknown slash command: foo")
    assert is_person_text("Unknown skills are listed where?")


def test_all_along_in_chinese_after_the_agent_acted_is_persistence():
    killed = AgentTurn(said="", acted="Bash sleep 30 && adb wait-for-device && adb devices", interrupted=True)
    assert corrects("cwtrocks@penguin:~/avd$ adb devices\nList of devices attached\nemulator-5554   device 一直还残留上次的",
                    killed)
    assert not corrects("一直往下做，完成后告诉我", AgentTurn(said="好的，我开始做第一步。"))
