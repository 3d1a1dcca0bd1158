"""The transcript: the path to the head, newest at the bottom.

Only a bounded page of messages is ever mounted (Textual slows down with
hundreds of widgets): older ones load on demand at the top, and the page is
trimmed from the far end as it grows.
"""

from __future__ import annotations

from textual.containers import VerticalScroll

from omoide.domain import Message
from omoide.store import Store
from omoide.tui.widgets.message import MessageView

PAGE = 40
MAX_MOUNTED = 100


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; }
    """

    def __init__(self, store: Store, speaker: str, user_name: str) -> None:
        super().__init__(id="transcript")
        self.store = store
        self.speaker = speaker
        self.user_name = user_name
        self.at_live_end = True
        self._loading = False

    def views(self) -> list[MessageView]:
        return list(self.query(MessageView))

    def view(self, message: Message) -> MessageView:
        return MessageView(message, self.speaker, user_name=self.user_name)

    async def show_path(self, head_id: int | None) -> None:
        """Show the newest page of the path ending at `head_id`."""
        await self.remove_children()
        messages = await self.store.path(head_id, limit=PAGE) if head_id else []
        await self.mount_all([self.view(m) for m in messages])
        self.at_live_end = True
        self.scroll_end(animate=False)

    async def add(self, message: Message) -> MessageView:
        view = self.view(message)
        await self.mount(view)
        excess = len(self.views()) - MAX_MOUNTED
        for old in self.views()[: max(excess, 0)]:
            await old.remove()
        self.scroll_end(animate=False)
        return view

    async def load_older(self) -> int:
        """Prepend the page before the oldest mounted message; returns how many."""
        views = self.views()
        if self._loading or not views or views[0].message.parent_id is None:
            return 0
        self._loading = True
        try:
            older = await self.store.path(views[0].message.parent_id, limit=PAGE)
            if not older:
                return 0
            await self.mount_all([self.view(m) for m in older], before=views[0])
            excess = len(self.views()) - MAX_MOUNTED
            if excess > 0:
                for view in self.views()[-excess:]:
                    await view.remove()
                self.at_live_end = False
            return len(older)
        finally:
            self._loading = False

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value and not self._loading:
            self.run_worker(self.load_older(), exclusive=True, group="older")
