"""A problem family of the offline search benchmark, and the user's project it becomes.

A family is a folder holding ``task.py`` (standard library only: ``FILE``, the artifact's file name; ``TARGET``,
the gap in percent at which a case passes; ``instance(seed)``, a JSON-able instance; ``gap(artifact, instance)``,
how far the artifact's result on the instance is from the best known, in percent, lower is better), the fixed
start and, where a textbook heuristic exists, the reference (``start`` and ``reference`` with ``FILE``'s suffix:
``start.py``, ``start.json``). What ``gap`` is given is, for a Python artifact, the function or class ``FUNCTION``
names in it; for another file (a config a script reads), what the task's ``load(text)`` makes of its text.
``PARAMETERS`` (see :mod:`tasks.parameters`) names the numbers of the artifact a bare optimizer tunes, with
their ranges, as a user would write them for Optuna. ``SHAPE`` says what the artifact is (:data:`SHAPES`).

The project is what a user would write: the artifact, a ``harness.py`` (the task's own source and a ``run`` the
``python`` runner calls), a check scoring each case ``1 / (1 + gap / 100)``, and ``cases.json`` whose cases each
carry their instance (seeds ``CASE_SEEDS``). Instances of ``UNSEEN_SEEDS`` are never cases of any run: the
benchmark reports the gap of a run's best program on them.

Each ``task.py`` stands alone (it is copied whole into its project's harness, and a check-half family must not
lean on a tune-half one), so the two bin-packing families each carry their own packing loop.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import statistics
import subprocess
import textwrap
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

SHAPES = {
    "score": "a function that turns numbers into a score or a priority",
    "constructor": "a function that places objects with loops and arrays",
    "record": "a function that returns a record (a dict) from rules",
    "config": "a config file (JSON, TOML) a script reads",
    "class": "a class with state and methods the harness calls",
}
CASE_SEEDS = range(1000, 1010)
MORE_DEV_SEEDS = 2000  # the first seed of the instances a project may add as dev-only cases (cases.dev_files)
UNSEEN_SEEDS = range(9000, 9020)

RUN = '''

def run(case, artifact_dir):
    """The ``python`` runner's entry: the gap of the artifact's function on the case's instance."""
    import importlib

    module = importlib.import_module(FILE.removesuffix(".py"))
    return repr(gap(getattr(module, FUNCTION), case.vars["instance"]))
'''

RUN_FILE = '''

def run(case, artifact_dir):
    """The ``python`` runner's entry: the gap of the artifact, as ``load`` reads it, on the case's instance."""
    from pathlib import Path

    return repr(gap(load((Path(artifact_dir) / FILE).read_text()), case.vars["instance"]))
'''

CHECK = '''"""Scores one case from the gap the harness printed: 1 / (1 + gap / 100); passes at TARGET or less."""

TARGET = {target!r}


def check(output, context):
    gap = float(output)
    return {{"pass": gap <= TARGET, "score": 1 / (1 + gap / 100), "reason": f"gap {{gap:.2f}}%"}}
