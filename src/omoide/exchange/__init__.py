"""Chats in and out: SillyTavern JSONL, Markdown, and omoide's own tree JSON."""
