"""The linking objective: the low spectrum of the assessor-object graph, and what a read changes in it.

With every assessor's load and every object's reads held fixed, the normalised Laplacian of the bipartite
graph ``L_B = D^-1/2 (D - B(x)) D^-1/2`` is affine in the allocation ``x``, its eigenvalues are
``lambda_j = 1 - sqrt(1 - mu_j)`` (``mu_j`` those of ``T``; ``mu2`` is the overlap figure), and
``phi(x) = sum_{j>=2} (lambda_j + eps)^-p`` is a convex function of ``x`` (a spectral function of a convex
scalar function, Lewis 1996; ``p = 1`` is A-optimal design, whose ``sum 1/mu_j`` is the calibrated values'
error variance, MacKay et al. 2017; ``p = 2`` leans on the smallest eigenvalue, i.e. on ``mu2``).  Its
first-order change with the weight ``w_ao = c_ao x_ao`` of one read is
``d lambda / d w_ao = (phi_a - phi_o)^2 - lambda (phi_a^2 + phi_o^2)`` from the ``K`` smallest eigenpairs,
``K`` following every eigenvalue whose overlap verdict is not yet "good" (:func:`eigenpairs_followed`).

:class:`LowSpectrum` holds those eigenpairs, ``phi`` and the prices of reads.  Why a module of its own: both
linking stages price reads with it (the LP steps of :mod:`.linking`, the swaps of :mod:`.polish`), and
neither needs the other's machinery.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ...system.graph import low_spectrum, overlap_verdict
from .problem import AllocationProblem

__all__ = ["LowSpectrum", "eigenpairs_followed"]

#: Number of smallest non-trivial eigenvalues of the assessor graph the linking phase raises (at least one
#: per component beyond the first).
SPECTRUM_K = 12
#: At most this many: every eigenvalue whose overlap verdict is not "good", plus SPECTRUM_K // 2.
SPECTRUM_K_MAX = 64
#: Power p of the linking objective sum_j (lambda_j + eps)^-p: p = 1 is A-optimal design (the calibrated
#: values' error variance), larger p weighs the smallest eigenvalue (mu2) more.
SPECTRUM_POWER = 2.0
#: eps of the linking objective: keeps it finite on a disconnected start.
SPECTRUM_FLOOR = 1e-3
#: Seed of the eigen-solver's start vector in the linking phase (results do not depend on the caller's seed
#: beyond the suitability-only start).
LINK_SEED = 12345


@dataclass
class LowSpectrum:
    """The smallest eigenpairs of the normalised bipartite assessor-object operator, which price links.

    ``lam``: the smallest eigenvalues ``lambda_j = 1 - sqrt(1 - mu_j)`` of the normalised bipartite
    Laplacian (``mu_j`` those of ``T``, ``lam[0]`` the trivial 0); ``ya`` / ``yo``: the eigenvectors
    ``phi_j`` on assessors and objects with ``phi' D phi = 1`` and the trivial direction projected out;
    ``phi``: the objective ``sum_{j>=2} (lambda_j + eps)^-p``; ``weight``: ``p (lambda_j + eps)^(-p-1)``.
    """

    phi: float
    lam: np.ndarray
    weight: np.ndarray
    ya: np.ndarray
    yo: np.ndarray

    @classmethod
    def of(cls, ea, eo, c, A: int, O: int, k: int) -> LowSpectrum:
        """The low spectrum of reads (ea, eo) with confidences c (k non-trivial eigenpairs)."""
        active, mu, X = low_spectrum(ea, eo, c, A, O, k + 1, vectors=True, seed=LINK_SEED)
        C_a = np.bincount(ea, weights=c, minlength=A)[active]
        C_o = np.bincount(eo, weights=c, minlength=O)
        s = np.sqrt(C_a)
        f = X * s[:, None]  # orthonormal eigenvectors of C'^-1/2 W C'^-1/2
        f0 = s / np.linalg.norm(s)  # the trivial one: a common shift of every standard carries no information
        f -= np.outer(f0, f0 @ f)  # what is left of a null block spans exactly the non-trivial null space
        sigma = np.sqrt(np.clip(1.0 - mu, 1e-12, 1.0))
        lam = 1.0 - sigma
        ya = np.zeros((A, mu.size))
        ya[active] = f / (s * np.sqrt(2.0))[:, None]
        Cm = sp.csr_matrix((c, (eo, ea)), shape=(O, A))
        yo = (Cm @ ya) / (np.where(C_o > 0, C_o, 1.0)[:, None] * sigma[None, :])
        lam_eps = lam + SPECTRUM_FLOOR
        phi = float(np.sum(lam_eps[1:] ** -SPECTRUM_POWER))  # index 0 is the trivial eigenvalue
        return cls(phi, lam, SPECTRUM_POWER * lam_eps ** (-SPECTRUM_POWER - 1.0), ya, yo)

    def costs(self, pa: np.ndarray, po: np.ndarray, cp) -> np.ndarray:
        """d phi / d x_ao for reads (a, o) of confidence c_ao: the linearised cost the LP minimises.

        For ``L phi = lambda D phi`` (degrees change with the read, weight ``w_ao = c_ao x_ao``):
        ``d lambda / d w_ao = (phi_a - phi_o)^2 - lambda (phi_a^2 + phi_o^2)``.
        """
        w1 = self.weight * (1.0 - self.lam)
        qa, qo = (self.ya ** 2) @ w1, (self.yo ** 2) @ w1
        cross = np.einsum("ij,ij->i", self.ya[pa] * self.weight[None, :], self.yo[po])
        return -cp * (qa[pa] + qo[po] - 2.0 * cross)

    def cost_grid(self, objs: np.ndarray, problem: AllocationProblem) -> np.ndarray:
        """The same costs for every assessor x the objects ``objs`` (inf where a conflict forbids the read)."""
        w1 = self.weight * (1.0 - self.lam)
        grid = -(((self.ya ** 2) @ w1)[:, None] + ((self.yo[objs] ** 2) @ w1)[None, :]
                 - 2.0 * (self.ya * self.weight[None, :]) @ self.yo[objs].T)
        if problem.conf is not None:
            grid *= problem.conf[:, objs]
        grid[~problem.allowed[:, objs]] = np.inf
        return grid


def eigenpairs_followed(ea, eo, c, A: int, O: int, n_active: int) -> int:
    """How many eigenpairs the linking objective follows: every eigenvalue whose overlap verdict is not yet
    "good" plus a margin (the next ones become the weakest as the first are raised), at least
    :data:`SPECTRUM_K`, at most :data:`SPECTRUM_K_MAX`."""
    k = min(SPECTRUM_K_MAX, n_active - 1)
    if k <= SPECTRUM_K:
        return k
    mu = low_spectrum(ea, eo, c, A, O, k + 1, vectors=False, seed=LINK_SEED)[1]
    weak = sum(overlap_verdict(m) != "good" for m in mu[1:])
    return int(min(k, max(SPECTRUM_K, weak + SPECTRUM_K // 2)))
