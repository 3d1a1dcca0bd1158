"""/pin, /pins and /unpin (named in `tui/slash.py`): facts kept in every prompt
of the character. They see the app only as a `Host`."""

from __future__ import annotations

import re

from omoide.domain.chat import Pin, PinSource
from omoide.errors import CommandError
from omoide.memory.prompt.budget import PINS_PERCENT, pins_sent
from omoide.tui.command_line import ParsedCommand
from omoide.tui.host import Host

NUMBER = re.compile(r"^#?(\d{1,18})$")
SOURCES = {PinSource.TYPED: "typed", PinSource.MESSAGE: "message", PinSource.DIARY: "diary line"}


def _source(pin: Pin) -> str:
    where = {PinSource.MESSAGE: f" #{pin.message_id}", PinSource.DIARY: ""}.get(pin.source, "")
    return f"{SOURCES[pin.source]}{where}, {pin.created_at.astimezone():%m/%d}"


async def pin_command(app: Host, command: ParsedCommand) -> None:
    """/pin TEXT · /pin (the last message) · /pin N or #N (message N) · /pin diary [N] (N-th newest diary line)."""
    pins, args = app.session.pins, command.args
    if not command.raw_args:
        pin = await pins.pin_message()
    elif len(args) == 1 and (number := NUMBER.match(args[0])):
        pin = await pins.pin_message(int(number.group(1)))
    elif args and args[0].lower() == "diary" and (len(args) == 1 or (len(args) == 2 and args[1].isdigit())):
        pin = await pins.pin_diary(int(args[1]) if len(args) == 2 else 1)
    else:
        pin = await pins.pin_text(command.raw_args)
    name = app.session.character.display_name
    app.notify(f"Pinned #{pin.id}: {pin.content}\n{name} keeps it in every prompt, in every chat. /pins lists the pins.",
               timeout=6, title="Pinned")


async def pins_command(app: Host, command: ParsedCommand) -> None:
    from omoide.tui.screens.text_modal import TextModal

    name = app.session.character.display_name
    pins = await app.session.pins.list()
    if not pins:
        body = f"*Nothing is pinned for {name} yet.* /pin TEXT pins a fact; /pin alone pins the last message."
    else:
        _, left = pins_sent([pin.content for pin in pins], app.session.settings.backend.context_size)
        lines = [f"- **#{pin.id}** {pin.content} *({_source(pin)}{', not sent' if n < left else ''})*" for n, pin in enumerate(pins)]
        unsent = (f"**{left:,} of the {len(pins):,} pins are not sent**, the oldest: pins may take {PINS_PERCENT}% of "
                  "the context.\n\n") if left else ""
        body = unsent + "\n".join(lines) + "\n\n/unpin N takes pin #N out of the prompts (it is kept, not deleted)."
    app.push_screen(TextModal(f"Pinned for {name}", body))


async def unpin_command(app: Host, command: ParsedCommand) -> None:
    number = NUMBER.match(command.raw_args)
    if number is None:
        raise CommandError("/unpin needs the number of a pin.", "/pins lists the pins with their numbers: /unpin 3.")
    pin = await app.session.pins.unpin(int(number.group(1)))
    app.notify(f"Unpinned #{pin.id}: {pin.content}", timeout=5)
