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

from .cells import real_argument, whole_argument
from .errors import InputError
from .inputs import check_calibration_numbers, check_confidence_spread

__all__ = [
    "DEFAULT_LEVELS",
    "DEFAULT_LEVEL_RATIO",
    "Levels",
    "default_levels",
    "levels_table",
    "CalibrationResult",
    "Difference",
    "DesignCheck",
    "calibrate",
    "grid_to_long",
    "design_check",
]

#: Default ratio between adjacent confidence levels (the seed authors' tool uses 1.75): a "High" read
#: counts lambda^2 ~ 3 times a "Medium" read, a "Low" read 1/lambda^2 ~ 1/3 of one.  Levels are
#: *relative* confidences: the noise scale w is estimated from the residuals, so error bars and
#: anomaly flags follow the data's own scatter on any score scale (0-100 as well as 1-9).
DEFAULT_LEVEL_RATIO = 1.75


@dataclass(frozen=True)
class Levels:
    """Confidence levels: level name -> number, and what the number means.

    ``kind="relative"``: relative confidences (weights; High = lambda^2, Medium = 1,
    Low = 1/lambda^2 by default) -- the noise scale w is estimated from the residuals.
    ``kind="sd"``: standard deviations in score units, taken at face value (w = 1),
    and checked against the residual scatter.
    """

    values: dict
    kind: str = "relative"

    def confidences(self) -> dict:
        """Level (lower-cased) -> confidence c = 1/SD^2 or the relative weight."""
        if self.kind == "sd":
            return {k.strip().lower(): 1.0 / v**2 for k, v in self.values.items()}
        return {k.strip().lower(): float(v) for k, v in self.values.items()}

    def describe(self) -> str:
        unit = "SD in score units" if self.kind == "sd" else "relative confidence"
        return f"levels ({unit}): " + ", ".join(f"{k} {v:.4g}" for k, v in self.values.items())


def default_levels(ratio: float = DEFAULT_LEVEL_RATIO) -> Levels:
    """High/Medium/Low as relative confidences ratio^2, 1, ratio^-2."""
    ratio = real_argument(ratio, "level_ratio", low=1.0, high=100.0)
    if not (np.isfinite(ratio) and 1.0 <= ratio <= 100.0):
        raise InputError(f"level_ratio must be a number from 1 to 100, not {ratio:g}")
    return Levels({"High": ratio**2, "Medium": 1.0, "Low": ratio**-2}, "relative")


#: The default levels as a plain mapping: level name -> relative confidence (lambda = 1.75).
DEFAULT_LEVELS: dict = dict(default_levels().values)

#: Header words that mark a levels table's number column as SDs or as relative confidences.
LEVEL_SD_HEADERS = ("sd", "sigma", "standard deviation", "sd (score units)")
LEVEL_RELATIVE_HEADERS = ("relative confidence", "confidence", "weight", "relative weight")

#: Largest assessor count solved with dense factorisation of the reduced
#: A x A system (fast LAPACK); above it, sparse iterative solvers are used.
DENSE_ASSESSOR_LIMIT = 6000
#: Largest assessor count for which sum 1/mu_j is computed exactly; above it,
#: Hutchinson's stochastic trace estimator (fixed seed) is used.
EXACT_TRACE_LIMIT = 2500
TRACE_PROBES = 200

