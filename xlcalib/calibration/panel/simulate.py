"""Panels with a known truth, as panels are really run: assessors grouped by expertise, whole-point scores.

Why: a calibration method is only worth using if it beats what the secretary
would otherwise do (plain averages) on the panels people actually run, and
that can only be measured where the truth is known.  :func:`simulate_panel`
draws such panels: objects in subjects, each assessor expert in one or two
subjects and reading (almost) only there, a few cross-subject reads or none,
scores rounded to whole points and clipped to the scale, confidence levels
High/Medium/Low that say how close the read is to the assessor's expertise,
conflicts of interest and pending reads.  The tests and the benchmarks use
it; it is public so a secretary can try a design before the panel meets.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...cells import probability_argument, real_argument, seed_argument, whole_argument

__all__ = ["SimulatedPanel", "simulate_panel", "simulate_anonymous", "LEVEL_SD", "nearest_points"]

#: True noise SD of a read at each level, relative to a Medium read (a ratio of 1.75 between levels, as the
#: default levels assume).
LEVEL_SD = {"High": 1 / 1.75, "Medium": 1.0, "Low": 1.75}


@dataclass
class SimulatedPanel:
    """A simulated panel and the truth behind it.

    ``evaluations``: assessor, object, score, level (and ``sd``, the true SD of
    the read).  ``values``/``biases``: the true object values and assessor
    biases (Series).  ``subjects``: each object's subject; ``expertise``: each
    assessor's subjects.  ``conflicts``: (assessor, object) pairs never read.
    """

    evaluations: pd.DataFrame
    values: pd.Series
    biases: pd.Series
    subjects: pd.Series
    expertise: dict = field(default_factory=dict)
    conflicts: pd.DataFrame | None = None
    scale: tuple[float, float] = (1.0, 6.0)
    #: each assessor's gain (1 = uses the scale like the panel; see ``gain_sd``)
    gains: pd.Series | None = None
    #: each assessor's noise multiplier (1 = as the levels say; see ``erratic``)
    noise_factors: pd.Series | None = None
    #: the assessor x subject interactions drawn in (assessor, subject, shift), see ``group_bias``
    group_biases: pd.DataFrame | None = None


def _expertise(rng, n_assessors: int, n_subjects: int, two_share: float) -> list[np.ndarray]:
    """Each assessor's subjects: one, or two with probability two_share; every subject gets an expert."""
    first = np.concatenate([np.arange(n_subjects), rng.integers(0, n_subjects, max(n_assessors - n_subjects, 0))])
    first = rng.permutation(first)[:n_assessors]
    out = []
    for s in first:
        if n_subjects > 1 and rng.random() < two_share:
            other = (s + rng.integers(1, n_subjects)) % n_subjects
            out.append(np.array([s, other]))
        else:
            out.append(np.array([s]))
    return out


def _reads(rng, subject_of, expertise, reads: int, cross_share: float, conflicts: set, max_load: int):
    """(assessor, object, is_expert) reads: each object's reads go to its subject's experts, least loaded first,
    except a cross_share of reads that go to any assessor; conflicts are never read."""
    A = len(expertise)
    experts = {s: [a for a in range(A) if s in expertise[a]] for s in np.unique(subject_of)}
    load = np.zeros(A, dtype=np.intp)
    rows = []
    for o in rng.permutation(len(subject_of)):
        chosen = []
        pool = [a for a in experts[subject_of[o]] if (a, o) not in conflicts]
        for _ in range(reads):
            cross = rng.random() < cross_share or not [a for a in pool if a not in chosen and load[a] < max_load]
            candidates = [a for a in (range(A) if cross else pool) if a not in chosen and (a, o) not in conflicts
                          and load[a] < max_load]
            if not candidates:
                candidates = [a for a in range(A) if a not in chosen and (a, o) not in conflicts]
            weight = 1.0 / (1.0 + load[candidates]) ** 3 * (1.0 + rng.random(len(candidates)))
            a = candidates[int(np.argmax(weight))]
            chosen.append(a)
            load[a] += 1
            rows.append((a, o, subject_of[o] in expertise[a]))
    return rows


