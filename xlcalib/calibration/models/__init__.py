"""The calibration models, one module per family, behind one small interface.

Each model module offers

* ``NAME`` and ``DESCRIPTION`` (the words Settings, README and Diagnostics use),
* ``fit_component(design, scores, gauge, face_value) -> ComponentFit`` for one
  connected component (or the whole panel, for a model with ``LINKS_GROUPS``),
* ``extra_stats(fits, one) -> dict`` its own Diagnostics figures,
* ``MAX_ASSESSORS`` (None = no limit), ``ALIASES`` (older names),
* optionally ``CENSORED_READS = True`` when ``fit_component`` takes
  ``latent=`` (the variance censored reads keep, :mod:`..panel.censoring`), and
* ``noise_scales(fits, residual, (N, A, O, components), face_value, kind)
  -> (w per component, t degrees of freedom or None)``.

The fit (:mod:`xlcalib.calibration.fit`) runs whichever model is asked for and
builds the same :class:`~xlcalib.calibration.system.posterior.Posterior` from it, so
standard errors, rankings and next reads follow the model without knowing it.
"""
from __future__ import annotations

from ...errors import InputError
from . import fixed, random_assessors, random_both, random_objects
from .base import ComponentFit

__all__ = ["MODELS", "DEFAULT_MODEL", "MODEL_CHOICES", "MODEL_WORDS", "ComponentFit", "model_module", "model_name"]

#: Model name -> module (the order is the order users see them in).
MODELS = {random_assessors.NAME: random_assessors, random_both.NAME: random_both, fixed.NAME: fixed,
          random_objects.NAME: random_objects}
#: The model calibrate() fits unless told otherwise: safe on weakly linked and expertise-grouped panels.
DEFAULT_MODEL = random_assessors.NAME
_ALIASES = {alias: module.NAME for module in MODELS.values() for alias in module.ALIASES}
#: Every name a user may type for a model (the current names, then the older ones).
MODEL_CHOICES = (*MODELS, *_ALIASES)
#: Model name -> its words (the Settings sheet, the CLI help, the README and the Diagnostics use these).
MODEL_WORDS = {name: module.DESCRIPTION for name, module in MODELS.items()}


def model_name(name) -> str:
    """The canonical name of a model (older names accepted), or an InputError listing the models."""
    text = str(name).strip().lower() if isinstance(name, str) else name
    if text in MODELS:
        return text
    if text in _ALIASES:
        return _ALIASES[text]
    raise InputError(f"model must be one of {', '.join(MODELS)}, not {name!r}")


def model_module(name: str):
    """The module of a model name."""
    return MODELS[model_name(name)]
