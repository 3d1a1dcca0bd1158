"""Switching what the app shows, in place: another chat, another character,
another name for you, another theme, the mouse on or off. `OmoideApp` (app.py) builds on this, as it
does on `TurnsApp`; each move stops a running reply first and shows the chat
again from its head."""

from __future__ import annotations

from omoide.characters.model import Character
from omoide.errors import CommandError
from omoide.tui.turns import TurnsApp
from omoide.tui.widgets.diary import DiaryPane
from omoide.tui.widgets.status import StatusBar, memory_label


class SwitchingApp(TurnsApp):
    mouse_on: bool

    def keys_of(self, binding_id: str) -> str:
        raise NotImplementedError

    def action_toggle_mouse(self) -> None:
        """Mouse capture off (the terminal's own selection works) or back on."""
        self.mouse_on = not self.mouse_on
        driver = self._driver
        switch = getattr(driver, "_enable_mouse_support" if self.mouse_on else "_disable_mouse_support", None)
        if switch is not None:  # a terminal driver (the headless one has no mouse to switch)
            switch()
        key = self.keys_of("chat.mouse")
        self.query_one(StatusBar).mode = "" if self.mouse_on else f"mouse off: select with the terminal · {key} turns it on"
        self.notify("Mouse on." if self.mouse_on else f"Mouse off: select and copy with the terminal. {key} turns it back on.", timeout=3)

    def theme_names(self) -> list[str]:
        return sorted(name for name in self.available_themes if name != "textual-ansi")

    def choose_theme(self, name: str) -> None:
        from omoide.config.file import update_config

        found = next((t for t in self.theme_names() if t.lower() == name.lower()), None)
        if found is None:
            raise CommandError(f"There is no theme named '{name}'.", f"Themes: {', '.join(self.theme_names())}.")
        self.theme = found
        path = update_config({"theme": found})
        self.notify(f"Theme {found}, remembered in {path}.", timeout=4)

    def _apply_saved_theme(self) -> None:
        name = self.session.settings.ui.theme
        if not name:
            return
        if name in self.available_themes:
            self.theme = name
        else:
            self.notify(f"[ui] theme: there is no theme named '{name}'. /theme lists them; /theme NAME sets one.",
                        severity="warning", title="Theme")

    def action_chat_list(self) -> None:
        from omoide.tui.screens.chats import ChatListScreen

        async def chosen(result: int | str | None) -> None:
            if result is None:
                return
            await self.switch_chat(None if result == "new" else int(result))

        self.push_screen(ChatListScreen(self.session.navigator, self.session.character.display_name, self.session.chat.id), chosen)

    async def switch_chat(self, chat_id: int | None) -> None:
        """Open another chat with this character (None: a new one) in place of this one."""
        if chat_id == self.session.chat.id:
            return
        await self.stop_turn_and_wait()
        await self.session.aclose()
        self.session = await self.session.open_another(chat_id)
        self.transcript.navigator = self.session.navigator
        # The old chat's memory work was cancelled mid-way (it is retried later): no event says so.
        self.query_one(StatusBar).memory = memory_label(self.session.memory_status)
        await self.show_chat()

    async def switch_character(self, character: Character) -> None:
        """Chat with `character` (its most recent chat, or a new one) in place of this chat."""
        if character.id == self.session.character.id and not self.session.scene.is_scene:
            return
        await self.stop_turn_and_wait()
        await self.session.aclose()
        self.session = await self.session.open_character(character)
        self.transcript.navigator = self.session.navigator
        self.transcript.speaker = character.display_name
        self.query_one(DiaryPane).show_owner(character.display_name)
        self.query_one(StatusBar).memory = memory_label(self.session.memory_status)
        await self.show_chat()

    async def rename_user(self, name: str) -> None:
        """You are `name` from now on (the first-run screen, `/profile`)."""
        self.transcript.user_name = await self.session.user.rename_user(name)
        await self.show_chat()