'''


@dataclass(frozen=True)
class Family:
    """One family: its folder under ``tune/`` or ``check/``; ``begin`` names the program its runs start from
    (``start``, or ``reference``: the search must then improve on the textbook heuristic itself)."""

    folder: Path
    begin: str = "start"

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def half(self) -> str:
        return self.folder.parent.name

    @cached_property
    def task(self) -> ModuleType:
        spec = importlib.util.spec_from_file_location(
            f"family_{self.half}_{self.name}", self.folder / "task.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    @property
    def suffix(self) -> str:
        """The artifact's suffix: ``.py``, or a config file's (``.json``, ``.toml``)."""
        return Path(self.task.FILE).suffix

    @property
    def start(self) -> str:
        return (self.folder / f"{self.begin}{self.suffix}").read_text()

    @property
    def reference(self) -> str | None:
        path = self.folder / f"reference{self.suffix}"
        return path.read_text() if path.exists() else None

    @property
    def shape(self) -> str:
        """What the artifact is, a key of :data:`SHAPES` (``score`` unless the task says otherwise)."""
        return str(getattr(self.task, "SHAPE", "score"))

    @property
    def parameters(self) -> dict[str, Any]:
        """The numbers a bare optimizer tunes, by name, with their ranges (:mod:`tasks.parameters`)."""
        return dict(getattr(self.task, "PARAMETERS", {}))

    def load(self, source: str) -> Any:
        """What ``gap`` scores, from the artifact's text: the task's ``load`` of it, or the object ``FUNCTION``
        names once the Python source ran (an exception when it does not run or lacks it)."""
        if hasattr(self.task, "load"):
            return self.task.load(source)
        namespace: dict[str, Any] = {"__name__": "candidate"}
        exec(compile(source, self.task.FILE, "exec"), namespace)
        return namespace[self.task.FUNCTION]

    def instances(self, seeds: range) -> list[Any]:
        return [self.task.instance(seed) for seed in seeds]

    def unseen_gap(self, source: str, instances: list[Any] | None = None) -> float:
        """Mean gap, in percent, of the artifact ``source`` on the unseen instances (inf if it crashes)."""
        try:
            function = self.load(source)
            chosen = instances if instances is not None else self.instances(UNSEEN_SEEDS)
            return statistics.mean(self.task.gap(function, instance) for instance in chosen)
        except Exception:
            return float("inf")

    def dead_branches(self, source: str, seeds: list[int]) -> list[str]:
        """The ``if`` statements of ``source`` whose body the instances of ``seeds`` never reach (their tests,
        as written; none in a config file)."""
        if self.suffix != ".py":
            return []
        tree = ast.parse(source)
        branches = [node for node in ast.walk(tree) if isinstance(node, ast.If)]
        for node in branches:  # a marker first in each body: cheap where line tracing is not
            mark = ast.Expr(ast.Call(ast.Name("__reached__", ast.Load()), [ast.Constant(node.lineno)], []))
            node.body.insert(0, mark)
        reached: set[int] = set()
        namespace: dict[str, Any] = {"__name__": "candidate", "__reached__": reached.add}
        exec(compile(ast.fix_missing_locations(tree), self.task.FILE, "exec"), namespace)
        function = namespace[self.task.FUNCTION]
        for seed in seeds:
            self.task.gap(function, self.task.instance(seed))
        return [ast.unparse(node.test) for node in branches if node.lineno not in reached]

    def project(self, root: Path, evolve: str, more_dev: int = 0) -> Path:
        """Write the family as a user's project under ``root`` (see :meth:`write`) and commit it in a new git
        repository."""
        self.write(root, evolve, more_dev)
        for args in (
            ["init", "-q", "-b", "main"],
            ["add", "-A"],
            ["-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "start"],
        ):
            subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
        return root

    def write(self, root: Path, evolve: str, more_dev: int = 0) -> Path:
        """Write the family's project files under ``root``; ``evolve`` is the YAML body of the ``evolve:``
        section. ``more_dev`` instances (seeds from ``MORE_DEV_SEEDS``) go in ``dev.json``, a ``cases.dev_files``
        file: dev cases that leave the split of ``cases.json``, and so the holdout, as it was."""
        root.mkdir(parents=True, exist_ok=True)
        task = self.task
        (root / task.FILE).write_text(self.start)
        run = RUN_FILE if hasattr(task, "load") else RUN
        (root / "harness.py").write_text((self.folder / "task.py").read_text() + run)
        (root / "score.py").write_text(CHECK.format(target=task.TARGET))
        cases = [
            {"id": f"{self.name}-{seed}", "vars": {"instance": task.instance(seed)}} for seed in CASE_SEEDS
        ]
        (root / "cases.json").write_text(json.dumps({"cases": cases}))
        dev = [
            {"id": f"{self.name}-{seed}", "vars": {"instance": task.instance(seed)}}
            for seed in range(MORE_DEV_SEEDS, MORE_DEV_SEEDS + more_dev)
        ]
        if dev:
            (root / "dev.json").write_text(json.dumps({"cases": dev}))
        (root / "assay.yaml").write_text(
            f"artifact: {{kind: {'code' if self.suffix == '.py' else 'config'}, paths: [{task.FILE}], forbid: [harness.py, score.py, cases.json, "
            f"{'dev.json, ' if dev else ''}assay.yaml]}}\n"
            f"cases: {{files: [cases.json]{', dev_files: [dev.json]' if dev else ''}}}\n"
            "runner: {type: python, function: 'harness:run', timeout: 20, sandbox: none}\n"
            "checks:\n  - {type: python, value: 'score.py:check'}\n"
            f"evolve:\n{textwrap.indent(evolve, '  ')}"
        )
        (root / ".gitignore").write_text(".assay/\n__pycache__/\n")
        return root
