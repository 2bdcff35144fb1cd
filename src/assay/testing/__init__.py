"""Conformance suites, one per extension family, shipped inside the package (as Optuna ships
``optuna.testing``): every built-in part passes its family's suite, and a part of one's own, of any class, can
run the same one. Each suite is a plain function that raises AssertionError naming the part of the contract
that failed; it imports no test framework, so it runs under pytest, unittest or a script alike.

============================  =====================================================  =========
family                        suite                                                  kind
============================  =====================================================  =========
gate                          :func:`assay.testing.gates.check_gate` ``(make)``         async
parent selector               :func:`assay.testing.search.check_parent_selector`        plain
proposer                      :func:`assay.testing.proposers.check_proposer`            async
mutation operator             :func:`assay.testing.operators.check_operator`            plain
pairwise judge                :func:`assay.testing.judges.check_judge` ``(make)``       async
stop rule                     :func:`assay.testing.stop_rules.check_stop_rule`          plain
runner                        :func:`assay.testing.runners.check_runner`                async
check                         :func:`assay.testing.checks.check_check`                  async
rating backend                :func:`assay.testing.ratings.check_rating_backend`        plain
executor                      :func:`assay.testing.executors.check_executor`            async
run store                     :func:`assay.testing.stores.check_run_store`              plain
============================  =====================================================  =========

``make`` builds a fresh part each time it is called (a class with no required arguments will do); an async
suite is a coroutine: ``await`` it, or run it with ``asyncio.run``. The names here are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.lazy import lazy_attributes

if TYPE_CHECKING:
    from assay.testing.checks import check_check
    from assay.testing.executors import check_executor
    from assay.testing.gates import check_gate
    from assay.testing.judges import check_judge
    from assay.testing.operators import check_operator
    from assay.testing.proposers import check_proposer
    from assay.testing.ratings import check_rating_backend
    from assay.testing.runners import check_runner
    from assay.testing.search import check_parent_selector
    from assay.testing.stop_rules import check_stop_rule
    from assay.testing.stores import check_run_store

_SUITES = {
    "check_check": "assay.testing.checks",
    "check_executor": "assay.testing.executors",
    "check_gate": "assay.testing.gates",
    "check_judge": "assay.testing.judges",
    "check_operator": "assay.testing.operators",
    "check_parent_selector": "assay.testing.search",
    "check_proposer": "assay.testing.proposers",
    "check_rating_backend": "assay.testing.ratings",
    "check_run_store": "assay.testing.stores",
    "check_runner": "assay.testing.runners",
    "check_stop_rule": "assay.testing.stop_rules",
}
__getattr__ = lazy_attributes(__name__, _SUITES)
__all__ = [
    "check_check",
    "check_executor",
    "check_gate",
    "check_judge",
    "check_operator",
    "check_parent_selector",
    "check_proposer",
    "check_rating_backend",
    "check_run_store",
    "check_runner",
    "check_stop_rule",
]
