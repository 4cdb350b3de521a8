"""The Monte Carlo engine under rankings: joint draws of the values, streamed in chunks, ranked, counted.

Why its own module: the ranking (:mod:`.ranking`) states what the draws mean -- ranks, P(above the line), the
joint statements, the decisions; this module only makes and counts them, within a memory and time bound, the
same numbers for the same seed whatever the number of threads.

Draws are streamed in chunks (never draws x objects at once): the memory is bounded by :data:`CHUNK_BYTES`
for the draws and :data:`STORED_RANK_BYTES` for the ranks kept to form rank intervals and the joint
statements of a line by places (from the first draws when the panel is large); the number of draws is capped
at :data:`MAX_DRAW_CELLS` / objects.  One random stream per chunk (``SeedSequence.spawn``), so the numbers do
not depend on how many threads ran them.

**P(rank <= k) by conditional Monte Carlo.**  Given the draw's assessor-level deviations theta the values are
independent, each normal around its own centre m_o(theta) with SD s_o (:meth:`..system.posterior.Posterior.
draw_deviations`), so instead of counting whether object o landed in the top k of a draw, each draw adds

    P(v_o > T_-o | theta, v_-o) = Phi((m_o(theta) - T_-o) / s_o),

T_-o the k-th largest value among the *other* objects of that draw (the draw's (k+1)-th largest when o is in
its top k, else its k-th) -- the Rao-Blackwellised estimate of the same probability (Casella & Robert 1996,
Biometrika 83:81; "conditional Monte Carlo", Hammersley 1956), unbiased, with a variance that here is a few
hundred to a thousand times smaller than the count's (on a 10^5-object panel, 500 draws gave a median Monte
Carlo s.e. of 0.0004 in the band at the line, against 0.011 for the count).  Its Monte Carlo s.e. is the
spread of the terms over the draws.

**Settling the decisions** (:func:`settle`): a decision at the cut-offs epsilon and 1 - epsilon is *settled*
when P(above) lies at least :data:`SETTLE_ERRORS` Monte Carlo errors from both.  After the first draws (the
ones asked for, which also give the ranks), more rounds of draws are made while some object is unsettled and
could be settled within the budget: each round's size is what the unsettled objects' errors say they need,
the round draws every object jointly (the k-th value needs them all) but ranks nothing -- one partition
per draw for the two order statistics (:func:`line_values`), the conditional probabilities only for the objects still
unsettled -- so a round costs about a third of a first-pass draw.  The budget is stated:
:data:`MAX_SETTLE_DRAWS` extra draws, at most :data:`SETTLE_DRAWS_FACTOR` times the draws asked for, and
:data:`MAX_SETTLE_CELLS` extra draws x objects (and, on the iterative path, :data:`MAX_SPARSE_DRAW_WORK` draws x
evaluations); objects still unsettled when it is spent
(or whose need exceeds it) are named by the ranking and decided as borderline.  Every round's draws come from
their own streams (``SeedSequence([seed, 37, round])``), so the same seed gives the same rounds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from ... import progress
from ..system.threads import one_blas_thread
from .replay import chunk_stream

__all__ = ["CHUNK_BYTES", "STORED_RANK_BYTES", "MAX_DRAW_CELLS", "MAX_SPARSE_DRAW_WORK", "MAX_DRAWS", "MAX_WORKERS",
           "MAX_SETTLE_DRAWS", "MAX_SETTLE_CELLS", "MAX_RANK_HISTOGRAM_CELLS", "SETTLE_DRAWS_FACTOR",
           "SETTLE_ERRORS", "Draws", "best_first", "line_values",
           "capped_draws",
           "conditional_above", "joint_counts", "line_edges", "map_chunks", "order_statistics",
           "rank_histogram", "rank_order_statistics", "settle", "simulate_ranks", "top_k_edges", "unsettled",
           "worker_count"]


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
#: A decision is settled when P(above) lies at least this many Monte Carlo errors from both cut-offs.
SETTLE_ERRORS = 3.0
#: Extra draws made to settle decisions, at most (on top of the draws asked for) ...
MAX_SETTLE_DRAWS = 100_000
#: ... and at most this many times the draws asked for (a quick look with few draws stays quick).
SETTLE_DRAWS_FACTOR = 10
#: Extra draws x objects made to settle decisions, at most (2,000 extra draws of a 10^5-object panel: about 5-10 s on
#: a 2-core machine, most of it drawing the normal variates).
MAX_SETTLE_CELLS = 200_000_000
#: The smallest round of extra draws (smaller rounds cost more in overhead than they settle).
MIN_SETTLE_ROUND = 1_000
#: Rounds of extra draws at most (each re-reads which objects are still unsettled).
MAX_SETTLE_ROUNDS = 6
#: Bytes per draw and object a chunk of the first pass holds at once (the float32 draw and its conditional
#: centre, the packed sort key, the order, the ranks, the conditional probabilities; with slack).
FIRST_PASS_CELL_BYTES = 40
#: Bytes per draw and object a settling round holds at once (the draw, its sorted copy; with slack).
SETTLE_CELL_BYTES = 16


def descending_keys(values: np.ndarray) -> np.ndarray:
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


def best_first(values: np.ndarray) -> np.ndarray:
    """Object indices of each row of a draws x objects float32 array, largest value first (as intp).

    One packed sort instead of an argsort: the 32-bit order key goes in the
    high half of a uint64 and the object index in the low half, so a plain
    (SIMD) sort of the packed words -- about three times faster than argsort
    here -- orders the objects, and exact ties fall back to the object index.
    """
    n, O = values.shape
    packed = descending_keys(values).astype(np.uint64)
    packed <<= np.uint64(32)
    packed |= np.arange(O, dtype=np.uint64)[None, :]
    packed.sort(axis=1)
    packed &= np.uint64(0xFFFFFFFF)
    if np.dtype(np.intp).itemsize == packed.itemsize:  # 64-bit numpy: reinterpret, no copy
        return packed.view(np.intp)
    return packed.astype(np.intp)  # 32-bit numpy (Pyodide): index arrays must be int32


def line_values(draws: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's top_k-th and (top_k + 1)-th largest value (0 < top_k < objects): the line of a settling draw.

    One partition of each row at the top_k-th largest, then the largest of what lies below it: the values a sort
    of each row gives, in under half its time (41 draws of 10^5 objects: 6.5 ms against 16 ms; a partition at
    both places at once took 40 ms).
    """
    cut = draws.shape[1] - top_k
    parted = np.partition(draws, cut, axis=1)
    return parted[:, cut].copy(), parted[:, :cut].max(axis=1)


