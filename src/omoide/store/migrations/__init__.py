"""Named, append-only schema migrations, recorded in `schema_migrations`.

Never edit a migration that has shipped; add a new one at the end of
`world_and_scenes.py` (or a new module listed here, after it).
"""

from __future__ import annotations

from omoide.store.migrations.foundation import FOUNDATION
from omoide.store.migrations.library import LIBRARY
from omoide.store.migrations.memory_index import MEMORY_INDEX
from omoide.store.migrations.pins import PINS
from omoide.store.migrations.record import Migration
from omoide.store.migrations.world_and_scenes import WORLD_AND_SCENES

MIGRATIONS: list[Migration] = [*FOUNDATION, *WORLD_AND_SCENES, *PINS, *LIBRARY, *MEMORY_INDEX]

__all__ = ["MIGRATIONS", "Migration"]
