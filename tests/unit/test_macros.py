"""SillyTavern's macros, one at a time (omoide.characters.macros).

Each test names what it follows: "Macros" is SillyTavern's documentation page
https://docs.sillytavern.app/usage/core-concepts/macros/ (SillyTavern-Docs
Usage/macros.md, release 1.17.0); "macros.js" is SillyTavern's
public/scripts/macros.js (the engine that page describes as the legacy one)."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from omoide.characters.macros import MAX_NESTING, MacroEnv, chat_values, expand, humanize
from omoide.domain.chat import Message, Role

T = datetime(2026, 11, 24, 21, 5, 9, tzinfo=UTC)  # a Tuesday


def env(**kw: object) -> MacroEnv:
    base: dict[str, object] = dict(char="Suzune", user="Kai", now=T, tz=UTC, rng=random.Random(7))
    base.update(kw)
    return MacroEnv(**base)  # type: ignore[arg-type]


def test_names_are_case_insensitive_and_whitespace_is_ignored() -> None:
    """Macros, Basic Syntax: "Macro names are case-insensitive"; Whitespace in Macro Definitions."""
    assert expand("{{user}} {{User}} {{USER}} {{ char }} {{Char}}", env()) == "Kai Kai Kai Suzune Suzune"


def test_legacy_markers() -> None:
    """Macros, Legacy Syntax: <USER>, <BOT>, <CHAR>, <GROUP>, <CHARIFNOTGROUP>."""
    assert expand("<USER> meets <BOT> and <char>; <GROUP>/<CHARIFNOTGROUP>", env()) == "Kai meets Suzune and Suzune; Suzune/Suzune"
    assert expand("<GROUP>|<CHARIFNOTGROUP>", env(group=("Suzune", "Wren"))) == "Suzune, Wren|"


def test_group_and_char_if_not_group() -> None:
    """Macros, Names & Participants: {{group}} is the members' names, comma-separated,
    or the character's name in a solo chat; {{charIfNotGroup}} is the character's
    name, empty in groups."""
    assert expand("{{group}}|{{charIfNotGroup}}", env()) == "Suzune|Suzune"
    assert expand("{{group}}|{{charIfNotGroup}}", env(group=("Suzune", "Wren"))) == "Suzune, Wren|"


def test_random_picks_one_item_with_double_colons_or_commas() -> None:
    """Macros, Randomization: {{random::a::b::c}}; macros.js randomReplace: the comma
    form splits on commas and trims each item, and `\\,` keeps a comma."""
    seen = {expand("{{random::red::green::blue}}", env(rng=random.Random(seed))) for seed in range(60)}
    assert seen == {"red", "green", "blue"}
    commas = {expand("{{random:a, b\\, c}}", env(rng=random.Random(seed))) for seed in range(60)}
    assert commas == {"a", "b, c"}
    assert expand("{{random::only}}", env()) == "only"


def test_pick_is_stable_per_chat_and_position() -> None:
    """Macros, Randomization: {{pick}} is a "stable random selection (consistent per chat
    and position)"; macros.js pickReplace seeds it with the chat, the text and the offset."""
    text = "{{pick::tea::coffee::juice::water::milk}} and {{pick::tea::coffee::juice::water::milk}}"
    first = expand(text, env(pick_seed="chat-1", rng=random.Random(1)))
    assert all(expand(text, env(pick_seed="chat-1", rng=random.Random(seed))) == first for seed in range(20))
    others = {expand(text, env(pick_seed=f"chat-{n}")) for n in range(40)}
    assert len(others) > 5  # another chat, another pick
    positions = {tuple(expand(text, env(pick_seed=f"chat-{n}")).split(" and ")) for n in range(40)}
    assert any(a != b for a, b in positions)  # two places in one text pick independently


def test_roll_takes_dice_in_every_form() -> None:
    """Macros, Arguments: {{roll 1d20}}, {{roll::2d6+3}}, {{roll:1d20}} (legacy); macros.js
    diceRollReplace: a bare number is the number of sides, an invalid formula gives ''."""
    for seed in range(30):
        one = int(expand("{{roll:1d6}}", env(rng=random.Random(seed))))
        assert 1 <= one <= 6
        assert 5 <= int(expand("{{roll::2d6+3}}", env(rng=random.Random(seed)))) <= 15
        assert 1 <= int(expand("{{roll 20}}", env(rng=random.Random(seed)))) <= 20
    assert expand("[{{roll:fireball}}]", env()) == "[]"
    assert expand("[{{roll:1000d1000000000}}]", env()) == "[]"  # bounded: no huge loops


def test_the_clock_macros() -> None:
    """Macros, Time & Date: {{time}} (local time, moment's LT), {{date}} (LL), {{weekday}},
    {{isotime}} (HH:mm), {{isodate}} (YYYY-MM-DD), {{time::UTC±offset}}."""
    text = "It is {{time}} on {{weekday}}, {{date}} ({{isodate}} {{isotime}}); {{time::UTC+2}} in Cairo, {{time_UTC-5}} in Lima."
    assert expand(text, env()) == "It is 9:05 PM on Tuesday, November 24, 2026 (2026-11-24 21:05); 11:05 PM in Cairo, 4:05 PM in Lima."
    assert expand("{{time}}", env(now=None)) == "{{time}}"  # no clock given: left as written


