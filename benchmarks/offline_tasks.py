"""The tasks of benchmarks/offline_search.py, each written as a user's project (a folder with assay.yaml,
cases, the artifact and its harness), committed in its own git repository.

- ``threshold``: ``params.json`` holds ``{"threshold": 5}``; a number is "high" from 14 up (baseline dev pass
  rate about 0.75).
- ``constants``: a scoring function with five constants that must land near hidden targets; each case is one
  probe point, passing when the function's value is within 5% of the hidden one's.
- ``funsearch``: FunSearch's online bin packing from its best-fit skeleton (integer items 20-100, capacity
  150, ``items`` items per instance), scored as L1 lower bound / bins; ``excess`` measures a priority function
  on instances the run never saw. As in FunSearch, whose ``bins`` array holds the unopened bins at full
  capacity, an empty bin is among the bins the priority ranks, so a heuristic may open a bin while others fit.
- ``binpack``: the repository's example, as the README runs it.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("threshold", "constants", "funsearch", "binpack")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)


def _commit(root: Path) -> Path:
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-qm", "start")
    return root


def _config(artifact: str, forbid: list[str], command: str, checks: str, evolve: str) -> str:
    return (
        f"artifact: {{kind: code, paths: [{artifact}], forbid: [{', '.join(forbid)}]}}\n"
        "cases: {files: [cases.yaml]}\n"
        f"runner: {{type: command, command: '{command}', timeout: 20}}\n"
        f"{checks}"
        f"evolve:\n{textwrap.indent(evolve, '  ')}"
    )


def threshold(root: Path, evolve: str = "preset: standard\n") -> Path:
    """The config threshold task (see the module docstring)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "params.json").write_text(json.dumps({"threshold": 5}, indent=2) + "\n")
    (root / "classify.py").write_text(
        "import json, sys\n"
        "threshold = json.load(open('params.json'))['threshold']\n"
        "print('high' if float(sys.argv[1]) >= threshold else 'low')\n"
    )
    rng = random.Random(7)
    inside = [*range(5, 14), 9]  # misread at threshold 5
    outside = rng.sample([*range(0, 5), *range(14, 60)], 30)
    lines = ["cases:"]
    for number in sorted(inside + outside):
        label = "high" if number >= 14 else "low"
        lines.append(
            f"  - {{id: n-{number:03d}-{len(lines)}, vars: {{n: {number}}}, checks: [{{type: equals, value: {label}}}]}}"
        )
    (root / "cases.yaml").write_text("\n".join(lines) + "\n")
    (root / "assay.yaml").write_text(
        _config(
            "params.json",
            ["classify.py", "cases.yaml", "assay.yaml"],
            "python classify.py {vars.n}",
            "",
            evolve,
        )
    )
    return _commit(root)


HIDDEN = {"A": 2.5, "B": 0.35, "C": 12.0, "D": 0.8, "E": 40.0}
START = {"A": 1.0, "B": 1.0, "C": 5.0, "D": 0.1, "E": 100.0}


def _formula(values: dict[str, float], x: float) -> float:
    return (
        values["A"] * math.exp(-values["B"] * x)
        + values["C"] / (1 + values["D"] * x)
        + values["E"] / (10 + x)
    )


def constants(root: Path, evolve: str = "preset: standard\n") -> Path:
    """The five-constant scoring function task (see the module docstring)."""
    root.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{k} = {v!r}\n" for k, v in START.items())
    (root / "score_fn.py").write_text(
        '"""A scoring curve with five constants to fit."""\n\nimport math\n\n' + body + "\n\n"
        "def curve(x: float) -> float:\n"
        "    return A * math.exp(-B * x) + C / (1 + D * x) + E / (10 + x)\n"
    )
    (root / "probe.py").write_text(
        "import json, sys\nfrom score_fn import curve\n"
        "print(json.dumps({'x': float(sys.argv[1]), 'y': curve(float(sys.argv[1])), 'target': float(sys.argv[2])}))\n"
    )
    (root / "check.py").write_text(
        "import json\n\n\ndef check(output, context):\n"
        "    r = json.loads(output)\n"
        "    error = abs(r['y'] - r['target']) / abs(r['target'])\n"
        "    return {'pass': error <= 0.05, 'score': max(0.0, 1 - error), 'reason': f'relative error {error:.3f}'}\n"
    )
    lines = ["cases:"]
    for i, x in enumerate([0, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 70, 100]):
        lines.append(f"  - {{id: x-{i:02d}, vars: {{x: {x}, t: {_formula(HIDDEN, x)!r}}}}}")
    (root / "cases.yaml").write_text("\n".join(lines) + "\n")
    (root / "assay.yaml").write_text(
        _config(
            "score_fn.py",
            ["probe.py", "check.py", "cases.yaml", "assay.yaml"],
            "python probe.py {vars.x} {vars.t}",
            "checks:\n  - {type: python, value: 'check.py:check'}\n",
            evolve,
        )
    )
    return _commit(root)


