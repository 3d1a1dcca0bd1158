"""The characters there are, as the world layer needs them: names for mention
scanning, descriptions for the end-of-conversation pass, who said a message.

A `Directory` reads names from the library's index on first use and a
character's card only when that character is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from omoide.characters.library import Library
from omoide.characters.model import Character, substitute
from omoide.domain.chat import Message, Role
from omoide.domain.library import Named
from omoide.domain.world import Conversation, Participant, user_key
from omoide.errors import OmoideError
from omoide.world.mentions import Known, known_from, named_by


class Directory:
    """The characters there are: for names, descriptions and mention scanning.
    Names come from the library's index on first use; a character's card is
    read only when that character is needed (a `load` reads them all instead)."""

    def __init__(self, extra: Iterable[Character] = (), load: Callable[[], list[Character]] | None = None,
                 library: Library | None = None) -> None:
        self._extra = {c.id: c for c in extra}
        self._load = load
        self._library = library
        self._by_id: dict[str, Character] | None = None
        self._named: list[Named] | None = None
        self._read: dict[str, Character | None] = {}
        self._known: list[Known] | None = None

    @property
    def characters(self) -> dict[str, Character]:
        """Every character, each card read (a scene's /invite by name)."""
        if self._by_id is None:
            found = self._loaded() if self._load is not None else self._scanned()
            self._by_id = {c.id: c for c in [*found, *self._extra.values()]}
        return self._by_id

    def _scanned(self) -> list[Character]:
        try:
            return (self._library or Library()).scan().characters
        except OmoideError:
            return []

    def _loaded(self) -> list[Character]:
        assert self._load is not None
        try:
            found = self._load()
        except OmoideError:
            found = []
        return list(found)

    def named(self) -> list[Named]:
        """Every character's id and names, sorted by id: from the index, no card read."""
        if self._by_id is not None or self._load is not None:
            return sorted(self.characters.values(), key=lambda c: c.id)
        if self._named is None:
            try:
                entries: list[Named] = list((self._library or Library()).names())
            except OmoideError:
                entries = []
            by_id: dict[str, Named] = {e.id: e for e in entries}
            by_id.update(self._extra)
            self._named = [by_id[key] for key in sorted(by_id)]
        return self._named

    def get(self, key: str) -> Character | None:
        if self._by_id is not None or self._load is not None:
            return self.characters.get(key)
        if key in self._extra:
            return self._extra[key]
        if key not in self._read:
            try:
                self._read[key] = (self._library or Library()).load(key)
            except OmoideError:
                self._read[key] = None
        return self._read[key]

    def ids(self) -> list[str]:
        """Every character's id, sorted: from the index, no name or card read."""
        if self._by_id is not None or self._load is not None:
            return sorted(self.characters)
        try:
            found = set((self._library or Library()).ids())
        except OmoideError:
            found = set()
        return sorted(found | set(self._extra))

    def known_among(self, words: set[str]) -> list[Known]:
        """`known()` of the characters a text of `words` (mentions.words_of) may
        name, sorted by id: from the index only their names are read, however
        large the library. When the index cannot answer, every name is read
        once (`known()`), as before there was one."""
        if self._by_id is None and self._load is None:
            try:
                entries = (self._library or Library()).named_with(words)
            except OmoideError:
                entries = None
            if entries is not None:
                by_id: dict[str, Named] = {e.id: e for e in entries if e.id not in self._extra}
                by_id.update(self._extra)
                return [k for k in known_from(by_id[key] for key in sorted(by_id)) if named_by(k, words)]
        return [k for k in self.known() if named_by(k, words)]

    def known(self) -> list[Known]:
        if self._known is None or self._by_id is not None or self._load is not None:
            self._known = known_from(self.named())
        return self._known

    def description(self, key: str, user: str) -> str:
        character = self.get(key)
        if character is None:
            return ""
        return substitute(character.description, char=character.display_name, user=user).strip()


def one_on_one(character: Character, user_name: str) -> list[Participant]:
    return [Participant(character.id, character.display_name), Participant(user_key(user_name), user_name)]


def speaker_for(conversation: Conversation, directory: Directory | None = None) -> Callable[[Message], str]:
    """Who said a message: the user, or the character stored on it (group
    scenes); a reply with no speaker is the chat's (first) character's."""
    names = {p.key: p.name for p in conversation.participants}
    character = next((p.name for p in conversation.participants if not p.is_user), "?")
    user = next((p.name for p in conversation.participants if p.is_user), "User")

    def name(m: Message) -> str:
        if m.role is Role.USER:
            return user
        if m.speaker is None:
            return character
        found = directory.get(m.speaker) if directory is not None and m.speaker not in names else None
        return names.get(m.speaker) or (found.display_name if found else m.speaker)

    return name
