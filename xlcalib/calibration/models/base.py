"""The model interface: what every calibration model answers for itself, and what its fit hands back.

:func:`xlcalib.calibration.fit.calibrate` runs whichever model is asked for through this interface only -- it
never asks which model it has -- and builds the same :class:`~..system.posterior.Posterior` from its fit, so
standard errors, rankings and next reads follow the model without knowing it.  Each model is a module whose
names satisfy :class:`CalibrationModel` (``tests/test_models.py`` checks every registered model).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["ComponentFit", "CalibrationModel"]


@dataclass
class ComponentFit:
    """Values and biases of one component, and the pieces its posterior is built from.

    ``covariance`` gives the posterior's ``H`` (a
    :class:`~..system.posterior.ReducedCovariance` of the model's
    reduced system, or a dense matrix; ``None`` with a single assessor);
    ``lam`` is the objects' shrinkage ``w/tau^2`` (0 for fixed objects); ``w`` the model's own noise scale for
    this component when it estimates one per component (REML), else ``None`` (pooled over the panel);
    ``extras`` model-specific figures for the Diagnostics (tau2, lambda ...); ``spread`` (score units, one per
    object, or ``None``) a rank-one term the values carry beyond the posterior's linear form -- the uncertainty of a
    variance component the fit plugs in at its estimate, ``v = ... + spread * xi``, ``xi ~ N(0, 1)``.
    """

    values: np.ndarray
    biases: np.ndarray
    covariance: Any
    lam: float = 0.0
    w: float | None = None
    extras: dict = field(default_factory=dict)
    spread: np.ndarray | None = None


@runtime_checkable
class CalibrationModel(Protocol):
    """What a calibration model module offers (module-level names; functions take no ``self``).

    Words
        ``NAME`` (what users type), ``ALIASES`` (older names still accepted), ``DESCRIPTION`` (the words Settings,
        the CLI help, the README and the Diagnostics use).
    Reach
        ``MAX_ASSESSORS`` (None = no limit); ``LINKS_GROUPS``: the model ties groups of assessors that share no
        object (its prior on the biases compares them), so an unconnected panel is fitted as one piece rather
        than refused; ``DECISIONS_BY``: the name of the model rankings, P(above the line) and next reads are
        drawn from when it is another one, or its own name for itself refitted with the scale's rounding and
        censored ends (None: this model's own posterior as fitted); ``CENSORED_READS``: its fit takes
        ``latent`` (the variance censored reads keep, :mod:`..panel.censoring`), so scores at the ends of a
        declared scale can be read as censored; ``POOLED``: its fit takes the panel's assessors pooled into one
        ("any reviewer", :meth:`..system.graph.Design.pooled`) -- every read's assessor term is part of its noise,
        so no bias is fitted (reviewers who cannot be linked across objects).
    Fit
        ``fit_component(design, scores, gauge, face_value, latent=None) -> ComponentFit`` for one connected
        component (or the whole panel, for a model that links groups), values and biases in the gauge asked
        for; ``noise_scales(fits, residual, (N, A, O, components), face_value, kind)`` -> (w per fit, the t
        intervals' degrees of freedom or None); ``extra_stats(fits, one)`` -> its own Diagnostics figures
        (``one`` turns a per-component list into one value when there is a single component);
        ``noise_check(residual, dof, face_value)`` -> (words, p) checking declared SDs against the scatter,
        ("", nan) when the model has no such check.
    """

    NAME: str
    ALIASES: tuple[str, ...]
    DESCRIPTION: str
    MAX_ASSESSORS: int | None
    LINKS_GROUPS: bool
    DECISIONS_BY: str | None
    CENSORED_READS: bool
    POOLED: bool

    def fit_component(self, design, scores: np.ndarray, gauge: str, face_value: bool,
                      latent: np.ndarray | None = None) -> ComponentFit: ...

    def noise_scales(self, fits, residual: float, counts: tuple[int, int, int, int], face_value: bool,
                     kind: str) -> tuple[list[float], int | None]: ...

    def extra_stats(self, fits, one) -> dict: ...

    def noise_check(self, residual: float, dof: int, face_value: bool) -> tuple[str, float]: ...


def no_noise_check(residual: float, dof: int, face_value: bool) -> tuple[str, float]:
    """A model whose residual is not chi-square on the fixed fit's degrees of freedom has no such check."""
    return "", float("nan")


def refuse_latent(latent, name: str) -> None:
    """A model that cannot read censored reads is never handed their kept variance."""
    if latent is not None:
        raise TypeError(f"the {name} model does not read censored reads")
