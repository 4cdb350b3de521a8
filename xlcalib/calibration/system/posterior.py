"""Honest uncertainty: the joint Gaussian distribution of one component's fitted values and biases.

Every model of the calibration family gives its uncertainty in one form, so
standard errors, differences, rankings, P(above the line) and next reads
work the same whichever model was fitted.  A fixed-effect vector ``theta``
(one entry per assessor) has covariance ``w H``; values and biases are

    v_o = V_o / (C_o + lam) + (k - d_o)' theta,    d_o = c_.o / (C_o + lam)
    b   = (I - 1 k') theta

plus, for each value, independent noise of variance ``w / (C_o + lam)`` (the
object's own weighted mean, which is uncorrelated with -- hence, being
Gaussian, independent of -- the assessor estimates).  ``k`` is the gauge
(``C'/C`` weighted, ``1/A`` simple).

*Fixed effects* (MacKay et al. 2017, ``lam = 0``): theta is the
weighted-gauge bias vector, ``H = M_reg^-1 - 1 1'/C`` (the reduced system
b = M_reg^-1 r with Cov(r) = w M and M_reg^-1 C' = 1 gives Cov(b) = w
M_reg^-1 M M_reg^-1 = w (M_reg^-1 - 1 1'/C)).  Hence ``Var(v_o) = w/C_o +
u_o' Cov(b) u_o`` with ``u_o = c_.o / C_o``: the cross term vanishes because
Cov(V_o/C_o, r) = 0.

*Objects as random effects* (N(mu, tau^2), ``lam = w/tau^2``): theta_a = mu +
b_a, ``H = M_lam^-1`` (Henderson's mixed-model equations with objects
eliminated); the variances are posterior (prediction-error) variances.

A model may add a rank-one term ``spread * xi`` (``xi ~ N(0, 1)``, one ``spread`` per object, score units): the
uncertainty of a variance component it plugs in, to first order (the one-way model's ``lam``: every value moves
towards or away from the panel mean together as tau^2 is larger or smaller than estimated).  Variances,
differences and draws include it; planned reads (next reads) leave it out (a read does not change it).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .graph import Design, ReducedSolver, plain_pages
from ..panel.resolution import effective_confidences

__all__ = ["SPARSE_SE_DRAWS", "Posterior", "ComponentPosterior", "ReducedCovariance", "MatrixCovariance",
           "quantile", "is_pooled"]

#: Perturbation draws used for standard errors on the sparse (iterative) path.
SPARSE_SE_DRAWS = 200


def quantile(q: float, t_df) -> float:
    """Normal (t_df None) or Student-t quantile; scipy.special keeps scipy.stats' slow import off this path."""
    from scipy.special import ndtri, stdtrit

    return float(stdtrit(t_df, q)) if t_df else float(ndtri(q))


