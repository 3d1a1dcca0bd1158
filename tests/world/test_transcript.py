"""What an end-of-conversation step reads of a long conversation: the lasting
sentences of its beginning, dated, then its end (world/transcript.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from omoide.domain.chat import Message, Role
from omoide.llm.stamps import stamp
from omoide.world.transcript import EARLIER, LATER, render_transcript

START = datetime(2026, 9, 14, 18, 30, tzinfo=timezone.utc)
CHATTER = "The kettle is whistling again and the rain keeps tapping on the window while we wait for it to stop."


def conversation(*first: str, chatter: int, last: str = "Goodnight, see you on Thursday.") -> list[Message]:
    texts = [*first, *([CHATTER] * chatter), last]
    return [Message(i + 1, 1, i or None, Role.USER if i % 2 == 0 else Role.ASSISTANT, text, START + timedelta(minutes=i), depth=i)
            for i, text in enumerate(texts)]


def speaker(m: Message) -> str:
    return "Noor" if m.role is Role.USER else "Suzune"


def test_a_conversation_that_fits_is_read_whole_as_before() -> None:
    messages = conversation("My goldfinch is named Pipkin.", chatter=3)
    text = render_transcript(messages, speaker, 6000, user="Noor", character="Suzune")
    assert text.splitlines()[0] == "Noor: My goldfinch is named Pipkin."
    assert EARLIER not in text and len(text.splitlines()) == 5


def test_a_long_one_keeps_what_lasts_of_its_beginning_dated_then_its_end_within_the_limit() -> None:
    messages = conversation("Hello!", "Welcome back.", "My goldfinch is named Pipkin, and I teach chemistry in Tromsø.", chatter=80)
    text = render_transcript(messages, speaker, 2000, user="Noor", character="Suzune")
    assert len(text) <= 2000
    said = f"{stamp(messages[2].created_at)} Noor: My goldfinch is named Pipkin, and I teach chemistry in Tromsø."
    assert text.index(EARLIER) < text.index(said) < text.index(LATER)
    assert text.endswith(f"{speaker(messages[-1])}: Goodnight, see you on Thursday.")  # the end, as it was said
    earlier = text[: text.index(LATER)]
    assert "Hello!" not in earlier and CHATTER not in earlier  # passing talk is not what lasts


def test_the_beginning_takes_at_most_its_share_and_the_end_the_rest() -> None:
    facts = [f"My cousin Ilario{n} moved to Bergen{n} last year." for n in range(40)]
    messages = conversation(*facts, chatter=60)
    text = render_transcript(messages, speaker, 3000, user="Noor", character="Suzune", share=0.3)
    earlier, end = text.split(LATER + "\n")
    assert len(earlier) <= 0.3 * 3000 + len(EARLIER) + 2
    assert len(text) <= 3000 and len(end) >= 3000 * 0.6


def test_without_anything_that_lasts_the_end_fills_the_limit() -> None:
    messages = conversation(chatter=100)
    text = render_transcript(messages, speaker, 1500, user="Noor", character="Suzune")
    assert EARLIER not in text and text.startswith("…") and len(text) == 1501