def simulate_panel(n_assessors: int = 24, n_objects: int = 150, reads: int = 4, *, n_subjects: int = 6,
                   two_subjects: float = 0.5, cross_reads: float = 0.05, bias_sd: float = 0.5,
                   noise_sd: float = 0.7, value_sd: float = 0.8, value_mean: float = 3.8,
                   scale: tuple[float, float] = (1.0, 6.0), whole_points: bool = True, n_conflicts: int = 12,
                   seed: int = 0, gain_sd: float = 0.0, erratic: dict | None = None,
                   group_bias: dict | None = None) -> SimulatedPanel:
    """A panel grouped by expertise with a known truth (see the module docstring).

    Model: ``s = clip(round(v_o + b_a + e), scale)`` with ``v ~ N(value_mean,
    value_sd^2)``, ``b ~ N(0, bias_sd^2)``, ``e ~ N(0, (noise_sd * LEVEL_SD[level])^2)``;
    a read in the assessor's own subject is High or Medium, a cross-subject
    read Low.  Each assessor reads in one subject, or two with probability
    ``two_subjects``; a ``cross_reads`` share of reads goes to any assessor.

    Assessor behaviour beyond a shift (drawn from a separate random stream, so
    a panel without them is the same panel for the same seed):

    * ``gain_sd``: gains ``g_a ~ N(1, gain_sd^2)`` (floored at 0.2) and scores
      ``value_mean + b_a + g_a (v_o - value_mean)`` -- an assessor with g_a < 1
      compresses the scale, g_a > 1 spreads it;
    * ``erratic``: {assessor index: factor} multiplies that assessor's noise SD;
    * ``group_bias``: {(assessor index, subject): shift} adds a shift to the
      assessor's scores of objects in that subject (the subjects are the groups).

    Examples
    --------
    >>> from xlcalib.calibration.panel.simulate import simulate_panel
    >>> panel = simulate_panel(16, 80, 3, seed=1)
    >>> len(panel.evaluations), sorted(panel.evaluations["level"].unique())
    (240, ['High', 'Low', 'Medium'])
    """
    A = whole_argument(n_assessors, "n_assessors", low=2)
    O = whole_argument(n_objects, "n_objects", low=2)
    r = whole_argument(reads, "reads", low=1, high=A)
    S = whole_argument(n_subjects, "n_subjects", low=1, high=A)
    rng = np.random.default_rng(seed_argument(seed))
    for name, x in (("two_subjects", two_subjects), ("cross_reads", cross_reads)):
        if x != 0:
            probability_argument(x, name)
    bias_sd = real_argument(bias_sd, "bias_sd", low=0)
    noise_sd = real_argument(noise_sd, "noise_sd", low=0, low_open=True)
    subject_of = np.sort(rng.integers(0, S, O))
    expertise = _expertise(rng, A, S, two_subjects)
    pairs = {(int(rng.integers(A)), int(rng.integers(O))) for _ in range(whole_argument(n_conflicts, "n_conflicts", low=0))}
    max_load = int(np.ceil(O * r / A * 1.25))
    rows = _reads(rng, subject_of, expertise, r, cross_reads, pairs, max_load)
    a = np.array([x[0] for x in rows], dtype=np.intp)
    o = np.array([x[1] for x in rows], dtype=np.intp)
    expert = np.array([x[2] for x in rows], dtype=bool)
    level = np.where(expert, np.where(rng.random(a.size) < 0.5, "High", "Medium"), "Low")
    sd = noise_sd * np.vectorize(LEVEL_SD.get)(level)
    v = rng.normal(value_mean, value_sd, O)
    b = rng.normal(0.0, bias_sd, A)
    noise = rng.normal(0.0, 1.0, a.size)
    gains, factors, shifts = _behaviour(seed, A, gain_sd, erratic, group_bias)
    score = v[o] + b[a] + (gains[a] - 1.0) * (v[o] - value_mean) + noise * sd * factors[a]  # exact without behaviour
    for (i, subject), shift in (group_bias or {}).items():
        score[(a == i) & (subject_of[o] == subject)] += shift
    if whole_points:
        score = np.round(score)
    score = np.clip(score, *scale)
    a_names = np.array([f"A{i + 1:02d}" for i in range(A)], dtype=object)
    o_names = np.array([f"P{j + 1:03d}" for j in range(O)], dtype=object)
    evaluations = pd.DataFrame({"assessor": a_names[a], "object": o_names[o], "score": score, "level": level,
                                "sd": sd})
    conflicts = pd.DataFrame([(a_names[i], o_names[j]) for i, j in sorted(pairs)], columns=["assessor", "object"])
    return SimulatedPanel(evaluations, pd.Series(v, index=o_names, name="value"),
                          pd.Series(b, index=a_names, name="bias"), pd.Series(subject_of, index=o_names, name="subject"),
                          {a_names[i]: list(map(int, e)) for i, e in enumerate(expertise)}, conflicts, tuple(scale),
                          pd.Series(gains, index=a_names, name="gain"),
                          pd.Series(factors, index=a_names, name="noise_factor"),
                          pd.DataFrame([(a_names[i], s, x) for (i, s), x in shifts.items()],
                                       columns=["assessor", "subject", "shift"]))


