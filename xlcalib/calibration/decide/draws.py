"""The Monte Carlo engine under rankings: joint draws of the values, streamed in chunks, ranked, counted.

Why its own module: the ranking (:mod:`.ranking`) states what the draws mean -- ranks, P(above the line), the
joint statements, the decisions; this module only makes and counts them, within a memory and time bound, the
same numbers for the same seed whatever the number of threads.

Draws are streamed in chunks (never draws x objects at once): the memory is bounded by :data:`CHUNK_BYTES`
for the draws and :data:`STORED_RANK_BYTES` for the ranks kept to form rank intervals and the joint
statements of a line by places (from the first draws when the panel is large); the number of draws is capped
at :data:`MAX_DRAW_CELLS` / objects.  One random stream per chunk (``SeedSequence.spawn``), so the numbers do
not depend on how many threads ran them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CHUNK_BYTES", "STORED_RANK_BYTES", "MAX_DRAW_CELLS", "MAX_SPARSE_DRAW_WORK", "MAX_DRAWS", "MAX_WORKERS",
           "Draws", "best_first", "capped_draws", "joint_counts", "line_edges", "map_chunks", "order_statistics",
           "simulate_ranks", "top_k_edges", "worker_count"]


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

    ``prepare`` runs in the calling thread (it may use BLAS, which has threads
    of its own); ``work`` runs on :func:`worker_count` threads, a wave of
    chunks at a time, so at most that many chunks are in memory at once.
    """
    prepare = prepare or (lambda j: ())
    workers = min(worker_count(), n_chunks)
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


def order_statistics(stored: np.ndarray, kth: list[int], block_bytes: int = 16 * 2**20) -> np.ndarray:
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

    for _ in map_chunks(block, len(starts)):
        pass
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
    """What the Monte Carlo draws leave: rank sums, counts above a top_k line, the rank intervals, the first
    ``keep`` draws' ranks (one draw per row) and, for a score line, each draw's joint-statement edges."""

    rank_sum: np.ndarray
    above_count: np.ndarray | None
    rank_lower: np.ndarray
    rank_upper: np.ndarray
    keep: int
    stored: np.ndarray
    edges: tuple[np.ndarray, np.ndarray] | None = None


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


def simulate_ranks(post, o_idx, v_hat, t_df, draws: int, seed: int, top_k, level: float,
                    score_line: tuple[float, np.ndarray] | None = None) -> Draws:
    """Monte Carlo ranks: rank sums, counts above a top_k line, rank intervals, the kept draws' ranks and, with
    *score_line* = (threshold, decision-order positions), each draw's joint-statement edges (:func:`line_edges`).

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
    # ranks do not change with a common shift, and single precision keeps about 7 digits of the number it holds:
    # the draws are made about the values' median, so scores in any unit (1-6, or 23,000 + 0.24 x that) rank alike
    centre = float(np.median(v_hat)) if v_hat.size else 0.0
    v32 = (v_hat - centre).astype(np.float32)
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
        edges = line_edges(dev >= np.float32(score_line[0] - centre), score_line[1]) if score_line is not None else None
        order = best_first(dev)
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
    for chunk_sum, chunk_above, chunk_edges in map_chunks(run_chunk, len(starts), prepare_chunk):
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
    rank_lower, rank_upper = order_statistics(stored, [lo, hi])
    edges = (np.concatenate(first), np.concatenate(last)) if first else None
    return Draws(rank_sum, above_count if top_k is not None else None, rank_lower, rank_upper, keep, stored, edges)


def top_k_edges(stored: np.ndarray, top_k: int, position: np.ndarray, block_bytes: int = 32 * 2**20):
    """:func:`line_edges` of the kept draws for a line of *top_k* places (above = rank <= top_k), by blocks of draws."""
    step = max(1, block_bytes // max(1, 5 * stored.shape[1]))
    parts = [line_edges(stored[i:i + step] <= top_k, position) for i in range(0, stored.shape[0], step)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


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
