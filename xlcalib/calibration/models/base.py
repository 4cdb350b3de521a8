"""What every model's fit of one connected component hands back."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


__all__ = ["ComponentFit"]


@dataclass
class ComponentFit:
    """Values and biases of one component, and the pieces its posterior is built from.

    ``covariance`` gives the posterior's ``H`` (a
    :class:`~xlcalib.calibration.system.posterior.ReducedCovariance` of the model's
    reduced system, or a dense matrix; ``None`` with a single assessor);
    ``lam`` is the objects' shrinkage ``w/tau^2`` (0 for fixed objects); ``w`` the model's own noise scale for this component when it
    estimates one per component (REML), else ``None`` (pooled over the panel);
    ``extras`` model-specific figures for the Diagnostics (tau2, lambda ...).
    """

    values: np.ndarray
    biases: np.ndarray
    covariance: Any
    lam: float = 0.0
    w: float | None = None
    extras: dict = field(default_factory=dict)
