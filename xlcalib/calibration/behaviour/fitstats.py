"""Fit statistics per assessor and per object: infit and outfit mean-squares, and the unexpected reads ranked.

Why: a shift (and a gain) says how an assessor scores on average; it does not say whether they score
*consistently*.  An erratic assessor's reads scatter more around what the panel expects of them than the
confidences allow; a "too predictable" one scatters less (a halo: every object scored near the same mark, or
scores copied from a first reader).  Exam boards read these as FACETS and Winsteps report them.

The residual standardised (and why it is not FACETS' own): FACETS divides a residual by the model SD of the
observation, ``z = (s - E) / sqrt(W)``, whose expected square is ``1 - h`` (h the read's leverage) -- near 1
in a Rasch analysis with many observations per parameter, but near 0.7 on a panel whose objects have three or
four reads.  xlcalib divides by the residual's own model SD, ``z = e / sqrt(w (1 - h) / c)``, so a
mean-square is about 1 when the model holds, however few reads there are.  For every model of
:mod:`xlcalib.calibration.models` the fitted score is ``V_o/(C_o + lam) - d_o' theta + theta_a``, so

    h_ao = c_ao / (C_o + lam) + c_ao (e_a - d_o)' H (e_a - d_o)

with ``H`` the posterior covariance of theta in units of w (exact for the fixed fit; for the random-effects
models the smoother at the fitted variances); on the sparse path (more assessors than a dense factor allows)
the bias part is left out and ``h ~ c/(C_o + lam)``, which the statistics' ``leverage`` attribute says.

Mean-squares of an element (assessor or object) over its reads (Wright & Masters 1982, "Rating scale
analysis", pp. 100-101; Linacre, FACETS manual, "Fit statistics"):

* outfit = mean of z^2 (unweighted: sensitive to single outlying reads);
* infit = sum W z^2 / sum W, information-weighted.  In a Rasch model the weight W, the observation's model
  variance, *is* its statistical information; in the Gaussian model here the information of a read is
  c_ao / w, so that is the weight (with equal confidences infit and outfit then coincide up to leverage).

Both are about 1 when the model holds; above 1.5 the element is erratic (more scatter than the confidences
allow), below 0.5 too predictable (muted or halo-like).  A mean-square from few reads is noisy, so each comes
with its Wilson-Hilferty standardisation ``ZSTD = (MS^(1/3) - 1)(3/q) + q/3`` with ``q^2 = 2/n`` (outfit) or
``2 sum W^2 / (sum W)^2`` (infit) -- the Gaussian model's fourth moment -- and the reading calls an element
erratic or too predictable only when its ZSTD says the departure is beyond chance (|ZSTD| > 2).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...cells import whole_argument
from ...errors import InputError

__all__ = ["ERRATIC", "PREDICTABLE", "SIGNIFICANT_ZSTD", "ReadGeometry", "read_geometry", "residual_table",
           "mean_squares",
           "fit_statistics", "unexpected_reads", "fit_reading"]

#: Mean-squares above this read as erratic, below PREDICTABLE as too predictable (Linacre's "productive for
#: measurement" range 0.5-1.5).
ERRATIC = 1.5
PREDICTABLE = 0.5
#: A mean-square departs from 1 beyond chance when its ZSTD is beyond +-2 (FACETS' convention).
SIGNIFICANT_ZSTD = 2.0
#: Reads fitted (almost) exactly by their own score (leverage ~1) carry no residual to judge: left out.
MAX_LEVERAGE = 1.0 - 1e-9


@dataclass(frozen=True)
class ReadGeometry:
    """Each evaluation (in the residuals' order) as its component's posterior sees it.

    ``component``/``assessor``/``obj``: its component and the positions of its assessor and object in the
    result's ``biases``/``values``; ``confidence``/``residual``: c and s - fitted in the fit's units (the
    rescaled scores when scale use was modelled); ``noise``: w of its component; ``leverage``: h (see the module
    docstring); ``exact``: False when the bias part of h was left out (sparse path).
    """

    component: np.ndarray
    assessor: np.ndarray
    obj: np.ndarray
    local_assessor: np.ndarray
    local_object: np.ndarray
    confidence: np.ndarray
    residual: np.ndarray
    noise: np.ndarray
    leverage: np.ndarray
    exact: bool

    @property
    def studentised(self) -> np.ndarray:
        """z = e sqrt(c) / sqrt(w (1 - h)); NaN for a read fitted exactly by its own score."""
        room = 1.0 - self.leverage
        ok = room > 1.0 - MAX_LEVERAGE
        z = np.full(self.residual.size, np.nan)
        z[ok] = self.residual[ok] * np.sqrt(self.confidence[ok] / (self.noise[ok] * room[ok]))
        return z


def _gathered(G: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """G[a, b] for symmetric G of which only the lower triangle may be valid (LAPACK potri)."""
    return G[np.maximum(rows, cols), np.minimum(rows, cols)]


def _leverage(post) -> tuple[np.ndarray, bool]:
    """h of every read of one component's posterior (module docstring), and whether it is exact."""
    d = post.design
    base = d.c / post.Cd[d.oi]
    if post.cov is None:
        return base, True
    if post.iterative:
        return base, False
    G = np.asarray(post.cov.inverse())
    shift = float(post.cov.shift)
    dvec = d.c / post.Cd[d.oi]
    quad = np.empty(d.c.size)
    counts = np.bincount(d.oi, minlength=d.n_objects)
    order = np.argsort(d.oi, kind="stable")
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.intp)
    for r in np.unique(counts[counts > 0]):
        objs = np.flatnonzero(counts == r)
        pos = order[first[objs][:, None] + np.arange(r, dtype=np.intp)[None, :]]  # reads of each object
        a_tab, d_tab = d.ai[pos], dvec[pos]
        Gq = _gathered(G, a_tab[:, :, None], a_tab[:, None, :]).astype(float)  # n x r x r
        Hd = np.einsum("nij,nj->ni", Gq, d_tab)
        dHd = np.einsum("ni,ni->n", d_tab, Hd)
        quad[pos] = np.diagonal(Gq, axis1=1, axis2=2) - 2.0 * Hd + dHd[:, None]
    gauge = shift * (1.0 - d.C_o / post.Cd)[d.oi] ** 2
    return base + d.c * (quad - gauge), True


