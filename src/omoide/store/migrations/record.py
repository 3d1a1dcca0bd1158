"""One schema migration: a name recorded in `schema_migrations` and its SQL."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Migration:
    name: str
    sql: str
