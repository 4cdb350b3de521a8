"""xlcalib — calibrated panel scores, reliability and agreement for spreadsheets.

The numerical core (this package, minus the adapters ``cli``, ``macros``,
``exercises``, ``workbook`` and ``templates``) depends only on numpy, scipy and pandas, so it
loads anywhere, including xlwings Lite.  Public names are imported lazily from
their modules on first use; ``dir(xlcalib)`` lists them all.
"""
from __future__ import annotations

import importlib

from .errors import InputError

__version__ = "0.1.0"

# public name -> submodule that defines it (one formula lives in one place)
_EXPORTS: dict[str, str] = {
    # calibration
    "calibrate": "calibration",
    "CalibrationResult": "calibration",
    "grid_to_long": "calibration",
    "DEFAULT_LEVELS": "calibration",
    "design_check": "calibration",
    "assign": "calibration",
    # reliability
    "icc_table": "reliability",
    "icc": "reliability",
    "spearman_brown": "reliability",
    "raters_needed": "reliability",
    "krippendorff_alpha": "reliability",
    "krr_bootstrap": "reliability",
    "krr_empirical": "reliability",
    "krr_curve": "reliability",
    # agreement of categorical ratings (Gwet's Handbook)
    "agreement_coefficients": "agreement",
    "percent_agreement": "agreement",
    "brennan_prediger": "agreement",
    "fleiss_kappa": "agreement",
    "conger_kappa": "agreement",
    "gwet_ac": "agreement",
    "krippendorff_agreement": "agreement",
    "pairwise_agreement": "agreement",
    "agreement_matrix": "agreement",
    "agreement_bootstrap": "agreement",
    "agreement_weights": "agreement",
    "confusion_table": "agreement",
    "table_agreement": "agreement",
    # ordinal agreement (Svensson)
    "svensson": "ordinal",
    "svensson_from_table": "ordinal",
    "mean_rank_table": "ordinal",
    "roc_points": "ordinal",
    # scoring-engine evaluation (RSMTool metrics)
    "evaluation_metrics": "scoring",
    "standardized_mean_difference": "scoring",
    "variance_of_errors": "scoring",
    "true_score_variance": "scoring",
    "prmse_true": "scoring",
    "difference_of_standardized_means": "scoring",
    "fairness_analyses": "scoring",
    "human_human_agreement": "scoring",
    # uncertain ground truth
    "irn": "ground_truth",
    "annotation_certainty": "ground_truth",
    "pl_gibbs": "ground_truth",
    # submodules reachable as attributes (xlcalib.ground_truth, xlcalib.demo ...)
    "datasets": "datasets",
    "calibration": "calibration",
    "reliability": "reliability",
    "agreement": "agreement",
    "ordinal": "ordinal",
    "scoring": "scoring",
    "ground_truth": "ground_truth",
    "inputs": "inputs",
    "demo": "demo",
}

__all__ = ["InputError", "__version__", *_EXPORTS]


def __getattr__(name: str):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'xlcalib' has no attribute {name!r}")
    module = importlib.import_module(f".{module_name}", __name__)
    value = module if name == module_name else getattr(module, name)
    globals()[name] = value  # cache: later look-ups skip __getattr__
    return value


def __dir__():
    return sorted(__all__)