class ReducedCovariance:
    """H read off a reduced assessor system (units of w).

    Fixed effects: ``H = M_reg^-1 - 1 1'/C`` (the projection onto the weighted
    gauge, ``shift = 1/C``); objects or assessors as random effects: ``H =
    M_lam^-1`` (no projection).  ``G`` is the inverse of the reduced matrix,
    computed once when asked for (LAPACK ``potri``: lower triangle valid).
    """

    def __init__(self, solver: ReducedSolver):
        self.solver = solver
        self.shift = solver.rank_one  # 1/C for the fixed model's projection, else 0
        self._inverse = None
        self.method = "exact"

    @property
    def iterative(self) -> bool:
        return not self.solver.dense

    def apply(self, x: np.ndarray, refine: bool = True) -> np.ndarray:
        """H x through the solver (exact; ``refine=False``: to single precision, for estimates)."""
        y = self.solver.solve(x, refine=refine)
        if self.shift:
            y = y - x.sum(axis=0) * self.shift
        return y

    def inverse(self) -> np.ndarray:
        """G, the dense inverse of the reduced matrix (lower triangle valid)."""
        if self._inverse is None:
            c, _lower = self.solver.factor
            with plain_pages():
                if c.dtype == np.float64:
                    inv, info = sla.lapack.dpotri(c, lower=1, overwrite_c=False)
                else:
                    inv, info = sla.lapack.spotri(c, lower=1, overwrite_c=False)
                    self.method = "exact formula, single-precision inverse (relative error of the SEs ~1e-6)"
            if info != 0:
                raise RuntimeError(f"inverting the reduced system failed (LAPACK info {info})")
            self._inverse = inv
        return self._inverse

    def apply_formed(self, x: np.ndarray) -> np.ndarray:
        """H x from the inverse the standard errors form (one symmetric product, the inverse's own precision).

        The standard errors read their other terms from the same matrix, so this term carries the same
        digits; a refined solve would add a sparse product of the whole design per refinement round.
        """
        G = self.inverse()
        symv = sla.blas.ssymv if G.dtype == np.float32 else sla.blas.dsymv
        y = symv(1.0, G, x.astype(G.dtype), lower=1).astype(float, copy=False)
        return y - x.sum() * self.shift if self.shift else y

    def formed_inverse(self) -> np.ndarray | None:
        """G if the standard errors have formed it already (lower triangle valid), else None."""
        return self._inverse

    def draw(self, n: int, rng) -> np.ndarray:
        """n draws of theta ~ N(0, H) as an assessors x draws array (a triangular solve with the factor)."""
        z = rng.standard_normal((self.solver.design.n_assessors, n))
        factor = self.solver.factor[0]
        xi = sla.solve_triangular(factor, z.astype(factor.dtype, copy=False), lower=True, trans="T",
                                  check_finite=False).astype(float, copy=False)
        if self.shift:  # project N(0, M_reg^-1) onto the weighted gauge: covariance M_reg^-1 - 1 1'/C
            xi -= (self.solver.design.C_a @ xi)[None, :] * self.shift
        return xi

    def trace_from_inverse(self) -> float | None:
        """sum_{i>=2} 1/mu_i from the inverse the standard errors already needed (fixed effects only)."""
        if self._inverse is None or not self.shift:
            return None
        return float(self.solver.design.C_a @ np.diagonal(self._inverse).astype(float)) - 1.0

    def with_design(self, design: Design) -> "ReducedCovariance":
        """The same model's H for another design (extra reads added)."""
        return ReducedCovariance(ReducedSolver(design, self.solver.lam, self.solver.ridge, bool(self.solver.centre)))


class MatrixCovariance:
    """H given as a dense matrix (a model whose uncertainty is not one reduced system, e.g. a mixture).

    ``rebuild(design)`` gives the model's H for another design (extra reads
    added), so next reads can plan with it.
    """

    shift = 0.0
    iterative = False

    def __init__(self, H: np.ndarray, method: str, rebuild=None):
        self.H = np.asarray(H, dtype=float)
        self.method = method
        self._rebuild = rebuild
        self._root = None

    def apply(self, x: np.ndarray) -> np.ndarray:
        return self.H @ x

    def inverse(self) -> np.ndarray:
        return self.H

    #: H is the formed matrix itself
    apply_formed = apply

    def draw(self, n: int, rng) -> np.ndarray:
        if self._root is None:
            # the symmetric square root H^1/2 = U diag(sqrt(lambda)) U' tolerates a singular H (a bias fixed exactly
            # by the model) and, unlike U diag(sqrt(lambda)) alone, does not depend on the signs LAPACK gives the
            # eigenvectors: the same seed then gives the same draws wherever H agrees to rounding (CPython and
            # Pyodide, whose LAPACK builds choose signs differently for nearly equal matrices)
            vals, vecs = np.linalg.eigh(self.H)
            self._root = (vecs * np.sqrt(np.clip(vals, 0.0, None))[None, :]) @ vecs.T
        return self._root @ rng.standard_normal((self.H.shape[0], n))

    def trace_from_inverse(self) -> float | None:
        return None

    def with_design(self, design: Design) -> "MatrixCovariance":
        if self._rebuild is None:
            raise NotImplementedError("this covariance cannot be rebuilt for another design")
        return self._rebuild(design)


