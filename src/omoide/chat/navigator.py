"""Finding your way around a chat, for any client: pages of the path, search,
goto, the saved branches with how far each lies from the path, and the
character's chat list (rename, archive).

The TUI reads the store only through this (and the session), so a client never
holds a `Store`. A session has one as `session.navigator`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from omoide.domain.chat import Branch, Chat, Message, MessageStatus, Role
from omoide.errors import CommandError
from omoide.store import SearchHit, Store

GOTO_USAGE = "Usage: /goto 2026-04-01, /goto 04/01 20:15 or /goto #1234"


@dataclass(frozen=True, slots=True)
class BranchInfo:
    """A saved branch as a picker lists it."""

    branch: Branch
    message: Message
    """The message the branch points at."""
    since_fork: int
    """Messages from where the branch leaves the path to the head down to its message."""
    here: bool
    """The branch points at the head."""

    @property
    def opening(self) -> str:
        """The first words of its message."""
        return " ".join(self.message.content.split()[:8])


def parse_moment(text: str) -> str | None:
    """'2026-04-01', '2026-04-01 20:15' or '04/01' (this year) -> ISO in UTC, local time meant."""
    text = text.strip()
    for fmt in ("%Y-%m-%d %H:%M", "%Y-%m-%d", "%m/%d %H:%M", "%m/%d"):
        try:
            moment = datetime.strptime(text, fmt)
        except ValueError:
            continue
        if "%Y" not in fmt:
            moment = moment.replace(year=datetime.now().year)
        try:
            return moment.astimezone().astimezone(UTC).isoformat(timespec="microseconds")
        except (OverflowError, ValueError, OSError) as exc:  # year 1, or 9999 in a far timezone
            raise CommandError(f"'{text}' is outside the dates a chat can hold.", "Try a date from this chat, e.g. 2026-04-01 or 04/01.") from exc
    return None


class Navigator:
    """Reading one chat (and its character's other chats) without changing the story."""

    def __init__(self, store: Store, chat: Chat, shown: Callable[[Message, int | None], str] | None = None) -> None:
        self._store = store
        self.chat_id = chat.id
        self.character_id = chat.character
        self._shown = shown

    def shown(self, message: Message, depth: int | None = None) -> str:
        """`message` as the transcript shows it, `depth` messages from the newest
        (the card's regex scripts may change what is shown, never what is stored)."""
        return self._shown(message, depth) if self._shown is not None else message.content

    # -- pages of a path -------------------------------------------------------------

    async def path(self, head_id: int | None, *, limit: int) -> list[Message]:
        """The newest `limit` messages on the path to `head_id`, oldest first."""
        return await self._store.messages.path(head_id, limit=limit) if head_id is not None else []

    async def path_slice(self, head_id: int, start_depth: int, count: int) -> list[Message]:
        """The messages at depths [start_depth, start_depth + count) on the path to `head_id`."""
        return await self._store.messages.path_slice(head_id, start_depth, count)

    async def start(self, head_id: int, count: int) -> list[Message]:
        """The first `count` messages of the story that ends at `head_id`."""
        return await self.path_slice(head_id, 0, count)

    async def failed_reply(self, head_id: int | None) -> Message | None:
        """The reason the story stops at `head_id` without an answer: the head itself
        when an error cut its reply off, or the newest reply to it when that failed."""
        if head_id is None:
            return None
        head = await self._store.messages.get(head_id)
        if head.error:
            return head
        if head.role is not Role.USER:
            return None
        replies = await self._store.messages.children(head_id)
        newest = replies[-1] if replies else None
        return newest if newest is not None and newest.status is MessageStatus.FAILED and newest.error else None

    # -- search and goto -------------------------------------------------------------

    async def swipe_place(self, message: Message) -> tuple[int, int] | None:
        """(which, of how many) among the message's swipes, counted from 1; None when it has none."""
        group = await self._store.messages.siblings(message)
        if len(group) < 2:
            return None
        return next(i for i, m in enumerate(group) if m.id == message.id) + 1, len(group)

    async def search(self, text: str, *, limit: int = 100) -> list[SearchHit]:
        """Every message of this chat matching `text`, all branches included, newest first."""
        return await self._store.messages.search(text, chat_id=self.chat_id, limit=limit)

    async def position(self, message_id: int) -> int:
        """Message `message_id`'s place on its path: 1 for the chat's first message."""
        return (await self._store.messages.get(message_id)).depth + 1

    async def locate(self, message_id: int, head_id: int) -> Message:
        """Message `message_id`, checked to lie on the path to `head_id`."""
        message = await self._store.messages.get(message_id)
        if message.chat_id != self.chat_id:
            raise CommandError(f"Message #{message_id} is in another chat.", "`omoide chats` lists the chats; open that one first.")
        if not await self._store.messages.is_ancestor(message.id, head_id):
            holding = await branches_holding(self._store, message)
            if holding:
                raise CommandError(f"Message #{message_id} is on the branch '{holding[0]}', not on this path of the story.",
                                   f"/branch restore {holding[0]} goes there.")
            raise CommandError(f"Message #{message_id} is on a path of the story no saved branch holds.",
                               "/branch list shows the saved ones; Ctrl+←/→ switches between the replies to a message.")
        return message

    async def where(self, message: Message, head_id: int | None) -> str:
        """Where a search hit lies: 'this path', 'branch NAME', or 'another path'."""
        if head_id is not None and await self._store.messages.is_ancestor(message.id, head_id):
            return "this path"
        holding = await branches_holding(self._store, message)
        return f"branch {holding[0]}" if holding else "another path"

    async def goto(self, target: str, head_id: int | None) -> Message:
        """What `/goto` names on the path to `head_id`: '#1234' (or '1234') or a date."""
        target = target.strip()
        if not target or head_id is None:
            raise CommandError("/goto needs a date or a message number.", GOTO_USAGE)
        if target.lstrip("#").isascii() and target.lstrip("#").isdigit():
            return await self.locate(int(target.lstrip("#")), head_id)
        moment = parse_moment(target)
        if moment is None:
            raise CommandError(f"'{target}' is not a date I can read.", "Try 2026-04-01, 04/01 or 04/01 20:15.")
        message = await self._store.messages.first_on_path_since(head_id, moment)
        if message is None:
            raise CommandError(f"Nothing was written on or after {target} on this branch.", "Try an earlier date.")
        return message

    # -- branches ----------------------------------------------------------------------

    async def branches(self, head_id: int | None) -> list[BranchInfo]:
        """The chat's saved branches, each with how far it lies from the path to `head_id`."""
        found = []
        for branch in await self._store.branches.list(self.chat_id):
            message = await self._store.messages.get(branch.message_id)
            fork = await self._store.messages.fork_point(branch.message_id, head_id) if head_id is not None else None
            since = message.depth - fork.depth if fork else message.depth + 1
            found.append(BranchInfo(branch, message, since, branch.message_id == head_id))
        return found

    # -- the character's chats -----------------------------------------------------------

    async def chats(self, *, include_archived: bool = False) -> list[Chat]:
        """This character's chats, most recently updated first."""
        return await self._store.chats.list(self.character_id, include_archived=include_archived)

    async def rename(self, chat_id: int, title: str) -> Chat:
        return await self._store.chats.rename(chat_id, title)

    async def archive(self, chat_id: int, archived: bool = True) -> Chat:
        return await self._store.chats.archive(chat_id, archived)


async def branches_holding(store: Store, message: Message) -> list[str]:
    """The names of the saved branches whose story runs through `message`."""
    names = []
    for branch in await store.branches.list(message.chat_id):
        if await store.messages.is_ancestor(message.id, branch.message_id):
            names.append(branch.name)
    return names


async def where_in_chat(store: Store, message: Message) -> str:
    """'' when `message` is on its chat's path now; else the saved branch that
    holds it ('branch NAME'), or 'off path'."""
    chat = await store.chats.get(message.chat_id)
    if chat.head_id is not None and await store.messages.is_ancestor(message.id, chat.head_id):
        return ""
    holding = await branches_holding(store, message)
    return f"branch {holding[0]}" if holding else "off path"
