"""Which cache slot a request goes to (llm/slots.py): `omoide say` is a process
per message, so a slot must not depend on which request a process sent first."""

from __future__ import annotations

from omoide.llm.slots import MEMORY_CACHE_KEY, SlotTable


def test_the_chat_has_the_same_slot_whether_memory_work_or_the_reply_asks_first() -> None:
    reply_first, memory_first = SlotTable(4), SlotTable(4)
    chat = reply_first.slot(None)
    assert reply_first.slot(MEMORY_CACHE_KEY) == 3
    assert memory_first.slot(MEMORY_CACHE_KEY) == 3
    assert memory_first.slot(None) == chat != 3


def test_speakers_share_every_slot_but_memory_works_and_one_slot_is_everyones() -> None:
    table = SlotTable(3)
    assert sorted(table.slot(key) for key in ("a", "b")) == [0, 1]
    assert table.slot("c") in (0, 1)  # the key used longest ago gives its slot up
    assert table.slot(MEMORY_CACHE_KEY) == 2
    single = SlotTable(1)
    assert single.slot("a") == single.slot(MEMORY_CACHE_KEY) == 0
    table.resize(2)
    assert table.slot("d") == 0 and table.slot(MEMORY_CACHE_KEY) == 1