class Posterior:
    """The joint Gaussian of one component's values and biases (see the module docstring).

    ``cov`` gives H (a :class:`ReducedCovariance` or :class:`MatrixCovariance`),
    or is ``None`` for a component with a single assessor (its bias is 0
    exactly and each value is its weighted mean).
    """

    def __init__(self, design: Design, cov, w: float, lam: float, gauge: str, rounding: float = 0.0,
                 stated: np.ndarray | None = None, spread: np.ndarray | None = None):
        self.design, self.cov, self.w, self.lam = design, cov, float(w), float(lam)
        #: the values' rank-one term beyond the linear form (module docstring), score units, or None
        self.spread = None if spread is None else np.asarray(spread, dtype=float)
        self.gauge = gauge
        #: the variance the scores' grid adds to every read (see :mod:`..panel.resolution`); the design's confidences
        #: are then the effective ones, c' = 1 / (1/c + rounding/w), and w / c' is a read's whole variance;
        #: *stated* keeps the confidences as given (levels or 1/SD^2)
        self.rounding = float(rounding)
        self._stated = design.c if stated is None else np.asarray(stated, dtype=float)
        A = design.n_assessors
        self.k = design.gauge_weights(gauge)
        self.Cd = design.C_o + lam
        # D: objects x assessors, d_oa = c_ao / (C_o + lam)
        self.D = sp.csr_matrix((design.c / self.Cd[design.oi], (design.oi, design.ai)),
                               shape=(design.n_objects, A))
        self._draw_pieces = None
        self.method = cov.method if cov is not None else "exact"

    # ------------------------------------------------------------------ what callers ask about
    @property
    def iterative(self) -> bool:
        """True when the reduced system is solved iteratively (too many assessors for a dense factor)."""
        return self.cov is not None and self.cov.iterative

    @property
    def n_evaluations(self) -> int:
        return int(self.design.c.size)

    def with_reads(self, ai: np.ndarray, oi: np.ndarray, c: np.ndarray) -> "Posterior":
        """The posterior after extra reads (a, o, confidence as stated), in the weighted gauge, before their
        scores exist.

        Covariances of a Gaussian linear model do not depend on the scores, so
        the effect of planned reads is known exactly in advance.
        """
        design = self.design.with_reads(ai, oi, self.effective_confidences(c))
        cov = self.cov.with_design(design) if self.cov is not None else None
        return Posterior(design, cov, self.w, self.lam, "weighted", self.rounding, np.append(self._stated, c))

    def effective_confidences(self, c: np.ndarray) -> np.ndarray:
        """Stated confidences (levels or 1/SD^2) as this posterior weighs them: with the scores' rounding
        variance added to each read (:func:`..panel.resolution.effective_confidences`; unchanged without it)."""
        return effective_confidences(c, self.w, self.rounding)

    def stated_confidences(self) -> np.ndarray:
        """The design's confidences as stated (levels or 1/SD^2), before the rounding variance was added."""
        return self._stated

    # ------------------------------------------------------------------ pieces
    def apply_h(self, x: np.ndarray) -> np.ndarray:
        """H x, in units of w."""
        return np.zeros_like(x) if self.cov is None else self.cov.apply(x)

    def h_matrix(self) -> np.ndarray:
        """H as a full dense symmetric A x A array (units of w): the covariance of theta."""
        A = self.design.n_assessors
        if self.cov is None:
            return np.zeros((A, A))
        G = np.tril(np.asarray(self.cov.inverse(), dtype=float))
        return G + np.tril(G, -1).T - self.cov.shift

    def trace_from_inverse(self) -> float | None:
        """sum_{i>=2} 1/mu_i from the inverse the standard errors already needed (None when not computed)."""
        return None if self.cov is None else self.cov.trace_from_inverse()

    def _pair_sums(self, G: np.ndarray) -> np.ndarray:
        """d_o' G d_o for every object: a gather over the pairs of assessors who read the same object."""
        d = self.design
        O = d.n_objects
        out = np.zeros(O)
        reads = np.bincount(d.oi, minlength=O)
        order = np.argsort(d.oi, kind="stable")
        a_sorted = d.ai[order].astype(np.intp, copy=False)
        w_sorted = d.c[order] / self.Cd[d.oi[order]]
        first = np.concatenate([[0], np.cumsum(reads)[:-1]]).astype(np.intp)
        diagonal = np.diagonal(G)  # a gather from A numbers, not from the A x A matrix
        for r in np.unique(reads):
            objs = np.flatnonzero(reads == r)
            idx = first[objs][:, None] + np.arange(r, dtype=np.intp)[None, :]
            a_tab, w_tab = a_sorted[idx], w_sorted[idx]
            # G is symmetric: the diagonal once and each pair of readers once, doubled -- r (r + 1) / 2 vectorised
            # gathers over all objects with r reads (a gather from a large G is a cache miss per object)
            total = np.einsum("ij,ij->i", w_tab * w_tab, diagonal[a_tab].astype(float, copy=False))
            for i in range(r - 1):
                hi = np.maximum(a_tab[:, i:i + 1], a_tab[:, i + 1:])
                lo = np.minimum(a_tab[:, i:i + 1], a_tab[:, i + 1:])
                total += 2.0 * w_tab[:, i] * np.einsum("ij,ij->i", w_tab[:, i + 1:], G[hi, lo])
            out[objs] += total
        return out

    def _draw_theta_sparse(self, n: int, rng) -> np.ndarray:
        """Perturb-and-solve draws of theta ~ N(0, H) on the iterative path: refit noise e ~ N(0, 1/c).

        The reduced right-hand side of pure noise has covariance M, so solving with it gives covariance
        M_reg^-1 M M_reg^-1 = H (fixed effects).  With assessors as random effects (``M + ridge I``) the
        prior's own perturbation ``sqrt(ridge) z`` is added, and (M + ridge I)^-1 (M + ridge I)(M + ridge I)^-1
        is again H (Papandreou & Yuille 2010, perturb-and-MAP).
        """
        d = self.design
        ridge = self.cov.solver.ridge if self.cov is not None else 0.0
        out = np.empty((d.n_assessors, n))
        for j in range(n):
            e = rng.standard_normal(d.c.size) / np.sqrt(d.c)
            E = np.bincount(d.oi, weights=d.c * e, minlength=d.n_objects)
            r = np.bincount(d.ai, weights=d.c * (e - E[d.oi] / d.C_o[d.oi]), minlength=d.n_assessors)
            if ridge:
                r += np.sqrt(ridge) * rng.standard_normal(d.n_assessors)
            out[:, j] = self.apply_h(r)
        return out

    # ------------------------------------------------------------------ variances
    def variances(self) -> tuple[np.ndarray, np.ndarray]:
        """(Var(v_o), Var(b_a)) in score units squared (including w, and the rank-one ``spread`` when there is one)."""
        value_var, bias_var = self._linear_variances()
        return (value_var if self.spread is None else value_var + self.spread**2), bias_var

    def _linear_variances(self) -> tuple[np.ndarray, np.ndarray]:
        """(Var(v_o), Var(b_a)) of the linear form alone."""
        d = self.design
        if self.cov is None:  # one assessor: b = 0 exactly, v_o its weighted mean
            return self.w / self.Cd, np.zeros(d.n_assessors)
        if self.cov.iterative:
            xi = self._draw_theta_sparse(SPARSE_SE_DRAWS, np.random.default_rng(20240611))
            vals = (self.k @ xi)[None, :] - self.D @ xi
            bias = xi - (self.k @ xi)[None, :]
            self.method = f"Monte Carlo, {SPARSE_SE_DRAWS} perturbation draws (relative s.e. of the SEs ~5%)"
            return (self.w * (1.0 / self.Cd + np.mean(vals**2, axis=1)), self.w * np.mean(bias**2, axis=1))
        G = self.cov.inverse()
        self.method = self.cov.method
        h = self.cov.apply_formed(self.k)
        kappa = float(self.k @ h)
        shift = self.cov.shift
        var_b = np.diagonal(G).astype(float) - shift - 2.0 * h + kappa
        dGd = self._pair_sums(G) - (d.C_o / self.Cd) ** 2 * shift
        var_v = 1.0 / self.Cd + dGd - 2.0 * (self.D @ h) + kappa
        return self.w * np.maximum(var_v, 0.0), self.w * np.maximum(var_b, 0.0)

    def difference_variance(self, o1: int, o2: int) -> float:
        """Var(v_o1 - v_o2): gauge-free, exact on every path (one solve)."""
        if o1 == o2:
            return 0.0
        x = (self.D[o1] - self.D[o2]).toarray().ravel()
        q = float(x @ self.apply_h(x))
        extra = 0.0 if self.spread is None else float(self.spread[o1] - self.spread[o2]) ** 2
        return self.w * (1.0 / self.Cd[o1] + 1.0 / self.Cd[o2] + q) + extra

    # ------------------------------------------------------------------ draws
    def _single_precision_pieces(self):
        """(sqrt(w/Cd), sqrt(w) D, sqrt(w) k) in float32, built once: draws are made chunk after chunk."""
        if self._draw_pieces is None:
            root_w = np.sqrt(self.w)
            self._draw_pieces = ((root_w / np.sqrt(self.Cd)).astype(np.float32),
                                 (self.D * root_w).astype(np.float32).tocsr(),
                                 (root_w * self.k).astype(np.float32))
        return self._draw_pieces

    def draw_theta(self, n: int, rng) -> np.ndarray:
        """n draws of the assessor-level deviations theta ~ N(0, H), as an assessors x draws array.

        The one step that uses BLAS (a triangular solve with the reduced
        system's factor): callers running draws in threads make it first, in
        one thread, so BLAS's own threads do not compete with theirs.
        """
        self._single_precision_pieces()  # here, in the calling thread: worker threads then only read them
        if self.cov is None:
            return np.zeros((self.design.n_assessors, n))
        if self.cov.iterative:
            return self._draw_theta_sparse(n, rng)
        return self.cov.draw(n, rng)

    def draw_deviations(self, n: int, rng, xi: np.ndarray | None = None, centres=False):
        """n joint draws of (v - v_hat), as a draws x objects float32 array (before any t scaling).

        ``xi`` (from :meth:`draw_theta` with the same *rng*) may be drawn
        beforehand; without it it is drawn here.  Single precision is ample for
        Monte Carlo ranks and halves the memory traffic of the sort.

        With ``centres`` (True, or an index array of the objects wanted): (draws, centres), the second each
        value's conditional mean deviation given the draw's assessor-level deviations theta -- given theta the
        values are independent, each normal around its centre with SD :meth:`conditional_sd` (conditional Monte
        Carlo uses it: :mod:`..decide.draws`).
        """
        if xi is None:
            xi = self.draw_theta(n, rng)
        scale, D32, k32 = self._single_precision_pieces()
        xi32 = xi.astype(np.float32)
        dev = rng.standard_normal((n, self.design.n_objects), dtype=np.float32)
        dev *= scale[None, :]
        shared = D32 @ xi32  # objects x draws: each object's share of the assessor-level deviations
        shared -= (k32 @ xi32)[None, :]
        whole = None
        if centres is True:  # every object's centre: the shared parts negated, in the draws' layout
            whole = _negated_transposed(shared)
            dev += whole  # v - s is v + (-s) exactly
        else:
            _subtract_transposed(dev, shared)
        common = None
        if self.spread is not None:  # the plugged-in component's own uncertainty: all values at once, one xi a draw
            common = rng.standard_normal(n, dtype=np.float32)[:, None] * self.spread.astype(np.float32)[None, :]
            dev += common
        if centres is False:
            return dev
        # the shared parts are known given the draw's assessor-level deviations (and its common shift)
        centre = whole if centres is True else np.negative(shared[centres].T, order="C")
        if common is not None:
            centre += common if centres is True else common[:, centres]
        return dev, centre

    def conditional_sd(self) -> np.ndarray:
        """Each value's SD given the assessor-level deviations theta, sqrt(w / (C_o + lam)) (float32, in units of
        the score before any t scaling): what is left of a value's uncertainty once the biases are known."""
        return self._single_precision_pieces()[0]


