"""How many of the offline operators' edits still run, for the ways users write the same scoring function.

Best fit, one score per bin, written as users write it: for two numbers; over a numpy array with and without
annotations; as a comprehension, a list appended to or filled by index in a loop, a negated ``np.array``; as a
method dividing by an attribute; as a dict comprehension; as ``map`` of a lambda. Each operator draws ``--draws``
edits of each spelling (seeds 0 to draws - 1); an edit fails when calling the edited function on one item and
seven bins raises or does not give one number per bin. An unannotated function over arrays is drawn twice: as the
operators first write it, and as the offline default writes it once a crash has shown that its inputs are arrays
(``arrays_assumed``).

    python benchmarks/edit_spellings.py               # 40 draws per operator and spelling
    python benchmarks/edit_spellings.py --draws 200

Prints, per spelling, the failed edits of each operator over those it made; a spelling whose edits all run ends
in 0 on every column.
"""

from __future__ import annotations

import argparse
import random
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.proposers.mutate import OPERATORS
from assay.proposers.mutate.python_arrays import arrays_assumed

OPERATOR_NAMES = ("py.guard", "py.add_term", "py.wrap", "py.combine", "py.arithmetic", "py.swap_operands")
ROOMS = (150.0, 120.0, 95.0, 61.0, 40.0, 31.0, 30.0)
ITEM = 30.0


@dataclass(frozen=True)
class Spelling:
    """One way of writing best fit: its source, how a harness calls it, and whether edits assume arrays."""

    name: str
    source: str
    call: Callable[[dict[str, Any]], Any]
    assumed: bool = False


def _per_bin(namespace: dict[str, Any]) -> Any:
    return [namespace["priority"](ITEM, room) for room in ROOMS]


def _list(namespace: dict[str, Any]) -> Any:
    return namespace["priority"](ITEM, list(ROOMS))


def _array(namespace: dict[str, Any]) -> Any:
    return namespace["priority"](ITEM, np.array(ROOMS))


def _method(namespace: dict[str, Any]) -> Any:
    packer = namespace["Packer"](150.0)
    return [packer.priority(ITEM, room) for room in ROOMS]


def _dict(namespace: dict[str, Any]) -> Any:
    scores = namespace["priority"](ITEM, list(ROOMS))
    return [scores[i] for i in range(len(ROOMS))]


NUMPY = "import numpy as np\n\n\n"
SPELLINGS = (
    Spelling("two numbers", "def priority(item, remaining):\n    return -(remaining - item)\n", _per_bin),
    Spelling(
        "numpy, annotated",
        NUMPY + "def priority(item: float, bins: np.ndarray) -> np.ndarray:\n    return -(bins - item)\n",
        _array,
    ),
    Spelling("numpy, unannotated", NUMPY + "def priority(item, bins):\n    return -(bins - item)\n", _array),
    Spelling(
        "numpy, unannotated, after a crash",
        NUMPY + "def priority(item, bins):\n    return -(bins - item)\n",
        _array,
        assumed=True,
    ),
    Spelling("comprehension", "def priority(item, bins):\n    return [-(b - item) for b in bins]\n", _list),
    Spelling(
        "appended in a loop",
        "def priority(item, bins):\n    scores = []\n    for b in bins:\n        scores.append(-(b - item))\n"
        "    return scores\n",
        _list,
    ),
    Spelling(
        "filled by index",
        "def priority(item, bins):\n    scores = [0.0] * len(bins)\n    for i, b in enumerate(bins):\n"
        "        scores[i] = -(b - item)\n    return scores\n",
        _list,
    ),
    Spelling(
        "negated np.array",
        NUMPY
        + "def priority(item: float, bins: np.ndarray) -> np.ndarray:\n    scores = []\n    for b in bins:\n"
        "        scores.append(b - item)\n    return -np.array(scores)\n",
        _array,
    ),
    Spelling(
        "method over an attribute",
        "class Packer:\n    def __init__(self, capacity):\n        self.capacity = capacity\n\n"
        "    def priority(self, item, remaining):\n        return -(remaining - item) / self.capacity\n",
        _method,
    ),
    Spelling(
        "dict comprehension",
        "def priority(item, bins):\n    return {i: -(b - item) for i, b in enumerate(bins)}\n",
        _dict,
    ),
    Spelling(
        "map of a lambda",
        "def priority(item, bins):\n    return list(map(lambda b: -(b - item), bins))\n",
        _list,
    ),
)


def runs(spelling: Spelling, text: str) -> bool:
    """Whether ``text`` (an edit of ``spelling``) gives one number per bin without raising."""
    namespace: dict[str, Any] = {}
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(text, "priority.py", "exec"), namespace)
            scores = np.asarray(spelling.call(namespace), dtype=float)
    except Exception:
        return False
    return scores.shape == (len(ROOMS),)


def failures(spelling: Spelling, operator: str, draws: int) -> tuple[int, int]:
    """(edits that failed, edits made) of ``draws`` draws of ``operator`` on ``spelling``."""
    made = failed = 0
    for seed in range(draws):
        with arrays_assumed(spelling.assumed):
            mutation = OPERATORS.get(operator).apply("priority.py", spelling.source, random.Random(seed))
        if mutation is None:
            continue
        made += 1
        failed += not runs(spelling, mutation.new_text)
    return failed, made


def table(draws: int, spellings: tuple[Spelling, ...] = SPELLINGS) -> list[str]:
    """The Markdown table of failed edits over edits made, per spelling and operator."""
    lines = [
        "| spelling | " + " | ".join(OPERATOR_NAMES) + " |",
        "| --- |" + " --- |" * len(OPERATOR_NAMES),
    ]
    for spelling in spellings:
        cells = [
            f"{failed}/{made}" for failed, made in (failures(spelling, o, draws) for o in OPERATOR_NAMES)
        ]
        lines.append(f"| {spelling.name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=40, help="draws per operator and spelling (default 40)")
    args = parser.parse_args(argv)
    if args.draws < 1:
        parser.error("--draws must be at least 1")
    print(f"Edits that raise or do not give one number per bin, of those made ({args.draws} draws each):")
    print("\n".join(table(args.draws)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
