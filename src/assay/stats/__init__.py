"""Statistics of noisy evaluations: noise estimates, paired tests and the sequential comparison."""

from assay.stats.boundaries import efficacy_bounds, spent_alpha
from assay.stats.noise import CaseNoise, NoiseEstimate, default_repeats, estimate_noise
from assay.stats.options import SequentialOptions
from assay.stats.paired import PairedTest, case_differences, paired_bootstrap, sign_test, wilcoxon_test
from assay.stats.result import SequentialResult, TestDecision
from assay.stats.sequential import Sampler, compare_sequential, majority_votes
from assay.stats.stratified import StratifiedTest, case_regressions, holm, mean_difference, stratified_test

__all__ = [
    "CaseNoise",
    "NoiseEstimate",
    "PairedTest",
    "Sampler",
    "SequentialOptions",
    "SequentialResult",
    "StratifiedTest",
    "TestDecision",
    "case_differences",
    "case_regressions",
    "compare_sequential",
    "default_repeats",
    "efficacy_bounds",
    "estimate_noise",
    "holm",
    "majority_votes",
    "mean_difference",
    "paired_bootstrap",
    "sign_test",
    "spent_alpha",
    "stratified_test",
    "wilcoxon_test",
]
