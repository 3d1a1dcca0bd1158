"""Plain dataclasses shared by every layer: the chat's records (`chat`) and the
world's (`world`). No I/O here."""
