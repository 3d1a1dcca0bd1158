"""The docs a user reads: no commit hashes or issue numbers (a user has
neither at hand), pages short enough to read, and a CHANGELOG whose newest
release is the version pyproject.toml ships."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]

HASH_OR_ISSUE = re.compile(r"\b[0-9a-f]{7}\b|issue [0-9]+")
"""The issue's own check, `grep -rE '\\b[0-9a-f]{7}\\b|issue [0-9]+' docs README.md`."""

VERSION_HEADING = re.compile(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?\s*$", re.MULTILINE)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file())]


def hits(text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if HASH_OR_ISSUE.search(line)]


def test_the_pattern_finds_a_hash_and_an_issue_number_and_spares_plain_words() -> None:
    assert hits("measured on `da3f57b`, against 55b9e69") == [(1, "measured on `da3f57b`, against 55b9e69")]
    assert hits("what issue 32's memory adds") != []
    assert hits("the 2,009 messages of months-1; a colour #1e1e2e; 40-hex 0123456789abcdef") == []


def test_no_commit_hash_or_issue_number_in_the_docs_or_the_readme() -> None:
    files = doc_files()
    assert len(files) > 10
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in files for n, line in hits(p.read_text(encoding="utf-8"))]
    assert not found, "say what changed, not which commit or issue (the CHANGELOG tells when):\n" + "\n".join(found)


def test_the_reference_pages_stay_short() -> None:
    limits = {"README.md": 300, "docs/memory-check.md": 300, "docs/benchmarks.md": 400}
    over = {name: n for name, limit in limits.items()
            if (n := len((ROOT / name).read_text(encoding="utf-8").splitlines())) > limit}
    assert not over, f"over their line limits {limits}: {over}"


def test_the_changelog_opens_with_unreleased_then_the_dated_release_pyproject_ships() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = VERSION_HEADING.findall(changelog)
    assert headings, "CHANGELOG.md has no `## [VERSION] - DATE` headings"
    assert headings[0] == ("Unreleased", ""), f"the first version heading must be `## [Unreleased]`, not {headings[0]}"
    released = headings[1:]
    assert released and all(date for _version, date in released), "every release below [Unreleased] has its date"
    assert ("0.1.0", released[-1][1]) == released[-1], "the first release is 0.1.0"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert released[0][0] == version, f"pyproject.toml says {version}, the newest release in CHANGELOG.md is {released[0][0]}"