_KINDS = ("sd", "confidence", "level")
#: Most extra assignments design_check suggests (each is verified by exact mu2 solves; time grows with k).
MAX_DESIGN_SUGGESTIONS = 50


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
    #: the ranking table of a run that set a funding line (filled by the macro/CLI path; see :meth:`ranking`)
    decisions: pd.DataFrame | None = None

    def summary(self) -> str:
        """A few plain lines: what was fitted, how precise the values are, what to look at."""
        s = self.stats
        mu2 = s["mu2"]
        mu2_text = ", ".join(f"{m:.4g}" for m in mu2) if isinstance(mu2, list) else f"{mu2:.4g}"
        level = s.get("interval_level", 0.95)
        model = "fixed effects" if s.get("model", "fixed") == "fixed" else "shrinkage (objects as random effects)"
        lines = [
            f"Calibrated {s['n_objects']} objects from {s['n_evaluations']} evaluations by {s['n_assessors']} assessors "
            f"({s['n_components']} connected component{'s' if s['n_components'] != 1 else ''}; {model}).",
            f"Values are on the scale of the {'confidence-weighted ' if s['gauge'] == 'weighted' else ''}average "
            f"assessor (gauge {s['gauge']}); uncertainty given as {s['uncertainty_kind']}; "
            f"noise scale {s.get('noise_scale', '')}"
            + ("." if "w = " in str(s.get("noise_scale", "")) else f" (w = {s['posterior_variance']:.4g})."),
            f"Calibrated values carry a standard error of median {self.values['se'].median():.2g} score units "
            f"({level:.0%} intervals, {s.get('interval_kind', 'normal')}); assessor biases median "
            f"{self.biases['se'].median():.2g}.",
            f"mu2 (assessor overlap, 0..1, larger is better) = {mu2_text}: "
            f"{overlap_verdict(min(mu2) if isinstance(mu2, list) else mu2)}.",
            f"{int(self.residuals['anomalous'].sum())} evaluation(s) flagged anomalous "
            f"(|standardised residual| > {s['anomaly_threshold']:g}).",
        ]
        if s.get("noise_check"):
            lines.append(f"Declared SDs: {s['noise_check']}.")
        return "\n".join(lines)

    def _locate(self, name) -> tuple[Any, int, int]:
        """(posterior, component number, local index) of an object name."""
        posts = getattr(self, "_posteriors", None)
        if not posts:
            raise InputError("this result carries no uncertainty information (make it with xlcalib.calibrate)")
        try:
            g = self.values.index.get_loc(name)
        except KeyError:
            raise InputError(f"object {name!r} is not in this panel") from None
        if not isinstance(g, (int, np.integer)):
            raise InputError(f"object {name!r} is ambiguous in this panel")
        for number, (post, _a_idx, o_idx) in enumerate(posts):
            local = np.searchsorted(o_idx, g)
            if local < o_idx.size and o_idx[local] == g:
                return post, number, int(local)
        raise InputError(f"object {name!r} has no uncertainty record")  # pragma: no cover

    def difference(self, first, second, level: float | None = None) -> "Difference":
        """The calibrated difference v_first - v_second with its standard error and interval.

        Gauge-free (the common offset cancels) and exact: the variance is
        ``w [1/C_1 + 1/C_2 + (d_1 - d_2)' H (d_1 - d_2)]`` from one solve of
        the reduced system.  The interval is normal or t like the values'.
        """
        level = self.stats.get("interval_level", 0.95) if level is None else float(level)
        if not 0.5 <= level < 1.0:
            raise InputError(f"level must be at least 0.5 and below 1, not {level:g}")
        post1, comp1, i = self._locate(first)
        post2, comp2, j = self._locate(second)
        if comp1 != comp2:
            raise InputError(f"objects {first!r} and {second!r} lie in unconnected groups of the panel: "
                             "their difference is not determined by the data")
        estimate = float(self.values.at[first, "value"] - self.values.at[second, "value"])
        se = float(np.sqrt(post1.difference_variance(i, j)))
        t_df = getattr(self, "_t_df", None)
        q = _quantile(0.5 + level / 2, t_df)
        return Difference(first, second, estimate, se, estimate - q * se, estimate + q * se, level)

    def ranking(self, top_k=None, threshold=None, level=None, draws: int = 10_000, seed: int = 0,
                epsilon: float = 0.05, lottery: bool = False, lottery_seed=None) -> pd.DataFrame:
        """Ranks, rank intervals and, with a funding line, P(above the line) and decisions.

        See :func:`xlcalib.decisions.rank_objects` for the columns and the method.
        """
        from .decisions import rank_objects

        return rank_objects(self, top_k=top_k, threshold=threshold, level=level, draws=draws, seed=seed,
                            epsilon=epsilon, lottery=lottery, lottery_seed=lottery_seed)

    def next_reads(self, k, top_k=None, threshold=None, candidates=None, max_load=None, conflicts=None,
                   confidence=None, objective: str = "borderline") -> pd.DataFrame:
        """The k extra (assessor, object) reads that settle the funding decision best (see :mod:`xlcalib.next_reads`)."""
        from .next_reads import suggest_next_reads

        return suggest_next_reads(self, k, top_k=top_k, threshold=threshold, candidates=candidates,
                                  max_load=max_load, conflicts=conflicts, confidence=confidence, objective=objective)

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
    "posterior_variance": "w: 1 when SDs are taken at face value; R/(N-A-O+components) when estimated",
    "w_estimated": "R/(N-A-O+components): about 1 when declared SDs are honest",
    "rms_bound": "confidence-weighted RMS worst-case robustness bound over values and biases (design diagnostic)",
    "noise_scale": "whether w is taken from the declared SDs or estimated from the residual scatter",
    "noise_check": "declared SDs against the residual scatter (chi-square test of R)",
    "noise_check_p": "two-sided p-value of that chi-square test",
    "model": "fixed: the seed's fixed-effects fit; shrinkage: objects as random effects (REML)",
    "interval_level": "coverage of the lower..upper intervals",
    "interval_kind": "normal (SDs at face value) or t (noise scale estimated)",
    "df": "degrees of freedom of the t intervals (N - A - O + components), or of the residual",
    "se_method": "how the standard errors were computed",
    "levels": "the confidence levels used and what their numbers mean",
    "tau2": "shrinkage model: variance of the object values (REML)",
    "shrinkage_lambda": "shrinkage model: w / tau2",
    "gauge": "how the common offset between values and biases is fixed",
    "uncertainty_kind": "what the uncertainty column held",
    "anomaly_threshold": "|standardised residual| above which an evaluation is flagged",
    "trace_method": "how sum 1/mu_j was computed",
}


@dataclass(frozen=True)
class Difference:
    """A calibrated difference between two objects: estimate +- se and its interval."""

    first: Any
    second: Any
    estimate: float
    se: float
    lower: float
    upper: float
    level: float

    def __str__(self) -> str:
        return (f"{self.first} - {self.second} = {self.estimate:.3g} +- {self.se:.2g} "
                f"({self.level:.0%} interval {self.lower:.3g} to {self.upper:.3g})")


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
def levels_table(levels, level_ratio: float = DEFAULT_LEVEL_RATIO) -> Levels:
    """Normalise the ``levels=`` argument of :func:`calibrate` to a :class:`Levels`.

    ``None`` -> the default relative levels (``level_ratio``); a :class:`Levels` passes; a
    mapping holds SDs in score units (as it always has); a two-column table's second header
    decides: ``SD`` -> SDs, ``Relative confidence``/``Confidence``/``Weight`` -> relative.
    """
    if levels is None:
        return default_levels(level_ratio)
    if isinstance(levels, Levels):
        table, kind = dict(levels.values), levels.kind
    elif isinstance(levels, pd.DataFrame):
        if levels.shape[1] < 2:
            raise InputError("the levels table needs two columns: level name and SD (or relative confidence)")
        header = " ".join(str(levels.columns[1]).strip().lower().split())
        if header in LEVEL_SD_HEADERS:
            kind = "sd"
        elif header in LEVEL_RELATIVE_HEADERS:
            kind = "relative"
        else:
            raise InputError(f"levels table: the second column is headed '{levels.columns[1]}'; head it 'SD' "
                             "(standard deviations in score units) or 'Relative confidence'")
        table = dict(zip(levels.iloc[:, 0], levels.iloc[:, 1]))
    else:
        table, kind = dict(levels), "sd"
    if kind not in ("sd", "relative"):
        raise InputError(f"levels kind must be 'sd' or 'relative', not {kind!r}")
    out, seen = {}, set()
    what = "SD" if kind == "sd" else "relative confidence"
    for name, value in table.items():
        key = str(name).strip().lower()
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InputError(f"levels table: the {what} for level '{name}' is not a number ({value!r})") from None
        if not np.isfinite(value) or value <= 0:
            raise InputError(f"levels table: the {what} for level '{name}' must be a positive number, not {value}")
        if key in seen:
            raise InputError(f"levels table: level '{name}' is listed twice")
        seen.add(key)
        out[str(name).strip()] = value
    if not out:
        raise InputError("the levels table is empty")
    return Levels(out, kind)


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
    return check_calibration_numbers(out, name, lambda i: f"{_row_text(i)} ({ids(i)})")


