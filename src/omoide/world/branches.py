"""World memory follows each chat's current path.

An update is in force while the end of the conversation that caused it is on
its chat's path. `/branch restore` (or undo, a swipe, an edit) to a point
before that end *retracts* it: a new version gives back what the conversation
changed (list entries it added are taken out; a text or number goes back to
its value before, unless something else changed it since, which is then kept
and logged). Returning to the end *reinstates* it the same way. Every retract
and reinstate is a new, logged version; no update is ever lost from the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from omoide.config.sections import WorldSettings
from omoide.domain.world import LIST_FIELDS, Conversation, Field, UpdateKind, dump_items, load_items
from omoide.store import Store
from omoide.store.world import Conflict


class WorldBranches:
    """Retracts and reinstates conversations' updates as a chat's head moves."""

    def __init__(self, store: Store, settings: WorldSettings, lock: asyncio.Lock, *,
                 schedule: Callable[[int], None]) -> None:
        self.store = store
        self.lock = lock
        """The keeper's: a retract never interleaves with a pass writing the same fields."""
        self.settings = settings
        self.schedule = schedule
        """Runs a reinstated conversation's unfinished pass in the background."""

    async def follow_head(self, chat_id: int) -> None:
        """Retract the updates of conversations whose end has left the chat's
        path, and reinstate those whose end is back on it."""
        convs = await self.store.world.conversations(chat_id=chat_id)
        if not convs:
            return
        chat = await self.store.chats.get(chat_id)
        on_path = await self.store.world.ends_on_path(chat.head_id, [c.end_id for c in convs])
        for conv in reversed(convs):
            if conv.in_force and conv.end_id not in on_path:
                async with self.lock:
                    await self._retract(conv)
            elif not conv.in_force and conv.end_id in on_path:
                async with self.lock:
                    await self._reinstate(conv)
                if conv.state != "done":
                    self.schedule(conv.id)

    async def _touched(self, conv: Conversation) -> dict[tuple[str, str, Field], tuple[str | None, str | None]]:
        """(owner, about, field) -> (value before the conversation, value it left)."""
        touched: dict[tuple[str, str, Field], tuple[str | None, str | None]] = {}
        for u in await self.store.world.applied(conv.id):
            key = (u.owner, u.about, u.field)
            touched[key] = (touched[key][0] if key in touched else u.before, u.after)
        return touched

    async def _retract(self, conv: Conversation) -> None:
        for (owner, about, name), (before, after) in (await self._touched(conv)).items():
            current = await self.store.world.current(owner, about, name)
            if name in LIST_FIELDS:
                items = load_items(current)
                kept = [i for i in items if i.conversation_id != conv.id]
                if len(kept) != len(items):
                    await self._set(conv, owner, about, name, dump_items(kept), UpdateKind.RETRACT, current)
            elif current == after:
                await self._set(conv, owner, about, name, before or "", UpdateKind.RETRACT, current)
            else:
                await self._kept(conv, owner, about, name, current, before)
        await self.store.world.set_in_force(conv.id, False)

    async def _reinstate(self, conv: Conversation) -> None:
        retracted = {(u.owner, u.about, u.field): u.after for u in await self.store.world.updates(conversation_id=conv.id)
                     if u.kind is UpdateKind.RETRACT}
        for (owner, about, name), (_before, after) in (await self._touched(conv)).items():
            current = await self.store.world.current(owner, about, name)
            if name in LIST_FIELDS:
                items = load_items(current)
                have = {(i.conversation_id, i.text) for i in items}
                back = [i for i in load_items(after) if i.conversation_id == conv.id and (i.conversation_id, i.text) not in have]
                if back:
                    merged = sorted([*items, *back], key=lambda i: i.conversation_id or 0)[-self.settings.rolling :]
                    await self._set(conv, owner, about, name, dump_items(merged), UpdateKind.REINSTATE, current)
            elif (owner, about, name) in retracted and current == retracted[(owner, about, name)]:
                await self._set(conv, owner, about, name, after or "", UpdateKind.REINSTATE, current)
            else:
                await self._kept(conv, owner, about, name, current, after)
        await self.store.world.set_in_force(conv.id, True)

    async def _set(self, conv: Conversation, owner: str, about: str, name: Field, value: str,
                   kind: UpdateKind, expect: str | None) -> None:
        try:
            await self.store.world.change(owner, about, name, value, step=str(kind), kind=kind,
                                          conversation_id=conv.id, message_id=conv.end_id, expect=expect)
        except Conflict:
            await self._kept(conv, owner, about, name, await self.store.world.current(owner, about, name), value)

    async def _kept(self, conv: Conversation, owner: str, about: str, name: Field, current: str | None, other: str | None) -> None:
        await self.store.world.note(owner, about, name, step="kept", kind=UpdateKind.KEPT, before=current, after=other,
                                    conversation_id=conv.id, message_id=conv.end_id,
                                    error="changed since by a later update or an edit; left as it is")
