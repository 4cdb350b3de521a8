"""From calibrated scores to decisions: ranks, the funding line, P(above the line), settled decisions, a lottery.

A panel decides *which proposals to fund* (or which grade to give).  The
calibrated values are estimates; what the panel needs is how sure each
decision is.  :func:`rank_objects` (reached as ``CalibrationResult.ranking``)
draws from the exact joint Gaussian distribution of the fit -- biases from the
reduced system's Cholesky factor, then each value given the biases, t-scaled
when the noise scale w was estimated; with the default model's decision
basis and whole-point scores each read's variance includes the scale's
rounding, h^2/12 (:mod:`..panel.resolution`) -- and reports per object

* ``rank`` (by calibrated value, 1 = best), ``raw_rank`` (by plain average),
  ``expected_rank`` and a rank interval;
* with a funding line (``top_k`` places, or a calibrated-score ``threshold``)
  ``p_above`` = P(the object is above the line) -- for places by conditional
  Monte Carlo, made to sum to the places (:func:`to_places`) -- its Monte Carlo
  standard error, whether the Monte Carlo has ``settled`` it (3 errors from
  both cut-offs, after as many further draws as the budget allows:
  :func:`.draws.settle`), and a decision: *above* (P >= 1 - epsilon, settled),
  *below* (P <= epsilon, settled) or *borderline*; ``raw_decision`` (what plain
  averages would decide) and ``changed`` (calibration moved the object across
  the line);
* the joint statement (which objects are above, and which below, the line
  *all together* with the run's probability), and one final decision per
  object -- funded, not funded, funded by lottery, not drawn, to discuss --
  with the statement it rests on; with a lottery (:mod:`.lottery`: informed,
  each object funded with its chance P(above), or the uniform band) its public
  record.

Peers doing the same without declared confidences: the NeurIPS 2014 reviewer
calibration (P(accept) from posterior samples, a grey area), the SNSF's
ERforResearch (expected rank, intervals, funding line, lottery among the
undecidable), FACETS (fair averages with standard errors).

Draws (:mod:`.draws`) are streamed in chunks (never draws x objects at once): the memory is
bounded by :data:`.draws.CHUNK_BYTES` for the draws and :data:`.draws.STORED_RANK_BYTES` for
the ranks kept to form rank intervals and the joint statements of a line by
places (from the first draws when the panel is large; a note says how many);
the number of draws is capped at
:data:`.draws.MAX_DRAW_CELLS` / objects (a note says so).  The same seed gives the
same numbers bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...cells import MAX_ABS_SCORE, real_argument, seed_argument, whole_argument
from ...errors import InputError
from ..behaviour.verdict import assessors_differ
from .exact_fit import tied_ranking
from .lottery import LotteryDraw, public_seed
from .places import TIERS, decision_order, final_decisions, lottery_columns
from .draws import MAX_DRAWS, SETTLE_ERRORS, Draws, capped_draws, joint_counts, settle, simulate_ranks, \
    top_k_edges, unsettled

__all__ = ["rank_objects", "decision_summary", "lottery_method", "lottery_sentence", "ranks_with_ties", "settling_words",
           "to_places", "FINAL_WORDS", "TIERS", "TIE_TOLERANCE"]

@dataclass(frozen=True)
class _Line:
    """A funding line: ``top_k`` places or a calibrated-score ``threshold`` (or neither)."""

    top_k: int | None
    threshold: float | None

    @property
    def text(self) -> str:
        if self.top_k is not None:
            return f"top {self.top_k}"
        return f"calibrated score {self.threshold:g}" if self.threshold is not None else ""


def lottery_method(lottery) -> str | None:
    """The lottery asked for: None (none), "informed" (True, or the word) or "uniform band".

    >>> lottery_method(True), lottery_method("uniform-band"), lottery_method(False)
    ('informed', 'uniform band', None)
    """
    if lottery is None or lottery is False or (isinstance(lottery, (bool, np.bool_)) and not lottery):
        return None
    if lottery is True or isinstance(lottery, (bool, np.bool_)):
        return "informed"
    word = " ".join(str(lottery).strip().lower().replace("-", " ").replace("_", " ").split())
    if word in ("informed", "yes", "true"):
        return "informed"
    if word in ("uniform band", "uniform", "band"):
        return "uniform band"
    if word in ("no", "false", "none", ""):
        return None
    raise InputError(f"lottery must be 'informed' (each object funded with its chance P(rank <= k)), 'uniform band' "
                     f"(the band next to the line, equal chances) or none, not {lottery!r}")


def _line_argument(top_k, threshold, n_objects: int, lottery: str | None) -> _Line:
    if top_k is not None and threshold is not None:
        raise InputError("give one funding line: top_k (places) or threshold (a calibrated score), not both")
    if top_k is not None:
        top_k = whole_argument(top_k, "top_k (places above the funding line)", low=1, high=n_objects - 1)
    if threshold is not None:
        threshold = real_argument(threshold, "threshold", low=-MAX_ABS_SCORE, high=MAX_ABS_SCORE)  # as the scores
    if lottery and top_k is None:
        raise InputError("a lottery fills places: give top_k (the number of places) with lottery=True")
    return _Line(top_k, threshold)


def _threshold_p(v_hat: np.ndarray, se: np.ndarray, threshold: float, t_df) -> np.ndarray:
    """P(value > threshold) from the posterior means and SDs (normal, or Student t with t_df degrees of freedom)."""
    from scipy.special import ndtr, stdtr

    z = (v_hat - threshold) / np.where(se > 0, se, np.inf)
    p = stdtr(t_df, z) if t_df else ndtr(z)
    return np.where(se > 0, p, (v_hat >= threshold).astype(float))


def to_places(p: np.ndarray, places: int) -> np.ndarray:
    """Monte Carlo estimates of P(rank <= k) made to sum to exactly k (the places), each kept in [0, 1].

    Each draw fills exactly k places, so the true probabilities sum to k; the conditional estimates
    (:func:`.draws.conditional_above`) do only on average.  One common shift delta on the logit scale,
    p' = expit(logit(p) + delta), solved for sum p' = k, moves every estimate the same way by far less than its
    Monte Carlo error (the sum's error is spread over the whole band), keeps the order of the objects and leaves
    0 and 1 where they are -- the calibration-to-a-total of survey weighting (Deville & Saerndal 1992, JASA 87:376,
    its logit distance).
    """
    from scipy.optimize import brentq
    from scipy.special import expit, logit

    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    free = (p > 0.0) & (p < 1.0)
    target = places - float((p >= 1.0).sum())
    if not free.any() or not 0.0 < target < free.sum():
        return p
    z = logit(p[free])
    gap = lambda delta: float(expit(z + delta).sum()) - target  # noqa: E731  - increasing in delta
    low, high = -1.0, 1.0
    while gap(low) > 0:
        low *= 2.0
    while gap(high) < 0:
        high *= 2.0
    out = p.copy()
    out[free] = expit(z + brentq(gap, low, high, xtol=1e-15, rtol=4 * np.finfo(float).eps))
    return out


def _p_above(frame: pd.DataFrame, line: _Line, drawn: Draws, basis, v_hat, se):
    """(P(above), its Monte Carlo SE, calibrated above, plain-average above) for the line."""
    t_df = basis.t_df
    if line.top_k is not None:
        p, mc = drawn.conditional_p()
        return (to_places(p, line.top_k), mc, frame["rank"].to_numpy() <= line.top_k,
                frame["raw_rank"].to_numpy() <= line.top_k)
    p = _threshold_p(v_hat, se, line.threshold, t_df)
    calibrated_above = frame["value"].to_numpy() >= line.threshold
    return p, np.zeros(v_hat.size), calibrated_above, frame["raw_mean"].to_numpy() >= line.threshold


def _tiers(p: np.ndarray, settled: np.ndarray, position: np.ndarray, n_in: int, n_out: int,
           epsilon: float) -> np.ndarray:
    """Each object's tier (an index into :data:`TIERS`): the joint statements first, then P(above) on its own --
    above or below only where the Monte Carlo has settled it (else borderline)."""
    O = p.size
    tier = np.full(O, 2, dtype=np.intp)
    tier[(p >= 1.0 - epsilon) & settled] = 1
    tier[(p <= epsilon) & settled] = 3
    tier[position < n_in] = 0
    tier[position >= O - n_out] = 4
    return tier


def _basis_words(tier: np.ndarray, settled: np.ndarray, epsilon: float, level: float) -> np.ndarray:
    """The statement each decision rests on, in a few words (the Ranking's "rests on" column)."""
    cut, sure = f"{epsilon:.0%}", f"{1 - epsilon:.0%}"
    words = np.array([f"jointly above ({level:.0%}, whole list)", f"on its own: P(above) ≥ {sure}",
                      f"borderline: P(above) {cut}-{sure}", f"on its own: P(above) ≤ {cut}",
                      f"jointly below ({level:.0%}, whole list)"], dtype=object)[tier]
    words[~settled] = (f"unsettled: P(above) within {SETTLE_ERRORS:g} Monte Carlo errors of {cut} or {sure} "
                       "(counted borderline)")
    return words


#: Values closer than this share of their magnitude rank as ties (see :func:`ranks_with_ties`).
TIE_TOLERANCE = 1e-9


def ranks_with_ties(values: np.ndarray) -> np.ndarray:
    """Ranks, 1 = the largest value, equal values sharing the best rank of their group ("min" ranks) -- values
    within :data:`TIE_TOLERANCE` of their magnitude count as equal.

    Why a tolerance: two objects read by the same assessors with the same scores have the same calibrated value
    in exact arithmetic, but the solves leave their last bits to the BLAS kernel and the order of summation, so
    an exact comparison would order them differently on different machines.

    >>> ranks_with_ties(np.array([2.0, 3.0, 2.0 + 1e-15, 1.0])).tolist()
    [2, 1, 2, 4]
    """
    values = np.asarray(values, dtype=float)
    n = values.size
    order = np.argsort(-values, kind="stable")
    ordered = values[order]
    tolerance = TIE_TOLERANCE * max(1.0, float(np.max(np.abs(values), initial=0.0)))
    starts = np.concatenate([[True], (ordered[:-1] - ordered[1:]) > tolerance])
    first = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    ranks = np.empty(n, dtype=np.intp)
    ranks[order] = first + 1
    return ranks


def _ranking_frame(values: pd.DataFrame, drawn: Draws, draws: int) -> pd.DataFrame:
    """The ranking table's columns without a line: ranks, values, intervals, expected rank and rank interval."""
    return pd.DataFrame({
        "rank": ranks_with_ties(values["value"].to_numpy(dtype=float)),
        "value": values["value"].to_numpy(dtype=float), "se": values["se"].to_numpy(dtype=float),
        "lower": values["lower"],
        "upper": values["upper"], "raw_mean": values["raw_mean"],
        "raw_rank": ranks_with_ties(values["raw_mean"].to_numpy(dtype=float)),
        "expected_rank": drawn.rank_sum / draws,
        "rank_lower": drawn.rank_lower.astype(int), "rank_upper": drawn.rank_upper.astype(int),
        "n": values["n"], "total_confidence": values["total_confidence"],
    }, index=values.index)


def _joint_within(n_in: int, n_out: int, holds: float, p: np.ndarray, settled: np.ndarray,
                  position: np.ndarray) -> tuple[int, int]:
    """The joint statement's lists cut to objects whose own P(above) agrees with it: a list that holds all together
    with probability q names only objects each above (below) with probability at least q.  The statement comes
    from the kept draws' ranks, P(above) from all the draws (conditional Monte Carlo), so an object at the end of
    a list can fall just short by Monte Carlo error, or be unsettled; it then rests on its own P(above)."""
    by_order = np.argsort(position, kind="stable")  # decision order
    ordered, sure = p[by_order], settled[by_order]
    agree_in = int(np.argmin(np.append((ordered >= holds - 1e-12) & sure, False)))
    agree_out = int(np.argmin(np.append(((ordered <= 1.0 - holds + 1e-12) & sure)[::-1], False)))
    return min(n_in, agree_in), min(n_out, agree_out)


def _line_decisions(frame: pd.DataFrame, line: _Line, drawn: Draws, basis, estimates, score_line, rules):
    """Add the line's columns to *frame* (P(above) and its MC error, settled, decision, raw decision, changed,
    joint, final, basis and the lottery's) and return (how the places were filled, the joint statement, the
    lottery's draw or None).  *estimates* = (values, SEs) in table order; *rules* = (level, epsilon, lottery =
    (method, public seed) or None)."""
    level, epsilon, lottery = rules
    v_hat, se_hat = estimates
    p, mc, calibrated_above, raw_above = _p_above(frame, line, drawn, basis, v_hat, se_hat)
    settled = ~unsettled(p, mc, epsilon)
    frame["p_above"] = p
    frame["p_above_mc_se"] = mc
    frame["settled"] = settled
    frame["decision"] = np.where((p >= 1.0 - epsilon) & settled, "above",
                                 np.where((p <= epsilon) & settled, "below", "borderline"))
    frame["raw_decision"] = np.where(raw_above, "above", "below")
    frame["changed"] = calibrated_above != raw_above
    position = score_line[1] if score_line is not None else decision_order(p, v_hat)
    if score_line is not None:
        first, last = drawn.edges
    else:
        first, last = top_k_edges(drawn.stored, line.top_k, position, drawn.above)
    n_in, n_out, holds = joint_counts(first, last, level)
    n_in, n_out = _joint_within(n_in, n_out, holds, p, settled, position)
    tier = _tiers(p, settled, position, n_in, n_out, epsilon)
    frame["joint"] = np.where(tier == 0, "above", np.where(tier == 4, "below", ""))
    frame["final"], record, draw = final_decisions(frame.index, tier, position, line.top_k, lottery, p)
    frame["basis"] = _basis_words(tier, settled, epsilon, level)
    if draw is not None:
        lottery_columns(frame, draw)
    return record, {"level": level, "above": n_in, "below": n_out, "probability": holds, "draws": int(first.size)}, \
        draw


def rank_objects(result, top_k=None, threshold=None, level=None, draws: int = 10_000, seed: int = 0,
                 epsilon: float = 0.05, lottery=False, lottery_seed=None) -> pd.DataFrame:
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
        The borderline group's cut-off: *above* when P >= 1 - epsilon, *below*
        when P <= epsilon, else *borderline*.  At the stated margin, decisions
        marked above/below are wrong at most about an epsilon share of the time
        (checked by simulation in the tests).  A larger epsilon narrows the
        borderline band (0.25: P between 25% and 75%, the objects whose central
        50% rank interval contains the line -- the credible-interval rule of
        Heyard, Ott, Salanti & Egger 2022, Statistics and Public Policy 9:110).
    lottery, lottery_seed:
        With ``top_k``: ``lottery=True`` or ``"informed"`` draws the informed lottery -- every object funded
        with its chance, its P(above) as whole ten-thousandths (chance 1 funded, 0 not funded, the others drawn so
        that exactly ``top_k`` are funded); ``"uniform band"`` draws the places left after the objects above
        among the band next to the line only, each member with the same chance (the practice some funders
        use for the undecidable).  ``lottery_seed`` is the public seed: any text or number the panel published
        before the meeting (default: the Monte Carlo ``seed``, as text, recorded as not declared).  Every
        random number of the draw is SHA-256 of the seed, names and chances (:mod:`.lottery`), so anyone can
        re-run it from the record: ``attrs["lottery"]`` (method, seed, places, hash, start) and the columns
        ``chance``, ``lottery_number``, ``draw_order``, ``stretch_from``, ``stretch_to``, ``lottery``.

    Joint statements: P(above) speaks of one object at a time; of 20 objects
    each above at 95%, one is wrong on average.  From the same draws the table
    also gives the largest pair of lists -- the a likeliest objects all above
    the line *and* the b least likely all below it -- that is right as a whole
    with probability ``level`` (``joint`` = above / below; attrs ``joint``).
    This is the posterior counterpart of the simultaneous rank statements of
    Mogstad, Romano, Shaikh & Wilhelm (Review of Economic Studies 91:476,
    2024; online 2023), whose "tau-best" sets hold for the whole list at once.
    In simulated panels with a known truth (``benchmarks/bench_joint.py``:
    whole-point scores clipped to a declared 1-6 scale, High/Medium/Low
    levels, a statement counted wrong when any object it names is on the
    other side of the line in truth) it was wrong in 4.8% of 3,000 panels of
    12 x 40 x 3 (top 5), 5.4% of 3,000 of 24 x 150 x 4 (top 20) and 4.8% of
    1,000 of 16 x 80 x 3 (top 10) -- Monte Carlo s.e. 0.4, 0.4 and 0.7
    points, 5.1% (s.e. 0.26) over all 7,000 -- naming on average 0.3 / 2.2 /
    0.6 objects above and 21.5 / 84.3 / 42.7 below.  That needs the posterior
    to know two things about real scores, which the default model's decision
    basis does (the fixed model's own posterior does not): the rounding of
    whole-point scores (Sheppard's h^2/12 added to every read,
    :mod:`..panel.resolution`; without it the confident reads were overweighted and
    the statement was wrong in 6.0-6.7% of the first 1,000 panels), and the
    ends of a declared scale (a 6 on 1-6 read as "6 or higher",
    :mod:`..panel.censoring`; without it clipping made the noise scale about 5% too
    small and the statement was wrong in 5.1% and 5.6% of the first two
    designs' 3,000 panels).

    Each object's decision rests on the strongest statement it meets (column
    ``basis``): jointly above, P(above) >= 1 - epsilon on its own, borderline,
    P(above) <= epsilon on its own, jointly below.  ``final`` is the one
    decision: with a score line *funded*, *not funded* or *to discuss*; with
    ``top_k`` the places are filled statement by statement, strongest first,
    and the group in which they run out is the band adjacent to the line --
    *funded by lottery* / *not drawn* with ``lottery`` (exactly ``top_k``
    funded), else *to discuss*; everything after it is *not funded*.

    Returns
    -------
    DataFrame indexed by object, sorted by rank: ``rank, value, se, lower,
    upper, raw_mean, raw_rank, expected_rank, rank_lower, rank_upper, n,
    total_confidence`` and, with a line, ``p_above, p_above_mc_se, decision,
    raw_decision, changed, joint, final, basis`` (and ``lottery``).  ``attrs``:
    line, level, draws, seed, epsilon, rank_interval_draws, note, lottery,
    places (how the places were filled), joint (the joint statement: level,
    above, below, probability, draws).

    Examples
    --------
    >>> import xlcalib
    >>> from xlcalib.demo import demo_panel
    >>> ev, _, _ = demo_panel()
    >>> table = xlcalib.calibrate(ev).ranking(top_k=10, draws=2000)
    >>> table.columns[:4].tolist(), sorted(set(table["decision"]))
    (['rank', 'value', 'se', 'lower'], ['above', 'below', 'borderline'])
    """
    basis = result.decision_basis()
    post, o_idx = basis.posterior, basis.object_index
    values = result.values
    O = len(values)
    if O < 2:
        raise InputError("ranking needs at least two objects")
    lottery = lottery_method(lottery)
    line = _line_argument(top_k, threshold, O, lottery)
    level = result.stats.get("interval_level", 0.95) if level is None else \
        real_argument(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    draws = whole_argument(draws, "draws", low=100, high=MAX_DRAWS)
    seed = seed_argument(seed)
    epsilon = real_argument(epsilon, "epsilon", low=0.0, high=0.5, low_open=True, high_open=True)
    lot_seed = public_seed(seed if lottery_seed is None else lottery_seed) if lottery else None
    if not np.isfinite(post.w):  # the scores fit exactly: no noise to draw from (see exact_fit)
        frame, record, draw = tied_ranking(values, ranks_with_ties(values["value"].to_numpy(dtype=float)),
                                           ranks_with_ties(values["raw_mean"].to_numpy(dtype=float)), line,
                                           level=level, epsilon=epsilon,
                                           lottery=(lottery, lot_seed) if lottery else None)
        frame.attrs.update({"seed": seed, "gauge": result.stats.get("gauge"), "model": result.stats.get("model"),
                            "decision_model": basis.model, "assessors_differ": assessors_differ(result.stats),
                            "lottery": _lottery_record(frame, record, draw, lottery_seed)})
        return frame
    draws, note = capped_draws(draws, O, post)

    # draws, ranks and P(above) from the decision basis (see CalibrationResult.decision_basis), in table order
    v_hat, se_hat = np.empty(O), np.full(O, np.nan)
    v_hat[o_idx] = basis.values
    score_line = None
    if line.threshold is not None:  # P(value > X) is exact from the SEs (a line by places needs only draws), so
        se_hat[o_idx] = basis.se    # the decision order is known before the draws that make the joint statements
        p_exact = _threshold_p(v_hat, se_hat, line.threshold, basis.t_df)
        score_line = (line.threshold, decision_order(p_exact, v_hat))
    drawn = simulate_ranks(post, o_idx, v_hat, basis.t_df, draws, seed, line.top_k, level, score_line)
    if line.top_k is not None:  # more draws until every decision at the cut-offs is settled (or the budget is spent)
        drawn = settle(drawn, post, o_idx, v_hat, basis.t_df, seed, line.top_k, epsilon,
                       lambda p: to_places(p, line.top_k))
    frame = _ranking_frame(values, drawn, draws)
    record: dict[str, Any] = {}
    joint: dict[str, Any] = {}
    draw = None
    if line.text:
        record, joint, draw = _line_decisions(frame, line, drawn, basis, (v_hat, se_hat), score_line,
                                              (level, epsilon, (lottery, lot_seed) if lottery else None))
    frame = frame.sort_values(["rank", "expected_rank"], kind="stable")
    lottery_record = _lottery_record(frame, record, draw, lottery_seed)
    frame.attrs.update({"line": line.text, "level": level, "draws": draws, "seed": seed, "epsilon": epsilon,
                        "rank_interval_draws": drawn.keep, "note": note, "lottery": lottery_record,
                        "places": record, "joint": joint, "settling": _settling(frame, drawn, line),
                        "gauge": result.stats.get("gauge"), "model": result.stats.get("model", "fixed"),
                        "decision_model": basis.model, "assessors_differ": assessors_differ(result.stats)})
    return frame


def _lottery_record(frame: pd.DataFrame, record: dict[str, Any], draw: LotteryDraw | None,
                    lottery_seed) -> dict[str, Any]:
    """What the Lottery sheet, the words and verify-draw need of the draw (empty without a lottery)."""
    if draw is None:
        return {}
    return {"method": draw.method, "seed": draw.seed, "declared": lottery_seed is not None,
            "places": record["left"], "sure": record["sure"], "pool": record["pool"],
            "drawn": list(frame.index[frame["final"] == "funded by lottery"]), "tier": record["pool_tier"],
            "digest": draw.digest, "start": draw.start, "candidates": draw.candidates,
            "likely": int(((frame["chance"] >= LIKELY_CHANCE) & (frame["chance"] < 1)).sum())}


def _settling(frame: pd.DataFrame, drawn: Draws, line: _Line) -> dict[str, Any]:
    """How P(above) was settled: the extra draws made, the most draws behind one object's P(above), and the objects
    still within SETTLE_ERRORS Monte Carlo errors of a cut-off (in rank order; decided as borderline)."""
    if "settled" not in frame:
        return {}
    most = int(drawn.p_draws.max()) if drawn.p_draws is not None else 0
    return {"extra_draws": int(drawn.extra_draws), "most_draws": most, "exact": line.top_k is None,
            "unsettled": list(frame.index[~frame["settled"].to_numpy(dtype=bool)])}


#: The final decisions in the order they are counted.
FINAL_WORDS = ("funded", "funded by lottery", "not drawn", "to discuss", "not funded")


def decision_summary(ranking: pd.DataFrame) -> str:
    """One plain paragraph on the funding line of a ranking table (empty when no line was set): the final
    decisions counted, the lottery, the joint statement, what borderline means and what calibration changed.
    The command line prints it and the Summary sheet shows the same words."""
    attrs = ranking.attrs
    if not attrs.get("line") or "final" not in ranking:
        return ""
    counts = ranking["final"].value_counts()
    eps, level = attrs.get("epsilon", 0.05), attrs.get("level", 0.95)
    places = attrs.get("places") or {}
    head = f"Funding line {attrs['line']}" + (f" ({places['places']} places)" if places.get("places") else "")
    text = f"{head}: " + ", ".join(f"{int(counts[w])} {w}" for w in FINAL_WORDS if w in counts) + "."
    lottery = attrs.get("lottery") or {}
    if lottery:
        text += " " + lottery_sentence(lottery)
    elif places.get("pool"):
        text += (f" {places['left']} place(s) are left for the panel to fill from the {len(places['pool'])} objects "
                 "to discuss.")
    joint = attrs.get("joint") or {}
    if joint:
        text += (f" For the whole list at once ({level:.0%}): {joint['above']} object(s) are above the line all "
                 f"together and {joint['below']} below it.")
    text += (f" Borderline means P(above) between {eps:.0%} and {1 - eps:.0%}: the data cannot place the object "
             "above or below the line.")
    moved = int(ranking["changed"].sum())
    if attrs.get("assessors_differ") is False:  # a difference the data do not support is no finding
        text += (f" The assessors do not measurably differ in stringency, so the {moved} object(s) on the other side "
                 "of the line from plain averages are there by the confidence weights and chance, not by a correction.")
    else:
        text += f" Calibration moved {moved} object(s) across the line compared with plain averages."
    text += f" ({attrs['draws']:,} draws, seed {attrs['seed']}{settling_words(attrs.get('settling') or {})}.)"
    if attrs.get("note"):
        text += f" Note: {attrs['note']}."
    return text


def lottery_sentence(lottery: dict) -> str:
    """The lottery in one sentence: the places certain and drawn, among whom, with which chances, from which seed."""
    seed = f"public seed '{lottery['seed']}'" + ("" if lottery.get("declared") else
                                                 " (the run's seed: none was declared before the meeting)")
    if lottery["method"] == "informed":
        return (f"Informed lottery: {lottery['sure']} place(s) certain, {lottery['places']} drawn among the "
                f"{lottery['candidates']} object(s) whose P(above) lies strictly between 0 and 1 ({lottery['likely']} "
                f"of them with a chance of {LIKELY_CHANCE:.0%} or more), each funded with exactly its chance ({seed}; "
                f"hash {lottery['digest'][:12]}..., sheet Lottery).")
    return (f"The uniform band lottery drew {len(lottery['drawn'])} of the {len(lottery['pool'])} objects in the band "
            f"next to the line ({lottery.get('tier', 'borderline')}), each with the same chance whatever its P(above) "
            f"({seed}; hash {lottery['digest'][:12]}...).")


#: The chance from which the decision paragraph counts an object in the draw as a likely winner.
LIKELY_CHANCE = 0.01
#: Objects named at most when the settling of P(above) left some unsettled (the Ranking marks them all).
NAMED_UNSETTLED = 10


def settling_words(settling: dict) -> str:
    """How P(above) was settled, for the decision paragraph's closing bracket: the extra draws, and the objects
    still within 3 Monte Carlo errors of a cut-off (named, decided as borderline)."""
    if not settling or settling.get("exact"):
        return ""
    text = "; P(above) by conditional Monte Carlo"
    if settling["extra_draws"]:
        text += f", {settling['extra_draws']:,} more draws to settle the decisions"
    left = settling["unsettled"]
    if left:
        shown = ", ".join(map(str, left[:NAMED_UNSETTLED])) + (" ..." if len(left) > NAMED_UNSETTLED else "")
        text += (f"; {len(left)} object(s) still within {SETTLE_ERRORS:g} Monte Carlo errors of a cut-off when the "
                 f"draw budget was spent, counted borderline: {shown}")
    else:
        text += "; every decision settled"
    return text