def _factorized_labels(values, name: str) -> tuple[np.ndarray, pd.Index, np.ndarray]:
    """(codes, distinct ids, the ids) -- a blank id (None, NaN, empty text) is an error naming its row.

    Ids are factorised first (hashing in C) and blank text is looked for among
    the *distinct* ids only, so a million evaluations by 5,000 assessors cost
    5,000 string checks, not a million.
    """
    arr = np.asarray(values)
    if arr.dtype.kind not in "iufO":
        arr = arr.astype(object)
    codes, uniques = pd.factorize(arr)
    bad = codes < 0  # NaN / None
    if arr.dtype.kind == "O":
        blank_text = np.fromiter((type(u) is str and not u.strip() for u in uniques), dtype=bool, count=len(uniques))
        if blank_text.any():
            bad |= blank_text[np.maximum(codes, 0)] & (codes >= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{_row_text(i)}: the {name} is blank", {"row": i, "column": name})
    return codes.astype(np.intp, copy=False), pd.Index(uniques, dtype=object if arr.dtype.kind == "O" else None), arr


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
        table = levels.confidences()
        keys = pd.Series(unc, dtype=object).map(lambda x: None if x is None else str(x).strip().lower())
        conf = keys.map(table).to_numpy(dtype=float)
        bad = np.flatnonzero(np.isnan(conf))
        if bad.size:
            i = int(bad[0])
            known = ", ".join(levels.values)
            raise InputError(f"{_row_text(i)} ({ids(i)}): unknown confidence level {unc[i]!r}; known levels: {known}",
                             {"row": i, "column": "level"})
        return check_confidence_spread(conf, lambda i: f"{_row_text(i)} ({ids(i)})")
    values = _numeric(unc, kind, ids)
    bad = np.flatnonzero(values <= 0)
    if bad.size:
        i = int(bad[0])
        raise InputError(f"{_row_text(i)} ({ids(i)}): {kind} must be positive, not {values[i]:g}", {"row": i, "column": kind})
    return check_confidence_spread(1.0 / values**2 if kind == "sd" else values, lambda i: f"{_row_text(i)} ({ids(i)})")


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

    def reduced_laplacian(self, dense: bool, lam: float = 0.0):
        """M = diag(C') - W with W = Cm diag(1/(C_o + lam)) Cm^T (seed eq. 15; lam > 0: shrinkage model)."""
        A = self.n_assessors
        C_o = self.C_o + lam
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
                a_tab, c_tab = a_sorted[idx], c_sorted[idx] / np.sqrt(C_o[objs])[:, None]
                keys.append((a_tab[:, :, None] * A + a_tab[:, None, :]).ravel())
                weights.append((c_tab[:, :, None] * c_tab[:, None, :]).ravel())
            M = np.bincount(np.concatenate(keys), weights=np.concatenate(weights), minlength=A * A).reshape(A, A)
            np.negative(M, out=M)  # in place: no second A x A array
            M[np.diag_indices_from(M)] += self.C_a
            return M
        scaled = self.Cm.multiply(1.0 / C_o[np.newaxis, :]).tocsr()
        W = scaled @ self.Cm.T
        if dense:
            M = -W.toarray()
            M[np.diag_indices_from(M)] += self.C_a
            return M
        return (sp.diags(self.C_a) - W).tocsr()


class _ReducedSolver:
    """Solves M_reg x = r with M_reg = M + C' C'^T / C (SPD; its solution of a
    consistent M b = r automatically satisfies the weighted gauge C'.b = 0).

    With ``lam > 0`` (the shrinkage model) the matrix is M_lam = diag(C') -
    Cm diag(1/(C_o + lam)) Cm^T, already positive definite: no regulariser.
    """

    def __init__(self, design: _Design, lam: float = 0.0):
        self.design = design
        self.lam = float(lam)
        A = design.n_assessors
        self.dense = A <= DENSE_ASSESSOR_LIMIT
        Ca, C = design.C_a, design.C_a.sum()
        self.C = C
        rank_one = 1.0 / C if self.lam == 0.0 else 0.0
        self.rank_one = rank_one
        self.single = self.dense and A > DOUBLE_INVERSE_LIMIT
        if self.dense:
            with _plain_pages():
                M = design.reduced_laplacian(dense=True, lam=self.lam)
                for start in range(0, A, 512) if rank_one else ():  # rank-one term in row chunks: no A x A temporary
                    M[start:start + 512] += np.outer(Ca[start:start + 512] * rank_one, Ca)
                if self.single:
                    # Large panels: factor in single precision (half the time and memory of the O(A^3) step);
                    # solves are refined in double precision against the sparse operator, so estimates keep
                    # full accuracy (see solve()).
                    M = M.astype(np.float32)
                # M is symmetric, so its transpose is the same matrix in Fortran order: LAPACK factors it in place,
                # and later solves need no C-to-Fortran copy of the A x A factor (a copy per solve otherwise).
                self.factor = sla.cho_factor(M.T, lower=True, overwrite_a=True, check_finite=False)
        else:
            M = design.reduced_laplacian(dense=False, lam=self.lam)
            self.op = spla.LinearOperator((A, A), matvec=lambda x: M @ x + Ca * (Ca @ x) * rank_one, dtype=float)
            self.precond = spla.LinearOperator((A, A), matvec=lambda x: x / (Ca + Ca**2 * rank_one), dtype=float)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """M_reg x (or M_lam x) in double precision from the sparse design, without forming W."""
        d = self.design
        Cd = d.C_o + self.lam
        if x.ndim == 1:
            out = d.C_a * x - d.Cm @ ((d.Cm.T @ x) / Cd)
            return out + d.C_a * (d.C_a @ x) * self.rank_one if self.rank_one else out
        out = d.C_a[:, None] * x - d.Cm @ ((d.Cm.T @ x) / Cd[:, None])
        return out + np.outer(d.C_a, d.C_a @ x) * self.rank_one if self.rank_one else out

    def _solve_factor(self, rhs: np.ndarray) -> np.ndarray:
        c = self.factor[0]
        if rhs.ndim == 1:  # BLAS trsv twice: faster than LAPACK potrs for a single right-hand side
            trsv = sla.blas.strsv if self.single else sla.blas.dtrsv
            y = trsv(c, rhs.astype(c.dtype, copy=False), lower=1)
            return trsv(c, y, lower=1, trans=1).astype(float, copy=False)
        return sla.cho_solve(self.factor, rhs.astype(c.dtype, copy=False), check_finite=False).astype(float, copy=False)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        if self.dense and self.single:
            # mixed-precision iterative refinement: single-precision factor, double-precision residuals
            x = self._solve_factor(rhs)
            scale = max(float(np.max(np.abs(rhs))), 1e-300)
            for _ in range(30):
                r = rhs - self.matvec(x)
                if float(np.max(np.abs(r))) <= 1e-13 * scale:
                    return x
                x = x + self._solve_factor(r)
            raise RuntimeError("iterative refinement of the reduced system did not converge")
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
        factor32 = (solver.factor[0].astype(np.float32, order="F", copy=False), solver.factor[1])
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


# ----------------------------------------------------------------------------
# Honest uncertainty: standard errors, intervals, joint draws
# ----------------------------------------------------------------------------
#: Above this many assessors the exact inverse of the reduced system is computed in single precision
#: (from the float64 factor rounded to float32): half the memory and time, relative error of the
#: standard errors ~1e-6 (tested against double precision).
DOUBLE_INVERSE_LIMIT = 2000
#: Perturbation draws used for standard errors on the sparse (A > DENSE_ASSESSOR_LIMIT) path.
SPARSE_SE_DRAWS = 200


class _Posterior:
    """The joint Gaussian distribution of one component's fitted values and biases.

    One form covers both models.  A fixed-effect vector theta (one entry per
    assessor) has covariance ``w H``; values and biases are

        v_o = V_o / (C_o + lam) + (k - d_o)' theta,    d_o = c_.o / (C_o + lam)
        b   = (I - 1 k') theta

    plus, for each value, independent noise of variance ``w / (C_o + lam)``
    (the object's own weighted mean, which is uncorrelated with -- hence, being
    Gaussian, independent of -- the assessor estimates).  ``k`` is the gauge
    (``C'/C`` weighted, ``1/A`` simple).

    *Fixed effects* (the seed's fit, ``lam = 0``): theta is the weighted-gauge
    bias vector, ``H = M_reg^-1 - 1 1'/C`` (the reduced system b = M_reg^-1 r
    with Cov(r) = w M and M_reg^-1 C' = 1 gives Cov(b) = w M_reg^-1 M M_reg^-1
    = w (M_reg^-1 - 1 1'/C)).  Hence the issue's formula
    ``Var(v_o) = w/C_o + u_o' Cov(b) u_o`` with ``u_o = c_.o / C_o``: the cross
    term vanishes because Cov(V_o/C_o, r) = 0.

    *Shrinkage* (objects as random effects N(mu, tau^2), ``lam = w/tau^2``):
    theta_a = mu + b_a, ``H = M_lam^-1`` (Henderson's mixed-model equations
    with objects eliminated); the variances are posterior (prediction-error)
    variances.
    """

    def __init__(self, design: _Design, solver: _ReducedSolver | None, w: float, lam: float, gauge: str):
        self.design, self.solver, self.w, self.lam = design, solver, float(w), float(lam)
        A = design.n_assessors
        self.fixed = lam == 0.0
        self.k = design.C_a / design.C_a.sum() if gauge == "weighted" else np.full(A, 1.0 / A)
        self.Cd = design.C_o + lam
        # D: objects x assessors, d_oa = c_ao / (C_o + lam)
        self.D = sp.csr_matrix((design.c / self.Cd[design.oi], (design.oi, design.ai)),
                               shape=(design.n_objects, A))
        self._inverse = None
        self._draw_pieces = None
        self.method = "exact"

    # ------------------------------------------------------------------ pieces
    def _H_apply(self, x: np.ndarray) -> np.ndarray:
        """H x (exact, through the solver)."""
        if self.solver is None:
            return np.zeros_like(x)
        y = self.solver.solve(x)
        if self.fixed:
            y = y - x.sum(axis=0) / self.solver.C
        return y

    def inverse(self) -> np.ndarray:
        """The dense inverse G of the reduced matrix (lower triangle valid), computed once."""
        if self._inverse is None:
            c, _lower = self.solver.factor
            with _plain_pages():
                if c.dtype == np.float64:
                    inv, info = sla.lapack.dpotri(c, lower=1, overwrite_c=False)
                else:
                    inv, info = sla.lapack.spotri(c, lower=1, overwrite_c=False)
                    self.method = "exact formula, single-precision inverse (relative error of the SEs ~1e-6)"
            if info != 0:
                raise RuntimeError(f"inverting the reduced system failed (LAPACK info {info})")
            self._inverse = inv
        return self._inverse

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
        for r in np.unique(reads):
            objs = np.flatnonzero(reads == r)
            idx = first[objs][:, None] + np.arange(r, dtype=np.intp)[None, :]
            a_tab, w_tab = a_sorted[idx], w_sorted[idx]
            for i in range(r):  # r^2 vectorised gathers over all objects with r reads
                hi = np.maximum(a_tab[:, i:i + 1], a_tab)
                lo = np.minimum(a_tab[:, i:i + 1], a_tab)
                out[objs] += w_tab[:, i] * np.einsum("ij,ij->i", w_tab, G[hi, lo])
        return out

    def _draw_theta_sparse(self, n: int, rng) -> np.ndarray:
        """Perturb-and-solve draws of theta ~ N(0, H): refit noise e ~ N(0, 1/c) (sparse path, fixed model)."""
        d = self.design
        out = np.empty((d.n_assessors, n))
        for j in range(n):
            e = rng.standard_normal(d.c.size) / np.sqrt(d.c)
            E = np.bincount(d.oi, weights=d.c * e, minlength=d.n_objects)
            r = np.bincount(d.ai, weights=d.c * (e - E[d.oi] / d.C_o[d.oi]), minlength=d.n_assessors)
            out[:, j] = self._H_apply(r)
        return out

    # ------------------------------------------------------------------ variances
    def variances(self) -> tuple[np.ndarray, np.ndarray]:
        """(Var(v_o), Var(b_a)) in score units squared (including w)."""
        d = self.design
        if self.solver is None:  # one assessor: b = 0 exactly, v_o its weighted mean
            return self.w / self.Cd, np.zeros(d.n_assessors)
        if not self.solver.dense:
            xi = self._draw_theta_sparse(SPARSE_SE_DRAWS, np.random.default_rng(20240611))
            vals = (self.k @ xi)[None, :] - self.D @ xi
            bias = xi - (self.k @ xi)[None, :]
            self.method = f"Monte Carlo, {SPARSE_SE_DRAWS} perturbation draws (relative s.e. of the SEs ~5%)"
            return (self.w * (1.0 / self.Cd + np.mean(vals**2, axis=1)), self.w * np.mean(bias**2, axis=1))
        G = self.inverse()
        h = self._H_apply(self.k)
        kappa = float(self.k @ h)
        diagG = np.diagonal(G).astype(float)
        Hdiag = diagG - (1.0 / self.solver.C if self.fixed else 0.0)
        var_b = Hdiag - 2.0 * h + kappa
        dGd = self._pair_sums(G)
        if self.fixed:
            dGd = dGd - (d.C_o / self.Cd) ** 2 / self.solver.C
        var_v = 1.0 / self.Cd + dGd - 2.0 * (self.D @ h) + kappa
        return self.w * np.maximum(var_v, 0.0), self.w * np.maximum(var_b, 0.0)

    def difference_variance(self, o1: int, o2: int) -> float:
        """Var(v_o1 - v_o2): gauge-free, exact on every path (one solve)."""
        if o1 == o2:
            return 0.0
        x = (self.D[o1] - self.D[o2]).toarray().ravel()
        q = float(x @ self._H_apply(x)) if self.solver is not None else 0.0
        return self.w * (1.0 / self.Cd[o1] + 1.0 / self.Cd[o2] + q)

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
        d = self.design
        self._single_precision_pieces()  # here, in the calling thread: worker threads then only read them
        if self.solver is None:
            return np.zeros((d.n_assessors, n))
        if not self.solver.dense:
            return self._draw_theta_sparse(n, rng)
        z = rng.standard_normal((d.n_assessors, n))
        factor = self.solver.factor[0]
        xi = sla.solve_triangular(factor, z.astype(factor.dtype, copy=False), lower=True, trans="T",
                                  check_finite=False).astype(float, copy=False)
        if self.fixed:  # project N(0, M_reg^-1) onto the weighted gauge: covariance M_reg^-1 - 1 1'/C
            xi -= (d.C_a @ xi)[None, :] / self.solver.C
        return xi

    def draw_deviations(self, n: int, rng, xi: np.ndarray | None = None) -> np.ndarray:
        """n joint draws of (v - v_hat), as a draws x objects float32 array (before any t scaling).

        ``xi`` (from :meth:`draw_theta` with the same *rng*) may be drawn
        beforehand; without it it is drawn here.  Single precision is ample for
        Monte Carlo ranks and halves the memory traffic of the sort.
        """
        if xi is None:
            xi = self.draw_theta(n, rng)
        scale, D32, k32 = self._single_precision_pieces()
        xi32 = xi.astype(np.float32)
        dev = rng.standard_normal((n, self.design.n_objects), dtype=np.float32)
        dev *= scale[None, :]
        shared = D32 @ xi32  # objects x draws: each object's share of the assessor-level deviations
        shared -= (k32 @ xi32)[None, :]
        dev -= shared.T
        return dev


def _fit_shrinkage(design: _Design, s: np.ndarray, fixed_w: bool = False):
    """REML fit of the shrinkage model: objects ~ N(mu, tau^2), assessor effects fixed.

    theta_a = mu + b_a (A fixed effects, always estimable), u_o ~ N(0, tau^2),
    e ~ N(0, w/c).  With lam = w/tau^2 the restricted likelihood, w profiled out
    (w = R_lam/(N - A)), is

        -2 l(lam) = (N - A) log R_lam + sum_o log(1 + C_o/lam) + log|M_lam| + const,

    R_lam = min sum c (s - theta_a - u_o)^2 + lam sum u_o^2 (Henderson), minimised
    over log lam with a bounded scalar search.  With ``fixed_w`` (SDs at face
    value) w = 1 and -2 l = R_lam + sum_o log(1 + C_o/lam) + log|M_lam|.
    Returns (theta, u, lam, w, solver, at_upper_edge).
    """
    from scipy.optimize import minimize_scalar

    N, A = design.c.size, design.n_assessors
    if N - A <= 0:
        raise InputError(f"the shrinkage model needs more evaluations than assessors ({N} <= {A})")
    c = design.c
    V = np.bincount(design.oi, weights=c * s, minlength=design.n_objects)
    B = np.bincount(design.ai, weights=c * s, minlength=A)

    def solve(lam):
        solver = _ReducedSolver(design, lam=lam)
        Cd = design.C_o + lam
        theta = solver.solve(B - design.Cm @ (V / Cd))
        u = (V - design.Cm.T @ theta) / Cd
        resid = s - theta[design.ai] - u[design.oi]
        R = float(c @ resid**2 + lam * u @ u)
        return solver, theta, u, R

    def objective(log_lam):
        lam = float(np.exp(log_lam))
        solver, _theta, _u, R = solve(lam)
        logdet = 2.0 * np.sum(np.log(np.diagonal(solver.factor[0])))
        fit = R if fixed_w else (N - A) * np.log(max(R, 1e-300))
        return fit + np.sum(np.log1p(design.C_o / lam)) + logdet

    scale = float(np.median(design.C_o))
    lo, hi = np.log(scale * 1e-6), np.log(scale * 1e6)
    best = minimize_scalar(objective, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    lam = float(np.exp(best.x))
    solver, theta, u, R = solve(lam)
    w = 1.0 if fixed_w else R / (N - A)
    return theta, u, lam, w, solver, bool(best.x > hi - 1e-3)


def overlap_verdict(mu2: float) -> str:
    """Plain words for mu2, the assessor overlap (0 = assessors not tied together, 1 = everyone reads everything).

    The thresholds are rules of thumb: the seed's robustness bounds grow like sqrt(2/mu2), so below 0.1 a
    perturbation of the scores can move values by more than about 4.5x its own confidence-weighted size.
    """
    if not np.isfinite(mu2):
        return "not defined"
    return "good" if mu2 >= 0.3 else "fair" if mu2 >= 0.1 else "poor: biases poorly determined; add shared reads"


def _quantile(q: float, t_df) -> float:
    """Normal (t_df None) or Student-t quantile; scipy.special keeps scipy.stats' slow import off this path."""
    from scipy.special import ndtri, stdtrit

    return float(stdtrit(t_df, q)) if t_df else float(ndtri(q))


def _noise_check(R: float, dof: int) -> tuple[str, float]:
    """Declared SDs against the residual scatter: chi-square test of R on its degrees of freedom.

    Returns (plain-words verdict, two-sided p-value).
    """
    from scipy.special import chdtr, chdtrc

    if dof <= 0:
        return "the panel has no spare evaluations to check the declared SDs against", float("nan")
    if not R > 0:
        return "the scores fit the model exactly: no residual scatter to check the declared SDs against", float("nan")
    ratio = float(np.sqrt(R / dof))
    p = float(min(1.0, 2 * min(chdtrc(dof, R), chdtr(dof, R))))
    p_text = f"p = {p:.2g}" if p > 0 else "p < 1e-300"  # the tail underflows double precision: never "p = 0"
    base = f"(chi-square {R:.4g} on {dof} degrees of freedom, {p_text})"
    if p < 0.01 and ratio > 1.0:
        return (f"the scores scatter about {ratio:.1f}x more than the declared SDs allow {base}; the error bars use the "
                "declared SDs, so they are too narrow -- consider relative confidence levels, which estimate the "
                "scatter", p)
    if p < 0.01 and ratio < 1.0:
        return (f"the scores scatter about {1 / ratio:.1f}x less than the declared SDs suggest {base}; the error bars "
                "use the declared SDs, so they are wider than the data need", p)
    return f"the declared SDs agree with the scores' scatter {base}", p


def calibrate(evaluations: pd.DataFrame | None = None, *, assessors=None, objects=None, scores=None,
              sd=None, confidence=None, level=None, levels=None, level_ratio: float = DEFAULT_LEVEL_RATIO,
              gauge: str = "weighted", per_component: bool = False, anomaly_threshold: float = 3.0,
              interval_level: float = 0.95, model: str = "fixed") -> CalibrationResult:
    """Calibrated object values and assessor biases with standard errors and intervals.

    Fits ``s_ao = v_o + b_a + sigma_ao eta_ao`` by minimising
    ``sum c_ao (s_ao - v_o - b_a)^2`` with ``c_ao = 1/sigma_ao^2`` (seed eq. 4),
    solving the reduced assessor system (eq. 15) and recovering values by
    eq. 13.

    Uncertainty (what the user-facing +- is): the sampling covariance of the
    weighted least-squares fit, ``w L^+`` restricted to the gauge, computed
    from the reduced system (see :class:`_Posterior` for the derivation):
    ``Var(v_o) = w/C_o + u_o' Cov(b) u_o`` with ``u_o = c_.o/C_o`` and
    ``Cov(b) = w (M_reg^-1 - 1 1'/C)`` in the weighted gauge.  Intervals at
    ``interval_level`` are normal when SDs are taken at face value (w = 1) and
    Student t with ``N - A - O + components`` degrees of freedom when w is
    estimated.  The seed's robustness bounds stay as ``robustness_bound``: a
    worst-case design diagnostic, not an error bar.

    Parameters
    ----------
    evaluations:
        Long table with columns ``assessor``, ``object``, ``score`` and exactly
        one of ``sd`` (sigma_ao > 0, score units), ``confidence`` (c_ao > 0,
        relative weights; the noise scale w is then estimated) or ``level``
        (text mapped by ``levels``).  Column names are matched
        case-insensitively; extra columns are ignored.
    assessors, objects, scores, sd, confidence, level:
        The same data as parallel sequences (instead of ``evaluations``).
    levels:
        ``None`` (default): High/Medium/Low are *relative* confidences
        ``level_ratio**2, 1, level_ratio**-2`` and w is estimated.  A mapping
        gives SDs in score units (w = 1); a :class:`Levels` or a two-column
        table (second header ``SD`` or ``Relative confidence``) says which.
    level_ratio:
        Ratio lambda between adjacent default levels (1.75, as the seed
        authors' tool).
    gauge:
        ``"weighted"`` (sum C'_a b_a = 0, the seed's preferred condition) or
        ``"simple"`` (sum b_a = 0).  Values move by the same constant the
        biases lose; standard errors and bounds are those of the gauge chosen.
    per_component:
        Fit each connected component with its own gauge (values of different
        components are then *not* comparable); otherwise a disconnected panel
        is an error.
    anomaly_threshold:
        Evaluations with ``|std_residual| > anomaly_threshold`` are flagged.
    interval_level:
        Coverage of the ``lower``/``upper`` intervals (default 0.95).
    model:
        ``"fixed"`` (default: the seed's fixed-effects fit) or ``"shrinkage"``
        (objects as random effects N(mu, tau^2), tau^2 and w by REML; values
        are posterior means with posterior SDs -- fairer to objects with few or
        low-confidence reads, which the fixed fit pushes to the extremes).

    Returns
    -------
    CalibrationResult
        ``values`` (value, se, lower, upper, robustness_bound, total_confidence,
        n, raw_mean), ``biases`` (bias, se, lower, upper, robustness_bound,
        total_confidence, n), ``residuals``, ``stats``; methods
        :meth:`~CalibrationResult.difference` and :meth:`~CalibrationResult.ranking`.

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
    >>> round(float(r.values["se"].iloc[0]), 6)   # sqrt(w / C_o) = sqrt(1/2): the biases cancel in u_o' Cov(b) u_o
    0.707107
    """
    if gauge not in ("weighted", "simple"):
        raise InputError(f"gauge must be 'weighted' or 'simple', not {gauge!r}")
    if model not in ("fixed", "shrinkage"):
        raise InputError(f"model must be 'fixed' or 'shrinkage', not {model!r}")
    anomaly_threshold = real_argument(anomaly_threshold, "anomaly_threshold", low=0, low_open=True)
    try:
        anomaly_threshold = float(anomaly_threshold)
        interval_level = float(interval_level)
    except (TypeError, ValueError):
        raise InputError("anomaly_threshold and interval_level must be numbers") from None
    if not anomaly_threshold > 0:
        raise InputError("anomaly_threshold must be positive")
    if not 0.5 <= interval_level < 1.0:
        raise InputError(f"interval_level must be at least 0.5 and below 1 (e.g. 0.95), not {interval_level:g}")

    a_raw, o_raw, s_raw, unc, kind = _collect(evaluations, assessors, objects, scores, sd, confidence, level)
    N = len(a_raw)
    if N == 0:
        raise InputError("there are no evaluations")
    ai, a_names, a_lab = _factorized_labels(a_raw, "assessor")
    oi, o_names, o_lab = _factorized_labels(o_raw, "object")
    ids = lambda i: f"assessor {a_lab[i]}, object {o_lab[i]}"  # noqa: E731
    s = _numeric(s_raw, "score", ids)
    level_table = levels_table(levels, level_ratio) if kind == "level" else None
    c = _confidences(unc, kind, level_table, ids)
    face_value = kind == "sd" or (kind == "level" and level_table.kind == "sd")
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
    labels = labels.astype(np.intp, copy=False)
    if n_comp > 1 and not per_component:
        comp_a = labels[:A]
        shown = 5  # a message stays one readable line however many groups there are
        groups = [", ".join(map(str, a_names[comp_a == k][:8])) + (" ..." if (comp_a == k).sum() > 8 else "")
                  for k in range(min(n_comp, shown))]
        listing = "; ".join(f"component {k + 1}: {g}" for k, g in enumerate(groups))
        if n_comp > shown:
            listing += f"; and {n_comp - shown} more groups"
        raise InputError(
            f"the panel is not connected: {n_comp} groups of assessors share no objects, so their standards cannot be "
            f"compared ({listing}). Add evaluations that link the groups, or use per_component=True."
        )
    if model == "shrinkage" and A > DENSE_ASSESSOR_LIMIT:
        raise InputError(f"the shrinkage model is available up to {DENSE_ASSESSOR_LIMIT} assessors (this panel has {A})")

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
    lam_list, tau2_list, boundary = [], [], False
    w_shrink = []
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
        if model == "shrinkage" and design.n_assessors >= 1:
            theta, u, lam, wk, solver, at_edge = _fit_shrinkage(design, s[e_mask], fixed_w=face_value)
            kvec = design.C_a / design.C if gauge == "weighted" else np.full(a_idx.size, 1.0 / a_idx.size)
            mu = float(kvec @ theta)
            vk, bk = mu + u, theta - mu
            lam_list.append(lam)
            tau2_list.append(wk / lam)
            w_shrink.append(wk)
            boundary |= at_edge
            fit_solver = None if design.n_assessors == 1 else _ReducedSolver(design)  # for mu2 and bounds
        else:
            vk, bk, fit_solver = _fit_component(design, s[e_mask])
            solver, lam = fit_solver, 0.0
        v[o_idx], b[a_idx] = vk, bk
        fits.append((design, fit_solver, a_idx, o_idx, e_mask, solver, lam))

    fitted = v[oi] + b[ai]
    resid = s - fitted
    R = float(np.sum(c * resid**2))
    dof = N - A - O + n_comp
    w_est = R / dof if dof > 0 else float("nan")
    estimated = not face_value
    if model == "shrinkage":
        # each component has its own REML noise scale; the panel figure is their evaluation-weighted mean
        w = float(np.average(w_shrink, weights=[f[4].sum() for f in fits]))
        t_df = N - A if estimated else None
    elif estimated:
        if dof <= 0:
            what = "confidence levels (relative)" if kind == "level" else "confidences (relative weights)"
            raise InputError(
                f"{what} need more evaluations than parameters to estimate the noise scale: "
                f"N - A - O + components = {N} - {A} - {O} + {n_comp} = {dof}; give SDs instead or add evaluations"
            )
        w = w_est
        t_df = dof
    else:
        w = 1.0
        t_df = None

    value_bound = np.empty(O)
    bias_bound = np.empty(A)
    value_var = np.empty(O)
    bias_var = np.empty(A)
    posteriors = []
    mu2s, rms_list, trace_methods, se_methods = [], [], [], []
    for design, solver, a_idx, o_idx, e_mask, unc_solver, lam in fits:
        Nk = int(e_mask.sum())
        mu2 = float("nan") if solver is None else _mu2(solver)
        vb, bb, factor = _bounds(design, mu2, Nk, w, gauge)
        value_bound[o_idx], bias_bound[a_idx] = vb, bb
        C = design.C
        post = _Posterior(design, unc_solver, w_shrink[len(posteriors)] if model == "shrinkage" else w, lam, gauge)
        value_var[o_idx], bias_var[a_idx] = post.variances()
        se_methods.append(post.method)
        posteriors.append((post, a_idx, o_idx))
        if estimated:
            if solver is None:
                inv_red, method = 0.0, "exact (one assessor)"
            elif post._inverse is not None and post.fixed:  # the inverse the SEs needed gives the trace for free
                inv_red = float(design.C_a @ np.diagonal(post._inverse).astype(float)) - 1.0
                method = "exact (inverse of the reduced system)"
            else:
                inv_red, method = _sum_inverse_reduced(solver)
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

    if gauge == "simple" and model == "fixed":
        for design, solver, a_idx, o_idx, e_mask, _u, _l in fits:
            m = b[a_idx].mean()
            b[a_idx] -= m
            v[o_idx] += m
        fitted = v[oi] + b[ai]

    quantile = _quantile(0.5 + interval_level / 2, t_df)
    v_se, b_se = np.sqrt(value_var), np.sqrt(bias_var)
    std_res = np.sqrt(c) * resid / np.sqrt(w)
    raw_mean = np.bincount(oi, weights=s, minlength=O) / np.bincount(oi, minlength=O)
    values = pd.DataFrame(
        {"value": v, "se": v_se, "lower": v - quantile * v_se, "upper": v + quantile * v_se,
         "robustness_bound": value_bound, "total_confidence": _per(fits, "C_o", O, "o"),
         "n": np.bincount(oi, minlength=O), "raw_mean": raw_mean},
        index=pd.Index(o_names.to_numpy(), name="object"),
    )
    biases = pd.DataFrame(
        {"bias": b, "se": b_se, "lower": b - quantile * b_se, "upper": b + quantile * b_se,
         "robustness_bound": bias_bound, "total_confidence": _per(fits, "C_a", A, "a"),
         "n": np.bincount(ai, minlength=A)},
        index=pd.Index(a_names.to_numpy(), name="assessor"),
    )
    residuals = pd.DataFrame(
        {"assessor": a_lab, "object": o_lab, "score": s, "fitted": fitted, "residual": resid,
         "std_residual": std_res, "anomalous": np.abs(std_res) > anomaly_threshold}
    )
    if per_component:
        values["component"] = comp_of_o + 1
        biases["component"] = comp_of_a + 1
        residuals["component"] = comp_of_e + 1

    single = n_comp == 1
    noise_check, noise_p = _noise_check(R, dof) if face_value and model == "fixed" else ("", float("nan"))
    stats: dict[str, Any] = {
        "n_evaluations": N,
        "n_assessors": A,
        "n_objects": O,
        "n_components": n_comp,
        "mu2": mu2s[0] if single else mu2s,
        "residual": R,
        "posterior_variance": w,
        "w_estimated": w_est,
        "noise_scale": "declared SDs taken at face value (w = 1)" if face_value
        else "estimated from the residual scatter",
        "noise_check": noise_check,
        "noise_check_p": noise_p,
        "model": model,
        "interval_level": interval_level,
        "interval_kind": "t" if t_df else "normal",
        "df": int(t_df) if t_df else dof,
        "se_method": se_methods[0] if single else se_methods,
        "rms_bound": rms_list[0] if single else rms_list,
        "gauge": gauge,
        "gauge_meaning": "sum of C'_a b_a = 0 (confidence-weighted mean bias zero)" if gauge == "weighted"
        else "sum of b_a = 0 (plain mean bias zero)",
        "uncertainty_kind": kind,
        "levels": level_table.describe() if level_table is not None else "",
        "anomaly_threshold": anomaly_threshold,
        "bound_meaning": "worst-case robustness bound (design diagnostic, not an error bar): largest change of a "
                         "value/bias (score units) caused by score errors of total size sum c ds^2 <= N w"
                         + ("" if gauge == "weighted" else
                            "; simple-gauge bounds derived for validity (not the seed's /sqrt 2)"),
    }
    if model == "shrinkage":
        stats["tau2"] = tau2_list[0] if single else tau2_list
        stats["shrinkage_lambda"] = lam_list[0] if single else lam_list
        if boundary:
            stats["shrinkage_note"] = "REML put the spread of object values at (nearly) zero: values are pooled"
    if estimated:
        stats["trace_method"] = trace_methods[0] if single else trace_methods
    result = CalibrationResult(values=values, biases=biases, residuals=residuals, stats=stats)
    result._posteriors = posteriors
    result._t_df = t_df
    return result


def _per(fits, attr: str, size: int, which: str) -> np.ndarray:
    out = np.empty(size)
    for design, _solver, a_idx, o_idx, _e, *_rest in fits:
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
    k = whole_argument(k, "k", low=0, high=MAX_DESIGN_SUGGESTIONS, why="each suggestion is checked by 10 exact mu2 solves")
    ai, a_names, a_lab = _factorized_labels(assessors, "assessor")
    oi, o_names, o_lab = _factorized_labels(objects, "object")
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
    A, O = len(a_names), len(o_names)
    if A < 2 or O < 2:
        raise InputError("a design needs at least two assessors and two objects")
    if k > (k_max := max(5, int(MAX_DESIGN_SUGGESTIONS * (100 / max(A, 100)) ** 3))):  # exact solves cost ~A^3; 5 = default
        raise InputError(f"with {A} assessors at most {k_max} suggestion(s) can be checked within about a minute "
                         f"(each costs 10 exact mu2 solves of a {A} x {A} system); lower k")
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
