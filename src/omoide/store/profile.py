"""The user profile: fields kept as append-only versions, and facts that are
retired rather than deleted, each with where it came from."""

from __future__ import annotations

from omoide.domain.chat import FactStatus, Profile, ProfileFact
from omoide.errors import NotFound
from omoide.store import rows
from omoide.store.db import Database

FIELDS = ("name", "address", "pronouns")


class ProfileRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self) -> Profile:
        values = {
            r["key"]: r["value"]
            for r in await self.db.all(
                "SELECT key, value FROM profile_fields f WHERE id = (SELECT max(id) FROM profile_fields WHERE key = f.key)"
            )
        }
        result = await self.db.all("SELECT * FROM profile_facts WHERE status IN ('active', 'proposed') ORDER BY id")
        facts = [rows.profile_fact(r) for r in result]
        return Profile(name=values.get("name", ""), address=values.get("address", ""), pronouns=values.get("pronouns", ""),
                       facts=[f for f in facts if f.status is FactStatus.ACTIVE],
                       proposals=[f for f in facts if f.status is FactStatus.PROPOSED])

    async def fact(self, fact_id: int) -> ProfileFact:
        row = await self.db.one("SELECT * FROM profile_facts WHERE id = ?", (fact_id,))
        if row is None:
            raise NotFound(f"There is no profile fact #{fact_id}.", "`omoide profile` lists the facts and proposals with their numbers.")
        return rows.profile_fact(row)

    async def set_field(self, key: str, value: str) -> None:
        """A new version of a field; the old ones stay in the table."""
        assert key in FIELDS
        async with self.db.write() as conn:
            await conn.execute("INSERT INTO profile_fields (key, value, created_at) VALUES (?, ?, ?)", (key, value, self.db.now_iso()))

    async def add_fact(self, content: str, *, status: FactStatus = FactStatus.ACTIVE, source: str = "",
                       chat_id: int | None = None, message_id: int | None = None) -> ProfileFact:
        async with self.db.write() as conn:
            cur = await conn.execute(
                "INSERT INTO profile_facts (content, status, source, chat_id, message_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (content, str(status), source, chat_id, message_id, self.db.now_iso()),
            )
            fact_id = cur.lastrowid
        assert fact_id is not None
        return await self.fact(fact_id)

    async def set_status(self, fact_id: int, status: FactStatus) -> ProfileFact:
        await self.fact(fact_id)
        async with self.db.write() as conn:
            await conn.execute("UPDATE profile_facts SET status = ?, decided_at = ? WHERE id = ?", (str(status), self.db.now_iso(), fact_id))
        return await self.fact(fact_id)
