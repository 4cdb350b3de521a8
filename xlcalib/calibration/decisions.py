"""From calibrated scores to decisions: ranks, the funding line, P(above the line), a recorded lottery.

A panel decides *which proposals to fund* (or which grade to give).  The
calibrated values are estimates; what the panel needs is how sure each
decision is.  :func:`rank_objects` (reached as ``CalibrationResult.ranking``)
draws from the exact joint Gaussian distribution of the fit -- biases from the
reduced system's Cholesky factor, then each value given the biases, t-scaled
when the noise scale w was estimated; with the default model's decision
basis and whole-point scores each read's variance includes the scale's
rounding, h^2/12 (:mod:`.resolution`) -- and reports per object

* ``rank`` (by calibrated value, 1 = best), ``raw_rank`` (by plain average),
  ``expected_rank`` and a rank interval;
* with a funding line (``top_k`` places, or a calibrated-score ``threshold``)
  ``p_above`` = P(the object is above the line), its Monte Carlo standard
  error, and a decision: *above* (P >= 1 - epsilon), *below* (P <= epsilon) or
  *borderline*; ``raw_decision`` (what plain averages would decide) and
  ``changed`` (calibration moved the object across the line);
* the joint statement (which objects are above, and which below, the line
  *all together* with the run's probability), and one final decision per
  object -- funded, not funded, funded by lottery, not drawn, to discuss --
  with the statement it rests on.

Peers doing the same without declared confidences: the NeurIPS 2014 reviewer
calibration (P(accept) from posterior samples, a grey area), the SNSF's
ERforResearch (expected rank, intervals, funding line, lottery among the
undecidable), FACETS (fair averages with standard errors).

Draws are streamed in chunks (never draws x objects at once): the memory is
bounded by :data:`CHUNK_BYTES` for the draws and :data:`STORED_RANK_BYTES` for
the ranks kept to form rank intervals and the joint statements of a line by
places (from the first draws when the panel is large; a note says how many);
the number of draws is capped at
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

__all__ = ["rank_objects", "decision_summary", "FINAL_WORDS", "TIERS", "CHUNK_BYTES", "STORED_RANK_BYTES",
           "MAX_DRAW_CELLS", "MAX_DRAWS", "MAX_SPARSE_DRAW_WORK"]

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


@dataclass
class _Draws:
    """What the Monte Carlo draws leave: rank sums, counts above a top_k line, the rank intervals, the first
    ``keep`` draws' ranks (one draw per row) and, for a score line, each draw's joint-statement edges."""

    rank_sum: np.ndarray
    above_count: np.ndarray | None
    rank_lower: np.ndarray
    rank_upper: np.ndarray
    keep: int
    stored: np.ndarray
    edges: tuple[np.ndarray, np.ndarray] | None = None


def _edges(inside: np.ndarray, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per draw (row of *inside*, draws x objects, True = the object is above the line in that draw): how many of
    the objects in decision order (``position[o]`` = 0 for the likeliest above) are above the line from the top
    without a gap, and how many are below it from the bottom without a gap.

    A joint statement "the first a objects are all above and the last b all below" holds in a draw exactly
    when a <= the first count and b <= the second (:func:`_joint_counts`).
    """
    O = position.size
    first_below = np.where(inside, np.int32(O), position[None, :]).min(axis=1)
    last_above = np.where(inside, position[None, :], np.int32(-1)).max(axis=1)
    return first_below.astype(np.intp), (O - 1 - last_above).astype(np.intp)


