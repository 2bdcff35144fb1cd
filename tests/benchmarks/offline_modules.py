"""The offline search benchmark's modules, loaded from benchmarks/ (not a package on the path) as its scripts
import them: ``tasks`` (the families), ``offline_search`` and ``optuna_alone``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str, path: Path, package: bool = False) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[str(path.parent)] if package else None
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up; the scripts import these by name
    spec.loader.exec_module(module)
    return module


tasks = _load("tasks", BENCHMARKS / "tasks" / "__init__.py", package=True)
parameters = importlib.import_module("tasks.parameters")
optuna_alone = _load("optuna_alone", BENCHMARKS / "optuna_alone.py")
offline_search = _load("offline_search", BENCHMARKS / "offline_search.py")
