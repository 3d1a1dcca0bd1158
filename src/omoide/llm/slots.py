"""Which cache slot of a llama.cpp server a request goes to.

llama.cpp keeps the prompt each slot last evaluated and reuses the longest
prefix a new prompt shares with it. In a group scene every speaker's prompt is
its own from the first line (its card), so one slot shared by all reuses almost
nothing at a change of speaker. A slot per speaker keeps each one's prompt:
the caller names a cache key (the speaker's id; None for a one-on-one chat)
and the key keeps its slot for as long as it is in use. When there are more
keys than slots, the key used longest ago gives its slot up.

Memory work (`MEMORY_CACHE_KEY`) always has the last slot, and the speakers
share the others: a slot must not depend on which request a process happened
to send first (`omoide say` is a process per message; when memory work came
first there, it took the chat's slot, and the next reply read its prompt again).
"""

from __future__ import annotations

import threading
from collections import OrderedDict


MEMORY_CACHE_KEY = "omoide:memory-work"
"""The cache key of memory work sent on its own: a server with several slots
keeps it on a slot of its own, the last (the speakers' ids never look like this)."""


class SlotTable:
    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self._owners: OrderedDict[str | None, int] = OrderedDict()
        self._lock = threading.Lock()

    def slot(self, key: str | None) -> int:
        """The slot for `key`, which becomes the most recently used."""
        if key == MEMORY_CACHE_KEY:
            return self.slots - 1
        with self._lock:
            if key in self._owners:
                self._owners.move_to_end(key)
                return self._owners[key]
            used = set(self._owners.values())
            free = next((s for s in range(self._speakers) if s not in used), None)
            if free is None:
                _, free = self._owners.popitem(last=False)
            self._owners[key] = free
            return free

    def resize(self, slots: int) -> None:
        """A server that turned out to have `slots` slots: forget what no longer fits."""
        with self._lock:
            self.slots = max(1, slots)
            for key, slot in list(self._owners.items()):
                if slot >= self._speakers:
                    del self._owners[key]

    @property
    def _speakers(self) -> int:
        """The slots the speakers share: all but memory work's, the last (one, when there is one)."""
        return self.slots - 1 if self.slots > 1 else 1
