"""Parent selection: which candidate of the archive to expand next. One registry (``SELECTORS``) by name."""

from assay.search import dgm, greedy, ranked
from assay.search.archive import Archive, Node
from assay.search.base import SELECTORS, ParentSelector, SearchError, make_selector
from assay.search.dgm import DGMSelector
from assay.search.greedy import GreedySelector
from assay.search.opponents import NoisyBisection, adaptive_next, boundary_pairs, top_k
from assay.search.ranked import RankedSelector

__all__ = [
    "SELECTORS",
    "Archive",
    "DGMSelector",
    "GreedySelector",
    "Node",
    "NoisyBisection",
    "ParentSelector",
    "RankedSelector",
    "SearchError",
    "adaptive_next",
    "boundary_pairs",
    "make_selector",
    "top_k",
]
del dgm, greedy, ranked
