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

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..cells import MAX_ABS_SCORE, real_argument, seed_argument, whole_argument
from ..errors import InputError
from .verdict import assessors_differ

__all__ = ["rank_objects", "decision_summary", "CHUNK_BYTES", "STORED_RANK_BYTES", "MAX_DRAW_CELLS", "MAX_DRAWS",
           "MAX_SPARSE_DRAW_WORK"]

#: Memory of one chunk of draws (values and their ranks).
CHUNK_BYTES = 64 * 2**20
#: Memory for the ranks kept to form rank intervals (the first K draws, K = this / (4 * objects)).
STORED_RANK_BYTES = 256 * 2**20
#: Upper bound on draws x objects (about 2-3 s on a 2-core machine); more draws are reduced, with a note.
#: It keeps the main job of a panel of 300,000+ objects within seconds (150+ draws: P(above) to +-0.04,
#: rank intervals from 150 order statistics); smaller panels keep the 10,000 draws asked for.
MAX_DRAW_CELLS = 50_000_000
#: Upper bound on draws x evaluations when the fit runs on its iterative (sparse) path (more than
#: graph.DENSE_ASSESSOR_LIMIT assessors): there each draw is one conjugate-gradient solve
#: (about 10-20 s at the bound on a 2-core machine).
MAX_SPARSE_DRAW_WORK = 200_000_000
#: Upper bound on the draws argument itself.
MAX_DRAWS = 1_000_000
#: Threads running Monte Carlo chunks at once (each holds one chunk of CHUNK_BYTES).
MAX_WORKERS = 2


def _descending_keys(values: np.ndarray) -> np.ndarray:
    """uint32 keys whose ascending order is the descending order of the float32 *values*.

    IEEE-754 bit patterns of non-negative floats order like the numbers, and
    of negative floats in reverse; so XOR-ing 0x7FFFFFFF into the positives
    (and nothing into the negatives) gives keys that fall as the values rise.
    Four in-place integer passes; no comparison of floats needed.
    """
    bits = values.view(np.int32)
    keys = bits >> 31  # 0 for positives, -1 (all ones) for negatives
    np.invert(keys, out=keys)
    keys &= 0x7FFFFFFF
    keys ^= bits
    return keys.view(np.uint32)


def _best_first(values: np.ndarray) -> np.ndarray:
    """Object indices of each row of a draws x objects float32 array, largest value first (as intp).

    One packed sort instead of an argsort: the 32-bit order key goes in the
    high half of a uint64 and the object index in the low half, so a plain
    (SIMD) sort of the packed words -- about three times faster than argsort
    here -- orders the objects, and exact ties fall back to the object index.
    """
    n, O = values.shape
    packed = _descending_keys(values).astype(np.uint64)
    packed <<= np.uint64(32)
    packed |= np.arange(O, dtype=np.uint64)[None, :]
    packed.sort(axis=1)
    packed &= np.uint64(0xFFFFFFFF)
    if np.dtype(np.intp).itemsize == packed.itemsize:  # 64-bit numpy: reinterpret, no copy
        return packed.view(np.intp)
    return packed.astype(np.intp)  # 32-bit numpy (Pyodide): index arrays must be int32


def _worker_count() -> int:
    """Threads for the Monte Carlo chunks: two where the machine has them, one in Pyodide (no threads).

    The heavy steps (normal draws, the packed sort, the scatter, BLAS) release
    the GIL, so two chunks in flight use two cores; memory is then two chunks.
    """
    import os
    import sys

    if sys.platform == "emscripten":
        return 1
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def _map_chunks(work, n_chunks: int, prepare=None):
    """Results of ``work(j, *prepare(j))`` (``work(j)`` without *prepare*) for j = 0..n_chunks-1, in order.

    ``prepare`` runs in the calling thread (it may use BLAS, which has threads
    of its own); ``work`` runs on :func:`_worker_count` threads, a wave of
    chunks at a time, so at most that many chunks are in memory at once.
    """
    prepare = prepare or (lambda j: ())
    workers = min(_worker_count(), n_chunks)
    if workers <= 1:
        for j in range(n_chunks):
            yield work(j, *prepare(j))
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="xlcalib-ranking") as pool:
        for first in range(0, n_chunks, workers):
            wave = range(first, min(first + workers, n_chunks))
            prepared = [prepare(j) for j in wave]
            yield from pool.map(lambda j, args: work(j, *args), wave, prepared)


