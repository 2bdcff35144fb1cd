"""Reference-overlap metrics (as promptfoo computes them): ``levenshtein``, ``rouge_n``, ``bleu``, ``gleu``,
and ``word_count``.

``value`` is the reference text (a list of references for ``bleu`` and ``gleu``: the best one counts). The
check's ``threshold`` is the minimum score (defaults: rouge_n 0.75, bleu and gleu 0.5); ``levenshtein``
passes at most ``max_distance`` edits (option, default 5) and scores 1 - distance / longer length.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, ClassVar

from assay.checks.base import CHECKS, Check, CheckContext, CheckSpecError
from assay.checks.text import scalar_text
from assay.model import CheckResult, CheckSpec, Output

# Treebank-style tokens: words, punctuation, and clitics split off ("it's" -> "it", "'s"; "don't" -> "do", "n't").
_TOKEN = re.compile(r"\w+(?=n't\b)|n't\b|'(?:s|re|ve|ll|d|m)\b|\w+|[^\w\s]", re.IGNORECASE)


def levenshtein(a: str, b: str) -> int:
    """The edit distance between ``a`` and ``b`` (insertions, deletions, substitutions)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def ngrams(words: list[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def rouge_n(candidate: str, reference: str, n: int = 1) -> float:
    """ROUGE-N F1: n-gram overlap between the tokens of ``candidate`` and ``reference``."""
    cand, ref = ngrams(_TOKEN.findall(candidate), n), ngrams(_TOKEN.findall(reference), n)
    if not cand or not ref:
        return 0.0
    overlap = sum((Counter(cand) & Counter(ref)).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / len(cand), overlap / len(ref)
    return 2 * precision * recall / (precision + recall)


def _words(text: str, strip_dots: bool = False) -> list[str]:
    words = text.lower().strip().split()
    return [w.rstrip(".") for w in words] if strip_dots else words


def bleu(candidate: str, references: list[str]) -> float:
    """Sentence BLEU with uniform weights over 1..4-grams, clipped counts (the best reference per order),
    the closest reference length for the brevity penalty, and zero precisions smoothed to 1e-7."""
    words = _words(candidate)
    lengths = [len(_words(r)) for r in references]
    closest = min(lengths, key=lambda length: (abs(length - len(words)), lengths.index(length)))
    log_sum = 0.0
    for n in range(1, 5):
        grams = Counter(ngrams(words, n))
        total = sum(grams.values())
        best = max(sum((grams & Counter(ngrams(_words(r), n))).values()) for r in references)
        precision = best / total if total else 0.0
        log_sum += 0.25 * math.log(precision or 1e-7)
    penalty = 1.0 if len(words) > closest else math.exp(1 - len(words) / closest) if closest else 0.0
    return penalty * math.exp(log_sum)


def gleu(candidate: str, references: list[str]) -> float:
    """Google-BLEU: min(precision, recall) of 1..4-gram matches, the best over references."""
    words = _words(candidate, strip_dots=True)
    scores = []
    for reference in references:
        ref = _words(reference, strip_dots=True)
        if ref == words:
            scores.append(1.0)
            continue
        matches = cand_total = ref_total = 0
        for n in range(1, 5):
            cand_grams, ref_grams = Counter(ngrams(words, n)), Counter(ngrams(ref, n))
            matches += sum((cand_grams & ref_grams).values())
            cand_total += sum(cand_grams.values())
            ref_total += sum(ref_grams.values())
        scores.append(min(matches / cand_total, matches / ref_total) if cand_total and ref_total else 0.0)
    return max(scores)


def _references(spec: CheckSpec) -> list[str]:
    value = spec.value
    items = [value] if isinstance(value, str | int | float) and not isinstance(value, bool) else value
    if not isinstance(items, list) or not items or not all(isinstance(v, str) and v.strip() for v in items):
        raise CheckSpecError(f"{spec.type}: value must be a reference text or a list of them")
    return list(items)


class _ScoreCheck(Check):
    default_threshold: ClassVar[float]

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.references = _references(spec)
        self.threshold = spec.threshold if spec.threshold is not None else self.default_threshold

    def score(self, text: str) -> float:
        raise NotImplementedError

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        if not output.text.strip():
            return self.result(False, 0.0, f"{self.name}: the output is empty")
        score = self.score(output.text)
        passed = score >= self.threshold
        relation = ">=" if passed else "<"
        return self.result(passed, score, f"{self.name} {score:.4f} {relation} threshold {self.threshold:g}")


@CHECKS.register("rouge_n")
class RougeNCheck(_ScoreCheck):
    """ROUGE-N F1 (unigrams; option ``n``) against the reference ``value``; passes at the threshold (0.75)."""

    name = "rouge_n"
    default_threshold = 0.75

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        n = spec.options.get("n", 1)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise CheckSpecError("rouge_n: option n must be a positive integer")
        self.n = n

    def score(self, text: str) -> float:
        return max(rouge_n(text, ref, self.n) for ref in self.references)


@CHECKS.register("bleu")
class BleuCheck(_ScoreCheck):
    """Sentence BLEU against the reference(s) in ``value``; passes at the threshold (0.5)."""

    name = "bleu"
    default_threshold = 0.5

    def score(self, text: str) -> float:
        return bleu(text, self.references)


@CHECKS.register("gleu")
class GleuCheck(_ScoreCheck):
    """Google-BLEU against the reference(s) in ``value``; passes at the threshold (0.5)."""

    name = "gleu"
    default_threshold = 0.5

    def score(self, text: str) -> float:
        return gleu(text, self.references)


@CHECKS.register("levenshtein")
class LevenshteinCheck(Check):
    """The output is at most ``max_distance`` edits (option, default 5) from ``value``."""

    name = "levenshtein"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.reference = scalar_text(spec) or ""
        limit = spec.options.get("max_distance", 5)
        if isinstance(limit, bool) or not isinstance(limit, int | float) or limit < 0:
            raise CheckSpecError("levenshtein: option max_distance must be a number >= 0")
        self.limit = float(limit)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        distance = levenshtein(output.text, self.reference)
        longest = max(len(output.text), len(self.reference), 1)
        passed = distance <= self.limit
        relation = "within" if passed else "over"
        return self.result(
            passed, 1 - distance / longest, f"edit distance {distance} {relation} {self.limit:g}"
        )


def _count_bounds(spec: CheckSpec) -> tuple[int | None, int | None]:
    value: Any = spec.value
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, dict) and value.keys() <= {"min", "max"} and value:
        low, high = value.get("min"), value.get("max")
        for bound in (low, high):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int) or bound < 0):
                raise CheckSpecError("word_count: min and max must be whole numbers >= 0")
        if low is not None and high is not None and low > high:
            raise CheckSpecError(f"word_count: min ({low}) is more than max ({high})")
        return low, high
    raise CheckSpecError("word_count: value must be a number of words or {min: N, max: M}")


@CHECKS.register("word_count")
class WordCountCheck(Check):
    """The output has ``value`` words (split on whitespace), or between ``{min, max}``."""

    name = "word_count"

    def __init__(self, spec: CheckSpec) -> None:
        super().__init__(spec)
        self.low, self.high = _count_bounds(spec)

    async def evaluate(self, output: Output, ctx: CheckContext) -> CheckResult:
        count = len(output.text.split())
        ok = (self.low is None or count >= self.low) and (self.high is None or count <= self.high)
        if self.low == self.high:
            want = f"exactly {self.low}"
        else:
            want = " and ".join(
                p
                for p in (
                    f"at least {self.low}" if self.low is not None else "",
                    f"at most {self.high}" if self.high is not None else "",
                )
                if p
            )
        return self.result(ok, evidence=f"{count} words; expected {want}")
