"""The transcript: the path to the head, newest at the bottom.

Only a bounded page of messages is ever mounted (Textual slows down with
hundreds of widgets): older ones load on demand at the top, and the page is
trimmed from the far end as it grows. A page is mounted in two steps: first
the messages that fill the screen (the ones next to where the reader looks),
then, after that first paint, the rest of the page (`complete()`), so opening
a chat or jumping to its start costs a screenful of widgets, not a page.

The view is anchored (Textual's `anchor()`): it stays at the bottom while
Markdown lays itself out and while a reply streams in, until the user scrolls
up; scrolling back to the bottom anchors it again. Scrolling to the end once,
right after mounting, is not enough: the Markdown blocks grow after that.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from textual.containers import VerticalScroll

from omoide.domain.chat import Message, Role
from omoide.chat.navigator import Navigator
from omoide.tui.widgets.failure import FailureNote
from omoide.tui.widgets.message import MessageView

PAGE = 40
MAX_MOUNTED = 100
MIN_MESSAGE_ROWS = 3
"""A message's least height (header, one line, margin): how many can fill the screen."""


@dataclass(slots=True)
class _HeldBack:
    """The part of a page not mounted yet: above the mounted messages, or below."""

    messages: list[Message]
    above: bool


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; }
    """

    def __init__(self, navigator: Navigator, speaker: str, user_name: str) -> None:
        super().__init__(id="transcript")
        self.navigator = navigator
        """Reads the pages; the app replaces it when it opens another chat."""
        self.speaker = speaker
        self.speaker_names: dict[str, str] = {}
        """In a group scene: character id -> name, for each reply's header."""
        self.portraits: dict[str, Path] = {}
        """In a group scene: character id -> portrait file, drawn small beside their replies."""
        self.user_name = user_name
        self.at_live_end = True
        """True when the newest mounted message is the chat's head."""
        self.head_id: int | None = None
        self.head_depth: int | None = None
        """The depth of the newest message of the path shown: a message's place from it."""
        self._loading = False
        self._held: _HeldBack | None = None
        self._showing = asyncio.Lock()

    def views(self) -> list[MessageView]:
        return list(self.query(MessageView))

    def view(self, message: Message, *, live: bool = False) -> MessageView:
        speaker = "Stage" if message.stage else self.speaker_names.get(message.speaker or "", self.speaker)
        portrait = self.portraits.get(message.speaker or "") if message.role is Role.ASSISTANT and not message.stage else None
        return MessageView(message, speaker, user_name=self.user_name, live=live, portrait=portrait,
                           display=self._shown_at_depth)


    def _shown_at_depth(self, message: Message) -> str:
        """`message` as shown, at its place from the newest message of the path shown."""
        depth = max(self.head_depth - message.depth, 0) if self.head_depth is not None else None
        return self.navigator.shown(message, depth)

    def screenful(self) -> int:
        """How many messages can fill the screen at the least: mounted first."""
        return max(8, self.app.size.height // MIN_MESSAGE_ROWS + 1)

    async def _replace(self, messages: list[Message], *, shown_first: str, whole: bool = False) -> None:
        """Mount a new page: the screenful at its `shown_first` end ("bottom" or
        "top") now, the rest after the next paint (or all of it now: `whole`)."""
        self._held = None
        n = len(messages) if whole else self.screenful()
        if shown_first == "bottom":
            now, rest = messages[-n:], messages[:-n]
        else:
            now, rest = messages[:n], messages[n:]
        loading, self._loading = self._loading, True  # emptied, the view is at the top: that loads nothing
        try:
            await self.remove_children()
            await self.mount_all([self.view(m) for m in now])
        finally:
            self._loading = loading
        if rest:
            self._held = _HeldBack(rest, above=shown_first == "bottom")
            self.call_after_refresh(self._complete_later)

    @property
    def whole(self) -> bool:
        """True once the page shown is mounted whole (nothing held back)."""
        return self._held is None

    async def complete(self) -> None:
        """Mount the part of the page held back for the first paint. Paging calls
        it first; while it mounts, scrolling loads no other page."""
        if self._held is None:
            return
        if self._loading:  # a page is being replaced or loaded: once it is, try again
            self.call_after_refresh(self._complete_later)
            return
        self._loading = True
        try:
            await self._mount_held()
        finally:
            self._loading = False

    def _complete_later(self) -> None:
        # In a worker: awaiting a mount inside a refresh callback would wait on the
        # very message loop that runs the callback.
        self.run_worker(self.complete(), group="complete", exit_on_error=False)

    async def _mount_held(self) -> None:
        """Only under `_loading`; `whole` turns true once the views are mounted."""
        held = self._held
        if held is None or not self.is_attached:
            self._held = None
            return
        views = self.views()
        if held.above and views:
            await self.mount_all([self.view(m) for m in held.messages], before=views[0])
        else:
            await self.mount_all([self.view(m) for m in held.messages])
        if self._held is held:
            self._held = None

    async def show_path(self, head_id: int | None) -> None:
        """Show the newest page of the path ending at `head_id` (and, under it,
        why the story stops there, when a reply failed). One at a time: two at once
        (another window's writes noticed while a reply arrives) would each empty the
        view and then both mount their page, the same message twice."""
        async with self._showing:
            await self._show_path(head_id)

    async def _show_path(self, head_id: int | None) -> None:
        messages = await self.navigator.path(head_id, limit=PAGE)
        failed = await self.navigator.failed_reply(head_id)
        newest = messages[-1] if messages and messages[-1].role is Role.ASSISTANT else None
        swipe = await self.navigator.swipe_place(newest) if newest is not None else None  # read before mounting
        self.head_depth = messages[-1].depth if messages else None
        await self._replace(messages, shown_first="bottom")
        self.head_id = head_id
        self.at_live_end = True
        if swipe is not None and (views := self.views()):
            views[-1].show_swipe(swipe)
        if failed is not None and failed.error:
            await self.mount(FailureNote(self.speaker, failed.error, partial=bool(failed.content)))
        self.scroll_end(animate=False)  # re-anchors

    async def show_failure(self, error: str, *, partial: bool = False) -> None:
        """Mark, under the newest message, that the reply failed and why."""
        await self.clear_failure()
        await self.mount(FailureNote(self.speaker, error, partial=partial))
        self.scroll_end(animate=False)

    async def clear_failure(self) -> None:
        for note in self.query(FailureNote):
            await note.remove()

    async def add(self, message: Message, *, live: bool = False) -> MessageView:
        """Mount a new message at the live end (jumping there first if the view
        was showing an older page) and scroll to it."""
        if not self.at_live_end or message.parent_id != self.head_id:
            # An older page was shown, or the chat moved on in another window.
            await self.show_path(message.parent_id)
        await self.clear_failure()
        self.head_depth = message.depth
        view = self.view(message, live=live)
        await self.mount(view)
        self.head_id = message.id
        for older in self.views()[:-1]:
            await older.reshow()
            older.show_swipe(None)  # only the newest reply's swipes can be paged through
        excess = len(self.views()) - MAX_MOUNTED
        for old in self.views()[: max(excess, 0)]:
            await old.remove()
        self.scroll_end(animate=False)  # you just wrote, or a reply began: show it
        return view

    async def mark_swipes(self) -> None:
        """Show on the newest reply which of its swipes it is (one query, not one a message)."""
        views = self.views()
        if views and self.at_live_end and views[-1].message.role is Role.ASSISTANT and not views[-1].live:
            views[-1].show_swipe(await self.navigator.swipe_place(views[-1].message))

    # -- message selection -------------------------------------------------------------

    def select_newest(self) -> MessageView | None:
        """Focus the newest message shown (message selection starts there)."""
        views = self.views()
        if not views:
            return None
        self.release_anchor()  # or the view would pull back to the bottom as the focus moves up
        views[-1].select()
        return views[-1]

    async def on_message_view_move(self, event: MessageView.Move) -> None:
        """Focus the message above or below; above the first mounted one, the page before it loads."""
        event.stop()
        views = self.views()
        index = views.index(event.view) + event.step if event.view in views else len(views) - 1
        if index < 0 and await self.load_older():
            views = self.views()
            index = views.index(event.view) + event.step
        if 0 <= index < len(views):
            views[index].select()

    def on_mount(self) -> None:
        self.anchor()

    @property
    def following(self) -> bool:
        """True while the view sticks to the bottom as a reply streams in."""
        return self.is_anchored and not self._anchor_released

    async def page_up(self) -> None:
        """Scroll a page up; at the top already, load the page before it."""
        if self.scroll_y <= 0:
            await self.load_older()
        else:
            self.scroll_page_up()

    async def load_older(self) -> int:
        """Prepend the page before the oldest mounted message; returns how many."""
        if self._loading:
            return 0
        self._loading = True
        try:
            await self._mount_held()
            views = self.views()
            if not views or views[0].message.parent_id is None:
                return 0
            older = await self.navigator.path(views[0].message.parent_id, limit=PAGE)
            if not older:
                return 0
            anchor = views[0]
            self.release_anchor()  # or the view would jump to the bottom as the page mounts
            await self.mount_all([self.view(m) for m in older], before=anchor)
            # Keep the reader's place: the message that was at the top stays there.
            self.call_after_refresh(self.scroll_to_widget, anchor, top=True, animate=False)
            excess = len(self.views()) - MAX_MOUNTED
            if excess > 0:
                for view in self.views()[-excess:]:
                    await view.remove()
                self.at_live_end = False
            return len(older)
        finally:
            self._loading = False

    async def show_around(self, head_id: int, message: Message) -> None:
        """Show the page of the path that holds `message`, scrolled to it."""
        self.release_anchor()
        start = max(0, message.depth - PAGE // 2)
        page = await self.navigator.path_slice(head_id, start, PAGE)
        await self._replace(page, shown_first="top", whole=True)
        self.head_id = head_id
        self.at_live_end = bool(page) and page[-1].id == head_id
        target = self.query(f"#msg-{message.id}")
        if target:
            self.call_after_refresh(self.scroll_to_widget, target.first(), animate=False, top=True)

    async def show_start(self, head_id: int | None) -> None:
        """Jump to the first page of the path (the start of the story)."""
        if head_id is None:
            return
        self.release_anchor()
        first = await self.navigator.start(head_id, PAGE)
        await self._replace(first, shown_first="top")
        self.head_id = head_id
        self.at_live_end = bool(first) and first[-1].id == head_id
        self.scroll_home(animate=False)

    async def load_newer(self) -> int:
        """Append the page after the newest mounted message, when away from the end."""
        if self._loading:
            return 0
        self._loading = True
        try:
            await self._mount_held()
            views = self.views()
            if self.at_live_end or not views or self.head_id is None:
                return 0
            newer = await self.navigator.path_slice(self.head_id, views[-1].message.depth + 1, PAGE)
            # Reaching the bottom re-anchored the view; reading on, it must not jump to the new end.
            self.release_anchor()
            await self.mount_all([self.view(m) for m in newer])
            if not newer or newer[-1].id == self.head_id:
                self.at_live_end = True
            excess = len(self.views()) - MAX_MOUNTED
            for view in self.views()[: max(excess, 0)]:
                await view.remove()
            # Trimming the top moved everything up: put the last message read back in view.
            self.call_after_refresh(self.scroll_to_widget, views[-1], top=True, animate=False)
            return len(newer)
        finally:
            self._loading = False

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._loading:
            return
        # exit_on_error=False: a failed page load is a notice (the app's worker handler), not a crash.
        if new_value <= 0 < old_value:
            self.run_worker(self.load_older(), exclusive=True, group="older", exit_on_error=False)
        elif new_value >= self.max_scroll_y > old_value and not self.at_live_end:
            self.run_worker(self.load_newer(), exclusive=True, group="newer", exit_on_error=False)