def worker_count() -> int:
    """Threads for the Monte Carlo chunks: two where the machine has them, one in Pyodide (no threads).

    The heavy steps (normal draws, the packed sort, the scatter, BLAS) release
    the GIL, so two chunks in flight use two cores; memory is then two chunks.
    """
    import os
    import sys

    if sys.platform == "emscripten":
        return 1
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def map_chunks(work, n_chunks: int, prepare=None):
    """Results of ``work(j, *prepare(j))`` (``work(j)`` without *prepare*) for j = 0..n_chunks-1, in order.

    ``prepare`` runs in the calling thread (it may use BLAS); ``work`` runs on
    :func:`worker_count` threads, a wave of chunks at a time, so at most that
    many chunks are in memory at once.  With worker threads, BLAS runs on one
    thread meanwhile (its own threads would spin between the waves and take
    the workers' cores).
    """
    prepare = prepare or (lambda j: ())
    workers = min(worker_count(), n_chunks)
    if workers <= 1:
        for j in range(n_chunks):
            yield work(j, *prepare(j))
        return
    from concurrent.futures import ThreadPoolExecutor

    # the workers take every core: BLAS threads (of the assessor-level solves in *prepare*) would spin between
    # the waves and take the cores from them (system.threads.one_blas_thread)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="xlcalib-ranking") as pool, one_blas_thread():
        for first in range(0, n_chunks, workers):
            wave = range(first, min(first + workers, n_chunks))
            prepared = [prepare(j) for j in wave]
            yield from pool.map(lambda j, args: work(j, *args), wave, prepared)