def test_idle_duration_says_how_long_since_your_previous_message() -> None:
    """Macros, Time & Date: {{idleDuration}} (legacy {{idle_duration}}), the human-readable
    duration since the last user message; macros.js getTimeSinceLastMessage skips the
    newest message and says 'just now' when there is none."""
    assert expand("{{idle_duration}}", env(idle_since=T - timedelta(hours=3))) == "3 hours"
    assert expand("{{idleDuration}}", env(idle_since=T - timedelta(days=40))) == "a month"
    assert expand("{{idle_duration}}", env()) == "just now"
    assert [humanize(timedelta(seconds=s)) for s in (10, 44, 45, 89, 90, 44 * 60, 45 * 60, 21 * 3600, 22 * 3600, 25 * 86400)] == [
        "a few seconds", "a few seconds", "a minute", "a minute", "2 minutes", "44 minutes", "an hour", "21 hours", "a day", "25 days",
    ]


def test_chat_values_come_from_the_path() -> None:
    """Macros, Chat History & Messages: {{lastMessage}}, {{lastUserMessage}},
    {{lastCharMessage}}; the idle time is from your message before the newest one."""
    path = [
        Message(1, 1, None, Role.ASSISTANT, "Hello.", T - timedelta(hours=5)),
        Message(2, 1, 1, Role.USER, "Hi.", T - timedelta(hours=4)),
        Message(3, 1, 2, Role.ASSISTANT, "Tea?", T - timedelta(hours=4)),
        Message(4, 1, 3, Role.USER, "Yes please.", T),
    ]
    values = chat_values(path)
    text = "{{lastMessage}}|{{lastUserMessage}}|{{lastCharMessage}}|{{idle_duration}}"
    assert expand(text, env(**values)) == "Yes please.|Yes please.|Tea?|4 hours"


def test_comments_trim_newline_noop_and_space() -> None:
    """Macros, Comments ({{// ...}} is removed) and Utility: {{newline}}, {{newline::count}},
    {{space::count}}, {{noop}}, {{trim}} (macros.js: removes the newlines around it)."""
    assert expand("a{{// not for the model {{char}} }}b", env()) == "ab"
    assert expand("one{{newline}}two{{newline::2}}three{{space::3}}four{{noop}}", env()) == "one\ntwo\n\nthree   four"
    assert expand("Line one\n\n{{trim}}\n\nline two", env()) == "Line oneline two"


def test_original_is_given_once() -> None:
    """Macros, Character Card & Persona Fields: {{original}} in a character's prompt
    override; SillyTavern's substituteParams gives it once (a second one is empty),
    and leaves it as written where there is nothing it stands for."""
    assert expand("{{original}} Also: be brief. {{original}}", env(original="Be kind.")) == "Be kind. Also: be brief. "
    assert expand("{{original}}", env()) == "{{original}}"


def test_input_is_the_input_box() -> None:
    """Macros, Utility: {{input}} is the chat input field's content (empty when the
    prompt of a reply is built: SillyTavern clears the box first)."""
    assert expand("[{{input}}]", env()) == "[]"
    assert expand("[{{input}}]", env(input="draft")) == "[draft]"


def test_nested_macros_expand_inner_first() -> None:
    """Macros, Nested Macros: "Inner macros are resolved first"."""
    assert expand("{{random::{{user}}::{{user}}}}", env()) == "Kai"


def test_unknown_macros_and_lookalikes_stay_as_written() -> None:
    """Macros: only registered macros are replaced; `{{getvar::x}}` (not supported here)
    and `{{user2}}` are not {{user}}."""
    text = "{{getvar::mood}} {{user2}} {{char:x}} {{ }} {{random}} {{unclosed"
    assert expand(text, env()) == text


def test_values_are_never_expanded_again() -> None:
    """Macros are data: a name or message holding a macro is put in as it is, so
    nothing expands itself (no recursion bombs)."""
    sneaky = env(char="{{char}}{{char}}", last_message="{{random::a::b}} {{lastMessage}}")
    assert expand("{{char}} / {{lastMessage}}", sneaky) == "{{char}}{{char}} / {{random::a::b}} {{lastMessage}}"


def test_nesting_is_bounded() -> None:
    """Macros are data: nesting deeper than MAX_NESTING is kept as written."""
    def nested(levels: int) -> str:
        return "{{random:" * levels + "{{user}}" + "}}" * levels

    assert expand(nested(MAX_NESTING - 1), env()) == "Kai"
    assert expand(nested(MAX_NESTING + 3), env()) == nested(3)


def test_huge_inputs_stay_fast_and_bounded() -> None:
    """Macros are data: thousands of macros, unclosed braces and long values cost
    linear time, and the result's growth is capped."""
    started = time.monotonic()
    expand("{{" * 50_000, env())
    expand("{{char}}" * 50_000, env())
    big = expand("{{lastMessage}}" * 5_000, env(last_message="x" * 10_000))
    assert len(big) < 2_000_000
    assert time.monotonic() - started < 20  # generous for a busy machine; quadratic would take minutes


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="{}:,<>/ abcdeuserchartimrandomp1d6", max_size=120))
def test_any_text_expands_without_raising(text: str) -> None:
    expand(text, env())
