"""The chat as a play script for a tiny embedded model (pure rendering)."""

from __future__ import annotations

from omoide.llm.base import ChatMessage
from omoide.llm.play_script import SCENE_OPENING, script_prompt

CHAT: list[ChatMessage] = [
    {"role": "system", "content": "You are Suzune.\n\nScenario:\nA café at night.", "speakers": ["Kai", "Suzune"]},
    {"role": "assistant", "content": "[11/22 20:05] *She sighs.* We close soon."},
    {"role": "user", "content": "[11/22 20:06] Black, please."},
    {"role": "assistant", "content": "[11/22 20:06] *She pours.*\nDon't get used to it."},
    {"role": "system", "content": "Current date and time: Sunday 22 November 2026, 20:07."},
    {"role": "user", "content": "[11/22 20:07] What's the cat's name?"},
]


def test_every_message_is_a_line_of_its_speaker_and_the_character_speaks_next() -> None:
    text = script_prompt(CHAT, "Kai", "Suzune")
    assert text.startswith("You are Suzune.\n\nScenario:\nA café at night.\n\n" + SCENE_OPENING + "\n")
    assert text.endswith(
        "[11/22 20:05] Suzune: *She sighs.* We close soon.\n"
        "[11/22 20:06] Kai: Black, please.\n"
        "[11/22 20:06] Suzune: *She pours.*\nDon't get used to it.\n"
        "(Current date and time: Sunday 22 November 2026, 20:07.)\n"
        "[11/22 20:07] Kai: What's the cat's name?\n"
        "[11/22 20:07] Suzune:"
    )


def test_a_longer_chat_keeps_the_earlier_script_as_its_prefix() -> None:
    before = script_prompt(CHAT[:3], "Kai", "Suzune")
    after = script_prompt(CHAT, "Kai", "Suzune")
    assert after.startswith(before.removesuffix("[11/22 20:06] Suzune:"))


def test_a_reply_being_continued_ends_inside_the_character_s_line() -> None:
    text = script_prompt([*CHAT, {"role": "assistant", "content": "Mochi. She"}], "Kai", "Suzune")
    # A reply carries no stamp of its own: it is at the time of the line it answers, as the script said it would be.
    assert text.endswith("[11/22 20:07] Kai: What's the cat's name?\n[11/22 20:07] Suzune: Mochi. She")