def order_statistics(stored: np.ndarray, kth: list[int], block_bytes: int = 16 * 2**20) -> np.ndarray:
    """Rows kth[0], kth[1], ... of *stored* (draws x objects) sorted down each column, by column blocks.

    Each contiguous column block is sorted whole: numpy's vectorised sort of
    whole numbers beat a two-point np.partition 3-6 times here (the 500 kept
    ranks of 10^5 objects: 0.15 s against 0.8 s), and the transposed block
    stays small instead of a second copy of all stored ranks.
    """
    K, O = stored.shape
    out = np.empty((len(kth), O), dtype=stored.dtype)
    step = max(1, block_bytes // max(1, K * stored.itemsize))
    starts = list(range(0, O, step))

    def block(j: int) -> None:  # disjoint columns of `out`: safe from two threads
        start = starts[j]
        part = np.ascontiguousarray(stored[:, start:start + step].T)
        part.sort(axis=1)
        out[:, start:start + step] = part[:, kth].T

    for _ in map_chunks(block, len(starts)):
        pass
    return out


#: Objects x ranks cells of the rank histogram :func:`rank_order_statistics` counts in (up to about 2,000 objects;
#: beyond, the partition of :func:`order_statistics`).
MAX_RANK_HISTOGRAM_CELLS = 4_000_000


def rank_histogram(ranks: np.ndarray) -> np.ndarray:
    """Objects x ranks counts of *ranks* (draws x objects, each row a permutation of 1..O): cell [o, r - 1] counts
    the draws that put object o at rank r.  Summed over chunks of draws, it is the histogram of them all."""
    O = ranks.shape[1]
    offsets = np.arange(O, dtype=ranks.dtype) * ranks.dtype.type(O) - ranks.dtype.type(1)  # < 2^31: int32 is safe
    cells = ranks + offsets[None, :]  # object o's rank r counts in cell o * O + r - 1
    return np.bincount(cells.ravel(), minlength=O * O).reshape(O, O)


def rank_order_statistics(stored: np.ndarray, kth: list[int], histogram: np.ndarray | None = None) -> np.ndarray:
    """:func:`order_statistics` of stored *ranks* (each row a permutation of 1..O): the ranks are whole numbers
    1..O, so each object's order statistics are read off the running sum of its histogram of ranks -- for each k
    the first rank whose running count exceeds k.  The same numbers as the partition, about four times faster on
    a spreadsheet-sized panel (300 objects, 10,000 draws: 13 ms against 50 ms), where a recalculation waits.
    *histogram*: :func:`rank_histogram` of *stored*, counted already (the draws' chunks count their own rows on
    the worker threads)."""
    K, O = stored.shape
    if O * O > MAX_RANK_HISTOGRAM_CELLS or not K:
        return order_statistics(stored, kth)
    running = (rank_histogram(stored) if histogram is None else histogram).cumsum(axis=1)
    out = np.empty((len(kth), O), dtype=stored.dtype)
    for i, k in enumerate(kth):
        out[i] = (running > k).argmax(axis=1) + 1
    return out


def capped_draws(draws: int, n_objects: int, post) -> tuple[int, str]:
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
class Draws:
    """What the Monte Carlo draws leave: rank sums, the rank intervals, the first ``keep`` draws' ranks (one draw
    per row), for a score line each draw's joint-statement edges, and for a top_k line each object's sum and sum
    of squares of its conditional probabilities of being above the line (:func:`conditional_above`) over
    ``p_draws`` draws (more than the first pass's for the objects :func:`settle` drew for)."""

    rank_sum: np.ndarray
    rank_lower: np.ndarray
    rank_upper: np.ndarray
    keep: int
    stored: np.ndarray
    edges: tuple[np.ndarray, np.ndarray] | None = None
    p_sum: np.ndarray | None = None
    p_squares: np.ndarray | None = None
    p_draws: np.ndarray | None = None
    #: the extra draws settling rounds made (0: the first pass settled every decision, or no rounds were run)
    extra_draws: int = 0
    #: with a top_k line of at most a quarter of the objects: each kept draw's top_k objects, best first (the
    #: joint statement's edges are read from them, :func:`top_k_edges`); None otherwise
    above: np.ndarray | None = None

    def conditional_p(self) -> tuple[np.ndarray, np.ndarray]:
        """(P(above) per object, its Monte Carlo s.e.): the mean of the conditional probabilities and their
        spread over the draws / sqrt(draws)."""
        n = self.p_draws.astype(float)
        p = self.p_sum / n
        variance = np.maximum(self.p_squares / n - p**2, 0.0) * n / np.maximum(n - 1.0, 1.0)
        return p, np.sqrt(variance / n)


def line_edges(inside: np.ndarray, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per draw (row of *inside*, draws x objects, True = the object is above the line in that draw): how many of
    the objects in decision order (``position[o]`` = 0 for the likeliest above) are above the line from the top
    without a gap, and how many are below it from the bottom without a gap.

    A joint statement "the first a objects are all above and the last b all below" holds in a draw exactly
    when a <= the first count and b <= the second (:func:`joint_counts`).
    """
    O = position.size
    first_below = np.where(inside, np.int32(O), position[None, :]).min(axis=1)
    last_above = np.where(inside, position[None, :], np.int32(-1)).max(axis=1)
    return first_below.astype(np.intp), (O - 1 - last_above).astype(np.intp)


def conditional_above(values: np.ndarray, centres: np.ndarray, sd: np.ndarray, factor: np.ndarray | None,
                      top: np.ndarray, kth: np.ndarray, next_value: np.ndarray) -> np.ndarray:
    """Per draw (row) and object (column): P(the object is above a line of k places | the draw's theta and the
    other objects' values) = Phi((m_o - T_-o) / s_o), float32 (see the module docstring).

    *values*: the draws; *centres*: each value's conditional mean m_o (overwritten); *sd*: s_o per object;
    *factor*: the t scaling of each draw (None: normal); *top*: True where the object is in the draw's top k;
    *kth*, *next_value*: each draw's k-th and (k+1)-th largest value -- so T_-o, the k-th largest among the
    others, is *next_value* where the object is in the top k, else *kth*.
    """
    centres -= np.where(top, next_value[:, None], kth[:, None])
    centres /= sd[None, :]
    if factor is not None:
        centres /= factor[:, None]
    return ndtr(centres)


def _t_factor(t_df, rng, n: int):
    """Each draw's t scaling sqrt(df / chi2_df) (None when the noise scale is known: normal draws)."""
    return np.sqrt(t_df / rng.chisquare(t_df, n)).astype(np.float32) if t_df else None


def _joint_draws(post, rng, xi, n: int, o_idx: np.ndarray, t_df, v32: np.ndarray, centres):
    """(values, conditional centres or None, t factors or None): n joint draws of every object's value in table
    order, as float32 draws x objects arrays; *centres*: False, True (every object's) or the table positions of
    the objects whose centres are wanted (their columns in that order)."""
    O = v32.size
    wanted = centres if centres is True or centres is False else np.argsort(o_idx)[centres]  # table -> basis
    made = post.draw_deviations(n, rng, xi, centres=wanted)
    dev, centre = made if centres is not False else (made, None)
    if o_idx.size != O or not np.array_equal(o_idx, np.arange(O)):
        full = np.empty((n, O), dtype=np.float32)
        full[:, o_idx] = dev
        dev = full
        if centres is True:
            full = np.empty((n, O), dtype=np.float32)
            full[:, o_idx] = centre
            centre = full
    factor = _t_factor(t_df, rng, n)
    if factor is not None:
        dev *= factor[:, None]
        if centre is not None:
            centre *= factor[:, None]
    dev += v32[None, :]
    if centre is not None:
        centre += v32[None, :] if centres is True else v32[None, centres]
    return dev, centre, factor


def _chunk_preparer(post, streams, starts: list[int], chunk: int, total: int, n_objects: int):
    """*prepare* for :func:`map_chunks` over a run of *total* draws: chunk j's random stream (:func:`.replay.
    chunk_stream`) and its assessor-level draws (BLAS), made in the calling thread."""

    def prepare(j: int):
        rng = chunk_stream(streams[j], total, n_objects)
        return rng, post.draw_theta(min(chunk, total - starts[j]), rng)

    return prepare


def centred_values(v_hat: np.ndarray) -> tuple[np.ndarray, float]:
    """(v_hat - origin in float32, origin): ranks and the conditional probabilities do not change with a common
    shift, and single precision keeps about 7 digits of the number it holds, so the draws are made about the
    values' median -- scores in any unit (1-6, or 23,000 + 0.24 x that) rank alike."""
    origin = float(np.median(v_hat)) if v_hat.size else 0.0
    return (v_hat - origin).astype(np.float32), origin


#: Objects from which each draw's ranks are scattered row by row (16 draws of 10^5 objects: 10 ms against 15 ms for
#: one flat scatter, which builds draws x objects index arrays first); below, one flat scatter (5,000 draws of 300
#: objects: 6.5 ms against 13 ms row by row).
ROW_SCATTER_OBJECTS = 4096


def simulate_ranks(post, o_idx, v_hat, t_df, draws: int, seed: int, top_k, level: float,
                   score_line: tuple[float, np.ndarray] | None = None) -> Draws:
    """Monte Carlo ranks: rank sums, rank intervals, the kept draws' ranks, with a top_k line each object's
    conditional probabilities of being above it (:func:`conditional_above`) and, with *score_line* =
    (threshold, decision-order positions), each draw's joint-statement edges (:func:`line_edges`).

    Chunks of draws are streamed (never draws x objects at once), one random
    stream per chunk so the numbers do not depend on how many threads ran them.
    """
    O = v_hat.size
    chunk = int(max(1, min(draws, CHUNK_BYTES // (FIRST_PASS_CELL_BYTES * O))))
    keep = int(max(1, min(draws, STORED_RANK_BYTES // (4 * O))))
    stored = np.empty((keep, O), dtype=np.int32)  # the first `keep` draws' ranks, one draw per row
    # their top_k objects too, for the joint statement (at most a quarter of what the ranks hold)
    above = np.empty((keep, top_k), dtype=np.int32) if top_k is not None and 0 < 4 * top_k <= O else None
    starts = list(range(0, draws, chunk))
    streams = np.random.SeedSequence(seed).spawn(len(starts))
    positions = np.arange(1, O + 1, dtype=np.int32)
    v32, origin = centred_values(v_hat)
    sd = None
    if top_k is not None:  # each value's SD given theta, in table order
        sd = np.empty(O, dtype=np.float32)
        sd[o_idx] = post.conditional_sd()

    prepare_chunk = _chunk_preparer(post, streams, starts, chunk, draws, O)

    def run_chunk(j: int, rng, xi):
        start = starts[j]
        n = min(chunk, draws - start)
        dev, centre, factor = _joint_draws(post, rng, xi, n, o_idx, t_df, v32, top_k is not None)
        edges = line_edges(dev >= np.float32(score_line[0] - origin), score_line[1]) if score_line is not None else None
        order = best_first(dev)
        rows = np.arange(n, dtype=np.intp)
        sums = None
        if top_k is not None:
            top = np.zeros((n, O), dtype=bool)
            top[rows[:, None], order[:, :top_k]] = True
            terms = conditional_above(dev, centre, sd, factor, top, dev[rows, order[:, top_k - 1]],
                                      dev[rows, order[:, top_k]])
            del top, centre
            sums = (terms.sum(axis=0, dtype=np.float64), np.einsum("ij,ij->j", terms, terms, dtype=np.float64))
            del terms
        del dev
        ranks = np.empty((n, O), dtype=np.int32)
        if O >= ROW_SCATTER_OBJECTS:  # long rows: a scatter per draw, no draws x objects index arrays
            for i in range(n):
                ranks[i, order[i]] = positions
        else:  # short rows: one flat scatter, ranks[i, order[i]] = 1..O
            flat = order + (rows * O)[:, None]
            ranks.ravel()[flat.ravel()] = np.tile(positions, n)
            del flat
        take = max(0, min(n, keep - start))  # the chunk's draws among the kept ones
        if above is not None and take:  # rows of `above` and `stored` are disjoint between chunks: safe from threads
            above[start:start + take] = order[:take, :top_k]
        del order
        counted = None
        if take:
            stored[start:start + take] = ranks[:take]
            counted = rank_histogram(ranks[:take]) if histogram is not None else None  # on the worker thread
        return ranks.sum(axis=0, dtype=np.int64), sums, edges, counted

    rank_sum = np.zeros(O, dtype=np.int64)  # exact integer sums: the mean does not depend on chunking
    p_sum, p_squares = (np.zeros(O), np.zeros(O)) if top_k is not None else (None, None)
    # the kept ranks' histogram is counted chunk by chunk on the worker threads where a chunk holds at least as many
    # cells as the histogram (a spreadsheet-sized panel); else once at the end from the kept ranks, as the partition
    counting = O * O <= MAX_RANK_HISTOGRAM_CELLS and chunk >= O
    histogram = np.zeros((O, O), dtype=np.int64) if counting else None
    first, last = [], []
    # progress is told here, in the calling thread, as each chunk's results are taken in order (the workers
    # run without the caller's context, so they could not tell it)
    with progress.step(f"drawing the ranks ({draws:,} draws of {O:,} objects)", total=draws):
        for j, (chunk_sum, chunk_p, chunk_edges, counted) in enumerate(map_chunks(run_chunk, len(starts),
                                                                                    prepare_chunk)):
            rank_sum += chunk_sum
            if counted is not None:
                histogram += counted
            if chunk_p is not None:  # added in chunk order: the same sums whatever the threads
                p_sum += chunk_p[0]
                p_squares += chunk_p[1]
            if chunk_edges is not None:
                first.append(chunk_edges[0])
                last.append(chunk_edges[1])
            progress.advance(min(chunk, draws - starts[j]))
    alpha = (1.0 - level) / 2.0
    # the positions np.quantile's "lower"/"higher" methods pick, applied by partition (linear, not a sort)
    index = np.arange(keep)
    lo = int(np.quantile(index, alpha, method="lower"))
    hi = int(np.quantile(index, 1.0 - alpha, method="higher"))
    rank_lower, rank_upper = rank_order_statistics(stored, [lo, hi], histogram)
    edges = (np.concatenate(first), np.concatenate(last)) if first else None
    p_draws = np.full(O, draws, dtype=np.int64) if top_k is not None else None
    return Draws(rank_sum, rank_lower, rank_upper, keep, stored, edges, p_sum, p_squares, p_draws, above=above)


def unsettled(p: np.ndarray, se: np.ndarray, epsilon: float) -> np.ndarray:
    """True where P(above) lies within :data:`SETTLE_ERRORS` Monte Carlo errors of a cut-off (epsilon or
    1 - epsilon): the decision could fall either way with more draws."""
    margin = SETTLE_ERRORS * se
    return (np.abs(p - epsilon) < margin) | (np.abs(p - (1.0 - epsilon)) < margin)


def _settle_budget(O: int, post, draws: int) -> int:
    """Extra draws the settling rounds may make in all: :data:`MAX_SETTLE_DRAWS` and :data:`SETTLE_DRAWS_FACTOR`
    times the first pass's *draws*, with draws x objects within :data:`MAX_SETTLE_CELLS` (draws x evaluations
    within :data:`MAX_SPARSE_DRAW_WORK` on the iterative path)."""
    budget = min(MAX_SETTLE_DRAWS, SETTLE_DRAWS_FACTOR * draws, MAX_SETTLE_CELLS // O)
    if post.iterative:
        budget = min(budget, MAX_SPARSE_DRAW_WORK // post.n_evaluations)
    return int(budget)


def _round_size(p, se, n, active, epsilon: float) -> np.ndarray:
    """Draws each active object needs in all to lie SETTLE_ERRORS Monte Carlo errors from its nearer cut-off, at
    its present estimate and spread (the s.e. falls as 1/sqrt(draws))."""
    distance = np.minimum(np.abs(p[active] - epsilon), np.abs(p[active] - (1.0 - epsilon)))
    spread = se[active] * np.sqrt(n[active])
    with np.errstate(divide="ignore"):
        return np.where(distance > 0, (SETTLE_ERRORS * spread / np.maximum(distance, 1e-300)) ** 2, np.inf)


def settle(drawn: Draws, post, o_idx, v_hat, t_df, seed: int, top_k: int, epsilon: float, adjust) -> Draws:
    """More draws until every decision at a top_k line is settled or the budget is spent (module docstring).

    *adjust(p)*: the estimates as the decisions read them (made to sum to the places); an object is unsettled
    when that lies within :data:`SETTLE_ERRORS` errors of a cut-off.  Each round draws as many times as the
    unsettled objects that can still be settled within the budget need (at least :data:`MIN_SETTLE_ROUND`),
    adding to those objects' sums only; objects whose need exceeds what is left drop out (they stay unsettled).
    """
    O = v_hat.size
    budget = _settle_budget(O, post, int(drawn.p_draws.min()))
    v32, _origin = centred_values(v_hat)
    sd = np.empty(O, dtype=np.float32)
    sd[o_idx] = post.conditional_sd()
    made = 0
    for round_number in range(MAX_SETTLE_ROUNDS):
        p, se = drawn.conditional_p()
        open_ = np.flatnonzero(unsettled(adjust(p), se, epsilon)).astype(np.intp)
        need = _round_size(p, se, drawn.p_draws, open_, epsilon) - drawn.p_draws[open_]
        left = budget - made
        feasible = need <= left
        if left <= 0 or not feasible.any():
            break
        active = open_[feasible]
        n_round = int(min(left, max(MIN_SETTLE_ROUND, np.ceil(need[feasible].max()))))
        sums, squares = _settle_round(post, o_idx, v32, sd, t_df, [seed, 37, round_number], n_round, top_k, active)
        drawn.p_sum[active] += sums
        drawn.p_squares[active] += squares
        drawn.p_draws[active] += n_round
        made += n_round
    drawn.extra_draws = made
    return drawn


def _settle_round(post, o_idx, v32, sd, t_df, entropy, n_round: int, top_k: int, active: np.ndarray):
    """One settling round: n_round joint draws in chunks (own streams from *entropy*), each sorted for its k-th
    and (k+1)-th values; the conditional probabilities summed for the *active* objects only."""
    O = v32.size
    chunk = int(max(1, min(n_round, CHUNK_BYTES // (SETTLE_CELL_BYTES * O))))
    starts = list(range(0, n_round, chunk))
    streams = np.random.SeedSequence(entropy).spawn(len(starts))
    sd_active = sd[active]

    prepare_chunk = _chunk_preparer(post, streams, starts, chunk, n_round, O)

    def run_chunk(j: int, rng, xi):
        n = min(chunk, n_round - starts[j])
        dev, centre, factor = _joint_draws(post, rng, xi, n, o_idx, t_df, v32, active)
        kth, next_value = line_values(dev, top_k)
        values = dev[:, active]
        del dev
        terms = conditional_above(values, centre, sd_active, factor, values >= kth[:, None], kth, next_value)
        return terms.sum(axis=0, dtype=np.float64), np.einsum("ij,ij->j", terms, terms, dtype=np.float64)

    sums, squares = np.zeros(active.size), np.zeros(active.size)
    with progress.step(f"settling decisions: {n_round:,} more draws for {active.size:,} object"
                       f"{'s' if active.size != 1 else ''} near a cut-off", total=n_round):
        for j, (chunk_sums, chunk_squares) in enumerate(map_chunks(run_chunk, len(starts), prepare_chunk)):
            sums += chunk_sums
            squares += chunk_squares
            progress.advance(min(chunk, n_round - starts[j]))
    return sums, squares


def top_k_edges(stored: np.ndarray, top_k: int, position: np.ndarray, above: np.ndarray | None = None,
                block_bytes: int = 32 * 2**20):
    """:func:`line_edges` of the kept draws for a line of *top_k* places (above = rank <= top_k), by blocks of draws.

    Each draw's ranks are a permutation, so exactly *top_k* objects are above in every draw: the edges are read
    from their decision-order positions alone (draws x top_k, sorted in each draw) -- the last above is the
    largest, and the run of objects above from the top ends at the first position that is not its own index.
    *above*: those objects of each kept draw, as the draws left them (:attr:`Draws.above`); without it they are
    found in the ranks.  A recalculation of CALIB_RANKING spent 20 ms scanning every object of every draw here.
    """
    n, O = stored.shape
    if not 0 < top_k < O:
        return line_edges(stored <= top_k, position)
    step = max(1, block_bytes // max(1, 5 * O))
    ladder = np.arange(top_k, dtype=np.intp)
    first, last = np.empty(n, dtype=np.intp), np.empty(n, dtype=np.intp)
    for i in range(0, n, step):
        if above is not None:
            objects = above[i:i + step]
        else:  # row-major: top_k columns per row, rows in order
            objects = np.flatnonzero(stored[i:i + step] <= top_k).reshape(-1, top_k) % O
        places = np.sort(position[objects].astype(np.intp), axis=1)
        gap = places != ladder[None, :]
        first[i:i + step] = np.where(gap.any(axis=1), gap.argmax(axis=1), top_k)
        last[i:i + step] = O - 1 - places[:, -1]
    return first, last


def joint_counts(first: np.ndarray, last: np.ndarray, level: float) -> tuple[int, int, float]:
    """The joint statement with the most objects: (a, b, probability) such that in at least *level* of the draws
    the first a objects in decision order are all above the line *and* the last b all below it.

    *first*/*last* are each draw's edges (:func:`line_edges`): the statement (a, b) holds in a draw when
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
