"""Moving on a chat's message tree: swipes, /undo, branches, and the actions on
any message of the path (edit, delete, branch from it). Every move changes only
the head (nothing is copied or deleted), and the world keeper follows it, so a
conversation left behind on another branch is retracted.

A move that leaves a path no swipe reaches (/undo, /edit, a restore, an action on
an earlier message) first saves the head as an automatic branch, `auto-<time>`,
so `/branch restore` brings the whole story back; when a branch is already saved
at that message, that branch is named and no other is added."""

from __future__ import annotations

import re
from datetime import datetime

from omoide.chat.state import ChatState
from omoide.domain.chat import Branch, Message, Role
from omoide.errors import CommandError, NotFound, StoreError
from omoide.world.keeper import WorldKeeper

BRANCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


class ChatTree:
    def __init__(self, state: ChatState, world: WorldKeeper) -> None:
        self.state = state
        self.store = state.store
        self.world = world

    async def _move(self, message_id: int) -> None:
        chat = await self.state.move_head(message_id)
        await self.world.follow_head(chat.id)

    async def swipes(self) -> tuple[list[Message], int]:
        """The alternatives of the last reply, and which one is on the path."""
        head = await self.state.head()
        if head is None:
            return [], 0
        group = await self.store.messages.siblings(head)
        return group, next(i for i, m in enumerate(group) if m.id == head.id)

    async def select_swipe(self, step: int) -> Message | None:
        group, index = await self.swipes()
        if len(group) < 2:
            return None
        chosen = group[(index + step) % len(group)]
        await self._move(chosen.id)
        return chosen

    async def undo(self) -> tuple[Message, Branch]:
        """Step the head back one exchange (to before your last message), saving
        the path left as an automatic branch (returned) so /branch restore reopens it."""
        head = await self.state.head()
        if head is None or head.parent_id is None:
            raise CommandError("There is nothing to undo.", "/undo steps back one exchange; the chat is at its first message.")
        target = await self.store.messages.get(head.parent_id)
        if head.role is Role.ASSISTANT and target.role is Role.USER and target.parent_id is not None:
            target = await self.store.messages.get(target.parent_id)
        kept = await self.keep_head(head.id)
        await self._move(target.id)
        return target, kept

    async def keep_head(self, message_id: int) -> Branch:
        """Save `message_id` (the head about to be left) as a new automatic branch,
        unless a branch already keeps it."""
        if (saved := await self.store.branches.at(self.state.chat_id, message_id)) is not None:
            return saved
        name = await self._auto_name()
        return await self.store.branches.save(self.state.chat_id, name, message_id, auto=True)

    async def _auto_name(self) -> str:
        """auto-<time>, with -2, -3 ... when that second already has one (two quick undos)."""
        base = f"auto-{datetime.now():%Y%m%d-%H%M%S}"
        taken = {b.name for b in await self.branches()}
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        return name

    # -- actions on any message of the path ---------------------------------------------

    async def on_path(self, message_id: int) -> Message:
        """Message `message_id`, checked to be on the path to the head."""
        head = await self.state.head()
        if head is None:
            raise CommandError("The chat is empty.", "Send a message first.")
        message = await self.store.messages.get(message_id)
        if message.chat_id != self.state.chat_id or not await self.store.messages.is_ancestor(message.id, head.id):
            raise CommandError(f"Message #{message_id} is not on this path of the story.",
                               "Only the messages shown in the chat can be acted on; /branch restore goes to another path.")
        return message

    async def keep_rest(self, message: Message) -> Branch | None:
        """Save the head as `auto-<time>` when messages after `message` are about to
        leave the path (an earlier message edited, deleted, regenerated or branched from)."""
        head = await self.state.head()
        if head is None or head.id == message.id:
            return None
        return await self._autosave(head.id)

    async def _autosave(self, head_id: int) -> Branch:
        """Save `head_id` as `auto-<time>` (with its id after it when another was saved that second),
        unless a branch already keeps it."""
        if (saved := await self.store.branches.at(self.state.chat_id, head_id)) is not None:
            return saved
        name = f"auto-{datetime.now():%Y%m%d-%H%M%S}"
        if await self.store.branches.get(self.state.chat_id, name) is not None:
            name = f"{name}-{head_id}"
        return await self.store.branches.save(self.state.chat_id, name, head_id, force=True, auto=True)

    async def rewrite(self, message_id: int, text: str) -> tuple[Message, Branch | None]:
        """Your new text for message `message_id`: a new sibling of it (the old one
        stays in the tree), which becomes the head of a new path. Returns it and the
        branch that keeps the old path's later messages (None when there were none)."""
        text = text.strip()
        if not text:
            raise CommandError("An edited message needs some text.", "Type the new text, or press Esc to keep the message as it is.")
        message = await self.on_path(message_id)
        if message.stage:
            raise CommandError("A stage note cannot be edited.", "/invite and /leave write stage notes; edit a message instead.")
        kept = await self.keep_rest(message)
        edited = await self.store.messages.add(self.state.chat_id, message.parent_id, message.role, text, speaker=message.speaker)
        self.state.own_head = edited.id
        await self.world.follow_head(self.state.chat_id)
        return edited, kept

    async def delete(self, message_id: int) -> tuple[Message, Branch | None]:
        """Take message `message_id` and everything after it off the path: the head
        moves to its parent. Nothing is deleted from the tree; the old head is saved
        as `auto-<time>` first. Returns the new head and that branch."""
        message = await self.on_path(message_id)
        if message.parent_id is None:
            raise CommandError("The first message of a chat cannot be deleted.", "/new starts another chat.")
        head = await self.state.head()
        assert head is not None  # on_path found it
        kept = await self._autosave(head.id)
        await self._move(message.parent_id)
        return await self.store.messages.get(message.parent_id), kept

    async def branch_from(self, message_id: int, name: str) -> tuple[Branch, Branch | None]:
        """`/branch save NAME` at message `message_id` and go there: the head (and the
        memory anchored to it) rewinds to it. The old head is saved as `auto-<time>`."""
        name = self.validate_branch_name(name)
        message = await self.on_path(message_id)
        try:
            await self.store.branches.save(self.state.chat_id, name, message.id)
        except StoreError as exc:
            if isinstance(exc, NotFound):
                raise
            raise CommandError(exc.message, exc.hint) from exc
        return await self.restore_branch(name)

    @staticmethod
    def validate_branch_name(name: str) -> str:
        name = name.strip()
        if not BRANCH_NAME.match(name):
            raise CommandError(
                f"'{name}' is not a valid branch name.",
                "Use 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit.",
            )
        return name

    async def save_branch(self, name: str, *, force: bool = False) -> Branch:
        name = self.validate_branch_name(name)
        chat = await self.state.refresh()
        if chat.head_id is None:
            raise CommandError("The chat is empty; there is nothing to save.", "Send a message first, then /branch save NAME.")
        try:
            return await self.store.branches.save(chat.id, name, chat.head_id, force=force)
        except StoreError as exc:
            if isinstance(exc, NotFound):
                raise
            raise CommandError(exc.message, exc.hint) from exc

    async def restore_branch(self, name: str) -> tuple[Branch, Branch | None]:
        """Move the head to `name`, saving the current head first as auto-<time>."""
        name = self.validate_branch_name(name)
        autosave = await self._auto_name()
        target, saved = await self.store.branches.restore(self.state.chat_id, name, autosave_name=autosave)
        chat = await self.state.refresh()
        self.state.own_head = chat.head_id
        await self.world.follow_head(chat.id)
        return target, saved

    async def branches(self) -> list[Branch]:
        return await self.store.branches.list(self.state.chat_id)

    async def delete_branch(self, name: str) -> None:
        if not await self.store.branches.delete(self.state.chat_id, name):
            names = ", ".join(b.name for b in await self.branches()) or "none yet"
            raise NotFound(f"There is no branch named '{name}'.", f"Branches in this chat: {names}.")
