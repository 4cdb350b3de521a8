"""The assessor-object graph and its reduced system: the layer every model, design tool and next read shares.

Notation (MacKay et al. 2017): ``c_ao = 1/sigma_ao^2`` the confidence of one
evaluation, ``C_o = sum_a c_ao`` (object total confidence), ``C'_a = sum_o
c_ao`` (assessor total confidence), ``C = sum_a C'_a``.  Eliminating the
objects from the least-squares fit (eq. 13) leaves the *reduced assessor
system* (eq. 15)

    M b = B - Cm (V / C_o),    M = diag(C') - W,    W = Cm diag(1/C_o) Cm^T

a weighted graph Laplacian on assessors (A x A, never (A+O) x (A+O)).
Models that treat objects or assessors as random effects add ``lam`` to
``C_o`` (objects shrunk towards their mean) or ``ridge`` to the diagonal
(biases shrunk towards zero); the matrix is then positive definite.

``mu2``, the second-smallest eigenvalue of ``I - C'^-1/2 W C'^-1/2``, says how
well the graph ties the assessors together (0 = not at all, 1 = every assessor
reads everything): the robustness bounds grow like ``sqrt(2/mu2)`` (eq. 19).
It is computed in one place, :func:`mu2`; connected components in one place,
:func:`components`.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla

__all__ = ["DENSE_ASSESSOR_LIMIT", "DOUBLE_INVERSE_LIMIT", "EXACT_TRACE_LIMIT", "FIXED_SOLVER", "NEAR_SOLVER",
           "TRACE_PROBES", "Design", "ReducedSolver", "graph_solver", "mu2", "low_spectrum", "sum_inverse_reduced",
           "components", "overlap_verdict", "plain_pages"]

#: Largest assessor count solved with dense factorisation of the reduced
#: A x A system (fast LAPACK); above it, sparse iterative solvers are used.
DENSE_ASSESSOR_LIMIT = 6000
#: Above this many assessors the dense reduced system is factored in single precision (solves are refined in
#: double precision, so estimates keep full accuracy) and inverted in single precision (relative error of the
#: standard errors ~1e-6, tested against double precision): half the memory and time of the O(A^3) steps.
DOUBLE_INVERSE_LIMIT = 2000
#: A solver standing in a near system's factor (:class:`ReducedSolver`, ``near``) solves by conjugate gradients
#: to this relative residual (2-norm) -- the accuracy of the factor's own refined solves ...
NEAR_TOLERANCE = 1e-13
#: ... in at most this many steps, or factors its own system (the two systems were not near enough; 0: always).
NEAR_ITERATIONS = 40
#: The key under which a design keeps (``design.shared``) a factored solver that a nearby system's solves may be
#: preconditioned by -- a model's own choice of what to keep, carried from one step's design to the next.
NEAR_SOLVER = "near_solver"
#: The key under which a design keeps its fixed-effects solver (:func:`graph_solver`): the fixed fit's own factor,
#: read again by the variance moments, mu2 and the robustness bounds of the same design.
FIXED_SOLVER = "fixed_solver"
#: Largest assessor count for which sum 1/mu_j is computed exactly; above it,
#: Hutchinson's stochastic trace estimator (fixed seed) is used.
EXACT_TRACE_LIMIT = 2500
TRACE_PROBES = 200
#: Largest assessor count whose low spectrum is computed densely (exact eigh) by :func:`low_spectrum`.
DENSE_EIGEN_LIMIT = 300
#: Largest assessor count whose mu2 is computed densely by :func:`mu2`.
DENSE_MU2_LIMIT = 400


@contextlib.contextmanager
def plain_pages():
    """Temporarily stop numpy advising transparent huge pages for new arrays.

    Why: on kernels with THP defrag set to "madvise" (common on VMs), every
    fresh hugepage-advised array pays synchronous memory compaction on first
    touch — about 0.6 s per 200 MB measured here — and the dense A x A reduced
    system allocates such arrays.  Numerical results are unaffected; the
    previous setting is restored on exit.
    """
    try:
        from numpy._core import multiarray
    except ImportError:  # numpy < 2
        from numpy.core import multiarray
    getter = getattr(multiarray, "_get_madvise_hugepage", None)
    setter = getattr(multiarray, "_set_madvise_hugepage", None)
    if getter is None or setter is None:
        yield
        return
    previous = getter()
    setter(False)
    try:
        yield
    finally:
        setter(previous)


@dataclass
class Design:
    """Indices and totals of one connected component (or the whole panel).

    ``ai``/``oi``: assessor and object index per evaluation (0..A-1, 0..O-1);
    ``c``: confidence per evaluation.  Totals ``C_o``, ``C_a`` (C'), ``C`` and
    the sparse confidence matrix ``Cm`` (A x O) are derived once.
    """

    ai: np.ndarray
    oi: np.ndarray
    c: np.ndarray
    n_assessors: int
    n_objects: int

    def __post_init__(self):
        #: derived results several models of the same panel share (the variance moments), computed once
        self.shared: dict = {}
        self.C_o = np.bincount(self.oi, weights=self.c, minlength=self.n_objects)
        self.C_a = np.bincount(self.ai, weights=self.c, minlength=self.n_assessors)
        self.C = float(self.C_a.sum())
        self.Cm = sp.csr_matrix((self.c, (self.ai, self.oi)), shape=(self.n_assessors, self.n_objects))

    def restrict(self, evaluations: np.ndarray, assessors: np.ndarray, objects: np.ndarray) -> "Design":
        """The design of some of the reads (boolean mask *evaluations*), its assessors and objects renumbered
        0.. in the order of *assessors* and *objects* (index arrays into this design's).

        One connected component is fitted, tested and summed on its own local indices; this is the one place
        the renumbering is done.  Everything selected in its own order is this design itself (its shared
        results kept).
        """
        A, O = self.n_assessors, self.n_objects
        if (assessors.size == A and objects.size == O and bool(evaluations.all())
                and np.array_equal(assessors, np.arange(A)) and np.array_equal(objects, np.arange(O))):
            return self
        a_local = np.full(A, -1, dtype=np.intp)
        a_local[assessors] = np.arange(assessors.size, dtype=np.intp)
        o_local = np.full(O, -1, dtype=np.intp)
        o_local[objects] = np.arange(objects.size, dtype=np.intp)
        return Design(a_local[self.ai[evaluations]], o_local[self.oi[evaluations]], self.c[evaluations],
                      assessors.size, objects.size)

    def parts(self, n: int, comp_of_a: np.ndarray, comp_of_o: np.ndarray):
        """(evaluation mask, assessor indices, object indices, restricted design) of each connected component
        0..n-1 (as numbered by :func:`components`)."""
        comp_of_e = comp_of_a[self.ai]
        for k in range(n):
            mask = comp_of_e == k
            a_idx, o_idx = np.flatnonzero(comp_of_a == k), np.flatnonzero(comp_of_o == k)
            yield mask, a_idx, o_idx, self.restrict(mask, a_idx, o_idx)

    def gauge_weights(self, gauge: str) -> np.ndarray:
        """k, the weights whose combination of the biases is zero: ``C'/C`` (weighted gauge, the paper's
        ``sum C'_a b_a = 0``) or ``1/A`` (simple gauge, the plain mean bias zero).  Every model reports its
        values and biases in this gauge, and the posterior's variances are those of the same gauge."""
        if gauge == "weighted":
            return self.C_a / self.C
        return np.full(self.n_assessors, 1.0 / self.n_assessors)

    def with_reads(self, ai: np.ndarray, oi: np.ndarray, c: np.ndarray) -> "Design":
        """The same design with extra reads added (their scores are not needed for any covariance)."""
        return Design(np.append(self.ai, ai).astype(np.intp), np.append(self.oi, oi).astype(np.intp),
                      np.append(self.c, c), self.n_assessors, self.n_objects)

    def pooled(self) -> "Design":
        """The same reads with every assessor pooled into one, "any reviewer": the design of a model in which a
        read's assessor term is part of its noise (reviewers who cannot be linked across objects,
        :mod:`..models.one_way`); each object's reads and totals are unchanged."""
        return Design(np.zeros(self.c.size, dtype=np.intp), self.oi, self.c, 1, self.n_objects)

    def reduced_laplacian(self, dense: bool, lam: float = 0.0, dtype=np.float64):
        """M = diag(C') - W with W = Cm diag(1/(C_o + lam)) Cm^T (eq. 15; lam > 0: objects as random effects).

        Built as a sparse product (each object adds its readers' pairs) and summed in double precision; a
        dense M is then written once in *dtype* (single precision for a factor that will be single), so no
        A x A double array is made when it is not needed.
        """
        C_o = self.C_o + lam
        W = self.Cm.multiply(1.0 / C_o[np.newaxis, :]).tocsr() @ self.Cm.T
        if not dense:
            return (sp.diags(self.C_a) - W).tocsr()
        # the diagonal C'_a - W_aa nearly cancels: form it in double precision, then round each entry once
        diagonal = self.C_a - W.diagonal()
        M = sp.csr_matrix((np.negative(W.data).astype(dtype, copy=False), W.indices, W.indptr), shape=W.shape).toarray()
        M[np.diag_indices_from(M)] = diagonal
        return M


class ReducedSolver:
    """Solves M_reg x = r for the reduced assessor system of one design.

    Fixed effects (``lam = ridge = 0``): ``M_reg = M + C' C'^T / C`` is SPD
    and its solution of a consistent ``M b = r`` automatically satisfies the
    weighted gauge ``C'.b = 0``.  With ``lam > 0`` (objects as random effects)
    the matrix ``diag(C') - Cm diag(1/(C_o + lam)) Cm^T`` is already positive
    definite, and so is ``M + ridge I`` (assessors as random effects, ``ridge
    = w / sigma_b^2``): no regulariser.

    Dense Cholesky up to :data:`DENSE_ASSESSOR_LIMIT` assessors (single
    precision with double-precision refinement above
    :data:`DOUBLE_INVERSE_LIMIT`), preconditioned conjugate gradients above.
    """

    def __init__(self, design: Design, lam: float = 0.0, ridge: float = 0.0, centred: bool = False,
                 near: "ReducedSolver | None" = None):
        self.design = design
        self.lam = float(lam)
        self.ridge = float(ridge)
        # centred: the ridge acts on deviations from the assessors' mean, ridge (I - 1 1'/A) -- assessors as random
        # effects around a common mean that is itself a fixed effect (objects and assessors both random)
        self.centre = self.ridge / design.n_assessors if centred else 0.0
        A = design.n_assessors
        self.dense = A <= DENSE_ASSESSOR_LIMIT
        self.C = design.C
        self.rank_one = 1.0 / self.C if self.lam == 0.0 and self.ridge == 0.0 else 0.0
        self.single = self.dense and A > DOUBLE_INVERSE_LIMIT
        # near: a factored solver of a nearby system of the same assessors (the previous step of a censored fit,
        # whose variances and confidences moved a little).  Solves then run as conjugate gradients preconditioned
        # by its factor, and this system is factored only when something needs its own factor (its covariance,
        # draws, a determinant): the steps whose covariance nobody reads never pay for a factorisation.
        self.near = (near if near is not None and near.dense and self.dense
                     and near.design.n_assessors == design.n_assessors else None)
        self._factor = None
        self._factor_lock = threading.Lock()
        self.near_iterations = 0  # conjugate-gradient steps taken through the near factor (for the benchmarks)
        if self.dense and self.near is None:
            self._factor_dense()
        elif not self.dense:
            self._iterative_operators()

    @property
    def factor(self):
        """The Cholesky factor (scipy's ``cho_factor`` pair), made when first needed if a near solver stood in."""
        if self._factor is None:
            with self._factor_lock:
                if self._factor is None:
                    self._release_near()
                    self._factor_dense()
        return self._factor

    def _release_near(self) -> None:
        """Let the near system's factor go before this one's is made: from then on every solve goes through this
        system's own factor, so a censored fit's last step (factored when its covariance is first read, for the
        draws) no longer holds two A x A factors at its peak -- 100 MB at 5,000 assessors.  The design's record of
        the near solver goes too (the steps that took it are over)."""
        near, self.near = self.near, None
        if near is not None and self.design.shared.get(NEAR_SOLVER) is near:
            del self.design.shared[NEAR_SOLVER]

    @property
    def factored(self) -> bool:
        """Whether this system's own factor exists (a solver with a near one may not have made it yet)."""
        return self._factor is not None

    def _factor_dense(self) -> None:
        Ca, A = self.design.C_a, self.design.n_assessors
        with plain_pages():
            M = self._laplacian()
            if self.ridge:
                M[np.diag_indices_from(M)] += self.ridge
            if self.centre:
                M -= self.centre
            for start in range(0, A, 512) if self.rank_one else ():  # rank-one term in row chunks: no A x A temporary
                M[start:start + 512] += np.outer(Ca[start:start + 512] * self.rank_one, Ca)
            # M is symmetric, so its transpose is the same matrix in Fortran order: LAPACK factors it in place,
            # and later solves need no C-to-Fortran copy of the A x A factor (a copy per solve otherwise).
            self._factor = sla.cho_factor(M.T, lower=True, overwrite_a=True, check_finite=False)

    def _laplacian(self) -> np.ndarray:
        """The dense reduced Laplacian in the factor's precision, a fresh copy (the factorisation overwrites it).

        With objects fixed (lam = 0) it is the same matrix for the fixed fit and for assessors as random
        effects: when a second solver is announced (``design.shared["keep_laplacian"]``, set by the default model,
        which factors both) the first keeps one copy and the second takes it.
        """
        dtype = np.float32 if self.single else np.float64
        kept = self.design.shared.pop("laplacian", None) if self.lam == 0.0 else None
        if kept is not None and kept.dtype == dtype:
            return kept
        M = self.design.reduced_laplacian(dense=True, lam=self.lam, dtype=dtype)
        if self.lam == 0.0 and self.design.shared.pop("keep_laplacian", False):
            self.design.shared["laplacian"] = M.copy()
        return M

    def _iterative_operators(self) -> None:
        Ca, A, rank_one, ridge, centre = self.design.C_a, self.design.n_assessors, self.rank_one, self.ridge, self.centre
        M = self.design.reduced_laplacian(dense=False, lam=self.lam)
        self.op = spla.LinearOperator(
            (A, A), matvec=lambda x: M @ x + ridge * x - centre * x.sum() + Ca * (Ca @ x) * rank_one, dtype=float)
        self.precond = spla.LinearOperator((A, A), matvec=lambda x: x / (Ca + ridge + Ca**2 * rank_one), dtype=float)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """The reduced matrix times x in double precision from the sparse design, without forming W."""
        d = self.design
        Cd = d.C_o + self.lam
        if x.ndim == 1:
            out = (d.C_a + self.ridge) * x - d.Cm @ ((d.Cm.T @ x) / Cd) - self.centre * x.sum()
            return out + d.C_a * (d.C_a @ x) * self.rank_one if self.rank_one else out
        out = (d.C_a + self.ridge)[:, None] * x - d.Cm @ ((d.Cm.T @ x) / Cd[:, None]) - self.centre * x.sum(axis=0)
        return out + np.outer(d.C_a, d.C_a @ x) * self.rank_one if self.rank_one else out

    def _solve_factor(self, rhs: np.ndarray) -> np.ndarray:
        c = self.factor[0]
        if rhs.ndim == 1:  # BLAS trsv twice: faster than LAPACK potrs for a single right-hand side
            trsv = sla.blas.strsv if self.single else sla.blas.dtrsv
            y = trsv(c, rhs.astype(c.dtype, copy=False), lower=1)
            return trsv(c, y, lower=1, trans=1).astype(float, copy=False)
        return sla.cho_solve(self.factor, rhs.astype(c.dtype, copy=False), check_finite=False).astype(float, copy=False)

    def _solve_refined(self, rhs: np.ndarray) -> np.ndarray:
        """Mixed-precision iterative refinement: single-precision factor, double-precision residuals."""
        x = self._solve_factor(rhs)
        scale = max(float(np.max(np.abs(rhs))), 1e-300)
        previous = np.inf
        for _ in range(30):
            r = rhs - self.matvec(x)
            size = float(np.max(np.abs(r)))
            # done at full accuracy, or when the residual has reached double precision's own rounding floor
            # (it stops shrinking: about 1e-13 of the right-hand side for large systems)
            if size <= 1e-13 * scale or (size > 0.5 * previous and size <= 1e-10 * scale):
                return x
            previous = size
            x = x + self._solve_factor(r)
        raise RuntimeError("iterative refinement of the reduced system did not converge")

    def _solve_near(self, rhs: np.ndarray) -> np.ndarray | None:
        """Conjugate gradients on this system (double-precision products from the sparse design), preconditioned
        by the near system's factor; None when they do not reach full accuracy in :data:`NEAR_ITERATIONS` steps
        (the systems were not near after all: the caller factors this one)."""
        if NEAR_ITERATIONS <= 0:
            return None
        A = self.design.n_assessors
        operator = spla.LinearOperator((A, A), matvec=self.matvec, dtype=float)
        preconditioner = spla.LinearOperator((A, A), matvec=self.near._solve_factor, dtype=float)
        steps = [0]

        def count(_x):
            steps[0] += 1

        x, _info = spla.cg(operator, rhs, M=preconditioner, rtol=NEAR_TOLERANCE, atol=0.0, maxiter=NEAR_ITERATIONS,
                           callback=count)
        self.near_iterations += steps[0]
        # judged by the true residual, not the recurrence's: a float32 preconditioner may let the two drift apart
        reached = np.linalg.norm(rhs - self.matvec(x)) <= 10 * NEAR_TOLERANCE * np.linalg.norm(rhs)
        return x if reached else None

    def solve(self, rhs: np.ndarray, refine: bool = True) -> np.ndarray:
        """The solution; ``refine=False`` skips the double-precision refinement of a single-precision factor
        (relative error ~1e-5: enough for a trace estimate, where the probes' own error is larger)."""
        if self.dense and self._factor is None and rhs.ndim == 1:
            x = self._solve_near(rhs)
            if x is not None:
                return x
        if self.dense and self.single:
            return self._solve_refined(rhs) if refine else self._solve_factor(rhs)
        if self.dense:
            if rhs.ndim == 1:  # BLAS trsv twice: faster than LAPACK potrs for a single right-hand side
                y = sla.blas.dtrsv(self.factor[0], rhs, lower=1)
                return sla.blas.dtrsv(self.factor[0], y, lower=1, trans=1)
            return sla.cho_solve(self.factor, rhs, check_finite=False)
        if rhs.ndim == 1:
            x, info = spla.cg(self.op, rhs, M=self.precond, rtol=1e-13, atol=0.0, maxiter=20000)
            if info != 0:
                raise RuntimeError(f"conjugate gradients did not converge (info={info})")
            return x
        return np.column_stack([self.solve(col) for col in rhs.T])

    def t_inverse(self, x: np.ndarray, refine: bool = True) -> np.ndarray:
        """T^{-1} x with T^{-1} = C'^{1/2} M_reg^{-1} C'^{1/2}; the eigenvalues of T are 1 and mu_2..mu_A.
        ``refine`` as in :meth:`solve`."""
        s = np.sqrt(self.design.C_a)
        if x.ndim == 2:
            return s[:, None] * self.solve(s[:, None] * x, refine)
        return s * self.solve(s * x, refine)

    def log_determinant(self) -> float:
        """log |M_reg| from the dense Cholesky factor (restricted likelihoods need it)."""
        return 2.0 * float(np.sum(np.log(np.diagonal(self.factor[0]))))


def graph_solver(design: Design, keep: bool = False) -> ReducedSolver:
    """The fixed-effects solver of the design's graph: the one a fit already made (``design.shared``), or a new
    one (kept on the design when *keep*: the fixed fit keeps its own, so the variance moments, mu2 and the
    robustness bounds of the same design read that factor instead of making another)."""
    solver = design.shared.get(FIXED_SOLVER)
    if solver is None:
        solver = ReducedSolver(design)
        if keep:
            design.shared[FIXED_SOLVER] = solver
    return solver


def _mu2_lanczos(solver: ReducedSolver, inverse: np.ndarray | None = None) -> float:
    """mu2 of a large dense system: Lanczos on T^-1 with a float32 copy of the Cholesky factor -- or, when the
    standard errors have already formed the inverse of the same system, with that inverse (one symmetric
    product reads half the triangle; two triangular solves read the whole factor twice).

    The products are memory-bound, so half the bytes is half the time; one
    float64 Rayleigh quotient v'Tv/v'v then corrects the eigenvalue, whose
    error is quadratic in the eigenvector's.
    """
    A = solver.design.n_assessors
    rng = np.random.default_rng(12345)
    s_half = np.sqrt(solver.design.C_a)
    with plain_pages():
        s32 = s_half.astype(np.float32)
        if inverse is not None:
            inverse32 = inverse.astype(np.float32, copy=False)

            def t_inverse32(x):
                return s32 * sla.blas.ssymv(1.0, inverse32, s32 * x.ravel(), lower=1)
        else:
            factor32 = solver.factor[0].astype(np.float32, order="F", copy=False)

            def t_inverse32(x):
                # two BLAS triangular solves: for one right-hand side they beat LAPACK potrs by ~2x here
                y = sla.blas.strsv(factor32, s32 * x.ravel(), lower=1)
                return s32 * sla.blas.strsv(factor32, y, lower=1, trans=1)

        op = spla.LinearOperator((A, A), dtype=np.float32, matvec=t_inverse32)
        _, vec = spla.eigsh(op, k=1, which="LA", v0=rng.standard_normal(A).astype(np.float32), tol=1e-6)
    v = vec[:, 0].astype(float)
    u = s_half / np.linalg.norm(s_half)
    v -= u * (u @ v)  # the Fiedler vector is orthogonal to the null direction of I - S ...
    x = v / s_half  # ... so the rank-one regulariser drops out and v'Tv = x'Mx with M the sparse reduced Laplacian
    design = solver.design
    Mx = design.C_a * x - design.Cm @ ((design.Cm.T @ x) / design.C_o)
    return float(x @ Mx / (v @ v))


def mu2(solver: ReducedSolver, inverse: np.ndarray | None = None) -> float:
    """Second-smallest eigenvalue of I - C'^-1/2 W C'^-1/2 (the smallest of T) for a connected design.

    Dense eigenvalues up to :data:`DENSE_MU2_LIMIT` assessors; above, Lanczos on
    T^-1 through the fixed-effects solver's factor (or its iterative solves), or through *inverse*, the
    inverse of the same fixed-effects system when it has been formed already (lower triangle valid).
    """
    A = solver.design.n_assessors
    if A == 1:
        return float("nan")
    if A <= DENSE_MU2_LIMIT:
        s = np.sqrt(solver.design.C_a)
        T = solver.design.reduced_laplacian(dense=True) / np.outer(s, s)
        return float(np.linalg.eigvalsh(T)[1])
    if solver.dense:
        return _mu2_lanczos(solver, inverse)
    rng = np.random.default_rng(12345)
    op = spla.LinearOperator((A, A), matvec=solver.t_inverse, dtype=float)
    top = spla.eigsh(op, k=1, which="LA", v0=rng.standard_normal(A), tol=1e-9, return_eigenvectors=False)
    return float(1.0 / top[0])


def low_spectrum(ea: np.ndarray, eo: np.ndarray, c: np.ndarray, A: int, O: int, k: int, vectors: bool,
                 seed: int = 0):
    """Smallest ``k`` eigenvalues (and vectors x = C'^-1/2 f) of T over the assessors who read something.

    Planned designs (before any score) may hold assessors without reads and objects nobody reads; they are
    left out.  Returns (active assessor indices, eigenvalues ascending, X (n_active x k) or None).
    """
    C_a = np.bincount(ea, weights=c, minlength=A)
    C_o = np.bincount(eo, weights=c, minlength=O)
    active = np.flatnonzero(C_a > 0)
    n = active.size
    local = np.full(A, -1, dtype=np.intp)
    local[active] = np.arange(n, dtype=np.intp)
    s = 1.0 / np.sqrt(C_a[active])
    Cm = sp.csr_matrix((c * s[local[ea]], (local[ea], eo)), shape=(n, O))  # C'^-1/2 Cm
    inv_co = np.divide(1.0, C_o, out=np.zeros(O), where=C_o > 0)
    Nmat = (Cm @ sp.diags(inv_co) @ Cm.T)  # C'^-1/2 W C'^-1/2, eigenvalues 1 - mu
    k = min(k, n)
    if n <= DENSE_EIGEN_LIMIT:
        dense = Nmat.toarray()
        if vectors:
            w, v = np.linalg.eigh(dense)
            mu = 1.0 - w[::-1][:k]
            X = v[:, ::-1][:, :k] * s[:, None]
            return active, np.clip(mu, 0.0, None), X
        w = np.linalg.eigvalsh(dense)
        return active, np.clip(1.0 - w[::-1][:k], 0.0, None), None
    rng = np.random.default_rng(seed)
    w, v = spla.eigsh(Nmat.tocsr(), k=k, which="LA", v0=rng.standard_normal(n), tol=1e-10)
    order = np.argsort(-w)
    mu = np.clip(1.0 - w[order], 0.0, None)
    return active, mu, (v[:, order] * s[:, None]) if vectors else None


def sum_inverse_reduced(solver: ReducedSolver) -> tuple[float, str]:
    """sum_{i>=2} 1/mu_i for the reduced operator = trace(T^-1) - 1, and how it was computed."""
    design = solver.design
    A = design.n_assessors
    if A == 1:
        return 0.0, "exact (one assessor)"
    if solver.dense and A <= EXACT_TRACE_LIMIT:
        L = np.tril(solver.factor[0])
        Linv = sla.solve_triangular(L, np.eye(A), lower=True, check_finite=False)
        diag_inv = np.einsum("ij,ij->j", Linv, Linv)  # diag(M_reg^-1) = column norms of L^-1
        return float(design.C_a @ diag_inv - 1.0), "exact (Cholesky inverse of the reduced system)"
    rng = np.random.default_rng(20240611)
    Z = rng.choice([-1.0, 1.0], size=(A, TRACE_PROBES))
    # a single-precision factor's solves are not refined: their relative error (~1e-5) is far below the probes'
    # own (~1e-2), and refining 200 right-hand sides costs a sparse product of the design per round (seconds at
    # 10^6 reads)
    samples = np.einsum("ij,ij->j", Z, solver.t_inverse(Z, refine=False))
    estimate = samples.mean() - 1.0
    se = samples.std(ddof=1) / np.sqrt(TRACE_PROBES)
    return float(estimate), (f"Hutchinson estimate, {TRACE_PROBES} Rademacher probes, seed fixed "
                             f"(relative s.e. {se / max(estimate, 1e-300):.1e})")


def components(ai: np.ndarray, oi: np.ndarray, A: int, O: int) -> tuple[int, np.ndarray, np.ndarray]:
    """Connected components of the bipartite assessor-object graph.

    Returns (number of components, component of each assessor, component of each object), numbered
    0.. by size (the component with the most evaluations first, ties in order of first appearance), so
    reports list the main group first and the numbering does not depend on input order within a group.
    Assessors and objects without any read form their own (empty) components at the end.
    """
    graph = sp.csr_matrix((np.ones(ai.size), (ai, A + oi)), shape=(A + O, A + O))
    n, labels = csgraph.connected_components(graph, directed=False)
    labels = labels.astype(np.intp, copy=False)
    sizes = np.bincount(labels[:A][ai], minlength=n)
    order = np.argsort(-sizes, kind="stable")
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n, dtype=np.intp)
    return int(n), rank[labels[:A]], rank[labels[A:]]


def overlap_verdict(mu2_value: float) -> str:
    """Plain words for mu2, the assessor overlap (0 = assessors not tied together, 1 = everyone reads everything).

    The thresholds are rules of thumb: the robustness bounds grow like sqrt(2/mu2) (MacKay et al. 2017,
    eq. 19), so below 0.1 a perturbation of the scores can move values by more than about 4.5x its own
    confidence-weighted size.
    """
    if not np.isfinite(mu2_value):
        return "not defined"
    return "good" if mu2_value >= 0.3 else "fair" if mu2_value >= 0.1 else "poor: biases poorly determined; add shared reads"
