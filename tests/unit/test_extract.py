"""The extractive writer (memory/extract.py): what memory work keeps when no
model writes it. Its sentences are not the memory check's: the categories are."""

from __future__ import annotations

from omoide.memory.extract import content_words, extract, fallback_summary, reported, sentences

PASSING = [
    "[05/01 18:00] Noor: The 7:40 bus from Westbury was late again because of roadworks near Hallam Bridge.",
    "[05/01 18:03] Noor: Margit says the bakery in Castlegate sells the best rolls on Sundays.",
    "[05/01 18:06] Noor: I counted 14 herons on the river by Millford this morning.",
]


def kept(lines: list[str], budget: int = 400) -> str:
    return "\n".join(extract(lines, user="Noor", character="Ines", budget_chars=budget))


COMMON = {w: 0.1 for line in PASSING for w in content_words(line)}
"""The passing detail's words as the story's index sees them: said every day (memory/rarity.py)."""


def test_a_fact_said_once_outweighs_passing_detail_the_story_is_full_of() -> None:
    for fact in ("I really can't stand coriander, it ruins everything.",  # a dislike
                 "I could eat apricot jam all day, every day.",  # a liking
                 "I swear I'll bring you a copy of that record on Friday.",  # a promise
                 "Last night we built a kite out of newspaper together."):  # what they did together
        text = "\n".join(extract([*PASSING, f"[05/01 18:09] Noor: {fact}"], user="Noor", character="Ines",
                                 budget_chars=160, rare=COMMON))
        assert fact in text, (fact, text)
        assert "Westbury" not in text


def test_a_sentence_that_names_what_the_one_before_it_says_is_kept_with_it() -> None:
    text = kept(["[05/02 19:00] Noor: I finally named my old van. It's called Albatross, for the way it wobbles."])
    assert "named my old van. It's called Albatross" in text


def test_what_the_character_tells_of_herself_is_kept_like_what_the_user_tells() -> None:
    lines = [*PASSING, "[05/02 19:03] Ines: *She laughs.* I grew up above a clock shop in Tarbes."]
    assert "Tarbes" in "\n".join(extract(lines, user="Noor", character="Ines", budget_chars=160, rare=COMMON))
    # The same sentence weighs the same whoever says it
    hers, his = (sentences([f"[05/02 19:03] {who}: I grew up above a clock shop in Tarbes."], user="Noor",
                           character="Ines")[0].score for who in ("Ines", "Noor"))
    assert hers == his > 0


# A tiny model's replies: every sentence a disclosure full of names it made up.
INVENTED = [
    "[05/03 20:00] Ines: I love the old lanterns of Kyoto with my friend Hanako and her brother Daichi.",
    "[05/03 20:00] Ines: My mother Aiko taught me 12 songs from Nagasaki when I was 7.",
    "[05/03 20:00] Ines: We went to the Gion festival together in 1998 with my cousin Ren.",
    "[05/03 20:00] Ines: My favourite teacher, Mrs Okabe, moved to Sapporo last year.",
]


def test_a_fact_told_across_two_sentences_is_kept_whole() -> None:
    text = kept(["[05/03 19:58] Ines: Maizuru. Above my uncle's fish shop, with the gulls on the roof.",
                 "[05/03 19:59] Noor: Lilies. I can't bear them, they smell of funerals."], budget=400)
    assert "Maizuru. Above my uncle's fish shop" in text
    assert "Lilies. I can't bear them" in text


def test_a_correction_is_kept_with_what_it_corrects() -> None:
    text = kept([*PASSING, "[05/03 20:00] Noor: I told you my sister was in York. Scratch that, she moved to Leeds."],
                budget=400)
    assert "she was in York. Scratch that, she moved to Leeds" in text.replace("my sister was", "she was")


def test_a_rewritten_summary_keeps_each_sentence_with_its_own_date_not_its_paragraphs() -> None:
    summary = ("[05/01 18:00 – 05/09 21:00] They talked. [05/01 18:09] Noor said: her brother is called Tarik. "
               "[05/06 20:15] Noor said: she moved to Lyon last week.")
    text = kept([summary])
    assert "[05/01 18:09] Noor said: her brother is called Tarik." in text
    assert "[05/06 20:15] Noor said: she moved to Lyon last week." in text


def test_the_fallback_summary_tells_the_facts_as_said_in_the_third_person() -> None:
    text = fallback_summary(["[05/03 10:00] Noor: My cat is called Pudding and I work at the harbour office."],
                            user="Noor", character="Ines", budget_chars=300)
    assert text == "[05/03 10:00] Noor said: Their cat is called Pudding and they work at the harbour office."


def test_a_rewritten_summary_is_dated_from_its_first_day_not_by_its_last_messages() -> None:
    from datetime import datetime, timezone

    from omoide.domain.chat import Message, Role
    from omoide.memory.summary import Compression

    at = datetime(2026, 5, 9, 21, 0, tzinfo=timezone.utc)
    chunk = [Message(id=9, chat_id=1, parent_id=8, role=Role.USER, content="We said goodnight.", created_at=at)]
    folded = "[05/01 18:00 – 05/02 19:00] Noor's brother is called Tarik.\n\n[05/06 20:15] Noor moved to Lyon."
    rewrite = Compression.of(folded, merge_chars=10)
    assert rewrite.rewrite
    first = rewrite.dated("Noor's brother Tarik; Noor moved to Lyon; they said goodnight.", chunk, timezone.utc)
    assert first.startswith("[05/01 18:00 – 05/09 21:00] Noor's brother")
    again = rewrite.dated("[05/09 21:00] Noor's brother Tarik.", chunk, timezone.utc)  # a span the model wrote is replaced
    assert again == "[05/01 18:00 – 05/09 21:00] Noor's brother Tarik."
    part = Compression.of(folded, merge_chars=10_000)
    assert part.dated("They said goodnight.", chunk, timezone.utc) == "[05/09 21:00] They said goodnight."


