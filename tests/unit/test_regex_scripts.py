"""A card's regex scripts, one field at a time, as SillyTavern's
public/scripts/extensions/regex/engine.js runs them (getRegexedString, runRegexScript,
filterString); the session is in tests/integration/test_card_regex_in_chat.py, the TUI in tests/tui/test_tavern_tui.py."""

from __future__ import annotations

from typing import Any

from omoide.characters.macros import MacroEnv
from omoide.characters.regex_scripts import MAX_OUTPUT_CHARS, MAX_REPLACEMENTS, Placement, load_scripts

ENV = MacroEnv(char="Mi.ka", user="Kai")


def script(**fields: Any) -> dict[str, Any]:
    return {"scriptName": "s", "findRegex": "/x/g", "replaceString": "", "placement": [2], **fields}


def run(text: str, *scripts: dict[str, Any], view: str = "sent", depth: int | None = None,
        placement: Placement = Placement.AI_OUTPUT) -> str:
    return load_scripts({"regex_scripts": list(scripts)}).apply(text, placement, view, depth=depth, env=ENV)  # type: ignore[arg-type]


def test_without_g_only_the_first_match_is_replaced_and_a_bare_pattern_has_no_flags() -> None:
    assert run("axbxc", script(findRegex="/x/", replaceString="-")) == "a-bxc"
    assert run("aXbx", script(findRegex="x", replaceString="-")) == "aXb-"
    assert run("aXbx", script(findRegex="/x/gi", replaceString="-")) == "a-b-"


def test_match_groups_and_trim_strings() -> None:
    found = script(findRegex=r"/(\w+)=(\d+)?/g", replaceString="[{{match}}|$1|$2|$7]", trimStrings=["p"])
    assert run("hp=3 mp=", found) == "[h=3|h|3|] [m=|m||]"


def test_the_replacement_expands_macros_and_substitute_regex_escapes_the_names() -> None:
    assert run("hi", script(findRegex="/hi/g", replaceString="{{char}} waves at {{user}}")) == "Mi.ka waves at Kai"
    raw = script(findRegex="/{{char}}/g", replaceString="X", substituteRegex=1)
    escaped = script(findRegex="/{{char}}/g", replaceString="X", substituteRegex=2)
    assert run("Mi.ka Mizka", raw) == "X X"  # the name's dot is any character
    assert run("Mi.ka Mizka", escaped) == "X Mizka"
    assert run("Mi.ka {{char}}", script(findRegex="/{{char}}/g", replaceString="X")) == "Mi.ka X"  # 0: as written


def test_which_view_and_which_placement() -> None:
    shown_only = script(replaceString="S", markdownOnly=True)
    sent_only = script(replaceString="P", promptOnly=True)
    both = script(replaceString="B")
    assert run("x", shown_only, view="shown") == "S" and run("x", shown_only) == "x"
    assert run("x", sent_only) == "P" and run("x", sent_only, view="shown") == "x"
    assert run("x", both) == "B" and run("x", both, view="shown") == "B"
    assert run("x", both, placement=Placement.USER_INPUT) == "x"
    assert run("x", script(replaceString="D", disabled=True)) == "x"


def test_min_and_max_depth_count_from_the_newest_message() -> None:
    older = script(replaceString="-", markdownOnly=True, minDepth=1)
    newest = script(replaceString="-", promptOnly=True, maxDepth=0)
    assert [run("x", older, view="shown", depth=d) for d in (0, 1, 5)] == ["x", "-", "-"]
    assert [run("x", newest, depth=d) for d in (0, 1)] == ["-", "x"]
    assert run("x", script(replaceString="-", minDepth=3), depth=0) == "-"  # neither side: once, no depth
    assert run("x", script(replaceString="-", promptOnly=True, minDepth=None, maxDepth=-1), depth=9) == "-"


def test_a_pattern_re2_cannot_run_is_skipped_with_why_and_matches_stay_bounded() -> None:
    scripts = load_scripts({"regex_scripts": [script(scriptName="behind", findRegex="/(?<=a)x/g"),
                                              script(scriptName="sticky", findRegex="/x/y"), "junk", script(replaceString="!")]})
    assert len(scripts.scripts) == 1
    assert any("'behind' skipped" in p and "lookaround" in p for p in scripts.problems)
    assert any("'sticky' skipped" in p for p in scripts.problems) and any("not an object" in p for p in scripts.problems)
    assert scripts.apply("axa", Placement.AI_OUTPUT, "sent") == "a!a"
    many = "x" * (MAX_REPLACEMENTS + 5)
    assert run(many, script(replaceString="y")) == "y" * MAX_REPLACEMENTS + "xxxxx"
    assert run("ab", script(findRegex="/(?:)/g", replaceString="-")) == "-a-b-"  # empty matches, as JavaScript
    huge = run("x" * 1000, script(replaceString="y" * 100_000))
    assert len(huge) <= MAX_OUTPUT_CHARS + 1000 and huge.endswith("x")  # a card cannot make a text of gigabytes
