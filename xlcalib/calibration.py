"""Calibration with confidence: s_ao = v_o + b_a + sigma_ao * eta_ao.

Specification: ``calibrate_with_confidence.txt`` (the seed) with the
corrections of issue 2.  Notation follows the seed:

* ``c_ao = 1 / sigma_ao**2`` — the confidence of one evaluation;
* ``C_o = sum_a c_ao`` (object total confidence), ``C'_a = sum_o c_ao``
  (assessor total confidence), ``C = sum_a C'_a``;
* ``V_o = sum_a c_ao s_ao``, ``B_a = sum_o c_ao s_ao``.

The fit minimises ``sum c_ao (s_ao - v_o - b_a)**2``.  Objects are eliminated
(seed eq. 13) and the *reduced assessor system* (seed eq. 15)

    M b = B - Cm (V / C_o),    M = diag(C') - W,    W = Cm diag(1/C_o) Cm^T

is solved for the biases; ``M`` is a weighted graph Laplacian on assessors
(A x A, never (A+O) x (A+O)).  Values follow from eq. 13.

Robustness (weighted gauge, sum C'_a b_a = 0), as the seed states, with
``mu2`` the second-smallest eigenvalue of ``I - C'^{-1/2} W C'^{-1/2}``:

* SD input: ``|dv_o| <= sqrt(2N / (mu2 C_o))``, ``|db_a| <= sqrt(2N / (mu2 C'_a))``,
  RMS bound ``1 / sqrt(mu2 C / N)``;
* confidence input: ``w = R / (N - A - O + n_components)`` (unbiased residual
  variance of the weighted fit), bounds multiplied by ``sqrt(w)``, RMS bound
  ``sqrt(w / (2C) * sum_j 1/mu_j)`` over the non-zero eigenvalues of the *full*
  normalised Laplacian of the assessor-object graph (issue 2).

These are worst-case bounds for a perturbation of the scores of size
``sum c_ao ds_ao**2 <= N w`` — the size the model expects noise to have.

Simple gauge (sum b_a = 0): the seed divides the weighted measures by sqrt(2);
issue 2 found those are not always valid bounds, so xlcalib departs from the
seed here: the simple-gauge solution is the weighted one shifted by
``m = mean_a(b_a)``; ``dv_o + dm`` is a linear functional of the weighted
result, and its exact dual norm in the seed's result metric gives the valid bound

    |dv_o| <= sqrt(1/C_o + sum_a 1/(A^2 C'_a)) * sqrt(2/mu2) * sqrt(N w)
    |db_a| <= sqrt((1-1/A)^2/C'_a + sum_{a' != a} 1/(A^2 C'_a')) * sqrt(2/mu2) * sqrt(N w)

and the RMS figure adds the worst gauge shift (triangle inequality).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla

from .errors import InputError

__all__ = [
    "DEFAULT_LEVELS",
    "CalibrationResult",
    "DesignCheck",
    "calibrate",
    "grid_to_long",
    "design_check",
]

#: Default confidence levels -> standard deviation, in score units.  Chosen for
#: scales where one unit is about one grade step (e.g. 1-9 or 1-10): a "High"
#: confidence evaluation is expected within about half a step of the assessor's
#: own repeat score, "Low" within two steps.  Override with ``levels=``.
DEFAULT_LEVELS: dict[str, float] = {"High": 0.5, "Medium": 1.0, "Low": 2.0}

#: Largest assessor count solved with dense factorisation of the reduced
#: A x A system (fast LAPACK); above it, sparse iterative solvers are used.
DENSE_ASSESSOR_LIMIT = 6000
#: Largest assessor count for which sum 1/mu_j is computed exactly; above it,
#: Hutchinson's stochastic trace estimator (fixed seed) is used.
EXACT_TRACE_LIMIT = 2500
TRACE_PROBES = 200

_KINDS = ("sd", "confidence", "level")


@contextlib.contextmanager
def _plain_pages():
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


# ----------------------------------------------------------------------------
# Result objects
# ----------------------------------------------------------------------------
@dataclass
class CalibrationResult:
    """Calibrated values, assessor biases, residuals and diagnostics.

    Attributes
    ----------
    values:
        Indexed by object: ``value`` (calibrated v_o), ``bound`` (robustness
        |dv_o|, score units), ``total_confidence`` (C_o), ``n`` (evaluations).
    biases:
        Indexed by assessor: ``bias`` (b_a, positive = lenient/generous),
        ``bound`` (|db_a|), ``total_confidence`` (C'_a), ``n``.
    residuals:
        One row per evaluation in input order: ``assessor, object, score,
        fitted, residual, std_residual, anomalous``.
    stats:
        ``n_evaluations, n_assessors, n_objects, n_components, mu2, residual
        (R), posterior_variance (w), rms_bound, gauge, uncertainty_kind`` and
        descriptive extras (``bound_meaning``, ``anomaly_threshold``,
        ``trace_method`` ...).  With ``per_component=True`` the per-component
        figures (mu2, rms_bound) are lists in component order.
    """

    values: pd.DataFrame
    biases: pd.DataFrame
    residuals: pd.DataFrame
    stats: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        s = self.stats
        mu2 = s["mu2"]
        mu2_text = ", ".join(f"{m:.4g}" for m in mu2) if isinstance(mu2, list) else f"{mu2:.4g}"
        lines = [
            f"Calibrated {s['n_objects']} objects from {s['n_evaluations']} evaluations by {s['n_assessors']} assessors "
            f"({s['n_components']} connected component{'s' if s['n_components'] != 1 else ''}).",
            f"Gauge: {s['gauge']} ({s['gauge_meaning']}); uncertainty given as {s['uncertainty_kind']}.",
            f"mu2 (graph robustness, 0..1, larger is better) = {mu2_text}; residual R = {s['residual']:.4g}; "
            f"posterior variance w = {s['posterior_variance']:.4g}.",
            f"Bounds are worst-case changes (score units) for score errors of the size the model expects; "
            f"median value bound {self.values['bound'].median():.3g}.",
            f"{int(self.residuals['anomalous'].sum())} evaluation(s) flagged anomalous "
            f"(|standardised residual| > {s['anomaly_threshold']:g}).",
        ]
        return "\n".join(lines)

    def diagnostics(self) -> pd.DataFrame:
        """The stats as a two-column (statistic, value) table with a meaning column."""
        rows = []
        for key, value in self.stats.items():
            if isinstance(value, (list, tuple)):
                value = ", ".join(f"{v:.6g}" if isinstance(v, float) else str(v) for v in value)
            rows.append({"statistic": key, "value": value, "meaning": _STAT_MEANINGS.get(key, "")})
        return pd.DataFrame(rows, columns=["statistic", "value", "meaning"])

    def to_frames(self) -> dict[str, pd.DataFrame]:
        """Sheets for adapters: Values, Biases, Residuals, Diagnostics."""
        return {
            "Values": self.values.reset_index(),
            "Biases": self.biases.reset_index(),
            "Residuals": self.residuals.copy(),
            "Diagnostics": self.diagnostics(),
        }


_STAT_MEANINGS = {
    "n_evaluations": "N, number of (assessor, object) evaluations",
    "n_assessors": "A, number of assessors",
    "n_objects": "O, number of objects",
    "n_components": "connected components of the assessor-object graph",
    "mu2": "second-smallest eigenvalue of I - C'^-1/2 W C'^-1/2 (0 = disconnected, 1 = ideal)",
    "residual": "R = sum c_ao (s_ao - v_o - b_a)^2",
    "posterior_variance": "w: 1 for SD input (SDs taken at face value); R/(N-A-O+components) for confidences",
    "w_estimated": "R/(N-A-O+components): about 1 when declared SDs are honest",
    "rms_bound": "confidence-weighted RMS error bound over values and biases (score units)",
    "gauge": "how the common offset between values and biases is fixed",
    "uncertainty_kind": "what the uncertainty column held",
    "anomaly_threshold": "|standardised residual| above which an evaluation is flagged",
    "trace_method": "how sum 1/mu_j was computed",
}


@dataclass
class DesignCheck:
    """Design check of a planned assignment (before any scores exist).

    ``components``: DataFrame (assessor, component).  ``mu2``: robustness
    eigenvalue (NaN when disconnected).  ``object_confidence``: C_o per object.
    ``suggestions``: DataFrame of extra (assessor, object) pairs, best first,
    with ``mu2_after`` (connected design) or ``connects`` (disconnected).
    """

    n_components: int
    components: pd.DataFrame
    mu2: float
    object_confidence: pd.Series
    suggestions: pd.DataFrame

    def summary_table(self) -> pd.DataFrame:
        c = self.object_confidence
        return pd.DataFrame(
            {
                "statistic": ["n_components", "mu2", "C_o min", "C_o median", "C_o max"],
                "value": [self.n_components, self.mu2, c.min(), c.median(), c.max()],
            }
        )


# ----------------------------------------------------------------------------
# Input handling
# ----------------------------------------------------------------------------
def _levels_table(levels) -> dict[str, float]:
    if levels is None:
        table = DEFAULT_LEVELS
    elif isinstance(levels, pd.DataFrame):
        if levels.shape[1] < 2:
            raise InputError("the levels table needs two columns: level name and SD")
        table = dict(zip(levels.iloc[:, 0], levels.iloc[:, 1]))
    else:
        table = dict(levels)
    out = {}
    for name, sd in table.items():
        key = str(name).strip().lower()
        try:
            sd = float(sd)
        except (TypeError, ValueError):
            raise InputError(f"levels table: the SD for level '{name}' is not a number ({sd!r})") from None
        if not np.isfinite(sd) or sd <= 0:
            raise InputError(f"levels table: the SD for level '{name}' must be a positive number, not {sd}")
        if key in out:
            raise InputError(f"levels table: level '{name}' is listed twice")
        out[key] = sd
    if not out:
        raise InputError("the levels table is empty")
    return out


def _row_text(i: int) -> str:
    return f"row {i + 1} of the evaluations"


def _numeric(values, name: str, ids) -> np.ndarray:
    """Coerce to float, naming the first row that is blank/text/non-finite."""
    arr = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) or values.dtype == object else values
    if arr.dtype != object and np.issubdtype(arr.dtype, np.number) and arr.dtype != bool:
        out = arr.astype(float)
    else:
        out = np.empty(len(arr), dtype=float)
        for i, x in enumerate(arr):
            if x is None or (isinstance(x, str) and x.strip() == ""):
                raise InputError(f"{_row_text(i)} ({ids(i)}): {name} is blank", {"row": i, "column": name})
            if isinstance(x, (bool, np.bool_)) or isinstance(x, str):
                raise InputError(f"{_row_text(i)} ({ids(i)}): {name} is not a number ({x!r})", {"row": i, "column": name})
            try:
                out[i] = float(x)
            except (TypeError, ValueError):
                raise InputError(f"{_row_text(i)} ({ids(i)}): {name} is not a number ({x!r})", {"row": i, "column": name}) from None
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        i = int(bad[0])
        what = "blank" if np.isnan(out[i]) else f"not finite ({out[i]})"
        raise InputError(f"{_row_text(i)} ({ids(i)}): {name} is {what}", {"row": i, "column": name})
    return out


def _labels(values, name: str) -> np.ndarray:
    """Ids as an array; a blank id (None, NaN, empty text) is an error naming its row (vectorised check)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr
    if arr.dtype.kind == "f":
        blank = np.isnan(arr)
    else:
        arr = arr.astype(object)
        series = pd.Series(arr, dtype=object)
        blank = series.isna().to_numpy()
        try:
            blank = blank | (series.str.strip() == "").to_numpy(dtype=bool)
        except AttributeError:  # no text at all (e.g. all numbers): nothing can be an empty string
            pass
    if blank.any():
        i = int(np.flatnonzero(blank)[0])
        raise InputError(f"{_row_text(i)}: the {name} is blank", {"row": i, "column": name})
    return arr


def _collect(evaluations, assessors, objects, scores, sd, confidence, level):
    """Return (assessor labels, object labels, scores, uncertainty values, kind)."""
    if evaluations is not None:
        if not isinstance(evaluations, pd.DataFrame):
            raise InputError("evaluations must be a table (DataFrame) with columns assessor, object, score and one of sd/confidence/level")
        lower = {str(c).strip().lower(): c for c in evaluations.columns}
        missing = [c for c in ("assessor", "object", "score") if c not in lower]
        if missing:
            raise InputError(f"the evaluations table lacks column(s): {', '.join(missing)} (found {', '.join(map(str, evaluations.columns))})")
        kinds = [k for k in _KINDS if k in lower]
        if len(kinds) != 1:
            raise InputError(
                "the evaluations table needs exactly one uncertainty column (sd, confidence or level); "
                + (f"found {', '.join(kinds)}" if kinds else "found none")
            )
        kind = kinds[0]
        cols = {k: evaluations[lower[k]].to_numpy() for k in ("assessor", "object", "score", kind)}
        return cols["assessor"], cols["object"], cols["score"], cols[kind], kind
    given = {k: v for k, v in (("sd", sd), ("confidence", confidence), ("level", level)) if v is not None}
    if assessors is None or objects is None or scores is None:
        raise InputError("give either an evaluations table or assessors=, objects= and scores=")
    if len(given) != 1:
        raise InputError("give exactly one of sd=, confidence= or level= (one uncertainty per evaluation)")
    kind, unc = next(iter(given.items()))
    lengths = {"assessors": len(assessors), "objects": len(objects), "scores": len(scores), kind: len(unc)}
    if len(set(lengths.values())) != 1:
        raise InputError("the input columns differ in length: " + ", ".join(f"{k} {v}" for k, v in lengths.items()))
    return np.asarray(assessors, dtype=object), np.asarray(objects, dtype=object), np.asarray(scores, dtype=object) \
        if not isinstance(scores, np.ndarray) else scores, np.asarray(unc, dtype=object) if kind == "level" else unc, kind


def _confidences(unc, kind: str, levels, ids) -> np.ndarray:
    if kind == "level":
        table = _levels_table(levels)
        keys = pd.Series(unc, dtype=object).map(lambda x: None if x is None else str(x).strip().lower())
        sd = keys.map(table).to_numpy(dtype=float)
        bad = np.flatnonzero(np.isnan(sd))
        if bad.size:
            i = int(bad[0])
            known = ", ".join(sorted(table))
            raise InputError(f"{_row_text(i)} ({ids(i)}): unknown confidence level {unc[i]!r}; known levels: {known}",
                             {"row": i, "column": "level"})
        return 1.0 / sd**2
    values = _numeric(unc, kind, ids)
    bad = np.flatnonzero(values <= 0)
    if bad.size:
        i = int(bad[0])
        raise InputError(f"{_row_text(i)} ({ids(i)}): {kind} must be positive, not {values[i]:g}", {"row": i, "column": kind})
    return 1.0 / values**2 if kind == "sd" else values


# ----------------------------------------------------------------------------
# The fit
# ----------------------------------------------------------------------------
@dataclass
class _Design:
    """Indices and totals of one connected component (or the whole panel)."""

    ai: np.ndarray  # assessor index per evaluation (0..A-1)
    oi: np.ndarray  # object index per evaluation (0..O-1)
    c: np.ndarray  # confidence per evaluation
    n_assessors: int
    n_objects: int

    def __post_init__(self):
        self.C_o = np.bincount(self.oi, weights=self.c, minlength=self.n_objects)
        self.C_a = np.bincount(self.ai, weights=self.c, minlength=self.n_assessors)
        self.Cm = sp.csr_matrix((self.c, (self.ai, self.oi)), shape=(self.n_assessors, self.n_objects))

    def reduced_laplacian(self, dense: bool):
        """M = diag(C') - W with W = Cm diag(1/C_o) Cm^T (seed eq. 15)."""
        A = self.n_assessors
        reads = np.bincount(self.oi, minlength=self.n_objects)
        if dense and reads.max() <= 12:
            # W_aa' = sum_o c_ao c_a'o / C_o accumulated object-group by object-group with bincount:
            # objects with r reads form an (n_r x r) table; r^2 vectorised passes, no sparse product.
            order = np.argsort(self.oi, kind="stable")
            a_sorted, c_sorted = self.ai[order], self.c[order]
            first = np.concatenate([[0], np.cumsum(reads)[:-1]])
            keys, weights = [], []
            for r in np.unique(reads):
                objs = np.flatnonzero(reads == r)
                idx = first[objs][:, None] + np.arange(r)[None, :]
                a_tab, c_tab = a_sorted[idx], c_sorted[idx] / np.sqrt(self.C_o[objs])[:, None]
                keys.append((a_tab[:, :, None] * A + a_tab[:, None, :]).ravel())
                weights.append((c_tab[:, :, None] * c_tab[:, None, :]).ravel())
            M = np.bincount(np.concatenate(keys), weights=np.concatenate(weights), minlength=A * A).reshape(A, A)
            np.negative(M, out=M)  # in place: no second A x A array
            M[np.diag_indices_from(M)] += self.C_a
            return M
        scaled = self.Cm.multiply(1.0 / self.C_o[np.newaxis, :]).tocsr()
        W = scaled @ self.Cm.T
        if dense:
            M = -W.toarray()
            M[np.diag_indices_from(M)] += self.C_a
            return M
        return (sp.diags(self.C_a) - W).tocsr()


class _ReducedSolver:
    """Solves M_reg x = r with M_reg = M + C' C'^T / C (SPD; its solution of a
    consistent M b = r automatically satisfies the weighted gauge C'.b = 0)."""

    def __init__(self, design: _Design):
        self.design = design
        A = design.n_assessors
        self.dense = A <= DENSE_ASSESSOR_LIMIT
        Ca, C = design.C_a, design.C_a.sum()
        self.C = C
        if self.dense:
            with _plain_pages():
                M = design.reduced_laplacian(dense=True)
                for start in range(0, A, 512):  # rank-one term in row chunks: no A x A temporary
                    M[start:start + 512] += np.outer(Ca[start:start + 512] / C, Ca)
                # M is symmetric, so its transpose is the same matrix in Fortran order: LAPACK factors it in place,
                # and later solves need no C-to-Fortran copy of the A x A factor (a copy per solve otherwise).
                self.factor = sla.cho_factor(M.T, lower=True, overwrite_a=True, check_finite=False)
        else:
            M = design.reduced_laplacian(dense=False)
            self.op = spla.LinearOperator((A, A), matvec=lambda x: M @ x + Ca * (Ca @ x) / C, dtype=float)
            self.precond = spla.LinearOperator((A, A), matvec=lambda x: x / (Ca + Ca**2 / C), dtype=float)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
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

    # T^{-1} = C'^{1/2} M_reg^{-1} C'^{1/2}; eigenvalues of T are 1 and mu_2..mu_A
    def t_inverse(self, x: np.ndarray) -> np.ndarray:
        s = np.sqrt(self.design.C_a)
        if x.ndim == 2:
            return s[:, None] * self.solve(s[:, None] * x)
        return s * self.solve(s * x)


def _mu2(solver: _ReducedSolver) -> float:
    """Second-smallest eigenvalue of I - C'^-1/2 W C'^-1/2 (the smallest of T)."""
    A = solver.design.n_assessors
    if A == 1:
        return float("nan")
    if A <= 400:
        s = np.sqrt(solver.design.C_a)
        M = solver.design.reduced_laplacian(dense=True)
        T = M / np.outer(s, s)
        eig = np.linalg.eigvalsh(T)
        return float(eig[1])
    rng = np.random.default_rng(12345)
    if not solver.dense:
        op = spla.LinearOperator((A, A), matvec=solver.t_inverse, dtype=float)
        top = spla.eigsh(op, k=1, which="LA", v0=rng.standard_normal(A), tol=1e-9, return_eigenvectors=False)
        return float(1.0 / top[0])
    # Lanczos on T^-1 with a float32 copy of the Cholesky factor (the solves are memory-bound: half the bytes),
    # then one float64 Rayleigh quotient v'Tv/v'v, whose error is quadratic in the eigenvector's.
    s_half = np.sqrt(solver.design.C_a)
    with _plain_pages():
        factor32 = (solver.factor[0].astype(np.float32, order="F"), solver.factor[1])
        s32 = s_half.astype(np.float32)

        def t_inverse32(x):
            # two BLAS triangular solves: for one right-hand side they beat LAPACK potrs by ~2x here
            y = sla.blas.strsv(factor32[0], s32 * x.ravel(), lower=1)
            return s32 * sla.blas.strsv(factor32[0], y, lower=1, trans=1)

        op = spla.LinearOperator((A, A), dtype=np.float32, matvec=t_inverse32)
        _, vec = spla.eigsh(op, k=1, which="LA", v0=rng.standard_normal(A).astype(np.float32), tol=1e-6)
    v = vec[:, 0].astype(float)
    u = s_half / np.linalg.norm(s_half)
    v -= u * (u @ v)  # the Fiedler vector is orthogonal to the null direction of I - S ...
    x = v / s_half  # ... so the rank-one regulariser drops out and v'Tv = x'Mx with M the sparse reduced Laplacian
    design = solver.design
    Mx = design.C_a * x - design.Cm @ ((design.Cm.T @ x) / design.C_o)
    return float(x @ Mx / (v @ v))


def _sum_inverse_reduced(solver: _ReducedSolver) -> tuple[float, str]:
    """sum_{i>=2} 1/mu_i for the reduced operator = trace(T^-1) - 1."""
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
    samples = np.einsum("ij,ij->j", Z, solver.t_inverse(Z))
    estimate = samples.mean() - 1.0
    se = samples.std(ddof=1) / np.sqrt(TRACE_PROBES)
    return float(estimate), f"Hutchinson estimate, {TRACE_PROBES} Rademacher probes, seed fixed (relative s.e. {se / max(estimate, 1e-300):.1e})"


def _fit_component(design: _Design, s: np.ndarray):
    """Weighted-gauge solution (v, b) and the reduced solver of one connected component."""
    c = design.c
    V = np.bincount(design.oi, weights=c * s, minlength=design.n_objects)
    B = np.bincount(design.ai, weights=c * s, minlength=design.n_assessors)
    if design.n_assessors == 1:
        b = np.zeros(1)
        solver = None
    else:
        rhs = B - design.Cm @ (V / design.C_o)
        solver = _ReducedSolver(design)
        b = solver.solve(rhs)
        b -= (design.C_a @ b) / design.C  # remove round-off drift from the gauge
    v = (V - design.Cm.T @ b) / design.C_o
    return v, b, solver


def _bounds(design: _Design, mu2: float, N: int, w: float, gauge: str):
    """Per-object and per-assessor robustness bounds (see module docstring)."""
    if design.n_assessors == 1:
        # The map s -> v is the identity on this star: |dv_o| <= sqrt(N w / C_o) exactly, b fixed at 0.
        return np.sqrt(N * w / design.C_o), np.zeros(1), 1.0
    factor = 2.0 / mu2  # squared operator norm of L^-1 K in the seed's metrics
    if gauge == "weighted":
        return np.sqrt(factor * N * w / design.C_o), np.sqrt(factor * N * w / design.C_a), factor
    A = design.n_assessors
    inv_ca = 1.0 / design.C_a
    shift_sq = inv_ca.sum() / A**2  # dual norm^2 of the gauge shift m = mean(db)
    value_dual = 1.0 / design.C_o + shift_sq
    bias_dual = (1 - 1.0 / A) ** 2 * inv_ca + (inv_ca.sum() - inv_ca) / A**2
    return np.sqrt(factor * N * w * value_dual), np.sqrt(factor * N * w * bias_dual), factor


def calibrate(evaluations: pd.DataFrame | None = None, *, assessors=None, objects=None, scores=None,
              sd=None, confidence=None, level=None, levels=None, gauge: str = "weighted",
              per_component: bool = False, anomaly_threshold: float = 3.0) -> CalibrationResult:
    """Calibrated object values and assessor biases with robustness bounds.

    Fits ``s_ao = v_o + b_a + sigma_ao eta_ao`` by minimising
    ``sum c_ao (s_ao - v_o - b_a)^2`` with ``c_ao = 1/sigma_ao^2`` (seed eq. 4),
    solving the reduced assessor system (eq. 15) and recovering values by
    eq. 13.

    Parameters
    ----------
    evaluations:
        Long table with columns ``assessor``, ``object``, ``score`` and exactly
        one of ``sd`` (sigma_ao > 0, score units), ``confidence`` (c_ao > 0,
        relative weights; the noise scale w is then estimated) or ``level``
        (text mapped to an SD by ``levels``).  Column names are matched
        case-insensitively; extra columns are ignored.
    assessors, objects, scores, sd, confidence, level:
        The same data as parallel sequences (instead of ``evaluations``).
    levels:
        Level name -> SD mapping (dict or two-column table) overriding
        :data:`DEFAULT_LEVELS`; matching is case-insensitive.
    gauge:
        ``"weighted"`` (sum C'_a b_a = 0, the seed's preferred condition) or
        ``"simple"`` (sum b_a = 0).  Values move by the same constant the
        biases lose; bounds are valid for the gauge chosen.
    per_component:
        Fit each connected component of the assessor-object graph with its
        own gauge (values of different components are then *not*
        comparable); otherwise a disconnected panel is an error.
    anomaly_threshold:
        Evaluations with ``|std_residual| > anomaly_threshold`` are flagged.

    Returns
    -------
    CalibrationResult

    Notes
    -----
    Duplicate (assessor, object) pairs are rejected (naming both rows): a
    repeated evaluation is usually a data-entry error, and averaging it away
    would hide that.  ``std_residual = sqrt(c) * residual / sqrt(w)``.

    Examples
    --------
    >>> import pandas as pd, xlcalib
    >>> ev = pd.DataFrame({"assessor": ["A", "A", "B", "B"], "object": ["x", "y", "x", "y"],
    ...                    "score": [5.0, 7.0, 6.0, 8.0], "sd": [1.0, 1.0, 1.0, 1.0]})
    >>> r = xlcalib.calibrate(ev)
    >>> r.values["value"].round(6).tolist(), r.biases["bias"].round(6).tolist()
    ([5.5, 7.5], [-0.5, 0.5])
    """
    if gauge not in ("weighted", "simple"):
        raise InputError(f"gauge must be 'weighted' or 'simple', not {gauge!r}")
    try:
        anomaly_threshold = float(anomaly_threshold)
    except (TypeError, ValueError):
        raise InputError(f"anomaly_threshold must be a number, not {anomaly_threshold!r}") from None
    if not anomaly_threshold > 0:
        raise InputError("anomaly_threshold must be positive")

    a_raw, o_raw, s_raw, unc, kind = _collect(evaluations, assessors, objects, scores, sd, confidence, level)
    N = len(a_raw)
    if N == 0:
        raise InputError("there are no evaluations")
    a_lab = _labels(a_raw, "assessor")
    o_lab = _labels(o_raw, "object")
    ids = lambda i: f"assessor {a_lab[i]}, object {o_lab[i]}"  # noqa: E731
    s = _numeric(s_raw, "score", ids)
    c = _confidences(unc, kind, levels, ids)

    ai, a_names = pd.factorize(pd.Series(a_lab, dtype=object))
    oi, o_names = pd.factorize(pd.Series(o_lab, dtype=object))
    ai, oi = ai.astype(np.intp, copy=False), oi.astype(np.intp, copy=False)  # numpy's index type (32-bit in Pyodide)
    A, O = len(a_names), len(o_names)
    pair = ai.astype(np.int64) * O + oi
    dup = pd.Series(pair).duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(pair == pair[np.flatnonzero(dup)[0]])
        raise InputError(
            f"assessor {a_lab[rows[0]]} evaluated object {o_lab[rows[0]]} more than once "
            f"(rows {', '.join(str(r + 1) for r in rows)} of the evaluations); keep one evaluation per pair",
            {"row": int(rows[1]), "column": "object"},
        )
    if A < 2:
        raise InputError(f"only one assessor ({a_names[0]}); calibration needs at least two assessors who share objects")
    if O < 2:
        raise InputError(f"only one object ({o_names[0]}); calibration needs at least two objects")

    # connected components of the bipartite graph (assessor nodes 0..A-1, objects A..A+O-1)
    graph = sp.csr_matrix((np.ones(N), (ai, A + oi)), shape=(A + O, A + O))
    n_comp, labels = csgraph.connected_components(graph, directed=False)
    if n_comp > 1 and not per_component:
        comp_a = labels[:A]
        groups = [", ".join(map(str, a_names[comp_a == k][:8])) + (" ..." if (comp_a == k).sum() > 8 else "")
                  for k in range(n_comp)]
        listing = "; ".join(f"component {k + 1}: {g}" for k, g in enumerate(groups))
        raise InputError(
            f"the panel is not connected: {n_comp} groups of assessors share no objects, so their standards cannot be "
            f"compared ({listing}). Add evaluations that link the groups, or use per_component=True."
        )

    # order components by size (largest first) for stable reporting
    comp_of_a = labels[:A]
    comp_of_o = labels[A:]
    sizes = np.bincount(labels[:A][ai], minlength=n_comp)
    order = np.argsort(-sizes, kind="stable")
    rank = np.empty(n_comp, dtype=np.intp)
    rank[order] = np.arange(n_comp)
    comp_of_a, comp_of_o = rank[comp_of_a], rank[comp_of_o]
    comp_of_e = comp_of_a[ai]

    v = np.empty(O)
    b = np.empty(A)
    fits = []
    for k in range(n_comp):
        e_mask = comp_of_e == k
        a_idx = np.flatnonzero(comp_of_a == k)
        o_idx = np.flatnonzero(comp_of_o == k)
        a_local = np.full(A, -1, dtype=np.intp)
        a_local[a_idx] = np.arange(a_idx.size)
        o_local = np.full(O, -1, dtype=np.intp)
        o_local[o_idx] = np.arange(o_idx.size)
        design = _Design(a_local[ai[e_mask]], o_local[oi[e_mask]], c[e_mask], a_idx.size, o_idx.size)
        design.C = design.C_a.sum()
        vk, bk, solver = _fit_component(design, s[e_mask])
        v[o_idx], b[a_idx] = vk, bk
        fits.append((design, solver, a_idx, o_idx, e_mask))

    fitted = v[oi] + b[ai]
    resid = s - fitted
    R = float(np.sum(c * resid**2))
    dof = N - A - O + n_comp
    w_est = R / dof if dof > 0 else float("nan")
    if kind == "confidence":
        if dof <= 0:
            raise InputError(
                f"confidences (relative weights) need more evaluations than parameters to estimate the noise scale: "
                f"N - A - O + components = {N} - {A} - {O} + {n_comp} = {dof}; give SDs instead or add evaluations"
            )
        w = w_est
    else:
        w = 1.0

    value_bound = np.empty(O)
    bias_bound = np.empty(A)
    mu2s, rms_list, trace_methods = [], [], []
    for design, solver, a_idx, o_idx, e_mask in fits:
        Nk = int(e_mask.sum())
        mu2 = float("nan") if solver is None else _mu2(solver)
        vb, bb, factor = _bounds(design, mu2, Nk, w, gauge)
        value_bound[o_idx], bias_bound[a_idx] = vb, bb
        C = design.C
        if kind == "confidence":
            inv_red, method = (0.0, "exact (one assessor)") if solver is None else _sum_inverse_reduced(solver)
            Ak, Ok = design.n_assessors, design.n_objects
            sum_inv_full = 2.0 * inv_red + 0.5 + (Ok - Ak)  # full normalised Laplacian spectrum (see _sum_inv docs)
            rms = np.sqrt(w / (2 * C) * sum_inv_full)
            trace_methods.append(method)
        else:
            rms = np.sqrt(factor * Nk * w / (2 * C))  # = 1/sqrt(mu2 C / N) for the weighted gauge
        if gauge == "simple" and solver is not None:
            shift = np.sqrt(factor * Nk * w * (1.0 / design.C_a).sum() / design.n_assessors**2)
            rms = rms + shift
        mu2s.append(mu2)
        rms_list.append(float(rms))

    if gauge == "simple":
        for design, solver, a_idx, o_idx, e_mask in fits:
            m = b[a_idx].mean()
            b[a_idx] -= m
            v[o_idx] += m
        fitted = v[oi] + b[ai]

    std_res = np.sqrt(c) * resid / np.sqrt(w)
    per_comp = per_component and n_comp >= 1
    values = pd.DataFrame(
        {"value": v, "bound": value_bound, "total_confidence": _per(fits, "C_o", O, "o"),
         "n": np.bincount(oi, minlength=O)},
        index=pd.Index(o_names.to_numpy(), name="object"),
    )
    biases = pd.DataFrame(
        {"bias": b, "bound": bias_bound, "total_confidence": _per(fits, "C_a", A, "a"),
         "n": np.bincount(ai, minlength=A)},
        index=pd.Index(a_names.to_numpy(), name="assessor"),
    )
    residuals = pd.DataFrame(
        {"assessor": a_lab, "object": o_lab, "score": s, "fitted": fitted, "residual": resid,
         "std_residual": std_res, "anomalous": np.abs(std_res) > anomaly_threshold}
    )
    if per_comp:
        values["component"] = comp_of_o + 1
        biases["component"] = comp_of_a + 1
        residuals["component"] = comp_of_e + 1

    single = n_comp == 1
    stats: dict[str, Any] = {
        "n_evaluations": N,
        "n_assessors": A,
        "n_objects": O,
        "n_components": n_comp,
        "mu2": mu2s[0] if single else mu2s,
        "residual": R,
        "posterior_variance": w,
        "w_estimated": w_est,
        "rms_bound": rms_list[0] if single else rms_list,
        "gauge": gauge,
        "gauge_meaning": "sum of C'_a b_a = 0 (confidence-weighted mean bias zero)" if gauge == "weighted"
        else "sum of b_a = 0 (plain mean bias zero)",
        "uncertainty_kind": kind,
        "anomaly_threshold": anomaly_threshold,
        "bound_meaning": "largest change of a value/bias (score units) caused by score errors of total size "
                         "sum c ds^2 <= N w" + ("" if gauge == "weighted" else
                                                 "; simple-gauge bounds derived for validity (not the seed's /sqrt 2)"),
    }
    if kind == "confidence":
        stats["trace_method"] = trace_methods[0] if single else trace_methods
    return CalibrationResult(values=values, biases=biases, residuals=residuals, stats=stats)


def _per(fits, attr: str, size: int, which: str) -> np.ndarray:
    out = np.empty(size)
    for design, _solver, a_idx, o_idx, _e in fits:
        out[a_idx if which == "a" else o_idx] = getattr(design, attr)
    return out


# ----------------------------------------------------------------------------
# Grid conversion and design check
# ----------------------------------------------------------------------------
def grid_to_long(scores_grid, uncertainty_grid=None, kind: str = "sd", object_labels=None,
                 assessor_labels=None) -> pd.DataFrame:
    """Objects x assessors score grid (blank/NaN = not evaluated) -> long evaluations table.

    ``uncertainty_grid`` (same shape) holds SDs, confidences or levels
    (``kind``); without it every evaluation gets ``sd = 1`` (equal weights).
    Labels default to the DataFrame index/columns, else ``O1..`` / ``A1..``.
    A score without an uncertainty (or the reverse) is an error naming the cell.
    """
    if kind not in _KINDS:
        raise InputError(f"kind must be one of {', '.join(_KINDS)}, not {kind!r}")
    frame = scores_grid if isinstance(scores_grid, pd.DataFrame) else pd.DataFrame(np.asarray(scores_grid, dtype=object))
    n_obj, n_ass = frame.shape
    objects = list(object_labels) if object_labels is not None else (
        list(frame.index) if isinstance(scores_grid, pd.DataFrame) else [f"O{i + 1}" for i in range(n_obj)])
    assessors = list(assessor_labels) if assessor_labels is not None else (
        list(frame.columns) if isinstance(scores_grid, pd.DataFrame) else [f"A{j + 1}" for j in range(n_ass)])
    if len(objects) != n_obj or len(assessors) != n_ass:
        raise InputError(f"labels do not match the grid: {n_obj} rows x {n_ass} columns, "
                         f"{len(objects)} object labels, {len(assessors)} assessor labels")
    values = frame.to_numpy(dtype=object)
    present = ~pd.isna(pd.DataFrame(values)).to_numpy() & ~np.vectorize(
        lambda x: isinstance(x, str) and x.strip() == "", otypes=[bool])(values)
    r, k = np.nonzero(present)
    out = {"assessor": np.asarray(assessors, dtype=object)[k], "object": np.asarray(objects, dtype=object)[r],
           "score": values[r, k]}
    if uncertainty_grid is None:
        out["sd"] = np.ones(r.size)
    else:
        unc = (uncertainty_grid.to_numpy(dtype=object) if isinstance(uncertainty_grid, pd.DataFrame)
               else np.asarray(uncertainty_grid, dtype=object))
        if unc.shape != values.shape:
            raise InputError(f"the uncertainty grid is {unc.shape[0]} x {unc.shape[1]} but the score grid is {n_obj} x {n_ass}")
        u_present = ~pd.isna(pd.DataFrame(unc)).to_numpy() & ~np.vectorize(
            lambda x: isinstance(x, str) and x.strip() == "", otypes=[bool])(unc)
        mismatch = np.argwhere(present != u_present)
        if mismatch.size:
            i, j = mismatch[0]
            what = "a score but no uncertainty" if present[i, j] else "an uncertainty but no score"
            raise InputError(f"object {objects[i]}, assessor {assessors[j]} (grid row {i + 1}, column {j + 1}) has {what}",
                             {"row": int(i), "column": int(j)})
        out[kind] = unc[r, k]
    return pd.DataFrame(out)


def design_check(assessors, objects, confidence=None, k: int = 5) -> DesignCheck:
    """Check a planned assignment before scoring: connectivity, mu2, C_o spread, best extra pairs.

    ``confidence`` (optional, per planned pair) defaults to 1.  Suggestions:

    * connected design — candidate pairs (a, o) not yet assigned are ranked by
      a first-order estimate of the mu2 gain, ``c * (g_a - gbar_o)^2`` with
      ``g = C'^-1/2 f`` the Fiedler vector of the reduced operator and
      ``gbar_o`` the confidence-weighted mean of ``g`` over o's assessors; the
      best ``10 k`` candidates are then re-evaluated *exactly* (mu2 after adding
      each alone, confidence = median planned confidence) and the top ``k``
      are returned with ``mu2_after``.
    * disconnected design — one pair per extra component linking it to the
      largest: the least-loaded assessor of the largest component with the
      object of lowest C_o in the other component.
    """
    a_lab = _labels(assessors, "assessor")
    o_lab = _labels(objects, "object")
    if len(a_lab) != len(o_lab):
        raise InputError(f"assessors ({len(a_lab)}) and objects ({len(o_lab)}) differ in length")
    N = len(a_lab)
    if confidence is None:
        c = np.ones(N)
    else:
        c = _numeric(confidence, "confidence", lambda i: f"assessor {a_lab[i]}, object {o_lab[i]}")
        if np.any(c <= 0):
            i = int(np.flatnonzero(c <= 0)[0])
            raise InputError(f"{_row_text(i)}: confidence must be positive", {"row": i, "column": "confidence"})
    ai, a_names = pd.factorize(pd.Series(a_lab, dtype=object))
    oi, o_names = pd.factorize(pd.Series(o_lab, dtype=object))
    ai, oi = ai.astype(np.intp, copy=False), oi.astype(np.intp, copy=False)  # numpy's index type (32-bit in Pyodide)
    A, O = len(a_names), len(o_names)
    if A < 2 or O < 2:
        raise InputError("a design needs at least two assessors and two objects")
    key = pd.Series(ai.astype(np.int64) * O + oi)
    if key.duplicated().any():
        i = int(np.flatnonzero(key.duplicated().to_numpy())[0])
        raise InputError(f"{_row_text(i)}: assessor {a_lab[i]} is assigned object {o_lab[i]} twice", {"row": i})
    graph = sp.csr_matrix((np.ones(N), (ai, A + oi)), shape=(A + O, A + O))
    n_comp, labels = csgraph.connected_components(graph, directed=False)
    design = _Design(ai, oi, c, A, O)
    components = pd.DataFrame({"assessor": a_names.to_numpy(), "component": labels[:A] + 1})
    C_o = pd.Series(design.C_o, index=pd.Index(o_names.to_numpy(), name="object"), name="total_confidence")
    c_new = float(np.median(c))
    if n_comp > 1:
        sizes = np.bincount(labels[:A], minlength=n_comp)
        main = int(np.argmax(sizes))
        load = np.bincount(ai, minlength=A)
        main_a = np.flatnonzero(labels[:A] == main)
        rows = []
        for comp in range(n_comp):
            if comp == main:
                continue
            objs = np.flatnonzero(labels[A:] == comp)
            o_best = objs[np.argmin(design.C_o[objs])]
            a_best = main_a[np.argmin(load[main_a])]
            rows.append({"assessor": a_names[a_best], "object": o_names[o_best], "connects": f"component {comp + 1} to {main + 1}"})
            load[a_best] += 1
        return DesignCheck(n_comp, components, float("nan"), C_o, pd.DataFrame(rows[:max(k, len(rows))]))
    design.C = design.C_a.sum()
    solver = _ReducedSolver(design)
    mu2 = _mu2(solver)
    # Fiedler vector of T (smallest non-trivial eigenvector) from the dense operator
    s_half = np.sqrt(design.C_a)
    M = design.reduced_laplacian(dense=True)
    evals, evecs = np.linalg.eigh(M / np.outer(s_half, s_half))
    g = evecs[:, 1] / s_half
    gbar = (design.Cm @ sp.diags(1.0 / design.C_o)).T @ g  # weighted mean of g over each object's assessors
    score = c_new * (g[:, None] - gbar[None, :]) ** 2
    score[ai, oi] = -np.inf  # already assigned
    n_cand = min(10 * k, int(np.isfinite(score).sum()))
    # candidates by score; scores equal to 1e-9 (symmetric designs) in pair order, so floating-point noise
    # never picks among equals and every platform (CPython, Pyodide) suggests the same pairs
    finite = np.flatnonzero(np.isfinite(score.ravel()))
    key = np.round(score.ravel()[finite] / max(float(score.ravel()[finite].max(initial=0.0)), 1e-300), 9)
    flat = finite[np.lexsort((finite, -key))][:n_cand]
    rows = []
    for idx in flat:
        a, o = divmod(int(idx), O)
        trial = _Design(np.append(ai, a), np.append(oi, o), np.append(c, c_new), A, O)
        trial.C = trial.C_a.sum()
        rows.append({"assessor": a_names[a], "object": o_names[o], "mu2_after": _mu2(_ReducedSolver(trial))})
    suggestions = pd.DataFrame(rows, columns=["assessor", "object", "mu2_after"])
    order = np.lexsort((np.arange(len(suggestions)), -suggestions["mu2_after"].round(9).to_numpy()))
    suggestions = suggestions.iloc[order].head(k).reset_index(drop=True)
    return DesignCheck(1, components, mu2, C_o, suggestions)