def _behaviour(seed, A: int, gain_sd, erratic, group_bias):
    """(gains, noise factors, group shifts): drawn from their own stream, so the rest of the panel is unchanged."""
    gain_sd = real_argument(gain_sd, "gain_sd", low=0)
    rng = np.random.default_rng([seed_argument(seed), 1])
    gains = np.maximum(rng.normal(1.0, gain_sd, A), 0.2) if gain_sd > 0 else np.ones(A)
    factors = np.ones(A)
    for i, factor in (erratic or {}).items():
        factors[whole_argument(i, "erratic assessor", low=0, high=A - 1)] = real_argument(factor, "erratic factor",
                                                                                          low=0, low_open=True)
    shifts = {(whole_argument(i, "group_bias assessor", low=0, high=A - 1), int(s)): real_argument(x, "group_bias shift")
              for (i, s), x in (group_bias or {}).items()}
    return gains, factors, shifts


def nearest_points(judgements: np.ndarray, points) -> np.ndarray:
    """Each judgement recorded as the nearest of the scale's *points* (ascending; a tie goes up): whole points
    on an even scale, the form's options on an uneven one (1, 3, 6, 8); beyond an end, the end.

    >>> nearest_points(np.array([0.2, 2.0, 4.4, 4.6, 9.0]), [1, 3, 6, 8]).tolist()
    [1.0, 3.0, 3.0, 6.0, 8.0]
    """
    points = np.asarray(points, dtype=float)
    cuts = 0.5 * (points[1:] + points[:-1])
    return points[np.searchsorted(cuts, np.asarray(judgements, dtype=float), side="right")]


def simulate_anonymous(n_objects: int = 1000, reads=(2, 5), *, reviewer_sd: float = 0.5, noise_sd: float = 1.0,
                       value_sd: float = 1.0, value_mean: float | None = None, points=tuple(range(1, 11)),
                       levels: bool = False, seed: int = 0) -> SimulatedPanel:
    """A conference's anonymous reviews with a known truth: every reviewer reads one paper.

    Model: the judgement ``v_o + b_a + e`` with ``v ~ N(value_mean, value_sd^2)``, ``b ~ N(0, reviewer_sd^2)`` (the
    reviewer's stringency: one reviewer per read, named ``<paper>/AnonReviewer<k>`` as OpenReview's API 1 names
    them), ``e ~ N(0, (noise_sd * LEVEL_SD[level])^2)`` (levels High/Medium/Low at random when *levels*, else
    every read Medium); the score is the nearest of the form's *points* (:func:`nearest_points`: whole points on
    1-10 by default, or uneven options such as 1, 3, 6, 8), so the ends are clipped.  Each paper gets a number of
    reads drawn uniformly from *reads* (lowest, highest).  ``value_mean`` defaults to the middle of the points.

    >>> p = simulate_anonymous(50, (3, 3), points=(1, 3, 6, 8), seed=2)
    >>> len(p.evaluations), p.evaluations["assessor"].nunique(), sorted(p.evaluations["score"].unique().tolist())
    (150, 150, [1.0, 3.0, 6.0, 8.0])
    """
    O = whole_argument(n_objects, "n_objects", low=2)
    low_reads, high_reads = (whole_argument(r, "reads", low=1) for r in reads)
    points = np.unique(np.asarray(points, dtype=float))
    rng = np.random.default_rng(seed_argument(seed))
    k = rng.integers(low_reads, high_reads + 1, O).astype(np.intp)  # np.repeat counts: the index type (Pyodide: 32-bit)
    o = np.repeat(np.arange(O, dtype=np.intp), k)
    slot = np.arange(o.size) - np.repeat(np.cumsum(k) - k, k)
    centre = float(0.5 * (points[0] + points[-1])) if value_mean is None else float(value_mean)
    v = rng.normal(centre, real_argument(value_sd, "value_sd", low=0), O)
    b = rng.normal(0.0, real_argument(reviewer_sd, "reviewer_sd", low=0), o.size)
    level = (np.array(["High", "Medium", "Low"], dtype=object)[rng.integers(0, 3, o.size)] if levels
             else np.full(o.size, "Medium", dtype=object))
    sd = real_argument(noise_sd, "noise_sd", low=0, low_open=True) * np.vectorize(LEVEL_SD.get)(level)
    score = nearest_points(v[o] + b + rng.normal(0.0, 1.0, o.size) * sd, points)
    o_names = np.array([f"P{j + 1:05d}" for j in range(O)], dtype=object)
    a_names = np.array([f"Paper{j + 1}/AnonReviewer{s + 1}" for j, s in zip(o, slot)], dtype=object)
    evaluations = pd.DataFrame({"assessor": a_names, "object": o_names[o], "score": score, "level": level, "sd": sd})
    return SimulatedPanel(evaluations, pd.Series(v, index=o_names, name="value"), pd.Series(b, index=a_names, name="bias"),
                          pd.Series(np.zeros(O, dtype=np.intp), index=o_names, name="subject"),
                          scale=(float(points[0]), float(points[-1])))