def _simulate_ranks(post, o_idx, v_hat, t_df, draws: int, seed: int, top_k, level: float,
                    score_line: tuple[float, np.ndarray] | None = None) -> _Draws:
    """Monte Carlo ranks: rank sums, counts above a top_k line, rank intervals, the kept draws' ranks and, with
    *score_line* = (threshold, decision-order positions), each draw's joint-statement edges (:func:`_edges`).

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
        edges = _edges(dev >= np.float32(score_line[0]), score_line[1]) if score_line is not None else None
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
        return ranks.sum(axis=0, dtype=np.int64), above, edges

    rank_sum = np.zeros(O, dtype=np.int64)  # exact integer sums: the mean does not depend on chunking
    above_count = np.zeros(O, dtype=np.int64)
    first, last = [], []
    for chunk_sum, chunk_above, chunk_edges in _map_chunks(run_chunk, len(starts), prepare_chunk):
        rank_sum += chunk_sum
        if chunk_above is not None:
            above_count += chunk_above
        if chunk_edges is not None:
            first.append(chunk_edges[0])
            last.append(chunk_edges[1])
    alpha = (1.0 - level) / 2.0
    # the positions np.quantile's "lower"/"higher" methods pick, applied by partition (linear, not a sort)
    index = np.arange(keep)
    lo = int(np.quantile(index, alpha, method="lower"))
    hi = int(np.quantile(index, 1.0 - alpha, method="higher"))
    rank_lower, rank_upper = _order_statistics(stored, [lo, hi])
    edges = (np.concatenate(first), np.concatenate(last)) if first else None
    return _Draws(rank_sum, above_count if top_k is not None else None, rank_lower, rank_upper, keep, stored, edges)


def _top_k_edges(stored: np.ndarray, top_k: int, position: np.ndarray, block_bytes: int = 32 * 2**20):
    """:func:`_edges` of the kept draws for a line of *top_k* places (above = rank <= top_k), by blocks of draws."""
    step = max(1, block_bytes // max(1, 5 * stored.shape[1]))
    parts = [_edges(stored[i:i + step] <= top_k, position) for i in range(0, stored.shape[0], step)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _joint_counts(first: np.ndarray, last: np.ndarray, level: float) -> tuple[int, int, float]:
    """The joint statement with the most objects: (a, b, probability) such that in at least *level* of the draws
    the first a objects in decision order are all above the line *and* the last b all below it.

    *first*/*last* are each draw's edges (:func:`_edges`): the statement (a, b) holds in a draw when
    a <= first and b <= last, so for each a (only the distinct values of *first* matter) the largest b is the
    ceil(level x draws)-th largest *last* among the draws with first >= a.  This is the posterior version of
    the simultaneous statements of Mogstad, Romano, Shaikh & Wilhelm (2023/2024, "Inference for ranks with
    applications to mobility across neighbourhoods and academic achievement across countries", Review of
    Economic Studies 91:476, the "tau-best" confidence sets): the whole list of objects called certain is
    right at once with the stated probability, not each object on its own.  That probability is a
    posterior one: against a known truth it holds as far as the posterior's tails are right (measured in
    ``benchmarks/bench_joint.py``; see :func:`rank_objects`).
    """
    n = first.size
    need = max(1, int(np.ceil(level * n - 1e-9)))
    by_first = np.argsort(-first, kind="stable")
    f_sorted, l_sorted = first[by_first], last[by_first]
    best = (0, 0)
    for a in np.union1d(first, [0])[::-1]:
        m = int(np.searchsorted(-f_sorted, -a, side="right"))  # draws with first >= a
        if m < need:
            continue
        b = int(np.partition(l_sorted[:m], m - need)[m - need])
        if a + b > sum(best) or (a + b == sum(best) and a > best[0]):
            best = (int(a), b)
    a, b = best
    holds = float(np.mean((first >= a) & (last >= b))) if n else 0.0
    return a, b, holds


def _threshold_p(v_hat: np.ndarray, se: np.ndarray, threshold: float, t_df) -> np.ndarray:
    """P(value > threshold) from the posterior means and SDs (normal, or Student t with t_df degrees of freedom)."""
    from scipy.special import ndtr, stdtr

    z = (v_hat - threshold) / np.where(se > 0, se, np.inf)
    p = stdtr(t_df, z) if t_df else ndtr(z)
    return np.where(se > 0, p, (v_hat >= threshold).astype(float))


def _p_above(frame: pd.DataFrame, line: _Line, above_count, draws: int, basis, v_hat, se):
    """(P(above), its Monte Carlo SE, calibrated above, plain-average above) for the line."""
    t_df = basis.t_df
    if line.top_k is not None:
        p = above_count / draws
        return (p, np.sqrt(p * (1.0 - p) / draws), frame["rank"].to_numpy() <= line.top_k,
                frame["raw_rank"].to_numpy() <= line.top_k)
    p = _threshold_p(v_hat, se, line.threshold, t_df)
    calibrated_above = frame["value"].to_numpy() >= line.threshold
    return p, np.zeros(v_hat.size), calibrated_above, frame["raw_mean"].to_numpy() >= line.threshold


#: The statement each decision rests on, strongest first: the joint statements hold for the whole list at once,
#: the others for each object on its own (see :func:`rank_objects`).
TIERS = ("jointly above", "above", "borderline", "below", "jointly below")


def _tiers(p: np.ndarray, position: np.ndarray, n_in: int, n_out: int, epsilon: float) -> np.ndarray:
    """Each object's tier (an index into :data:`TIERS`): the joint statements first, then P(above) on its own."""
    O = p.size
    tier = np.full(O, 2, dtype=np.intp)
    tier[p >= 1.0 - epsilon] = 1
    tier[p <= epsilon] = 3
    tier[position < n_in] = 0
    tier[position >= O - n_out] = 4
    return tier


def _basis_words(tier: np.ndarray, epsilon: float, level: float) -> np.ndarray:
    """The statement each decision rests on, in a few words (the Ranking's "rests on" column)."""
    cut, sure = f"{epsilon:.0%}", f"{1 - epsilon:.0%}"
    words = np.array([f"jointly above ({level:.0%}, whole list)", f"on its own: P(above) ≥ {sure}",
                      f"borderline: P(above) {cut}-{sure}", f"on its own: P(above) ≤ {cut}",
                      f"jointly below ({level:.0%}, whole list)"], dtype=object)
    return words[tier]


def _final_decisions(index: pd.Index, tier: np.ndarray, position: np.ndarray, top_k: int | None, lottery: bool,
                     lot_seed: int) -> tuple[np.ndarray, dict[str, Any]]:
    """The one final decision per object, and the record of how the places were filled.

    Without places (a score line): funded when the object is above on its tier's statement, not funded when
    below, to discuss when borderline.  With ``top_k`` places: the places are filled tier by tier, strongest
    first; the tier in which they run out is the band adjacent to the line -- with ``lottery`` its places go
    by a uniform, recorded draw among that tier only (never beyond it), otherwise its objects are "to
    discuss"; the tiers after it are not funded.  So with a lottery exactly ``top_k`` objects are funded.
    Places left after the whole borderline band go to the next objects in decision order, never by a draw.
    """
    if top_k is None:
        final = np.where(tier <= 1, "funded", np.where(tier >= 3, "not funded", "to discuss")).astype(object)
        return final, {}
    final = np.full(tier.size, "not funded", dtype=object)
    left, pool, drawn, pool_tier = top_k, np.array([], dtype=np.intp), [], None
    for t in range(len(TIERS)):
        members = np.flatnonzero(tier == t)
        if left <= 0 or not members.size:
            continue
        if members.size <= left:
            final[members] = "funded"
            left -= members.size
            continue
        pool, pool_tier = members[np.argsort(position[members], kind="stable")], TIERS[t]
        if t > TIERS.index("borderline"):
            # places left after the whole borderline band: the next objects in decision order take them (a draw
            # among objects the data place below the line, far from it, would not be defensible)
            final[pool[:left]] = "funded"
            pool, left, pool_tier = np.array([], dtype=np.intp), 0, None
        elif lottery:
            picks = np.sort(np.random.default_rng(lot_seed).choice(pool.size, size=left, replace=False))
            drawn = pool[picks]
            final[pool] = "not drawn"
            final[drawn] = "funded by lottery"
        else:
            final[pool] = "to discuss"
        break
    places_left = left if pool.size else 0
    return final, {"places": top_k, "sure": top_k - places_left if pool.size else int((final == "funded").sum()),
                   "left": places_left, "pool": list(index[pool]), "pool_tier": pool_tier,
                   "drawn": list(index[drawn]) if lottery else [], "seed": lot_seed if lottery else None}


def _decision_order(p: np.ndarray, v_hat: np.ndarray) -> np.ndarray:
    """Each object's position in decision order (0 first): P(above) from high to low, ties by the value drawn
    around, then by table order.  The joint statements take objects in this order from either end."""
    O = p.size
    position = np.empty(O, dtype=np.int32)
    position[np.lexsort((np.arange(O), -v_hat, -p))] = np.arange(O, dtype=np.int32)
    return position


def _ranking_frame(values: pd.DataFrame, drawn: "_Draws", draws: int) -> pd.DataFrame:
    """The ranking table's columns without a line: ranks, values, intervals, expected rank and rank interval."""
    return pd.DataFrame({
        "rank": values["value"].rank(ascending=False, method="min").astype(int),
        "value": values["value"].to_numpy(dtype=float), "se": values["se"].to_numpy(dtype=float),
        "lower": values["lower"],
        "upper": values["upper"], "raw_mean": values["raw_mean"],
        "raw_rank": values["raw_mean"].rank(ascending=False, method="min").astype(int),
        "expected_rank": drawn.rank_sum / draws,
        "rank_lower": drawn.rank_lower.astype(int), "rank_upper": drawn.rank_upper.astype(int),
        "n": values["n"], "total_confidence": values["total_confidence"],
    }, index=values.index)


def _line_decisions(frame: pd.DataFrame, line: _Line, drawn: "_Draws", draws: int, basis, estimates, score_line,
                    rules):
    """Add the line's columns to *frame* (P(above) and its MC error, decision, raw decision, changed, joint, final,
    basis, lottery) and return (how the places were filled, the joint statement).  *estimates* = (values, SEs)
    in table order; *rules* = (level, epsilon, lottery, lottery seed)."""
    level, epsilon, lottery, lot_seed = rules
    v_hat, se_hat = estimates
    p, mc, calibrated_above, raw_above = _p_above(frame, line, drawn.above_count, draws, basis, v_hat, se_hat)
    frame["p_above"] = p
    frame["p_above_mc_se"] = mc
    frame["decision"] = np.where(p >= 1.0 - epsilon, "above", np.where(p <= epsilon, "below", "borderline"))
    frame["raw_decision"] = np.where(raw_above, "above", "below")
    frame["changed"] = calibrated_above != raw_above
    position = score_line[1] if score_line is not None else _decision_order(p, v_hat)
    first, last = drawn.edges if score_line is not None else _top_k_edges(drawn.stored, line.top_k, position)
    n_in, n_out, holds = _joint_counts(first, last, level)
    tier = _tiers(p, position, n_in, n_out, epsilon)
    frame["joint"] = np.where(tier == 0, "above", np.where(tier == 4, "below", ""))
    frame["final"], record = _final_decisions(frame.index, tier, position, line.top_k, lottery, lot_seed)
    frame["basis"] = _basis_words(tier, epsilon, level)
    if lottery:
        frame["lottery"] = np.where(frame["final"] == "funded by lottery", "funded by lottery",
                                    np.where(frame["final"] == "not drawn", "not drawn", ""))
    return record, {"level": level, "above": n_in, "below": n_out, "probability": holds, "draws": int(first.size)}


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
        The borderline group's cut-off: *above* when P >= 1 - epsilon, *below*
        when P <= epsilon, else *borderline*.  At the stated margin, decisions
        marked above/below are wrong at most about an epsilon share of the time
        (checked by simulation in the tests).  A larger epsilon narrows the
        borderline band (0.25: P between 25% and 75%, the objects whose central
        50% rank interval contains the line -- the credible-interval rule of
        Heyard, Ott, Salanti & Egger 2022, Statistics and Public Policy 9:110).
    lottery, lottery_seed:
        With ``top_k``: the places left after the objects above (see below) go
        by a uniform draw among the band adjacent to the line only (the
        practice some funders use for the undecidable), recorded with its seed
        in ``frame.attrs["lottery"]`` and the ``final`` and ``lottery`` columns.

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
    :mod:`.resolution`; without it the confident reads were overweighted and
    the statement was wrong in 6.0-6.7% of the first 1,000 panels), and the
    ends of a declared scale (a 6 on 1-6 read as "6 or higher",
    :mod:`.censoring`; without it clipping made the noise scale about 5% too
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
    line = _line_argument(top_k, threshold, O, lottery)
    level = result.stats.get("interval_level", 0.95) if level is None else \
        real_argument(level, "level", low=0.0, high=1.0, low_open=True, high_open=True)
    draws = whole_argument(draws, "draws", low=100, high=MAX_DRAWS)
    seed = seed_argument(seed)
    epsilon = real_argument(epsilon, "epsilon", low=0.0, high=0.5, low_open=True, high_open=True)
    lot_seed = seed if lottery_seed is None else seed_argument(lottery_seed, "lottery_seed")
    draws, note = _capped_draws(draws, O, post)

    # draws, ranks and P(above) from the decision basis (see CalibrationResult.decision_basis), in table order
    v_hat, se_hat = np.empty(O), np.full(O, np.nan)
    v_hat[o_idx] = basis.values
    score_line = None
    if line.threshold is not None:  # P(value > X) is exact from the SEs (a line by places needs only draws), so
        se_hat[o_idx] = basis.se    # the decision order is known before the draws that make the joint statements
        p_exact = _threshold_p(v_hat, se_hat, line.threshold, basis.t_df)
        score_line = (line.threshold, _decision_order(p_exact, v_hat))
    drawn = _simulate_ranks(post, o_idx, v_hat, basis.t_df, draws, seed, line.top_k, level, score_line)
    frame = _ranking_frame(values, drawn, draws)
    record: dict[str, Any] = {}
    joint: dict[str, Any] = {}
    if line.text:
        record, joint = _line_decisions(frame, line, drawn, draws, basis, (v_hat, se_hat), score_line,
                                        (level, epsilon, lottery, lot_seed))
    frame = frame.sort_values(["rank", "expected_rank"], kind="stable")
    lottery_record = {}
    if lottery:
        lottery_record = {"seed": lot_seed, "places": record["left"], "pool": record["pool"],
                          "drawn": record["drawn"], "tier": record["pool_tier"],
                          "method": "uniform draw without replacement among the band adjacent to the line (the tier "
                                    "in which the places run out; numpy default_rng(seed).choice)"}
    frame.attrs.update({"line": line.text, "level": level, "draws": draws, "seed": seed, "epsilon": epsilon,
                        "rank_interval_draws": drawn.keep, "note": note, "lottery": lottery_record,
                        "places": record, "joint": joint,
                        "gauge": result.stats.get("gauge"), "model": result.stats.get("model", "fixed"),
                        "decision_model": basis.model, "assessors_differ": assessors_differ(result.stats)})
    return frame


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
    if lottery.get("pool"):
        text += (f" The lottery drew {len(lottery['drawn'])} of the {len(lottery['pool'])} objects in the band next to "
                 f"the line ({lottery.get('tier', 'borderline')}), each with the same chance, seed {lottery['seed']}.")
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
    text += f" ({attrs['draws']:,} draws, seed {attrs['seed']}.)"
    if attrs.get("note"):
        text += f" Note: {attrs['note']}."
    return text
