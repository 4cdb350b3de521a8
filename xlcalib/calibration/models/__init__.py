"""The calibration models, one module per family, behind one interface (:class:`.base.CalibrationModel`).

Each model module names what it is (``NAME``, ``DESCRIPTION``, ``ALIASES``), what it reaches (``MAX_ASSESSORS``,
``LINKS_GROUPS``, ``DECISIONS_BY``, ``CENSORED_READS``) and how it fits (``fit_component``, ``noise_scales``,
``extra_stats``, ``noise_check``); the interface's docstring says what each means.  Beside them:
:mod:`.moments` (variance components from the fixed fit's moments, for large panels), :mod:`.variance` (sigma_b
carried over its grid), :mod:`.iterate` (the fits repeated to a fixed point: the scale's rounding, censored
reads) and :mod:`.scale_use` (a gain per assessor in front of any model).

The ordinal models (:data:`RASCH_MODELS`: scores read as ordered categories, the many-facet Rasch model) are
named here beside them, so every word a user may type is in one place, but fitted by
:mod:`xlcalib.calibration.rasch`: their likelihood is not a reduced linear system.

The fit (:mod:`xlcalib.calibration.fit`) runs whichever model is asked for and
builds the same :class:`~xlcalib.calibration.system.posterior.Posterior` from it, so
standard errors, rankings and next reads follow the model without knowing it.
"""
from __future__ import annotations

from ...errors import InputError
from . import fixed, one_way, random_assessors, random_both, random_objects
from .base import CalibrationModel, ComponentFit

__all__ = ["MODELS", "DEFAULT_MODEL", "MODEL_CHOICES", "MODEL_WORDS", "RASCH_MODELS", "CalibrationModel",
           "ComponentFit", "model_module", "model_name", "is_rasch"]

#: Model name -> module (the order is the order users see them in).
MODELS: dict[str, CalibrationModel] = {module.NAME: module for module in
                                       (random_assessors, random_both, fixed, random_objects, one_way)}
#: The model calibrate() fits unless told otherwise: safe on weakly linked and expertise-grouped panels.
DEFAULT_MODEL = random_assessors.NAME
#: The ordinal models (fitted by xlcalib.calibration.rasch): name -> words.
RASCH_MODELS = {
    "rating-scale": "scores read as ordered categories (many-facet Rasch rating-scale model, FACETS' ?,?,R): each "
                    "object a measure, each assessor a severity, the thresholds between categories shared; objects "
                    "random (marginal maximum likelihood)",
    "partial-credit": "scores read as ordered categories with thresholds per assessor (many-facet Rasch, partial "
                      "credit by assessor, FACETS' ?,#,R): for assessors who use the categories differently",
}
_ALIASES = {alias: module.NAME for module in MODELS.values() for alias in module.ALIASES}
_ALIASES.update({"facets": "rating-scale", "rasch": "rating-scale"})
#: Every name a user may type for a model (the current names, then the older ones).
MODEL_CHOICES = (*MODELS, *RASCH_MODELS, *_ALIASES)
#: Model name -> its words (the Settings sheet, the CLI help, the README and the Diagnostics use these).
MODEL_WORDS = {**{name: module.DESCRIPTION for name, module in MODELS.items()}, **RASCH_MODELS}


def model_name(name) -> str:
    """The canonical name of a model (older names accepted), or an InputError listing the models."""
    text = str(name).strip().lower() if isinstance(name, str) else name
    if text in MODELS or text in RASCH_MODELS:
        return text
    if text in _ALIASES:
        return _ALIASES[text]
    raise InputError(f"model must be one of {', '.join(MODEL_WORDS)}, not {name!r}")


def is_rasch(name) -> bool:
    """Whether a model name (any spelling :func:`model_name` accepts) is one of the ordinal models."""
    return model_name(name) in RASCH_MODELS


def model_module(name: str) -> CalibrationModel:
    """The module of a model name."""
    return MODELS[model_name(name)]
