"""What a character carries of the one person it talks with is often all it
carries: the prompt says each remembered line once."""

from omoide.domain.world import Participant, Relationship, WorldView
from omoide.world.prompt import world_block

KAI = Participant("user", "Kai")


def _view(global_memory: str, memory: str) -> WorldView:
    return WorldView("suzune", global_memory, relationships={"user": Relationship("user", "a regular", memory=memory)})


def test_a_dated_line_carried_already_is_not_said_again_under_the_person() -> None:
    carried = "[05/03 19:00] Kai moved to Maizuru.\n[05/04 20:10] Kai's sister is called Aoi."
    block = world_block(_view(carried, carried + "\n[05/05 18:00] Kai hates umbrellas."), "Suzune", [KAI])

    assert block.count("Kai moved to Maizuru.") == 1
    assert block.count("Aoi") == 1
    assert "## Suzune and Kai\nKai is, to Suzune: a regular.\n[05/05 18:00] Kai hates umbrellas." in block


def test_sentences_without_dates_are_compared_one_by_one() -> None:
    block = world_block(_view("Kai likes rain. Kai works nights.", "Kai works nights. Kai owes Suzune a book."),
                        "Suzune", [KAI])

    assert block.count("Kai works nights.") == 1
    assert block.endswith("Kai is, to Suzune: a regular.\nKai owes Suzune a book.")


def test_a_line_that_only_resembles_one_carried_is_kept() -> None:
    block = world_block(_view("[05/03 19:00] Kai moved to Maizuru.", "[05/03 19:00] Kai moved to Maizuru in May."),
                        "Suzune", [KAI])

    assert "Kai moved to Maizuru in May." in block


def test_a_sentence_the_summary_quotes_is_left_to_it_whatever_its_date() -> None:
    carried = ("[05/09 20:00] Kai said: My sister Aoi moved to Leeds. I hate umbrellas.\n"
               "[05/10 21:00] Kai said: Thanks, Suzune!")
    summary = "[05/03 19:00] Kai said: My sister Aoi moved to Leeds. [05/04 19:00] Kai said: Thanks, Suzune!"
    block = world_block(_view(carried, ""), "Suzune", [KAI], said=summary)

    assert "Aoi" not in block
    assert "## What Suzune carries\n[05/09 20:00] Kai said: I hate umbrellas." in block
    assert "05/10" not in block  # a dated line with nothing left goes whole, date and speaker too


def test_what_the_summary_says_is_not_repeated_under_the_person_either() -> None:
    block = world_block(_view("", "[05/09 20:00] Kai works nights. Kai owes Suzune a book."), "Suzune", [KAI],
                        said="[05/02 18:00] Kai said: Kai works nights.")

    assert "works nights" not in block
    assert "[05/09 20:00] Kai owes Suzune a book." in block
