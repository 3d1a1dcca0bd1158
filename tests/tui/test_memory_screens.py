"""/profile, /amnesia, /recall and /remember ! in the real TUI, through Pilot."""

from __future__ import annotations

from textual.widgets import Markdown, TextArea

from omoide.characters.model import Character
from omoide.config.settings import Settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.screens.inspector import InspectorScreen, inspector_text
from omoide.tui.screens.profile import ProfileScreen, ProposalList
from omoide.tui.widgets.status import StatusBar
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, notices, type_and_send, wait_for

MIKA = Character(id="mika", name="Mika", first_message="*waves* Hello, {{user}}!")


async def make_app(store: Store, backend: ScriptedBackend, **kw: object) -> OmoideApp:
    settings = Settings(user_name="Kai", **kw)  # type: ignore[arg-type]
    return OmoideApp(await ChatSession.open(store, MIKA, settings, backend))


async def test_branch_restore_takes_a_fact_learned_on_the_left_path_out_of_the_prompt(store: Store) -> None:
    backend = ScriptedBackend([["Hm?"], ['Oh! <save_memory about_user="true">Kai works night shifts.</save_memory>Coffee?'],
                               ["Good evening."]])
    app = await make_app(store, backend, profile_learning="auto")
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "Hi.")
        await wait_for(pilot, lambda: not app.turn_running and len(backend.calls) == 1)
        await type_and_send(pilot, "/branch save calm")
        await type_and_send(pilot, "I work nights.")
        await wait_for(pilot, lambda: any("It is in your profile now" in n for n in notices(app)))
        await wait_for(pilot, lambda: not app.turn_running)
        await type_and_send(pilot, "/branch restore calm")
        await wait_for(pilot, lambda: any("Restored 'calm'" in n for n in notices(app)))
        await type_and_send(pilot, "Evening!")
        await wait_for(pilot, lambda: not app.turn_running and len(backend.calls) == 3)
        assert [f.content for f in (await app.session.profile.get()).facts] == ["Kai works night shifts."]  # still kept
        assert "night shifts" not in "".join(str(m["content"]) for m in backend.calls[2]["messages"])


async def test_a_learned_fact_is_proposed_and_accepted_in_the_profile_screen(store: Store) -> None:
    backend = ScriptedBackend([['Oh! <save_memory about_user="true">Kai works night shifts.</save_memory>Coffee?'], ["Sure."]])
    app = await make_app(store, backend)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "I work nights.")
        await wait_for(pilot, lambda: any("learned about you" in n for n in notices(app)))
        assert any("/profile to accept" in n for n in notices(app))
        await type_and_send(pilot, "/profile")
        await wait_for(pilot, lambda: isinstance(app.screen, ProfileScreen))
        proposals = app.screen.query_one(ProposalList)
        assert proposals.option_count == 1 and "learned by mika" in str(proposals.get_option_at_index(0).prompt)
        proposals.focus()
        proposals.highlighted = 0
        await pilot.press("a")
        await wait_for(pilot, lambda: "- Kai works night shifts." in app.screen.query_one(TextArea).text)
        assert app.screen.query_one(ProposalList).option_count == 0
        await pilot.press("escape")
        await type_and_send(pilot, "Tired again.")
        await wait_for(pilot, lambda: len(backend.calls) == 2 and app.reply_view is None)
        assert "- Kai works night shifts." in backend.calls[1]["messages"][0]["content"]


async def test_the_profile_is_edited_in_the_screen_and_a_bad_line_is_named(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/profile add allergic to cats")
        await wait_for(pilot, lambda: any("Added to your profile: allergic to cats" in n for n in notices(app)))
        await type_and_send(pilot, "/profile")
        await wait_for(pilot, lambda: isinstance(app.screen, ProfileScreen))
        area = app.screen.query_one(TextArea)
        area.text = area.text.replace("name:", "name: Kai").replace("pronouns:", "favourite: tea")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("is not understood" in n for n in notices(app)))
        area.text = area.text.replace("favourite: tea", "pronouns: he/him")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("Profile saved" in n for n in notices(app)))
        profile = await app.session.profile.get()
        assert (profile.name, profile.pronouns, [f.content for f in profile.facts]) == ("Kai", "he/him", ["allergic to cats"])


async def test_amnesia_shows_in_the_status_bar_until_it_is_turned_off(store: Store) -> None:
    app = await make_app(store, ScriptedBackend())
    async with app.run_test(size=SIZE) as pilot:
        status = app.query_one(StatusBar)
        assert "amnesia" not in status.render()
        await type_and_send(pilot, "/amnesia diary summary")
        await wait_for(pilot, lambda: "amnesia: diary, summary" in status.render())
        await type_and_send(pilot, "/amnesia feelings")
        await wait_for(pilot, lambda: any("not a memory tier" in n for n in notices(app)))
        await type_and_send(pilot, "/amnesia off")
        await wait_for(pilot, lambda: "amnesia" not in status.render())
        assert any("memories are back" in n for n in notices(app))


async def test_remember_with_a_bang_shows_its_weight_and_prompt_shows_strengths_and_recalls(store: Store) -> None:
    backend = ScriptedBackend(default=lambda m: ["Mm."])
    app = await make_app(store, backend, recent_messages=2, summary_threshold=100)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "The lanterns at the festival were red and gold.")
        await wait_for(pilot, lambda: len(backend.calls) == 1 and app.reply_view is None)
        for i in range(3):
            await type_and_send(pilot, f"small talk {i}")
            await wait_for(pilot, lambda: len(backend.calls) == 2 + i and app.reply_view is None)
        await type_and_send(pilot, "/remember ! He cried at the station.")
        await wait_for(pilot, lambda: "★★★★★" in app.diary.query_one(Markdown).source)
        await type_and_send(pilot, "/recall festival lanterns")
        await wait_for(pilot, lambda: any("Brought back for your next message" in n for n in notices(app)))
        await type_and_send(pilot, "Do you remember?")
        await wait_for(pilot, lambda: len(backend.calls) == 5 and app.reply_view is None)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        text = inspector_text(app.session.last_prompt)
        assert "5.00  " in text and "He cried at the station." in text
        assert "Recalled for this reply:" in text and "lanterns at the festival" in text
