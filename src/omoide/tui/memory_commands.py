"""Slash commands of weighted memory: /recall, /profile, /amnesia (named in
`tui/slash.py`); they see the app only as a `Host`."""

from __future__ import annotations

from omoide.tui.command_line import ParsedCommand
from omoide.tui.host import Host


async def recall_command(app: Host, command: ParsedCommand) -> None:
    found = await app.session.user.recall(command.raw_args)
    if not found:
        app.notify(f"Nothing in this story matches '{command.raw_args}'.", timeout=5)
        return
    lines = "\n".join(r.line() for r in found)
    app.notify(f"Brought back for your next message (/prompt shows it):\n{lines}", timeout=8, title="Recall")


async def profile_command(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.profile import ProfileScreen

    if command.args and command.args[0].lower() == "add":
        fact = await app.session.profile.add(command.raw_args[3:].strip())
        app.notify(f"Added to your profile: {fact.content}. Every character knows it now.", timeout=5)
        return
    book = app.session.profile

    async def closed(_: None) -> None:
        name = (await book.get()).name  # the profile's name is who you are: a new one shows at once
        if name and name != app.session.settings.user.name:
            await app.rename_user(name)

    app.push_screen(ProfileScreen(book, await book.get()), closed)


async def amnesia_command(app: Host, command: ParsedCommand) -> None:
    if not command.args:
        hidden = app.session.chat.amnesia
        state = f"hiding {', '.join(hidden)}" if hidden else "off"
        app.notify(f"Amnesia is {state}. /amnesia diary summary memos world profile pinned corrections passages (or all) hides tiers; /amnesia off brings them back.", timeout=6)
        return
    off = [a.lower() for a in command.args] == ["off"]
    hidden = await app.session.user.set_amnesia([] if off else command.args)
    app.show_amnesia()
    if hidden:
        app.notify(f"{app.session.character.display_name} no longer remembers: {', '.join(hidden)}. Nothing was deleted; /amnesia off brings it back.", timeout=6)
    else:
        app.notify(f"{app.session.character.display_name}'s memories are back.", timeout=4)