def _order_statistics(stored: np.ndarray, kth: list[int], block_bytes: int = 16 * 2**20) -> np.ndarray:
    """Rows kth[0], kth[1], ... of *stored* (draws x objects) sorted down each column, by column blocks.

    np.partition on contiguous column blocks: linear time per column, and the
    transposed block stays small instead of a second copy of all stored ranks.
    """
    K, O = stored.shape
    out = np.empty((len(kth), O), dtype=stored.dtype)
    step = max(1, block_bytes // max(1, K * stored.itemsize))
    starts = list(range(0, O, step))

    def block(j: int) -> None:  # disjoint columns of `out`: safe from two threads
        start = starts[j]
        part = np.ascontiguousarray(stored[:, start:start + step].T)
        part.partition(kth, axis=1)
        out[:, start:start + step] = part[:, kth].T

    for _ in _map_chunks(block, len(starts)):
        pass
    return out


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


def _line_argument(top_k, threshold, n_objects: int, lottery: bool) -> _Line:
    if top_k is not None and threshold is not None:
        raise InputError("give one funding line: top_k (places) or threshold (a calibrated score), not both")
    if top_k is not None:
        top_k = whole_argument(top_k, "top_k (places above the funding line)", low=1, high=n_objects - 1)
    if threshold is not None:
        threshold = real_argument(threshold, "threshold", low=-MAX_ABS_SCORE, high=MAX_ABS_SCORE)  # as the scores
    if lottery and top_k is None:
        raise InputError("a lottery fills places: give top_k (the number of places) with lottery=True")
    return _Line(top_k, threshold)


def _capped_draws(draws: int, n_objects: int, post) -> tuple[int, str]:
    """Draws within the time and memory bounds, and the note that says when they were reduced."""
    note = ""
    cap = max(100, MAX_DRAW_CELLS // n_objects)
    if draws > cap:
        note = (f"draws reduced from {draws:,} to {cap:,} so that draws x objects stays within "
                f"{MAX_DRAW_CELLS:,} (time and memory bound)")
        draws = cap
    if post.iterative:  # each draw of the iterative path is one solve over all evaluations
        evaluations = post.n_evaluations
        sparse_cap = max(100, MAX_SPARSE_DRAW_WORK // evaluations)
        if draws > sparse_cap:
            note = (f"draws reduced from {draws:,} to {sparse_cap:,}: with this many assessors each draw is an "
                    f"iterative solve over all {evaluations:,} evaluations, and draws x evaluations is kept within "
                    f"{MAX_SPARSE_DRAW_WORK:,} (time bound)")
            draws = sparse_cap
    return draws, note


def _simulate_ranks(post, o_idx, v_hat, t_df, draws: int, seed: int, top_k, level: float):
    """Monte Carlo ranks: (rank sums, counts above a top_k line or None, rank_lower, rank_upper, draws kept).

    Chunks of draws are streamed (never draws x objects at once), one random
    stream per chunk so the numbers do not depend on how many threads ran them.
    """
    O = v_hat.size
    # per draw and object: float32 draw, uint64 packed key, intp order, int32 rank (+ slack)
    chunk = int(max(1, min(draws, CHUNK_BYTES // (28 * O))))
    keep = int(max(1, min(draws, STORED_RANK_BYTES // (4 * O))))
    stored = np.empty((keep, O), dtype=np.int32)  # the first `keep` draws' ranks, one draw per row
    starts = list(range(0, draws, chunk))
    streams = np.random.SeedSequence(seed).spawn(len(starts))
    positions = np.arange(1, O + 1, dtype=np.int32)
    v32 = v_hat.astype(np.float32)
    scatter = o_idx.size != O or not np.array_equal(o_idx, np.arange(O))

    def prepare_chunk(j: int):
        """The chunk's stream and its assessor-level draws (BLAS), made in the calling thread."""
        rng = np.random.default_rng(streams[j])
        return rng, post.draw_theta(min(chunk, draws - starts[j]), rng)

    def run_chunk(j: int, rng, xi):
        start = starts[j]
        n = min(chunk, draws - start)
        dev = post.draw_deviations(n, rng, xi)  # draws x objects, float32 (halves the sort's memory traffic)
        if scatter:
            full = np.empty((n, O), dtype=np.float32)
            full[:, o_idx] = dev
            dev = full
        if t_df:
            dev *= np.sqrt(t_df / rng.chisquare(t_df, n)).astype(np.float32)[:, None]
        dev += v32[None, :]
        order = _best_first(dev)
        del dev
        ranks = np.empty((n, O), dtype=np.int32)
        flat = order + (np.arange(n, dtype=np.intp) * O)[:, None]  # one flat scatter: ranks[i, order[i]] = 1..O
        ranks.ravel()[flat.ravel()] = np.tile(positions, n)
        del flat
        above = np.bincount(order[:, :top_k].ravel(), minlength=O) if top_k is not None else None
        del order
        if start < keep:  # rows of `stored` are disjoint between chunks: safe from two threads
            take = min(n, keep - start)
            stored[start:start + take] = ranks[:take]
        return ranks.sum(axis=0, dtype=np.int64), above

    rank_sum = np.zeros(O, dtype=np.int64)  # exact integer sums: the mean does not depend on chunking
    above_count = np.zeros(O, dtype=np.int64)
    for chunk_sum, chunk_above in _map_chunks(run_chunk, len(starts), prepare_chunk):
        rank_sum += chunk_sum
        if chunk_above is not None:
            above_count += chunk_above
    alpha = (1.0 - level) / 2.0
    # the positions np.quantile's "lower"/"higher" methods pick, applied by partition (linear, not a sort)
    index = np.arange(keep)
    lo = int(np.quantile(index, alpha, method="lower"))
    hi = int(np.quantile(index, 1.0 - alpha, method="higher"))
    rank_lower, rank_upper = _order_statistics(stored, [lo, hi])
    return rank_sum, (above_count if top_k is not None else None), rank_lower, rank_upper, keep


def _p_above(frame: pd.DataFrame, line: _Line, above_count, draws: int, basis, v_hat, se):
    """(P(above), its Monte Carlo SE, calibrated above, plain-average above) for the line."""
    t_df = basis.t_df
    if line.top_k is not None:
        p = above_count / draws
        return (p, np.sqrt(p * (1.0 - p) / draws), frame["rank"].to_numpy() <= line.top_k,
                frame["raw_rank"].to_numpy() <= line.top_k)
    from scipy.special import ndtr, stdtr

    z = (v_hat - line.threshold) / np.where(se > 0, se, np.inf)
    p = stdtr(t_df, z) if t_df else ndtr(z)
    p = np.where(se > 0, p, (v_hat >= line.threshold).astype(float))
    calibrated_above = frame["value"].to_numpy() >= line.threshold
    return p, np.zeros(v_hat.size), calibrated_above, frame["raw_mean"].to_numpy() >= line.threshold


def _draw_lottery(frame: pd.DataFrame, decision: np.ndarray, top_k: int, seed: int, lottery_seed) -> dict[str, Any]:
    """Fill the places left after the *above* group by a uniform, recorded draw among the *borderline* group."""
    frame["lottery"] = ""
    places = top_k - int((decision == "above").sum())
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
    return {"seed": lot_seed, "places": max(places, 0), "pool": list(pool), "drawn": drawn,
            "method": "uniform draw without replacement among the borderline group (numpy default_rng(seed).choice)"}


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
    basis = result.decision_basis()
    post, o_idx = basis.posterior, basis.object_index
    values = result.values
    O = len(values)
    if O < 2:
        raise InputError("ranking needs at least two objects")
    line = _line_argument(top_k, threshold, O, lottery)
    level = result.stats.get("interval_level", 0.95) if level is None else \
        real_argument(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    draws = whole_argument(draws, "draws", low=100, high=MAX_DRAWS)
    seed = seed_argument(seed)
    epsilon = real_argument(epsilon, "epsilon", low=0.0, high=0.5, low_open=True, high_open=True)
    draws, note = _capped_draws(draws, O, post)

    # draws, ranks and P(above) from the decision basis (see CalibrationResult.decision_basis), in table order
    v_hat, se_hat = np.empty(O), np.full(O, np.nan)
    v_hat[o_idx] = basis.values
    if line.threshold is not None:  # P(value > X) is exact from the SEs; a line by places needs only draws
        se_hat[o_idx] = basis.se
    rank_sum, above_count, rank_lower, rank_upper, keep = _simulate_ranks(
        post, o_idx, v_hat, basis.t_df, draws, seed, line.top_k, level)
    frame = pd.DataFrame({
        "rank": values["value"].rank(ascending=False, method="min").astype(int),
        "value": values["value"].to_numpy(dtype=float), "se": values["se"].to_numpy(dtype=float),
        "lower": values["lower"],
        "upper": values["upper"], "raw_mean": values["raw_mean"],
        "raw_rank": values["raw_mean"].rank(ascending=False, method="min").astype(int),
        "expected_rank": rank_sum / draws,
        "rank_lower": rank_lower.astype(int), "rank_upper": rank_upper.astype(int),
        "n": values["n"], "total_confidence": values["total_confidence"],
    }, index=values.index)
    lottery_record: dict[str, Any] = {}
    if line.text:
        p, mc, calibrated_above, raw_above = _p_above(frame, line, above_count, draws, basis, v_hat, se_hat)
        decision = np.where(p >= 1.0 - epsilon, "above", np.where(p <= epsilon, "below", "borderline"))
        frame["p_above"] = p
        frame["p_above_mc_se"] = mc
        frame["decision"] = decision
        frame["raw_decision"] = np.where(raw_above, "above", "below")
        frame["changed"] = calibrated_above != raw_above
        if lottery:
            lottery_record = _draw_lottery(frame, decision, line.top_k, seed, lottery_seed)
    frame = frame.sort_values(["rank", "expected_rank"], kind="stable")
    frame.attrs.update({"line": line.text, "level": level, "draws": draws, "seed": seed, "epsilon": epsilon,
                        "rank_interval_draws": keep, "note": note, "lottery": lottery_record,
                        "gauge": result.stats.get("gauge"), "model": result.stats.get("model", "fixed"),
                        "decision_model": basis.model, "assessors_differ": assessors_differ(result.stats)})
    return frame


def decision_summary(ranking: pd.DataFrame) -> str:
    """One plain paragraph on the funding line of a ranking table (empty when no line was set)."""
    attrs = ranking.attrs
    if not attrs.get("line") or "decision" not in ranking:
        return ""
    counts = ranking["decision"].value_counts()
    above, border, below = (int(counts.get(k, 0)) for k in ("above", "borderline", "below"))
    eps = attrs.get("epsilon", 0.05)
    moved = int(ranking["changed"].sum())
    if attrs.get("assessors_differ") is False:  # a difference the data do not support is no finding
        moved_text = (f"the assessors do not measurably differ in stringency, so the {moved} object(s) on the other "
                      "side of the line from plain averages are there by the confidence weights and chance, not by "
                      "a correction")
    else:
        moved_text = f"calibration moved {moved} object(s) across the line compared with plain averages"
    text = (f"Funding line {attrs['line']}: {above} above (P >= {1 - eps:.0%}), {border} borderline, {below} below "
            f"(P <= {eps:.0%}); {moved_text} ({attrs['draws']:,} draws, seed {attrs['seed']}).")
    lottery = attrs.get("lottery") or {}
    if lottery.get("drawn"):
        text += (f" Lottery (seed {lottery['seed']}): {len(lottery['drawn'])} of {len(lottery['pool'])} borderline "
                 f"object(s) drawn for {lottery['places']} place(s): {', '.join(map(str, lottery['drawn']))}.")
    if attrs.get("note"):
        text += f" Note: {attrs['note']}."
    return text
