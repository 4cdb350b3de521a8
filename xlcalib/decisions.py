"""From calibrated scores to decisions: ranks, the funding line, P(above the line), a recorded lottery.

A panel decides *which proposals to fund* (or which grade to give).  The
calibrated values are estimates; what the panel needs is how sure each
decision is.  :func:`rank_objects` (reached as ``CalibrationResult.ranking``)
draws from the exact joint Gaussian distribution of the fit -- biases from the
reduced system's Cholesky factor, then each value given the biases, t-scaled
when the noise scale w was estimated -- and reports per object

* ``rank`` (by calibrated value, 1 = best), ``raw_rank`` (by plain average),
  ``expected_rank`` and a rank interval;
* with a funding line (``top_k`` places, or a calibrated-score ``threshold``)
  ``p_above`` = P(the object is above the line), its Monte Carlo standard
  error, and a decision: *above* (P >= 1 - epsilon), *below* (P <= epsilon) or
  *borderline*; ``raw_decision`` (what plain averages would decide) and
  ``changed`` (calibration moved the object across the line).

Peers doing the same without declared confidences: the NeurIPS 2014 reviewer
calibration (P(accept) from posterior samples, a grey area), the SNSF's
ERforResearch (expected rank, intervals, funding line, lottery among the
undecidable), FACETS (fair averages with standard errors).

Draws are streamed in chunks (never draws x objects at once): the memory is
bounded by :data:`CHUNK_BYTES` for the draws and :data:`STORED_RANK_BYTES` for
the ranks kept to form rank intervals; the number of draws is capped at
:data:`MAX_DRAW_CELLS` / objects (a note says so).  The same seed gives the
same numbers bit for bit.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError
from .inputs import real_argument, seed_argument, whole_argument

__all__ = ["rank_objects", "decision_summary", "CHUNK_BYTES", "STORED_RANK_BYTES", "MAX_DRAW_CELLS", "MAX_DRAWS"]

#: Memory of one chunk of draws (values and their ranks).
CHUNK_BYTES = 64 * 2**20
#: Memory for the ranks kept to form rank intervals (the first K draws, K = this / (4 * objects)).
STORED_RANK_BYTES = 256 * 2**20
#: Upper bound on draws x objects (about 30 s on a 2-core machine); more draws are reduced, with a note.
MAX_DRAW_CELLS = 100_000_000
#: Upper bound on the draws argument itself.
MAX_DRAWS = 1_000_000


def _ranks_desc(values: np.ndarray) -> np.ndarray:
    """Ranks (1 = largest) within each row of a draws x objects array, as int32.

    Rows are contiguous, so each draw is one cache-friendly sort; ties have
    probability zero for continuous draws.
    """
    order = np.argsort(-values, axis=1)
    ranks = np.empty(values.shape, dtype=np.int32)
    np.put_along_axis(ranks, order, np.arange(1, values.shape[1] + 1, dtype=np.int32)[None, :], axis=1)
    return ranks


def rank_objects(result, top_k=None, threshold=None, level=None, draws: int = 10_000, seed: int = 0,
                 epsilon: float = 0.05, lottery: bool = False, lottery_seed=None) -> pd.DataFrame:
    """Ranking table with rank intervals and, given a funding line, P(above the line) and decisions.

    Parameters
    ----------
    result:
        A :class:`~xlcalib.calibration.CalibrationResult` of a connected panel.
    top_k:
        Funding line as a number of places: an object is *above* when its rank
        is at most ``top_k``.
    threshold:
        Funding line as a calibrated score (in the fit's gauge): above when the
        value is at least the threshold.  Give ``top_k`` or ``threshold``, not
        both.  P(value > threshold) is exact (normal or t); P(rank <= k) is a
        Monte Carlo estimate with its standard error.
    level:
        Coverage of the rank interval (default: the result's interval level).
    draws, seed:
        Monte Carlo draws and the seed (same seed, same numbers).
    epsilon:
        Decision margin: *above* when P >= 1 - epsilon, *below* when
        P <= epsilon, else *borderline*.  At the stated margin, decisions
        marked above/below are wrong at most about an epsilon share of the time
        (checked by simulation in the tests).
    lottery, lottery_seed:
        With ``top_k``: fill the places left after the *above* group by a
        uniform draw among the *borderline* group (the practice some funders
        use for the undecidable), recorded with its seed in
        ``frame.attrs["lottery"]`` and the ``lottery`` column.

    Returns
    -------
    DataFrame indexed by object, sorted by rank: ``rank, value, se, lower,
    upper, raw_mean, raw_rank, expected_rank, rank_lower, rank_upper, n,
    total_confidence`` and, with a line, ``p_above, p_above_mc_se, decision,
    raw_decision, changed`` (and ``lottery``).  ``attrs``: line, level, draws,
    seed, epsilon, rank_interval_draws, note, lottery.

    Examples
    --------
    >>> import xlcalib
    >>> from xlcalib.demo import demo_panel
    >>> ev, _, _ = demo_panel()
    >>> table = xlcalib.calibrate(ev).ranking(top_k=10, draws=2000)
    >>> table.columns[:4].tolist(), sorted(set(table["decision"]))
    (['rank', 'value', 'se', 'lower'], ['above', 'below', 'borderline'])
    """
    posts = getattr(result, "_posteriors", None)
    if not posts:
        raise InputError("this result carries no uncertainty information (make it with xlcalib.calibrate)")
    if len(posts) > 1:
        raise InputError("the panel has several unconnected groups: values of different groups cannot be ranked "
                         "against each other (rank each group's result separately)")
    post, _a_idx, o_idx = posts[0]
    values = result.values
    O = len(values)
    if O < 2:
        raise InputError("ranking needs at least two objects")
    if top_k is not None and threshold is not None:
        raise InputError("give one funding line: top_k (places) or threshold (a calibrated score), not both")
    if top_k is not None:
        top_k = whole_argument(top_k, "top_k (places above the funding line)", low=1, high=O - 1)
    if threshold is not None:
        threshold = real_argument(threshold, "threshold")
    level = result.stats.get("interval_level", 0.95) if level is None else \
        real_argument(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    draws = whole_argument(draws, "draws", low=100, high=MAX_DRAWS)
    seed = seed_argument(seed)
    epsilon = real_argument(epsilon, "epsilon", low=0.0, high=0.5, low_open=True, high_open=True)
    if lottery and top_k is None:
        raise InputError("a lottery fills places: give top_k (the number of places) with lottery=True")
    note = ""
    cap = max(100, MAX_DRAW_CELLS // O)
    if draws > cap:
        note = (f"draws reduced from {draws:,} to {cap:,} so that draws x objects stays within "
                f"{MAX_DRAW_CELLS:,} (time and memory bound)")
        draws = cap

    v_hat = values["value"].to_numpy(dtype=float)
    se = values["se"].to_numpy(dtype=float)
    t_df = getattr(result, "_t_df", None)

    rng = np.random.default_rng(seed)
    chunk = int(max(1, min(draws, CHUNK_BYTES // (12 * O))))
    keep = int(max(1, min(draws, STORED_RANK_BYTES // (4 * O))))
    stored = np.empty((O, keep), dtype=np.int32)
    rank_sum = np.zeros(O)
    above_count = np.zeros(O)
    done = 0
    while done < draws:
        n = min(chunk, draws - done)
        dev = post.draw_deviations(n, rng)  # draws x objects, float32 (halves the sort's memory traffic)
        if o_idx.size != O or not np.array_equal(o_idx, np.arange(O)):
            full = np.empty((n, O), dtype=np.float32)
            full[:, o_idx] = dev
            dev = full
        if t_df:
            dev *= np.sqrt(t_df / rng.chisquare(t_df, n)).astype(np.float32)[:, None]
        dev += v_hat.astype(np.float32)[None, :]
        ranks = _ranks_desc(dev)
        rank_sum += ranks.sum(axis=0)
        if top_k is not None:
            above_count += (ranks <= top_k).sum(axis=0)
        if done < keep:
            take = min(n, keep - done)
            stored[:, done:done + take] = ranks[:take].T
        done += n
    alpha = (1.0 - level) / 2.0
    rank_lower = np.quantile(stored, alpha, axis=1, method="lower")
    rank_upper = np.quantile(stored, 1.0 - alpha, axis=1, method="higher")

    frame = pd.DataFrame({
        "rank": values["value"].rank(ascending=False, method="min").astype(int),
        "value": v_hat, "se": se, "lower": values["lower"], "upper": values["upper"],
        "raw_mean": values["raw_mean"],
        "raw_rank": values["raw_mean"].rank(ascending=False, method="min").astype(int),
        "expected_rank": rank_sum / draws,
        "rank_lower": rank_lower.astype(int), "rank_upper": rank_upper.astype(int),
        "n": values["n"], "total_confidence": values["total_confidence"],
    }, index=values.index)

    line = ""
    lottery_record: dict[str, Any] = {}
    if top_k is not None or threshold is not None:
        if top_k is not None:
            p = above_count / draws
            mc = np.sqrt(p * (1.0 - p) / draws)
            calibrated_above = frame["rank"].to_numpy() <= top_k
            raw_above = frame["raw_rank"].to_numpy() <= top_k
            line = f"top {top_k}"
        else:
            from scipy.special import ndtr, stdtr

            z = (v_hat - threshold) / np.where(se > 0, se, np.inf)
            p = stdtr(t_df, z) if t_df else ndtr(z)
            p = np.where(se > 0, p, (v_hat >= threshold).astype(float))
            mc = np.zeros(O)
            calibrated_above = v_hat >= threshold
            raw_above = frame["raw_mean"].to_numpy() >= threshold
            line = f"calibrated score {threshold:g}"
        decision = np.where(p >= 1.0 - epsilon, "above", np.where(p <= epsilon, "below", "borderline"))
        frame["p_above"] = p
        frame["p_above_mc_se"] = mc
        frame["decision"] = decision
        frame["raw_decision"] = np.where(raw_above, "above", "below")
        frame["changed"] = calibrated_above != raw_above
        if lottery:
            frame["lottery"] = ""
            n_above = int((decision == "above").sum())
            places = top_k - n_above
            pool = frame.index[decision == "borderline"]
            drawn: list = []
            lot_seed = seed if lottery_seed is None else seed_argument(lottery_seed, "lottery_seed")
            if places > 0 and len(pool):
                if len(pool) <= places:
                    drawn = list(pool)
                else:
                    picks = np.random.default_rng(lot_seed).choice(len(pool), size=places, replace=False)
                    drawn = [pool[i] for i in np.sort(picks)]
                frame.loc[pool, "lottery"] = "not drawn"
                frame.loc[drawn, "lottery"] = "funded by lottery"
            lottery_record = {"seed": lot_seed, "places": max(places, 0), "pool": list(pool), "drawn": drawn,
                              "method": "uniform draw without replacement among the borderline group "
                                        "(numpy default_rng(seed).choice)"}
    frame = frame.sort_values(["rank", "expected_rank"], kind="stable")
    frame.attrs.update({"line": line, "level": level, "draws": draws, "seed": seed, "epsilon": epsilon,
                        "rank_interval_draws": keep, "note": note, "lottery": lottery_record,
                        "gauge": result.stats.get("gauge"), "model": result.stats.get("model", "fixed")})
    return frame


def decision_summary(ranking: pd.DataFrame) -> str:
    """One plain paragraph on the funding line of a ranking table (empty when no line was set)."""
    attrs = ranking.attrs
    if not attrs.get("line") or "decision" not in ranking:
        return ""
    counts = ranking["decision"].value_counts()
    above, border, below = (int(counts.get(k, 0)) for k in ("above", "borderline", "below"))
    eps = attrs.get("epsilon", 0.05)
    text = (f"Funding line {attrs['line']}: {above} above (P >= {1 - eps:.0%}), {border} borderline, {below} below "
            f"(P <= {eps:.0%}); calibration moved {int(ranking['changed'].sum())} object(s) across the line compared "
            f"with plain averages ({attrs['draws']:,} draws, seed {attrs['seed']}).")
    lottery = attrs.get("lottery") or {}
    if lottery.get("drawn"):
        text += (f" Lottery (seed {lottery['seed']}): {len(lottery['drawn'])} of {len(lottery['pool'])} borderline "
                 f"object(s) drawn for {lottery['places']} place(s): {', '.join(map(str, lottery['drawn']))}.")
    if attrs.get("note"):
        text += f" Note: {attrs['note']}."
    return text
