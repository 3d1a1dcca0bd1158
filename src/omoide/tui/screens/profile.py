"""/profile: the user profile every character knows, edited as text, and the
facts characters learned waiting for a yes or no."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static, TextArea
from textual.widgets.option_list import Option

from omoide.domain.chat import Profile
from omoide.errors import OmoideError
from omoide.world.profile import ProfileBook, provenance, render_text
from omoide.tui.widgets.editor import Editor
from omoide.safe_text import inert, safe


class ProposalList(OptionList):
    BINDINGS = [
        Binding("a", "decide(True)", "Accept", id="profile.accept"),
        Binding("r", "decide(False)", "Reject", id="profile.reject"),
    ]

    async def action_decide(self, accept: bool) -> None:
        if self.highlighted is None or self.option_count == 0:
            return
        option = self.get_option_at_index(self.highlighted)
        screen = self.screen
        assert isinstance(screen, ProfileScreen) and option.id is not None
        await screen.decide(int(option.id), accept)


class ProfileScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    ProfileScreen { align: center middle; }
    ProfileScreen > Vertical { width: 90%; max-width: 120; height: 90%; border: round $accent; background: $surface; padding: 1 2; }
    ProfileScreen TextArea { height: 1fr; }
    ProfileScreen ProposalList { height: auto; max-height: 10; }
    ProfileScreen .title { text-style: bold; }
    ProfileScreen .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="profile.save", priority=True),
        Binding("escape", "close", "Close", id="profile.close"),
    ]

    def __init__(self, book: ProfileBook, profile: Profile) -> None:
        super().__init__()
        self.book = book
        self.profile = profile

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Your profile: every character knows it", classes="title")
            yield Editor(render_text(self.profile), id="profile-text", soft_wrap=True)
            yield Static(self._proposals_title(), id="proposals-title", classes="title")
            yield ProposalList(*self._options(), id="proposals")
            yield Static("Ctrl+S save · on a proposal: a accept, r reject · Esc close", classes="hint")

    def _proposals_title(self) -> str:
        count = len(self.profile.proposals)
        return f"Learned by characters, waiting for you ({count})" if count else "No facts waiting for you"

    def _options(self) -> list[Option]:
        return [Option(safe(f"{f.content}  ({provenance(f)})"), id=str(f.id)) for f in self.profile.proposals]

    async def _reload(self) -> None:
        self.profile = await self.book.get()
        self.query_one(TextArea).text = render_text(self.profile)
        proposals = self.query_one(ProposalList)
        proposals.clear_options()
        proposals.add_options(self._options())
        self.query_one("#proposals-title", Static).update(self._proposals_title())

    async def decide(self, fact_id: int, accept: bool) -> None:
        try:
            fact = await self.book.decide(fact_id, accept)
        except OmoideError as exc:
            self.app.notify(f"{exc.message} {exc.hint}".strip(), severity="warning")
            return
        await self._reload()
        verdict = "Added to your profile" if accept else "Rejected"
        self.app.notify(f"{verdict}: {fact.content}", timeout=4)

    async def action_save(self) -> None:
        try:
            await self.book.save_text(self.query_one(TextArea).text)
        except OmoideError as exc:
            self.app.notify(f"{exc.message} {exc.hint}".strip(), severity="warning", title="Profile not saved")
            return
        await self._reload()
        self.app.notify("Profile saved. Every character knows it from the next message on.", timeout=4)

    def action_close(self) -> None:
        self.dismiss(None)
