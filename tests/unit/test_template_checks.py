"""What a template override may hold: the step's placeholders, plain or with a
small format; nothing that looks things up or builds a huge string."""

from __future__ import annotations

import pytest

from omoide.memory.templates import TemplateSpec, check

SPEC = TemplateSpec("t", "{name} {max_lines}", ("name", "max_lines"), "a test template")


@pytest.mark.parametrize("text", ["{name} wrote {max_lines} lines", "{name:>20}|{max_lines:03d}", "{name!r:^30}", "{{literal}} {name:.100}"])
def test_plain_and_small_formats_are_accepted(text: str) -> None:
    assert check(SPEC, text) is None


@pytest.mark.parametrize("text, problem", [
    ("{name:>300000000}", "pads or extends it past 100"),
    ("{name:.101}", "pads or extends it past 100"),
    ("{max_lines:0101d}", "pads or extends it past 100"),
    ("{name:{max_lines}}", "placeholder inside its format"),
    ("{name:{name.__class__}}", "placeholder inside its format"),
    ("{name.__class__}", "unknown placeholder {name.__class__}"),
    ("{name[0]}", "unknown placeholder {name[0]}"),
    ("{}", "unknown placeholder {}"),
    ("{name!x}", "unknown conversion !x"),
    ("{name:>>>}", "format omoide does not accept"),
    ("{name", "cannot be read"),
])
def test_lookups_nested_fields_and_huge_padding_are_refused(text: str, problem: str) -> None:
    found = check(SPEC, text)
    assert found is not None and problem in found, found
