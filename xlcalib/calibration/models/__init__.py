"""The calibration models, one module per family, behind one small interface.

Each model module offers

* ``NAME`` and ``DESCRIPTION`` (the words Settings, README and Diagnostics use),
* ``fit_component(design, scores, gauge, face_value) -> ComponentFit`` for one
  connected component, and
* ``noise_scales(fits, residual, (N, A, O, components), face_value, kind)
  -> (w per component, t degrees of freedom or None)``.

The fit (:mod:`xlcalib.calibration.fit`) runs whichever model is asked for and
builds the same :class:`~xlcalib.calibration.posterior.Posterior` from it, so
standard errors, rankings and next reads follow the model without knowing it.
"""
from __future__ import annotations

from . import fixed, shrinkage
from .base import ComponentFit

__all__ = ["MODELS", "ComponentFit", "model_module"]

#: Model name -> module (the order is the order users see them in).
MODELS = {fixed.NAME: fixed, shrinkage.NAME: shrinkage}


def model_module(name: str):
    """The module of a model name (the caller has checked the name)."""
    return MODELS[name]
