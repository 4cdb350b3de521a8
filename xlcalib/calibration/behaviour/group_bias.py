"""Assessor x group bias and the group audit: when objects carry a group (subject, call, applicant group).

Why: an assessor can be fair overall and still score one kind of object out of line with the panel ("Dr Y
scores genetics proposals 0.8 below what the panel expects of her"); and a panel needs to know whether its
calibrated values differ by group beyond what the design (who read which group) explains.

Bias of assessor a on group g (FACETS' "bias/interaction analysis", one interaction at a time, the other
estimates held; Linacre, FACETS manual, "Bias interaction"): the fitted model is extended by the assessor's
own offset as a fixed effect and one interaction term x (1 on a's reads of group g), and the interaction is
estimated exactly by the Frisch-Waugh-Lovell theorem -- for a penalised (mixed-model) fit as for a plain one
(Henderson's equations with the added columns unpenalised):

    [delta_a; delta_ag] = (X2' C (I - H) X2)^-1 X2' C e,    Cov = w (X2' C (I - H) X2)^-1

with ``X2 = [1_a, x]``, ``e`` the fit's residuals and ``H`` its hat matrix.  For read sets X, Y of one
assessor, ``1_X' C H 1_Y = sum_{i in X and Y} c_i^2 / (C_o + lam) + u_X' H_theta u_Y`` with ``u_X = sum_{i
in X} c_i (e_a - d_o)`` (the fitted score is ``V_o/(C_o + lam) - d_o' theta + theta_a`` in every model).
delta_ag contrasts the assessor's reads of g with their other reads; the table reports it as FACETS does,
relative to the assessor's overall offset (the confidence-weighted mean over all their reads):
``bias = delta_ag (1 - C_ag / C'_a)``, positive = more lenient on this group (higher scores), as biases are.
Each interaction is estimated with the others absent (as FACETS does): several large ones in one panel
disturb each other a little (in simulation, 95% intervals covered a single true interaction 92-95% of the
time, two at once 88%).  An assessor who read only one group has no interaction to estimate; with two groups an assessor's two cells
are one contrast seen from both sides (Holm then counts it twice: conservative).  Flags: two-sided p-values (normal, or
Student t when the noise scale is estimated) adjusted by Holm's step-down method over every cell tested
(Holm 1979, Scand. J. Statist. 6:65): a flag says "beyond chance even allowing for how many cells were looked
at", because a wrongly accused assessor is costly.

Group audit: each group's mean calibrated value and its difference from the mean of all grouped objects,
with standard errors from the joint posterior (shared assessors make group means correlated), and the Wald
test that all group means are equal (chi-square on G - 1 degrees of freedom, F when w is estimated); the
raw means beside them show how far calibration (who read each group) moved each group.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ...cells import probability_argument, whole_argument
from ...errors import InputError
from ..system.posterior import quantile
from .fitstats import read_geometry

__all__ = ["object_groups", "holm", "group_bias", "group_audit", "FLAG_ALPHA", "MIN_CELL_READS",
           "MAX_BIAS_CELLS", "MAX_BIAS_ASSESSORS"]

#: Holm-adjusted p-values below this flag a cell.
FLAG_ALPHA = 0.05
#: A cell (assessor, group) is tested only with at least this many reads.
MIN_CELL_READS = 2
#: At most this many assessor x group cells per component (each costs one column of the posterior's solve).
MAX_BIAS_CELLS = 200_000
#: Above this many assessors in a component the interaction analysis would need several dense A x A arrays.
MAX_BIAS_ASSESSORS = 3000


def object_groups(result, groups) -> tuple[np.ndarray, pd.Index]:
    """(group code of each object in ``result.values`` order, -1 = no group; the group names).

    *groups*: a mapping or Series object -> group.  Objects not in it, or with a blank group, have no group;
    names not in the panel are ignored.  At least two groups are needed.
    """
    wrong = InputError("give the groups as a mapping object -> group (a dict or a Series indexed by object)")
    if isinstance(groups, pd.DataFrame):
        raise wrong
    try:
        series = groups if isinstance(groups, pd.Series) else pd.Series(dict(groups), dtype=object)
    except (TypeError, ValueError):  # text, a number, a list of names ...: no mapping
        raise wrong from None
    if series.index.has_duplicates:
        dup = series.index[series.index.duplicated()][0]
        raise InputError(f"object {dup!r} is given more than one group")
    mapped = series.reindex(result.values.index)
    blank = mapped.isna() | mapped.astype(str).str.strip().eq("")
    texts = [None if b else str(x).strip() for x, b in zip(mapped.to_numpy(dtype=object), blank.to_numpy())]
    codes, names = pd.factorize(pd.Series(texts, dtype=object))
    codes = np.where(blank.to_numpy(), -1, codes).astype(np.intp)
    if len(names) < 2:
        raise InputError(f"groups: {len(names)} group(s) among the panel's objects; a group analysis needs at least 2")
    return codes, pd.Index(names, name="group")


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979): max over k <= i of (m - k + 1) p_(k), capped at 1.

    >>> holm([0.01, 0.04, 0.03]).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(np.maximum.accumulate((m - np.arange(m)) * p[order]), 1.0)
    out = np.empty(m)
    out[order] = adjusted
    return out


def _two_sided(z: np.ndarray, t_df) -> np.ndarray:
    from scipy.special import ndtr, stdtr

    return 2.0 * (stdtr(t_df, -np.abs(z)) if t_df else ndtr(-np.abs(z)))


def _column_sums_of_products(A_dense: np.ndarray, B: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->j", A_dense, B)


def _component_cells(post, rows, geo, codes, n_groups, min_reads):
    """The interaction estimates of one component: (local assessor, group, reads, delta, var delta, share)."""
    d = post.design
    ai, oi, c = d.ai, d.oi, d.c
    e = geo.residual[rows]
    g = codes[geo.obj[rows]]
    A, N = d.n_assessors, c.size
    has = g >= 0
    key = ai[has].astype(np.int64) * n_groups + g[has]
    cells, cell_of = np.unique(key, return_inverse=True)
    K = cells.size
    cell_a, cell_g = (cells // n_groups).astype(np.intp), (cells % n_groups).astype(np.intp)
    reads = np.bincount(cell_of, minlength=K)
    C_cell = np.bincount(cell_of, c[has], K)
    C_a = d.C_a
    keep = (reads >= min_reads) & (C_cell < C_a[cell_a] * (1 - 1e-12))
    if not keep.any():
        return None
    if K > MAX_BIAS_CELLS:
        raise InputError(f"{K:,} assessor x group cells is more than the group-bias analysis handles "
                         f"({MAX_BIAS_CELLS:,}); group the objects more coarsely")
    if A > MAX_BIAS_ASSESSORS:
        raise InputError(f"the group-bias analysis handles panels of up to {MAX_BIAS_ASSESSORS:,} assessors per "
                         f"connected group (this one has {A:,}): it needs dense assessor x assessor arrays")
    inv_Cd = 1.0 / post.Cd[oi]
    S2_cell = np.bincount(cell_of, (c * c * inv_Cd)[has], K)
    S2_a = np.bincount(ai, c * c * inv_Cd, A)
    Ce_cell = np.bincount(cell_of, (c * e)[has], K)
    Ce_a = np.bincount(ai, c * e, A)
    # u vectors: column i of Bmat is c_i (e_{a_i} - d_{o_i})
    F = sp.csr_matrix((c, (oi, np.arange(N))), shape=(d.n_objects, N))
    Bmat = sp.csr_matrix((c, (ai, np.arange(N))), shape=(A, N)) - (post.D.T @ F)
    R_cell = sp.csr_matrix((np.ones(int(has.sum())), (np.flatnonzero(has), cell_of)), shape=(N, K))
    U_cell = (Bmat @ R_cell).toarray()
    U_a = (Bmat @ sp.csr_matrix((np.ones(N), (np.arange(N), ai)), shape=(N, A))).toarray()
    HU_cell = post.apply_h(U_cell)
    HU_a = post.apply_h(U_a)
    q_cc = _column_sums_of_products(U_cell, HU_cell)
    q_ac = _column_sums_of_products(U_a[:, cell_a], HU_cell)
    q_aa = _column_sums_of_products(U_a, HU_a)
    m11 = (C_a - S2_a - q_aa)[cell_a]
    m12 = C_cell - S2_cell - q_ac
    m22 = C_cell - S2_cell - q_cc
    # a model whose biases are fixed effects already holds 1_a: m11 = 0 and the cell's column alone is added
    own = m11 > 1e-9 * C_a[cell_a]
    det = np.where(own, m11 * m22 - m12 * m12, m22)
    keep &= det > 1e-10 * np.where(own, np.abs(m11 * m22), np.abs(C_cell))
    det = np.where(keep, det, 1.0)
    delta = np.where(own, (m11 * Ce_cell - m12 * Ce_a[cell_a]) / det, Ce_cell / det)
    var = post.w * np.where(own, m11, 1.0) / det
    share = C_cell / C_a[cell_a]
    return cell_a[keep], cell_g[keep], reads[keep], delta[keep], var[keep], share[keep]


def group_bias(result, groups, *, alpha: float = FLAG_ALPHA, min_reads: int = MIN_CELL_READS) -> pd.DataFrame:
    """Each assessor's bias on each group of objects, relative to their own overall offset (module docstring).

    Columns: assessor, group, reads, bias (score units; positive = more lenient on this group than overall),
    se, lower, upper (at the run's interval level), z, p, p_holm, flagged (p_holm < alpha), in_words.
    ``attrs``: ``tests`` (cells tested), ``note``.

    Examples
    --------
    >>> import xlcalib
    >>> from xlcalib.calibration.panel.simulate import simulate_panel
    >>> p = simulate_panel(10, 120, 4, n_subjects=2, two_subjects=0.9, group_bias={(0, 1): -1.5}, seed=5)
    >>> table = xlcalib.calibrate(p.evaluations.drop(columns="sd")).group_bias(p.subjects)
    >>> table.loc[table["flagged"], ["assessor", "group"]].values.tolist()  # with two groups: one contrast, both sides
    [['A01', '0'], ['A01', '1']]
    """
    alpha = probability_argument(alpha, "alpha")
    min_reads = whole_argument(min_reads, "min_reads", low=1)
    codes, names = object_groups(result, groups)
    geo = read_geometry(result)
    t_df = result.t_df
    gains = result.biases["gain"].to_numpy() if "gain" in result.biases else np.ones(len(result.biases))
    parts = []
    for k, part in enumerate(result.components):
        if part.pooled:  # readers pooled into the noise: none has an offset of their own to compare a group with
            continue
        rows = np.flatnonzero(geo.component == k)
        found = _component_cells(part.posterior, rows, geo, codes, len(names), int(min_reads))
        if found is None:
            continue
        a_local, g, reads, delta, var, share = found
        a = part.assessor_index[a_local]
        scale = (1.0 - share) * gains[a]  # relative to the overall offset, in the panel's score units
        parts.append(pd.DataFrame({"assessor": result.biases.index[a], "group": names[g], "reads": reads,
                                   "bias": delta * scale, "se": np.sqrt(var) * scale,
                                   "z": delta / np.sqrt(var)}))
    columns = ["assessor", "group", "reads", "bias", "se", "lower", "upper", "z", "p", "p_holm", "flagged",
               "in_words"]
    if not parts:
        out = pd.DataFrame(columns=columns)
        pooled = any(part.pooled for part in result.components)
        out.attrs.update(tests=0, note="the readers cannot be linked (each read one object): no reader's bias on a "
                         "group can be estimated" if pooled else
                         "no assessor read objects of two or more groups: no interaction to estimate")
        return out
    out = pd.concat(parts, ignore_index=True)
    q = quantile(0.5 + result.stats.get("interval_level", 0.95) / 2, t_df)
    out["lower"], out["upper"] = out["bias"] - q * out["se"], out["bias"] + q * out["se"]
    out["p"] = _two_sided(out["z"].to_numpy(), t_df)
    out["p_holm"] = holm(out["p"].to_numpy())
    out["flagged"] = out["p_holm"] < alpha
    out["in_words"] = [_cell_sentence(r, len(out)) for r in out.itertuples(index=False)]
    # by p, with p rounded to 12 digits so that equal p-values (an assessor's two groups mirror each other) keep the
    # same order on every platform (CPython, Pyodide) instead of the order of their last-bit rounding
    key = out["p"].round(12)
    out = out.assign(_key=key)[[*columns, "_key"]].sort_values(["_key", "assessor", "group"], kind="mergesort")
    out = out[columns].reset_index(drop=True)
    no_group = int((codes < 0).sum())
    out.attrs.update(tests=len(out), note=(f"{len(out)} assessor x group cells tested (at least {min_reads} reads, "
                                          "and reads outside the group); Holm-adjusted"
                                          + (f"; {no_group} object(s) without a group left out" if no_group else "")))
    return out


def _cell_sentence(r, tests: int) -> str:
    side = "above" if r.bias > 0 else "below"
    verdict = (f"beyond chance even allowing for {tests} comparisons (adjusted p = {r.p_holm:.2g})" if r.flagged
               else f"within chance (p = {r.p:.2g}, adjusted {r.p_holm:.2g})")
    group = f"group {r.group}" if str(r.group).replace(".", "").isdigit() else str(r.group)
    pm = (r.upper - r.lower) / 2  # the ± of every sheet: half the width of the interval at the run's level
    return (f"{r.assessor} scores {group} objects {abs(r.bias):.2f} ± {pm:.2f} {side} what the panel expects "
            f"from them ({r.reads} reads): {verdict}")


def group_audit(result, groups) -> pd.DataFrame:
    """Do calibrated values differ by group?  Group means with standard errors and the Wald test (module docstring).

    Columns: group, objects, raw_mean (mean of the objects' plain averages), value_mean, se, difference (from the
    mean of all grouped objects' values), difference_se, p (of the difference), moved (how far calibration moved
    the group relative to the others: difference minus the same difference of raw means).  ``attrs``:
    ``statistic``, ``df``, ``p``, ``test``, ``in_words``.
    """
    from scipy.special import chdtrc, fdtrc, ndtr, stdtr

    codes, names = object_groups(result, groups)
    if len(result.components) != 1:
        raise InputError("the panel was fitted in unconnected parts: group means of different parts are not on one "
                         "scale (calibrate the whole panel with a model that links groups, e.g. the default)")
    part = result.components[0]
    post = part.posterior
    G = len(names)
    local = codes[part.object_index]
    grouped = local >= 0
    n_g = np.bincount(local[grouped], minlength=G)
    Lam = np.zeros((post.design.n_objects, G))
    Lam[np.flatnonzero(grouped), local[grouped]] = 1.0 / n_g[local[grouped]]
    overall = grouped / grouped.sum()
    contrasts = np.column_stack([Lam, Lam - overall[:, None]])
    Q = post.k[:, None] * contrasts.sum(axis=0)[None, :] - post.D.T @ contrasts
    cov = post.w * ((contrasts / post.Cd[:, None]).T @ contrasts + Q.T @ post.apply_h(Q))
    values = result.values["value"].to_numpy()[part.object_index]
    raw = result.values["raw_mean"].to_numpy()[part.object_index]
    est = contrasts.T @ values
    raw_est = contrasts.T @ raw
    se = np.sqrt(np.maximum(np.diagonal(cov), 0.0))
    t_df = result.t_df
    z = est[G:] / se[G:]
    p = 2.0 * (stdtr(t_df, -np.abs(z)) if t_df else ndtr(-np.abs(z)))
    out = pd.DataFrame({"group": names, "objects": n_g, "raw_mean": raw_est[:G], "value_mean": est[:G], "se": se[:G],
                        "difference": est[G:], "difference_se": se[G:], "p": p, "moved": est[G:] - raw_est[G:]})
    L = np.hstack([np.eye(G - 1), -np.ones((G - 1, 1))])
    m, V = L @ est[:G], L @ cov[:G, :G] @ L.T
    stat = float(m @ np.linalg.solve(V, m))
    if t_df:
        F = stat / (G - 1)
        out.attrs.update(statistic=F, df=(G - 1, t_df), p=float(fdtrc(G - 1, t_df, F)), test="F")
    else:
        out.attrs.update(statistic=stat, df=(G - 1,), p=float(chdtrc(G - 1, stat)), test="chi-square")
    level = result.stats.get("interval_level", 0.95)
    out.attrs["in_words"] = _audit_sentence(out, quantile(0.5 + level / 2, t_df), level)
    return out


def _audit_sentence(table: pd.DataFrame, q: float, level: float) -> str:
    """The audit in one sentence; its ± is half the width of the interval at the run's level (q standard errors)."""
    p = table.attrs["p"]
    if not p < 0.05:
        return (f"Calibrated values do not differ measurably between groups (test of equal group means p = {p:.2g}).")
    worst = table.iloc[int(np.argmax(np.abs(table["difference"] / table["difference_se"])))]
    side = "above" if worst["difference"] > 0 else "below"
    moved = worst["moved"]
    why = (f"calibration moved them by {moved:+.2f} relative to the rest (who read them)" if abs(moved) >= 0.005 else
           "not explained by who read them")
    return (f"Calibrated values differ between groups (test of equal group means p = {p:.2g}): {worst['group']} "
            f"objects average {abs(worst['difference']):.2f} ± {q * worst['difference_se']:.2f} ({level:.0%}) {side} "
            f"the panel's objects; {why}.")