BEST_FIT = '''"""FunSearch's online bin packing skeleton: the priority of each open bin for an incoming item."""


def priority(item: float, remaining: float) -> float:
    """Higher is better: best fit, the bin left fullest."""
    return -(remaining - item)
'''

# The packing loop, shared by the task's harness and by ``excess`` (``priority``, ``CAPACITY`` and ``math``
# are the caller's globals).
PACK = """def pack(items):
    bins = []
    for item in items:
        best, best_score = -1, -math.inf
        for index, remaining in enumerate(bins):
            if remaining >= item:
                score = priority(item, remaining)
                if score > best_score:
                    best, best_score = index, score
        # As in FunSearch, an empty bin is one of the choices: the priority may open one while others fit.
        if best < 0 or priority(item, CAPACITY) > best_score:
            bins.append(CAPACITY - item)
        else:
            bins[best] -= item
    return len(bins)
"""

FUNSEARCH_HARNESS = (
    '''"""Packs one instance (integer items 20-100, capacity 150) with priority.py; prints bins and the L1 bound."""

import json
import math
import random
import sys

from priority import priority

CAPACITY = 150


'''
    + PACK
    + """

def main():
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    items = [rng.randint(20, 100) for _ in range(n)]
    print(json.dumps({"bins": pack(items), "lower_bound": math.ceil(sum(items) / CAPACITY)}))


if __name__ == "__main__":
    main()
"""
)


def funsearch(root: Path, evolve: str = "preset: standard\n", *, cases: int = 20, items: int = 500) -> Path:
    """FunSearch's bin packing from best fit (see the module docstring)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "priority.py").write_text(BEST_FIT)
    (root / "harness.py").write_text(FUNSEARCH_HARNESS)
    (root / "score.py").write_text(
        "import json\n\n\ndef check(output, context):\n"
        "    r = json.loads(output)\n"
        "    ratio = r['lower_bound'] / r['bins']\n"
        "    return {'pass': r['bins'] <= r['lower_bound'] * 1.03, 'score': ratio,\n"
        "            'reason': f\"{r['bins']} bins, bound {r['lower_bound']}\"}\n"
    )
    lines = ["cases:"] + [f"  - {{id: or-{i:02d}, vars: {{seed: {5000 + i}}}}}" for i in range(cases)]
    (root / "cases.yaml").write_text("\n".join(lines) + "\n")
    (root / "assay.yaml").write_text(
        _config(
            "priority.py",
            ["harness.py", "score.py", "cases.yaml", "assay.yaml"],
            f"python harness.py {{vars.seed}} {items}",
            "checks:\n  - {type: python, value: 'score.py:check'}\n",
            evolve,
        )
    )
    return _commit(root)


def excess(priority_source: str, *, seeds: range = range(9000, 9020), items: int = 500) -> float:
    """Mean excess of bins over the L1 bound, in percent, of a priority function on unseen instances."""
    namespace: dict[str, object] = {"math": math, "CAPACITY": 150}
    exec(compile(priority_source, "priority.py", "exec"), namespace)
    exec(compile(PACK, "pack", "exec"), namespace)
    total = 0.0
    for seed in seeds:
        rng = random.Random(seed)
        sizes = [rng.randint(20, 100) for _ in range(items)]
        bound = math.ceil(sum(sizes) / 150)
        total += (namespace["pack"](sizes) - bound) / bound  # type: ignore[operator]
    return 100 * total / len(seeds)


def binpack(root: Path, evolve: str = "") -> Path:
    """The repository's example, copied as the README does (its own evolve settings, ``evolve`` appended)."""
    shutil.copytree(ROOT / "examples" / "binpack", root, dirs_exist_ok=True)
    if evolve:
        config = (root / "assay.yaml").read_text()
        (root / "assay.yaml").write_text(config + textwrap.indent(evolve, "  "))
    return _commit(root)


BUILDERS = {"threshold": threshold, "constants": constants, "funsearch": funsearch, "binpack": binpack}


if __name__ == "__main__":
    print(excess(BEST_FIT), file=sys.stdout)
