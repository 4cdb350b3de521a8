"""The joint distribution of the objects' measures that rankings, P(above the line) and the lottery draw from.

Given the structural parameters phi (severities, thresholds, mu, sigma) the objects are independent, each with
its quadrature posterior (mean EAP_o, SD PSD_o); phi itself is uncertain, Cov(phi) from the inverse observed
information, and moves every object that shares an assessor or a threshold together.  A draw of all measures at
once is, to first order,

    theta = EAP + PSD * z + G xi,     z ~ N(0, I_O),   xi ~ N(0, Cov(phi)),

with G = d EAP / d phi (:func:`.measures.object_measures`): a Gaussian whose marginal variances are the
measures' standard errors squared.  It answers the interface the decision machinery reads
(:class:`xlcalib.calibration.system.posterior.Posterior`'s ``draw_theta`` / ``draw_deviations`` /
``variances`` / ``difference_variance``, with ``w``, ``iterative``, ``n_evaluations``): ``draw_theta`` draws
xi (parameters x draws), ``draw_deviations`` the deviations of the measures from their EAPs (draws x objects,
single precision).  xi = R z' with R = Cov(phi) L, L the Cholesky factor of the information I: R R' = Cov I Cov
= Cov for the constrained covariance (the gauge's constraints hold in every draw).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["MeasurePosterior"]


class MeasurePosterior:
    """Joint Gaussian of the objects' measures (logits) and the severities (see the module docstring)."""

    #: the interface's noise scale: the variances here are in logits squared, already complete
    w = 1.0
    #: no iterative solve: draws are a product with a dense root
    iterative = False
    rounding = 0.0

    def __init__(self, psd: np.ndarray, se: np.ndarray, sensitivity: sp.csr_matrix, covariance: np.ndarray,
                 information_root: np.ndarray, n_assessors: int, n_evaluations: int):
        self.psd = np.asarray(psd, dtype=float)
        self.se = np.asarray(se, dtype=float)
        self.sensitivity = sensitivity.tocsr()
        self.covariance = covariance
        self.information_root = information_root
        self.n_assessors = n_assessors
        self._n_evaluations = int(n_evaluations)
        self._root = None
        self._single = None
        self.method = ("quadrature posterior of each object plus the structural parameters' uncertainty (inverse "
                       "observed information, delta method)")

    @property
    def n_evaluations(self) -> int:
        return self._n_evaluations

    @property
    def n_objects(self) -> int:
        return int(self.psd.size)

    def root(self) -> np.ndarray:
        """R = Cov(phi) L with R R' = Cov(phi) (module docstring)."""
        if self._root is None:
            self._root = self.covariance @ self.information_root
        return self._root

    def _pieces(self):
        """(PSD, G) in single precision, made once in the calling thread (worker threads only read them)."""
        if self._single is None:
            self._single = (self.psd.astype(np.float32), self.sensitivity.astype(np.float32).tocsr())
        return self._single

    def draw_theta(self, n: int, rng) -> np.ndarray:
        """n draws of the structural deviations xi ~ N(0, Cov(phi)), parameters x draws (uses BLAS)."""
        self._pieces()
        R = self.root()
        return R @ rng.standard_normal((R.shape[1], n))

    def draw_deviations(self, n: int, rng, xi: np.ndarray | None = None, centres=False):
        """n joint draws of theta - EAP, draws x objects, float32 (``xi`` from :meth:`draw_theta`).

        With ``centres`` (True, or an index array of the objects wanted): (draws, centres), the second each
        measure's mean deviation given the draw's structural deviations, G xi -- given xi the measures are
        independent, each normal with SD :meth:`conditional_sd` (the conditional Monte Carlo of P(above) uses it).
        """
        if xi is None:
            xi = self.draw_theta(n, rng)
        psd, G = self._pieces()
        dev = rng.standard_normal((n, self.n_objects), dtype=np.float32)
        dev *= psd[None, :]
        shared = G @ xi.astype(np.float32)  # objects x draws
        dev += shared.T
        if centres is False:
            return dev
        return dev, np.ascontiguousarray(shared.T if centres is True else shared[centres].T)

    def conditional_sd(self) -> np.ndarray:
        """Each measure's SD given the structural parameters: its own quadrature posterior SD (float32)."""
        return self._pieces()[0]

    def variances(self) -> tuple[np.ndarray, np.ndarray]:
        """(Var(theta_o), Var(beta_a)), logits squared (the objects' from :func:`.measures.object_measures`)."""
        return self.se**2, np.diag(self.covariance)[:self.n_assessors].copy()

    def difference_variance(self, o1: int, o2: int) -> float:
        """Var(theta_o1 - theta_o2): both objects' own posterior variance and their shared structural part."""
        if o1 == o2:
            return 0.0
        g = (self.sensitivity[o1] - self.sensitivity[o2]).toarray().ravel()
        return float(self.psd[o1] ** 2 + self.psd[o2] ** 2 + g @ self.covariance @ g)
