"""The calibration family: calibrated values with honest uncertainty, the decisions drawn from them, and design.

Layers inside the package, from the ground:

* :mod:`.panel.levels`, :mod:`.panel.data` -- confidence levels; the panel as index arrays, checked;
* :mod:`.system.graph` -- the assessor-object graph and its reduced system (one mu2, one components routine);
* :mod:`.system.posterior` -- the joint Gaussian every model's uncertainty takes;
* :mod:`.models` -- one module per model family; :mod:`.system.robustness` -- the worst-case design bounds;
* :mod:`.rasch` -- the ordinal models (many-facet Rasch: scores as ordered categories), :mod:`.rasch_result` --
  their :class:`RaschResult`;
* :mod:`.fit` -- :func:`calibrate`; :mod:`.result` -- :class:`CalibrationResult`;
* :mod:`.decide.ranking` (ranking, P(above the line), lottery), :mod:`.decide.next_reads` -- from the result's posterior,
  within the panel's rules (:mod:`.decide.read_rules`: conflicts, loads, pending reads, subjects);
* :mod:`.design.report` (design check and report), :mod:`.design.assignment` (who reads what) -- before any score.
"""
from __future__ import annotations

from .design.assignment import Assignment, assign
from .panel.data import grid_to_long
from .decide.ranking import decision_summary, rank_objects
from .design.report import DesignCheck, DesignReport, design_check, design_report
from .fit import calibrate
from .system.graph import overlap_verdict
from .panel.levels import (
    DEFAULT_LEVEL_RATIO,
    DEFAULT_LEVELS,
    LEVEL_RELATIVE_HEADERS,
    LEVEL_SD_HEADERS,
    Levels,
    check_level_value,
    default_levels,
    levels_table,
)
from .models import DEFAULT_MODEL, MODEL_CHOICES, MODEL_WORDS, MODELS, RASCH_MODELS, is_rasch, model_name
from .decide.next_reads import NEXT_READS_COLUMNS, suggest_next_reads
from .rasch_result import RaschResult
from .result import CalibrationResult, Difference

__all__ = [
    "DEFAULT_LEVELS", "DEFAULT_LEVEL_RATIO", "LEVEL_SD_HEADERS", "LEVEL_RELATIVE_HEADERS", "MODELS",
    "DEFAULT_MODEL", "MODEL_CHOICES", "MODEL_WORDS", "RASCH_MODELS", "RaschResult", "is_rasch",
    "NEXT_READS_COLUMNS", "Levels", "check_level_value", "default_levels", "levels_table", "CalibrationResult", "Difference", "DesignCheck",
    "DesignReport", "Assignment", "calibrate", "grid_to_long", "design_check", "design_report", "assign",
    "overlap_verdict", "rank_objects", "decision_summary", "suggest_next_reads", "model_name",
]
