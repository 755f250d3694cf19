"""The one-standard-error rule (Breiman et al. 1984; Hastie, Tibshirani and Friedman, *The
Elements of Statistical Learning*, 7.10) as the fits use it to lean towards caution: a more
cautious choice is taken when its cost over the sample games exceeds the least cost by no more
than one standard error of the per-game difference."""

from __future__ import annotations

import math
from collections.abc import Sequence

#: How a fit that offers the rule chooses: the least cost, or the most cautious within one
#: standard error of it (a recipe key's values: ``decode_close``, ``adapt_temper``).
RULES = ("least", "one_se")


def check_rule(key: str, rule: str) -> None:
    """Raise ValueError unless ``rule``, the recipe's ``key``, is one of :data:`RULES`."""
    if rule not in RULES:
        raise ValueError(f"{key} must be one of {', '.join(RULES)}, not {rule!r}")


def standard_error_of_sum(values: Sequence[float]) -> float:
    """The standard error of the sum of ``values``, independent samples of one quantity."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return math.sqrt(n * sum((v - mean) ** 2 for v in values) / (n - 1))


def within_one_se(costs: Sequence[float], least: Sequence[float]) -> bool:
    """Whether per-game ``costs`` exceed the per-game ``least`` costs, summed, by no more than
    one standard error of the per-game difference."""
    differences = [c - b for c, b in zip(costs, least, strict=True)]
    return sum(differences) <= standard_error_of_sum(differences)
