"""omoide: a terminal roleplay client whose characters remember."""

__version__ = "0.1.0"
