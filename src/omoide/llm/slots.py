"""Which cache slot of a llama.cpp server a request goes to.

llama.cpp keeps the prompt each slot last evaluated and reuses the longest
prefix a new prompt shares with it. In a group scene every speaker's prompt is
its own from the first line (its card), so one slot shared by all reuses almost
nothing at a change of speaker. A slot per speaker keeps each one's prompt:
the caller names a cache key (the speaker's id; None for a one-on-one chat)
and the key keeps its slot for as long as it is in use. When there are more
keys than slots, the key used longest ago gives its slot up.
"""

from __future__ import annotations

import threading
from collections import OrderedDict


class SlotTable:
    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self._owners: OrderedDict[str | None, int] = OrderedDict()
        self._lock = threading.Lock()

    def slot(self, key: str | None) -> int:
        """The slot for `key`, which becomes the most recently used."""
        with self._lock:
            if key in self._owners:
                self._owners.move_to_end(key)
                return self._owners[key]
            used = set(self._owners.values())
            free = next((s for s in range(self.slots) if s not in used), None)
            if free is None:
                _, free = self._owners.popitem(last=False)
            self._owners[key] = free
            return free

    def resize(self, slots: int) -> None:
        """A server that turned out to have `slots` slots: forget what no longer fits."""
        with self._lock:
            self.slots = max(1, slots)
            for key, slot in list(self._owners.items()):
                if slot >= self.slots:
                    del self._owners[key]
