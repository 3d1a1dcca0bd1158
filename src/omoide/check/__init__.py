"""`omoide memory check`: plant facts, let them leave the window, ask them back,
per memory style and against baselines (docs/memory-check.md). A client of the
chat layer, as the CLI is: it imports chat and below; only cli imports it."""
