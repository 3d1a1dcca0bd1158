"""/end, /world and /log in the real TUI, through the Pilot."""

from __future__ import annotations

import re

from textual.widgets import OptionList, TextArea, Tree

from omoide.characters.library import find_character
from omoide.config.settings import Settings
from omoide.chat.session import ChatSession
from omoide.store import Store
from omoide.tui.app import OmoideApp
from omoide.tui.screens.log import LogScreen
from omoide.tui.screens.world import WorldScreen
from omoide.domain.world import Field, UpdateKind, user_key
from tests.scripted import ScriptedBackend
from tests.tui.test_app import SIZE, type_and_send, wait_for
from tests.world_script import WorldScript


async def suzune_app(store: Store) -> OmoideApp:
    settings = Settings(user_name="Kai")
    session = await ChatSession.open(store, find_character("suzune"), settings, ScriptedBackend(),
                                     summarizer=ScriptedBackend(default=WorldScript().default()))
    return OmoideApp(session)


async def test_end_then_world_shows_and_edits_what_she_carries(store: Store) -> None:
    app = await suzune_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "My exam is on Friday.")
        await app.workers.wait_for_complete()
        await type_and_send(pilot, "/end")
        await wait_for(pilot, lambda: any("is remembering it" in n.message for n in app._notifications))
        await app.session.world.wait()

        await type_and_send(pilot, "/world")
        await wait_for(pilot, lambda: isinstance(app.screen, WorldScreen) and app.screen.fields[1:] != [])
        screen = app.screen
        assert isinstance(screen, WorldScreen)
        options = screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels[0].startswith("global memory") and "quietly worries" in labels[0]
        assert any("Kai (you)" in label and "regular customer" in label for label in labels)
        memory_row = next(i for i, (about, name) in enumerate(screen.fields) if name is Field.MEMORY)
        options.highlighted = memory_row
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen.query(TextArea))
        app.screen.query_one(TextArea).text = "Kai owes me 300 yen. [bold]Never[/] forget."
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, WorldScreen))
        await wait_for(pilot, lambda: "300 yen" in str(options.get_option_at_index(memory_row).prompt))
        assert "[bold]Never[/]" in str(options.get_option_at_index(memory_row).prompt)  # shown as typed
        await pilot.press("escape")

    kai = user_key("Kai")
    assert (await store.world.view("suzune")).about(kai).memory == "Kai owes me 300 yen. [bold]Never[/] forget."
    [edit] = await store.world.edits("suzune")
    assert edit.kind is UpdateKind.EDIT and edit.before == WorldScript().answers["memory"]
    # The edited memory reaches the next prompt.
    prompt = await app.session.build_prompt((await app.session.refresh()).head_id)  # type: ignore[arg-type]
    assert "Kai owes me 300 yen." in prompt.messages[0]["content"]


async def log_after_one_conversation(app, pilot) -> None:  # type: ignore[no-untyped-def]
    """One message, /end, the world pass done, then /log open."""
    await type_and_send(pilot, "Hello.")
    await app.workers.wait_for_complete()
    await type_and_send(pilot, "/end")
    await wait_for(pilot, lambda: any("is remembering it" in n.message for n in app._notifications))
    await app.session.world.wait()
    await type_and_send(pilot, "/log")
    await wait_for(pilot, lambda: isinstance(app.screen, LogScreen))


async def test_log_lists_conversations_with_their_updates_expandable(store: Store) -> None:
    app = await suzune_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await log_after_one_conversation(app, pilot)
        tree = app.screen.query_one(Tree)
        [conversation] = tree.root.children
        assert str(conversation.label).startswith("Conversation #1 · chat #1") and "· done ·" in str(conversation.label)
        assert not conversation.is_expanded
        steps = [str(child.label).split()[0] for child in conversation.children]
        assert steps == ["summary", "pair_summary", "memory", "goal", "descriptor", "familiarity", "global"]
        goal = conversation.children[3]
        assert "world.goal" in str(goal.label)
        assert [str(leaf.label) for leaf in goal.children] == ["before: (none)", "after:  Ask whether the exam went well."]
        tree.cursor_line = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: conversation.is_expanded)


async def test_end_with_nothing_said_is_a_notice_not_a_crash(store: Store) -> None:
    app = await suzune_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "/end")
        await wait_for(pilot, lambda: any("Nothing was said" in n.message for n in app._notifications))
        assert app.is_running