#: Objects per block when an objects x draws array is read in the draws x objects layout: a block's columns stay in
#: cache while its rows are written (a plain transposed read took 5 ns per value, three times the blocks').
TRANSPOSE_BLOCK = 8192


def _subtract_transposed(out: np.ndarray, shared: np.ndarray) -> None:
    """out -= shared.T, by blocks of objects (the same numbers; see :data:`TRANSPOSE_BLOCK`)."""
    for start in range(0, shared.shape[0], TRANSPOSE_BLOCK):
        out[:, start:start + TRANSPOSE_BLOCK] -= shared[start:start + TRANSPOSE_BLOCK].T


def _negated_transposed(shared: np.ndarray) -> np.ndarray:
    """-shared.T as a C-ordered draws x objects array, by blocks of objects (see :data:`TRANSPOSE_BLOCK`)."""
    out = np.empty(shared.shape[::-1], dtype=shared.dtype)
    for start in range(0, shared.shape[0], TRANSPOSE_BLOCK):
        np.negative(shared[start:start + TRANSPOSE_BLOCK].T, out=out[:, start:start + TRANSPOSE_BLOCK])
    return out


class ComponentPosterior(NamedTuple):
    """One connected component's posterior and where its assessors and objects sit in the result's tables.

    ``pooled`` (a property): the posterior's design has a single assessor, "any reviewer", standing for every
    reader in ``assessor_index`` (readers who cannot be linked: their stringency is in the noise, see
    :meth:`.graph.Design.pooled`); otherwise ``assessor_index[a]`` is the result's row of the posterior's
    assessor ``a``.
    """

    posterior: Posterior
    assessor_index: np.ndarray
    object_index: np.ndarray

    @property
    def pooled(self) -> bool:
        """Whether the posterior's one assessor stands for several readers (see the class docstring)."""
        return is_pooled(self.posterior, self.assessor_index)


def is_pooled(posterior: Posterior, assessor_index: np.ndarray) -> bool:
    """A posterior whose design has a single assessor standing for more than one reader: readers pooled into the
    noise (:meth:`.graph.Design.pooled`); a panel read by one assessor alone is not pooled."""
    return posterior.design.n_assessors == 1 and np.asarray(assessor_index).size > 1