def read_geometry(result) -> ReadGeometry:
    """Where every evaluation sits in its component's posterior, with its leverage (see :class:`ReadGeometry`);
    made once per result (the fit statistics, the unexpected reads, exact agreement, group bias and the
    Residuals table all read it)."""
    made = getattr(result, "_made", None)
    if made is not None and "geometry" in made:
        return made["geometry"]
    geometry = _read_geometry(result)
    if made is not None:
        made["geometry"] = geometry
    return geometry


def residual_table(result) -> pd.DataFrame:
    """The residuals with each read's ``leverage`` h and its ``z`` = e sqrt(c / (w (1 - h))), the residual over
    its own expected spread: the z the fit statistics square (outfit is the mean z^2 of an assessor's rows);
    ``std_residual`` = e sqrt(c / w) leaves out the leverage, so it is smaller than z, most at few reads."""
    geo = read_geometry(result)
    table = result.residuals.copy()
    table["leverage"] = geo.leverage
    table["z"] = geo.studentised
    return table


def _read_geometry(result) -> ReadGeometry:
    if not result.components:
        raise InputError("this result carries no uncertainty information (make it with xlcalib.calibrate)")
    res = result.residuals
    a_pos = result.biases.index.get_indexer(pd.Index(res["assessor"].to_numpy(), dtype=object))
    o_pos = result.values.index.get_indexer(pd.Index(res["object"].to_numpy(), dtype=object))
    if (a_pos < 0).any() or (o_pos < 0).any():
        raise InputError("the residuals name assessors or objects the result does not hold")
    N = len(res)
    comp_of_a = np.full(len(result.biases), -1, dtype=np.intp)
    for k, part in enumerate(result.components):
        comp_of_a[part.assessor_index] = k
    comp = comp_of_a[a_pos]
    out = {key: np.empty(N) for key in ("confidence", "residual", "noise", "leverage")}
    local_a, local_o = np.empty(N, dtype=np.intp), np.empty(N, dtype=np.intp)
    w_panel = float(result.stats.get("posterior_variance", 1.0))
    std = res["std_residual"].to_numpy(dtype=float)
    exact = True
    for k, part in enumerate(result.components):
        rows = np.flatnonzero(comp == k)
        post = part.posterior
        d = post.design
        if d.c.size != rows.size:
            raise InputError("this result's components do not match its residuals (was the result edited?)")
        h, ok = _leverage(post)
        exact &= ok
        out["confidence"][rows], out["noise"][rows], out["leverage"][rows] = d.c, post.w, h
        out["residual"][rows] = std[rows] * np.sqrt(w_panel / d.c)
        local_a[rows], local_o[rows] = d.ai, d.oi
    return ReadGeometry(comp, a_pos.astype(np.intp), o_pos.astype(np.intp), local_a, local_o, out["confidence"],
                        out["residual"], out["noise"], np.clip(out["leverage"], 0.0, 1.0), exact)