async def test_world_and_log_show_rolling_lists_as_items_and_long_text_whole() -> None:
    """Issue 23, observation 8: /world and /log showed rolling lists as raw JSON and
    cut long texts at a fixed width (140 characters in /log). What Suzune heard
    second-hand is one item a line, its text whole however long, wrapped to the screen."""
    from omoide.tui.screens.world import WorldScreen
    from tests.cli.test_cli_first_minutes import LONG_FACT
    from tests.cli.test_world_cli import tell_suzune_about_wren

    await tell_suzune_about_wren(WorldScript(offscreen=LONG_FACT))
    async with await Store.open() as store:
        app = OmoideApp(await ChatSession.open(store, find_character("suzune"), Settings(user_name="Kai"), ScriptedBackend()))
        async with app.run_test(size=(80, 40)) as pilot:
            await type_and_send(pilot, "/world")
            await wait_for(pilot, lambda: isinstance(app.screen, WorldScreen) and app.screen.fields[1:] != [])
            await pilot.pause()
            details = str(app.screen.query_one("#world-text").render())
            await pilot.press("escape")
            await type_and_send(pilot, "/log")
            await wait_for(pilot, lambda: isinstance(app.screen, LogScreen))
            tree = app.screen.query_one(Tree)
            [conversation] = tree.root.children
            offscreen = next(node for node in conversation.children if str(node.label).split()[0] == "offscreen")
            leaves = [str(leaf.label) for leaf in offscreen.children]
    logged = " ".join(" ".join(leaves).split())
    assert '"text":' not in logged and '"c":' not in logged, leaves
    assert re.search(rf"after: - #1 (\[\d\d/\d\d \d\d:\d\d\] )?{re.escape(LONG_FACT)}", logged), leaves
    assert all(len(leaf) <= 80 for leaf in leaves)  # wrapped to the screen, not cut
    assert '"text":' not in details and '"c":' not in details  # no raw JSON
    wren = details[details.index("Wren — "):]
    assert re.search(rf"Heard from others:\n  - (\[\d\d/\d\d \d\d:\d\d\] )?{re.escape(LONG_FACT)}\n", wren), wren  # one item a line, whole


async def test_memory_idle_waits_for_the_world_pass_of_end(store: Store) -> None:
    """Issue 42: "memory idle" was shown while /end's pass still ran, as soon as
    any other memory work (a summary) ended."""
    import asyncio

    from omoide.memory.events import MemoryWorkDone, MemoryWorkStarted
    from omoide.tui.widgets.status import StatusBar

    release = asyncio.Event()
    script = WorldScript().default()
    settings = Settings(user_name="Kai")
    session = await ChatSession.open(store, find_character("suzune"), settings, ScriptedBackend(),
                                     summarizer=ScriptedBackend(default=lambda m: [release, *script(m)]))
    app = OmoideApp(session)
    memory = lambda: app.query_one(StatusBar).memory  # noqa: E731
    async with app.run_test(size=SIZE) as pilot:
        await type_and_send(pilot, "My exam is on Friday.")
        await app.workers.wait_for_complete()
        await type_and_send(pilot, "/end")
        await wait_for(pilot, lambda: memory() == "◐ remembering (world)…")
        app.handle_memory_event(MemoryWorkStarted("summary"))  # a summary begun and ended meanwhile
        await wait_for(pilot, lambda: memory() == "◐ remembering (summary)…")
        app.handle_memory_event(MemoryWorkDone("summary"))
        await wait_for(pilot, lambda: memory() != "◐ remembering (summary)…")
        assert memory() == "◐ remembering (world)…"
        release.set()
        await app.session.world.wait()
        await wait_for(pilot, lambda: memory() == "memory idle")


async def test_log_says_who_made_each_change_in_words_not_llm_or_rule(store: Store) -> None:
    """Issue 42: /log spoke of `llm` and `rule`."""
    app = await suzune_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await log_after_one_conversation(app, pilot)
        [conversation] = app.screen.query_one(Tree).root.children
        lines = {str(child.label).split()[0]: str(child.label) for child in conversation.children}
        assert "written by the model" in lines["memory"] and "set by omoide's rules" in lines["familiarity"]
        assert not any(re.search(r"\b(llm|rule)\b", line) for line in lines.values()), lines
