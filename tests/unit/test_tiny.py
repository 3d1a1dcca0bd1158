"""The tiny-model guard, shaping and sampling, on text the small models really wrote."""

from __future__ import annotations

from omoide.config.settings import Settings
from omoide.llm.tiny import ReplyGuard, gemma_prompt, sampling, shape, stop_strings


CARD = "Mochi is a grey stray who sleeps on the café's windowsill. Suzune insists the cat is not hers, yet buys it fish every morning."


def stream(text: str, user: str = "Kai", character: str = "Suzune", piece: int = 3, source: str = CARD) -> tuple[str, ReplyGuard]:
    """What the user sees when `text` arrives a few characters at a time."""
    guard = ReplyGuard(user, character, source)
    shown = "".join(guard.feed(text[i:i + piece]) for i in range(0, len(text), piece))
    return shown + guard.finish(), guard


def test_a_normal_reply_passes_whole() -> None:
    text = "*She pours the coffee.* Black, as always. Don't read into it.\n\nThe rain keeps tapping on the glass."
    shown, guard = stream(text)
    assert shown == text and not guard.stopped


def test_a_phrase_loop_is_cut_at_the_end_of_the_last_whole_sentence() -> None:
    shown, guard = stream("Kagami looks away. no Kagami no Kagami no Kagami no Kagami no Kagami no Kagami")
    assert shown == "Kagami looks away." and guard.reason == "phrase loop"


def test_a_four_word_phrase_said_a_third_time_ends_the_reply() -> None:
    text = ("*She sits.* Tea?\ncurrent date and time: Sunday 20 November, 19:45.\n"
            "current date and time: Monday 18 November, 19:40.\ncurrent date and time: Saturday 23 September, 19:45.")
    shown, guard = stream(text)
    assert shown.count("current date and time") == 2 and guard.reason == "phrase loop"


def test_a_repeated_sentence_never_shows_twice() -> None:
    shown, guard = stream("She's already staring at you. She smiles. She's already staring at you. She's already staring at you.")
    assert shown.count("already staring") == 1 and guard.reason == "repeated line"


def test_a_repeated_line_never_shows_twice() -> None:
    shown, _ = stream("The café is quiet tonight\nMochi sleeps on the sill\nThe café is quiet tonight\nThe café is quiet tonight")
    assert shown == "The café is quiet tonight\nMochi sleeps on the sill"


def test_the_user_s_next_line_ends_the_reply() -> None:
    shown, guard = stream("*She slides the cup over.* Drink it before it gets cold.\nKai: Thanks, Suzune!\nSuzune: You're welcome.")
    assert shown == "*She slides the cup over.* Drink it before it gets cold." and guard.reason == "speaker"
    shown, _ = stream("Fine.\n**You:** I will.", user="Ren")
    assert shown == "Fine."


def test_a_message_stamp_at_the_start_of_a_line_ends_the_reply() -> None:
    shown, guard = stream("*She looks up.* Mochi? She's a stray.\n\n[11/22 18:30] *looks at the grey cat on the windowsill.*")
    assert shown == "*She looks up.* Mochi? She's a stray." and guard.reason == "a new message"


def test_headings_end_the_reply_and_a_leading_title_is_dropped() -> None:
    shown, guard = stream("## Chapter 1\nHi Kai. My name is Suzune.\n## Chapter 2\n## Chapter 3")
    assert shown == "Hi Kai. My name is Suzune." and guard.reason == "heading"


def test_the_character_s_own_label_at_the_start_is_dropped() -> None:
    shown, _ = stream("Suzune: *She sighs.* We close in twenty minutes.")
    assert shown == "*She sighs.* We close in twenty minutes."


def test_reciting_the_card_or_the_lore_is_cut_where_the_recital_starts() -> None:
    shown, guard = stream("*She glances at the sill.* That's Mochi, a grey stray who sleeps on the café's windowsill. Suzune insists the cat is not hers")
    assert shown.rstrip() == "*She glances at the sill.*" and guard.reason == "copied the prompt"  # never mid-sentence
    text = "Mochi? She's not mine. I just buy her fish, that's all."
    assert stream(text)[0] == text  # talking about the same things is fine


def test_a_cut_that_would_leave_only_an_asterisk_leaves_nothing_so_the_model_tries_again() -> None:
    recited = "*She looks at the cat, and asks what it does.*"
    shown, guard = stream("*She looks at the cat, and asks what it wants.*", source=CARD + "\n" + recited)
    assert shown == "" and guard.stopped and guard.reason == "copied the prompt"


def test_in_a_scene_another_character_s_line_ends_the_reply_and_is_a_stop_string() -> None:
    guard = ReplyGuard("Kai", "Suzune", CARD, others=["Wren"])
    shown = guard.feed("*She sighs.* Fine, one more cup.\nWren: I'll have one too.") + guard.finish()
    assert shown == "*She sighs.* Fine, one more cup." and guard.reason == "speaker"
    assert "\nWren:" in stop_strings("Kai", ["Wren"]) and "\nWren:" not in stop_strings("Kai")


def test_speech_that_repeats_a_short_word_is_left_alone() -> None:
    text = "No, no, no. You're not paying tonight. Ha ha ha, look at your face."
    assert stream(text)[0] == text


def test_shaping_turns_headings_into_labels_and_leaves_the_chat_alone() -> None:
    messages = [
        {"role": "system", "content": "Rules.\n\n## Suzune\nShort black hair.\n## Scenario\nRain."},
        {"role": "user", "content": "## not a heading to touch"},
    ]
    shaped = shape(messages)  # type: ignore[arg-type]
    assert shaped[0]["content"] == "Rules.\n\nSuzune:\nShort black hair.\nScenario:\nRain."
    assert shaped[1] == messages[1]


def test_shaping_puts_the_volatile_tail_before_the_user_s_last_message() -> None:
    messages = [
        {"role": "system", "content": "Card."}, {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Coffee?"}, {"role": "system", "content": "Current date and time: Monday."},
    ]
    assert [m["content"] for m in shape(messages)] == ["Card.", "Hello.", "Current date and time: Monday.", "Coffee?"]  # type: ignore[arg-type]


def test_gemma_turns_fold_the_system_text_into_a_user_turn() -> None:
    prompt = gemma_prompt([
        {"role": "system", "content": "You are Suzune."}, {"role": "assistant", "content": "We close soon."},
        {"role": "user", "content": "Coffee?"}, {"role": "system", "content": "Time: 21:00."},
    ])
    assert prompt == (
        "<bos><start_of_turn>user\nYou are Suzune.<end_of_turn>\n<start_of_turn>model\nWe close soon.<end_of_turn>\n"
        "<start_of_turn>user\nCoffee?\n\nTime: 21:00.<end_of_turn>\n<start_of_turn>model\n"
    )


def test_sampling_carries_the_settings_and_the_user_s_stops() -> None:
    params = sampling(Settings(repeat_penalty=1.3, min_p=0.2, seed=7), "Kai").kwargs()
    assert (params["repeat_penalty"], params["min_p"], params["seed"]) == (1.3, 0.2, 7)
    assert "\nKai:" in params["stop"] and "\nYou:" in params["stop"] and "\n#" in params["stop"]
    assert "\nKai:" in stop_strings("Kai") and "<START>" in stop_strings("Kai")
