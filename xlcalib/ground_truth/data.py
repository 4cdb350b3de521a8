"""The dermatology differential-diagnosis annotations, shipped inside the package.

Origin: the public "dermatology ddx dataset" released with Stutz et al.,
*Evaluating AI systems under uncertain ground truth: a case study in
dermatology* (2023), repository google-deepmind/uncertain_ground_truth,
directory ``data/``, Apache License 2.0.  1,947 cases, 419 conditions; each
case is a list of annotators' partial rankings (blocks of tied 0-based
condition ids, best first).  ``risks`` gives 0 low / 1 medium / 2 high per condition.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

__all__ = ["Dermatology", "dermatology"]


@dataclass(frozen=True)
class Dermatology:
    annotations: list
    conditions: tuple
    risks: np.ndarray

    @property
    def n_classes(self) -> int:
        return len(self.conditions)


@lru_cache(maxsize=1)
def dermatology() -> Dermatology:
    """Load the dataset (cached).

    >>> d = dermatology()
    >>> len(d.annotations), d.n_classes
    (1947, 419)
    """
    folder = resources.files("xlcalib.data.dermatology")
    annotations = json.loads(folder.joinpath("dermatology_selectors.json").read_text(encoding="utf-8"))
    conditions = tuple(line.strip() for line in folder.joinpath("dermatology_conditions.txt").read_text(
        encoding="utf-8").splitlines() if line.strip())
    risks = np.array([int(v) for v in folder.joinpath("dermatology_risks.txt").read_text(encoding="utf-8").split()])
    return Dermatology(annotations, conditions, risks)
