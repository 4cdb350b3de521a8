"""Evaluation under uncertain ground truth (Stutz et al. 2023).

Reference: D. Stutz, A. T. Cemgil, A. G. Roy et al., "Evaluating AI systems
under uncertain ground truth: a case study in dermatology", arXiv:2307.02191v1
(2023); equations, sections and appendices are cited as numbered there
("Stutz et al. 2023, eq. 14").

Plackett–Luce aggregation of partial rankings (exact likelihood, Gibbs sampler) is in :mod:`.plackett_luce`.

Dirichlet plausibilities and annotation certainty, uncertainty-adjusted
metrics, partial rankings (IRN, PrIRN, meanAO), continuous scores against a
threshold, and the dermatology example data.

Two settings (:mod:`.settings`): ``setting="xlcalib"`` (default) follows the
paper's equations; ``setting="reference"`` reproduces the public reference
code (IRN weighting, PrIRN's 0.01 on every class, the PL prior on one pooled
unranked item).  Figures from the two differ a lot at low reliability.
"""
from .data import dermatology
from .dirichlet import (
    annotation_certainty,
    certainty_from_concentration,
    certainty_from_samples,
    dirichlet_concentration,
    sample_dirichlet,
)
from .example import dermatology_certainty
from .metrics import (
    UAResult,
    point_topk_accuracy,
    ua_average_overlap,
    ua_overlap,
    ua_set_accuracy,
    ua_topk_accuracy,
)
from .plackett_luce import (
    pl_certainty,
    pl_gibbs,
    pl_log_likelihood,
    pl_partial_ranking_log_likelihood,
)
from .rankings import (
    irn,
    mean_average_overlap,
    parse_ranking,
    prirn_certainty,
    prirn_concentration,
    unnormalized_irn,
)
from .settings import REFERENCE, SETTINGS, XLCALIB, GroundTruthSetting, resolve_setting
from .threshold import threshold_certainty

__all__ = [
    "annotation_certainty", "certainty_from_concentration", "certainty_from_samples", "dermatology",
    "dermatology_certainty", "dirichlet_concentration", "irn", "mean_average_overlap", "parse_ranking",
    "pl_certainty", "pl_gibbs", "pl_log_likelihood", "pl_partial_ranking_log_likelihood", "point_topk_accuracy", "prirn_certainty", "prirn_concentration",
    "GroundTruthSetting", "SETTINGS", "XLCALIB", "REFERENCE", "resolve_setting", "sample_dirichlet", "threshold_certainty", "UAResult",
    "ua_average_overlap", "ua_overlap", "ua_set_accuracy", "ua_topk_accuracy", "unnormalized_irn",
]
