"""Numeric tuning: the tunable numbers of an artifact (:mod:`~assay.proposers.tune.sites`), their search space
and study (:mod:`~assay.proposers.tune.space`), and the ``tune`` proposer driving Optuna
(:mod:`~assay.proposers.tune.proposer`)."""

from assay.proposers.tune.proposer import TuneProposer
from assay.proposers.tune.sites import NumberSite, number_sites, write_values
from assay.proposers.tune.space import Parameter, SearchSpace, search_space

__all__ = [
    "NumberSite",
    "Parameter",
    "SearchSpace",
    "TuneProposer",
    "number_sites",
    "search_space",
    "write_values",
]