def _zstd(ms: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Wilson-Hilferty cube-root standardisation of a mean-square with model SD q (as FACETS reports ZStd)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.cbrt(ms) - 1.0) * (3.0 / q) + q / 3.0


def mean_squares(z, weight, group, n_groups: int) -> pd.DataFrame:
    """Infit and outfit mean-squares of standardised residuals *z* by *group* (0..n_groups-1), with their ZSTD.

    ``outfit_g = mean z^2``, ``infit_g = sum W z^2 / sum W`` (Wright & Masters 1982, pp. 100-101); a NaN z
    is left out.  ZSTD as in the module docstring (Gaussian fourth moment: Var(z^2) = 2).

    Examples
    --------
    >>> import numpy as np
    >>> ms = mean_squares(np.array([1.0, -2.0, 0.5, 0.0]), np.array([1.0, 1.0, 2.0, 2.0]), np.array([0, 0, 1, 1]), 2)
    >>> ms[["n", "infit", "outfit"]].round(4).to_dict("list")
    {'n': [2, 2], 'infit': [2.5, 0.125], 'outfit': [2.5, 0.125]}
    """
    z = np.asarray(z, dtype=float)
    weight = np.asarray(weight, dtype=float)
    group = np.asarray(group, dtype=np.intp)
    ok = np.isfinite(z)
    z2, W, g = z[ok] ** 2, weight[ok], group[ok]
    n = np.bincount(g, minlength=n_groups)
    sw = np.bincount(g, W, n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        outfit = np.bincount(g, z2, n_groups) / n
        infit = np.bincount(g, W * z2, n_groups) / sw
        q_out = np.sqrt(2.0 / n)
        q_in = np.sqrt(2.0 * np.bincount(g, W * W, n_groups)) / sw
    return pd.DataFrame({"n": n, "infit": infit, "infit_zstd": _zstd(infit, q_in), "outfit": outfit,
                         "outfit_zstd": _zstd(outfit, q_out)})


def fit_reading(infit: float, infit_zstd: float, outfit: float, outfit_zstd: float, n: int) -> str:
    """'as expected', 'erratic ...' or 'too predictable ...' from the mean-squares and their ZSTD."""
    if n < 3 or not np.isfinite(outfit):
        return "too few reads to judge"
    if ((infit > ERRATIC and infit_zstd > SIGNIFICANT_ZSTD) or (outfit > ERRATIC and outfit_zstd > SIGNIFICANT_ZSTD)):
        return "erratic: the scores scatter more than their confidences allow"
    if ((infit < PREDICTABLE and infit_zstd < -SIGNIFICANT_ZSTD)
            or (outfit < PREDICTABLE and outfit_zstd < -SIGNIFICANT_ZSTD)):
        return "too predictable: the scores scatter less than the model expects (muted or halo-like)"
    return "as expected"


def fit_statistics(result, by: str = "assessor") -> pd.DataFrame:
    """Infit and outfit mean-squares per assessor (or per object) with their ZSTD, the reads flagged and a reading.

    Columns: ``n`` (reads judged), ``infit``, ``infit_zstd``, ``outfit``, ``outfit_zstd``, ``flagged`` (reads
    flagged anomalous), ``reading``.  About 1 = as the model expects; see the module docstring for the
    residual used, the weights and the reading.  ``attrs["leverage"]`` says whether the leverage is exact.

    Examples
    --------
    >>> import xlcalib
    >>> from xlcalib.calibration.panel.simulate import simulate_panel
    >>> p = simulate_panel(12, 60, 4, n_subjects=2, erratic={0: 3.0}, seed=2)
    >>> fit = xlcalib.calibrate(p.evaluations.drop(columns="sd")).fit_statistics()
    >>> fit.loc["A01", "reading"].split(":")[0], bool(fit["outfit"].drop("A01").median() < 1.3)
    ('erratic', True)
    """
    if by not in ("assessor", "object"):
        raise InputError(f"by must be 'assessor' or 'object', not {by!r}")
    geo = read_geometry(result)
    table = result.biases if by == "assessor" else result.values
    group = geo.assessor if by == "assessor" else geo.obj
    out = mean_squares(geo.studentised, geo.confidence / geo.noise, group, len(table))
    out.index = pd.Index(table.index, name=by)
    flagged = result.residuals["anomalous"].to_numpy(dtype=bool)
    out["flagged"] = np.bincount(group[flagged], minlength=len(table))
    out["reading"] = [fit_reading(*row) for row in out[["infit", "infit_zstd", "outfit", "outfit_zstd", "n"]]
                      .itertuples(index=False)]
    out.attrs["leverage"] = ("exact" if geo.exact else
                             "objects' part only (too many assessors for the dense covariance)")
    return out


def _chance(z: np.ndarray) -> np.ndarray:
    """1 / P(|Z| >= |z|): how many reads lie, by chance, for one this far out."""
    from scipy.special import ndtr

    with np.errstate(divide="ignore"):
        return 1.0 / (2.0 * ndtr(-np.abs(z)))


def _others(result, rows: np.ndarray) -> list[str]:
    """For the chosen reads, the other reads' scores of the same object as text ('4, 5, 5'), anonymous."""
    res = result.residuals
    chosen = res.iloc[rows]
    peers = res[res["object"].isin(set(chosen["object"]))]
    scores = peers.groupby("object", sort=False)["score"].apply(list)
    text = []
    for obj, score in zip(chosen["object"], chosen["score"]):
        rest = list(scores[obj])
        rest.remove(score)
        text.append(", ".join(f"{x:g}" for x in sorted(rest)))
    return text


def unexpected_reads(result, top: int | None = None) -> pd.DataFrame:
    """The reads that stand out, most unexpected first, each with the panel's view and a sentence.

    ``top=None``: the reads flagged anomalous (``|std_residual|`` beyond the run's threshold); ``top=k``: the k
    most unexpected reads whether flagged or not.  Ranked by the studentised residual ``z`` (module docstring).
    Columns: assessor, object, score, expected (the calibrated value with the assessor's own offset and gain),
    value (the panel's calibrated value), residual (score - expected, score units; positive = the assessor
    scored higher than expected), z, chance (about one read in this many lies as far out by chance),
    other_scores (the object's other reads, unnamed), flagged, in_words.
    """
    geo = read_geometry(result)
    res = result.residuals
    z = geo.studentised
    order = np.argsort(-np.round(np.nan_to_num(np.abs(z), nan=-1.0), 9), kind="stable")  # ties: same order everywhere
    flagged = res["anomalous"].to_numpy(dtype=bool)
    if top is not None:
        top = whole_argument(top, "top (number of reads)", low=0)
    chosen = order[flagged[order]] if top is None else order[:top]
    rows = res.iloc[chosen]
    out = pd.DataFrame({
        "assessor": rows["assessor"].to_numpy(), "object": rows["object"].to_numpy(),
        "score": rows["score"].to_numpy(dtype=float), "expected": rows["fitted"].to_numpy(dtype=float),
        "value": result.values["value"].to_numpy()[geo.obj[chosen]],
        "residual": rows["residual"].to_numpy(dtype=float), "z": z[chosen], "chance": _chance(z[chosen]),
        "other_scores": _others(result, chosen), "flagged": flagged[chosen]})
    out["in_words"] = [_read_sentence(r) for r in out.itertuples(index=False)]
    return out.reset_index(drop=True)


def _read_sentence(r) -> str:
    side = "higher" if r.residual > 0 else "lower"
    others = f"; the other reads gave {r.other_scores}" if r.other_scores else ""
    chance = f"about 1 read in {r.chance:,.0f}" if np.isfinite(r.chance) and r.chance < 1e12 else "almost never"
    return (f"{r.assessor} gave {r.object} {r.score:g} where {r.expected:.2f} was expected from them (the panel's "
            f"calibrated value {r.value:.2f}{others}): {abs(r.residual):.2f} points {side}, {abs(r.z):.1f} expected "
            f"spreads -- {chance} lies this far out by chance")