def test_a_summary_that_names_what_nobody_said_is_refused_and_a_faithful_one_is_not() -> None:
    from omoide.memory.spoiled import spoiled

    lines = ["[05/03 10:00] Noor: My brother Tarik moved to Lisbon for a job at the aquarium.",
             "[05/03 10:02] Ines: *She smiles.* Lisbon suits him."]
    instructions = "Summarize the conversation between Ines and Noor."
    made_up = "Noor said her brother Tarik met Captain Ferreira in Madrid, then sailed with Olga to Porto."
    assert "nobody said" in (spoiled(made_up, instructions=instructions, lines=lines, user="Noor", character="Ines") or "")
    faithful = "Noor's brother Tarik moved to Lisbon on Tuesday for a job at the aquarium; Ines thinks it suits him."
    assert spoiled(faithful, instructions=instructions, lines=lines, user="Noor", character="Ines") is None


def test_a_reply_with_no_stop_does_not_swallow_the_next_speakers_line_when_folded_again() -> None:
    # Memory's own words run each speaker's line into the next; a small model's reply often ends without a stop.
    for then in ("[05/04 19:00] Noor said:", "Noor said:"):
        summary = (f"[05/03 20:00] Ines said: We walked and walked and nobody knew where the road went {then} "
                   "she started repairing pianos in a workshop by the canal.")
        text = kept([summary, *INVENTED], budget=2000)
        assert "Noor said: she started repairing pianos" in text, text
        assert "Ines said: she started repairing" not in text


def test_of_sentences_that_say_the_same_kind_of_thing_again_and_again_the_newest_stands_for_them() -> None:
    towns = ["Halden", "Morwick", "Tarrow", "Essly", "Brandby", "Coldharbour"]
    routine = [f"[05/0{n + 1} 18:00] Noor: I found an old map of {town} inside a second-hand atlas."
               for n, town in enumerate(towns)]
    fact = "[05/04 18:30] Noor: My brother Idris just opened a bakery in Leeds."
    text = kept([*routine[:4], fact, *routine[4:]], budget=190)
    assert "Idris" in text and "Coldharbour" in text, text
    assert "Halden" not in text


def test_a_memo_batch_that_tells_nothing_stays_a_gap() -> None:
    from omoide.memory.memos import fallback_highlights

    batch = ["[05/06 18:00] Noor: Mm.", "[05/06 18:03] Ines: *She nods and wipes the counter.* Ah."]
    assert fallback_highlights(batch, name="Ines", user="Noor") == []
    told = "[05/06 18:06] Noor: My brother is called Idris."
    assert fallback_highlights([*batch, told], name="Ines", user="Noor") == ["Noor said: Their brother is called Idris."]


def test_a_list_of_guesses_is_refused_as_a_summary_even_when_a_guess_names_something_said() -> None:
    from omoide.memory.spoiled import spoiled

    lines = ["[03/02 19:03] Kai: My cat is called Comet; we adopted her on a Tuesday.",
             "[03/02 19:05] Suzune: *She smiles.* A fine name."]
    shotgun = "Biscuit? Mochi? Comet? Pepper? It was a Tuesday? Or a Friday? Honestly I don't know."
    assert "guesses" in (spoiled(shotgun, instructions="Summarize.", lines=lines, user="Kai", character="Suzune") or "")
    faithful = "Kai's cat is called Comet; they adopted her on a Tuesday. Suzune asked if she sleeps a lot? She does."
    assert spoiled(faithful, instructions="Summarize.", lines=lines, user="Kai", character="Suzune") is None


def test_a_fact_in_a_replys_third_paragraph_is_the_characters_after_three_rewrites() -> None:
    from datetime import UTC, datetime, timedelta

    from omoide.config.sections import MemorySettings
    from omoide.domain.chat import Message, Role
    from omoide.memory.own_words import own_words_summary
    from omoide.memory.summary import Compression

    at = datetime(2026, 5, 1, 19, 0, tzinfo=UTC)
    reply = ("*She sets down the kettle.*\n\nThe rain again.\n\n"
             "Our mother sings in a hotel bar in Nagasaki, every Friday since I was nine.")
    chunk = [Message(id=1, chat_id=1, parent_id=None, role=Role.USER, content="Tell me about your family.", created_at=at),
             Message(id=2, chat_id=1, parent_id=1, role=Role.ASSISTANT, content=reply, created_at=at + timedelta(minutes=1))]
    settings = MemorySettings()
    summary = own_words_summary(Compression.of(None, 10), chunk, settings, name="Suzune", user="Kai")
    for n in range(3):  # each a rewrite: the summary folded again with a later line of the user's
        later = [Message(id=10 + n, chat_id=1, parent_id=2, role=Role.USER, content=f"My friend Dario{n} lives in Ghent{n}.",
                         created_at=at + timedelta(days=n + 1))]
        compression = Compression.of(summary, 10)
        assert compression.rewrite
        summary = own_words_summary(compression, later, settings, name="Suzune", user="Kai")
    assert "Suzune said: Our mother sings in a hotel bar in Nagasaki" in summary, summary
    assert "Kai said: Our mother" not in summary and "Dario" in summary
