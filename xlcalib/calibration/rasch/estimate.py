"""Marginal maximum likelihood for the many-facet Rasch model: objects random, assessors and thresholds fixed.

The method, and why it and not JMLE.  A panel gives each object 3-5 reads.  Joint maximum likelihood (FACETS'
JMLE) estimates every object's measure as a free parameter beside the assessors', and with few reads per object
that is the Neyman-Scott problem: the structural estimates are inconsistent however many objects there are
(thresholds and severities spread by a factor near L/(L-1) with L reads per object, which FACETS' correction
only approximates for complete designs), objects whose reads are all in one end category have no estimate at
all, and the standard errors ignore both.  Here the objects are a random sample,
theta_o ~ N(mu, sigma^2), and are integrated out (Bock & Aitkin 1981, Psychometrika 46:443; as TAM's
``tam.mml.mfr`` does for many-facet designs): the severities beta_a, the category intercepts c (thresholds) and
mu, sigma maximise

    L = sum_o log integral prod_{reads r of o} P(x_r | theta - beta_a(r), c) N(theta; mu, sigma^2) dtheta
        - sum_a beta_a^2 / (2 s^2),

consistent as objects accrue whatever their number of reads.  The last term is a weak prior N(0, s^2), s = 3
logits, on each severity (Bayes modal estimation of fixed effects, Mislevy 1986, Psychometrika 51:177): it
keeps the severity of an assessor whose every read sits in one end category finite (with a wide +-), the job
FACETS' extreme-score adjustment does, and moves a severity resting on 20 reads by about 1%.

Integration: adaptive Gauss-Hermite quadrature per object (Naylor & Smith 1982; Schilling & Bock 2005,
Psychometrika 70:1): :data:`NODES` nodes placed at the object's posterior mean and spread from the previous
round, so an object with many reads (a narrow posterior) is integrated as accurately as one with few.

Maximisation: Newton's method on all parameters at once with the exact Hessian of the quadrature sum (Louis
1982, JRSS B 44:226: the observed information is the expected complete-data information minus the posterior
covariance of the complete-data score, both computed per object on its nodes), a step-halving line search,
and the complete-data information (positive definite) where the observed one is not (far from the maximum).
Standard errors are from the inverse observed information at the maximum.

Gauge: the likelihood sees only theta - beta, so one constraint fixes the common offset: the severities are
centred -- sum_a beta_a = 0 (gauge "simple", FACETS' centring) or sum_a n_a beta_a = 0 (gauge "weighted", n_a
the assessor's reads: the typical read's assessor has severity 0) -- and mu is free.  Groups of assessors that
share no object are each centred the same way: each group is taken to be as strict as the panel on average, the
default linear model's assumption.  Thresholds: c at each structure's lowest and highest category used is 0,
i.e. the thresholds sum to zero and a severity is the centre of its assessor's thresholds.  The constraints
enter the Newton system bordered (a Lagrange multiplier per constraint), and the standard errors are those of
the constrained estimate (the bordered inverse).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.special import logsumexp

from ...errors import InputError
from .likelihood import probabilities_by_category

__all__ = ["NODES", "SEVERITY_PRIOR_SD", "MAX_PARAMETERS", "Layout", "MarginalFit", "fit_marginal", "layout_for",
           "object_blocks"]

#: Gauss-Hermite nodes per object (adaptive: centred on each object's posterior, so few are needed).
NODES = 15
#: SD (logits) of the weak prior on each severity (see the module docstring).
SEVERITY_PRIOR_SD = 3.0
#: Newton iterations at most; convergence when no parameter moves by more than TOLERANCE (logits).
MAX_ITERATIONS = 100
TOLERANCE = 1e-7
#: The information matrix is dense: parameters (severities, free intercepts, mu, sigma) at most.
MAX_PARAMETERS = 4000
#: sigma (the objects' spread, logits) is kept at or above this: objects that do not differ at all.
MIN_SIGMA = 1e-3
#: Per read, node and category the fit holds a few doubles: reads x nodes x categories at most.
MAX_CELLS = 60_000_000

_X, _W = np.polynomial.hermite.hermgauss(NODES)
#: node offsets (in posterior SDs) and log weights of adaptive Gauss-Hermite quadrature
_OFFSETS = np.sqrt(2.0) * _X
_LOG_WEIGHTS = np.log(_W) + _X**2 + 0.5 * np.log(2.0)


@dataclass(frozen=True)
class Layout:
    """Where each parameter sits in the parameter vector phi = (beta, free intercepts, mu, log sigma).

    ``group``: each assessor's threshold structure (all 0: rating scale; the assessor itself: partial credit);
    ``used``: (structures x K) categories each structure used; ``c_index``: (structures x K) the position of a free
    intercept in phi, -1 for the fixed ones (0 at a structure's lowest and highest category used, -inf where unused).
    """

    n_assessors: int
    group: np.ndarray
    used: np.ndarray
    c_index: np.ndarray

    @property
    def n_categories(self) -> int:
        return int(self.used.shape[1])

    @property
    def mu(self) -> int:
        return int(self.c_index.max(initial=self.n_assessors - 1)) + 1

    @property
    def log_sigma(self) -> int:
        return self.mu + 1

    @property
    def size(self) -> int:
        return self.mu + 2

    def intercepts(self, phi: np.ndarray) -> np.ndarray:
        """(structures x K) intercepts c: free ones from phi, 0 at the ends used, -inf where unused."""
        c = np.where(self.used, 0.0, -np.inf)
        free = self.c_index >= 0
        c[free] = phi[self.c_index[free]]
        return c

    def unpack(self, phi: np.ndarray):
        """(beta, intercepts, mu, sigma)."""
        return (phi[:self.n_assessors], self.intercepts(phi), float(phi[self.mu]),
                max(float(np.exp(phi[self.log_sigma])), MIN_SIGMA))


def layout_for(n_assessors: int, ai: np.ndarray, code: np.ndarray, K: int, per_assessor: bool) -> Layout:
    """The parameter layout of a panel: one threshold structure (rating scale) or one per assessor (partial
    credit), each with the categories its reads used; a structure's free intercepts are those of its used
    categories strictly between its lowest and highest."""
    group = np.arange(n_assessors, dtype=np.intp) if per_assessor else np.zeros(n_assessors, dtype=np.intp)
    G = int(group.max()) + 1
    used = np.zeros((G, K), dtype=bool)
    used[group[ai], code] = True
    inner = used.copy()
    for g in range(G):  # the lowest and highest used category of each structure carry c = 0
        where = np.flatnonzero(used[g])
        inner[g, where[[0, -1]]] = False
    c_index = np.full((G, K), -1, dtype=np.intp)
    c_index[inner] = n_assessors + np.arange(int(inner.sum()), dtype=np.intp)
    layout = Layout(n_assessors, group, used, c_index)
    if layout.size > MAX_PARAMETERS:
        raise InputError(f"the ordinal model's information matrix would have {layout.size:,} parameters (severities"
                         f"{' and thresholds per assessor' if per_assessor else ''}); it is fitted up to "
                         f"{MAX_PARAMETERS:,} ({'use the shared rating scale, or ' if per_assessor else ''}use a "
                         "linear model for larger panels)")
    return layout


class Panel:
    """The reads as index arrays, and the tables the sums over objects run on (built once)."""

    def __init__(self, ai: np.ndarray, oi: np.ndarray, code: np.ndarray, layout: Layout, n_objects: int,
                 slope: np.ndarray | None = None):
        self.ai = np.asarray(ai, dtype=np.intp)
        #: each read's discrimination a_r (its stated confidence, :func:`read_slopes`); 1 = the Rasch model
        self.slope = np.ones(self.ai.size) if slope is None else np.asarray(slope, dtype=float)
        self.oi = np.asarray(oi, dtype=np.intp)
        self.code = np.asarray(code, dtype=np.intp)
        self.layout = layout
        self.n_objects = n_objects
        self.structure = layout.group[self.ai]
        N = self.ai.size
        self.incidence = sp.csr_matrix((np.ones(N), (self.oi, np.arange(N))), shape=(n_objects, N))
        reads = np.bincount(self.oi, minlength=n_objects)
        order = np.argsort(self.oi, kind="stable")
        first = np.concatenate([[0], np.cumsum(reads)[:-1]]).astype(np.intp)
        #: objects grouped by their number of reads, each with the table of its reads' positions
        self.by_reads = [(objs, order[first[objs][:, None] + np.arange(r, dtype=np.intp)[None, :]])
                         for r in np.unique(reads[reads > 0]) for objs in [np.flatnonzero(reads == r)]]
        self.onehot = np.zeros((N, layout.n_categories))
        self.onehot[np.arange(N), self.code] = 1.0
        #: each read's structure's lowest and highest category used (their intercepts are 0)
        ends = np.array([np.flatnonzero(row)[[0, -1]] for row in layout.used], dtype=float)  # per structure
        self.lowest, self.highest = ends[self.structure, 0], ends[self.structure, 1]
        #: each object's reads per category, weighted by their slopes (the rating scale's intercept scores are
        #: object sums)
        self.object_counts = np.asarray(self.incidence @ (self.onehot * self.slope[:, None]))


@dataclass
class NodeState:
    """One evaluation of the quadrature: nodes, each read's category probabilities there, the posterior."""

    theta: np.ndarray  # objects x nodes
    p: np.ndarray  # K x reads x nodes: category probabilities (category first: likelihood.probabilities_by_category)
    observed: np.ndarray  # reads x nodes: log P of each read's own category
    loglik: float  # the marginal log-likelihood with the severities' prior
    posterior: np.ndarray  # objects x nodes, rows summing to 1
    mean: np.ndarray  # posterior mean of each object (EAP)
    sd: np.ndarray  # posterior SD (PSD)


def evaluate(panel: Panel, phi: np.ndarray, centre: np.ndarray, spread: np.ndarray) -> NodeState:
    """The quadrature at parameters *phi* with each object's nodes at centre + spread * offsets."""
    layout = panel.layout
    beta, c, mu, sigma = layout.unpack(phi)
    theta = centre[:, None] + spread[:, None] * _OFFSETS[None, :]
    slope = panel.slope[:, None]
    eta = (theta[panel.oi] - beta[panel.ai][:, None]) * slope
    p, observed = probabilities_by_category(eta, c[panel.structure] * slope, panel.lowest, panel.highest, panel.code)
    joint = panel.incidence @ observed
    joint += _LOG_WEIGHTS[None, :] + np.log(spread)[:, None]
    joint += -np.log(sigma) - 0.5 * np.log(2 * np.pi) - 0.5 * ((theta - mu) / sigma) ** 2
    per_object = logsumexp(joint, axis=1)
    posterior = np.exp(joint - per_object[:, None])
    mean = np.einsum("oq,oq->o", posterior, theta)
    sd = np.sqrt(np.maximum(np.einsum("oq,oq->o", posterior, (theta - mean[:, None]) ** 2), 0.0))
    loglik = float(per_object.sum()) - float(beta @ beta) / (2 * SEVERITY_PRIOR_SD**2)
    return NodeState(theta, p, observed, loglik, posterior, mean, sd)


def _moments(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P, E, V): the category probabilities (K x reads x nodes) and the mean and variance of the place k."""
    k = np.arange(p.shape[0], dtype=float)
    mean = np.tensordot(k, p, axes=1)
    variance = np.maximum(np.tensordot(k * k, p, axes=1) - mean * mean, 0.0)
    return p, mean, variance


def object_blocks(panel: Panel, phi: np.ndarray, state: NodeState, moments=None):
    """Per group of objects with the same number of reads: (objects, idx, U) -- the complete-data score of each
    object at each node as a small local vector U (objects x nodes x d) and where its entries sit in phi (idx,
    objects x d; -1 = a fixed parameter).

    Local entries: each read's severity score -(x - E), the intercept scores [x = k] - P_k summed over the
    object's reads of one structure (one block per object for the rating scale, one per read for partial
    credit), then mu's and log sigma's prior scores.  The posterior covariance of U is the missing information
    of the object; its covariance with theta is d EAP / d phi.
    """
    layout = panel.layout
    _beta, _c, mu, sigma = layout.unpack(phi)
    K = layout.n_categories
    p, mean, _ = moments if moments is not None else _moments(state.p)
    slope = panel.slope[:, None]
    beta_score = (mean - panel.code[:, None]) * slope  # -a (x - E), reads x nodes
    z = (state.theta - mu) / sigma
    mu_score, sigma_score = z / sigma, z * z - 1.0
    per_assessor = layout.group.max(initial=0) > 0
    if not per_assessor:  # the rating scale's intercept scores summed over each object's reads: counts - sum P
        free = np.flatnonzero(layout.c_index[0] >= 0)
        object_c = np.stack([panel.object_counts[:, k][:, None] - panel.incidence @ (p[k] * slope) for k in free],
                            axis=2)
    for objs, pos in panel.by_reads:
        n = pos.shape[1]
        pieces = [np.moveaxis(beta_score[pos], 1, 2)]  # objs x nodes x n
        idx = [panel.ai[pos]]
        if per_assessor:
            c_score = (panel.onehot[pos][:, :, None, :] - np.moveaxis(p[:, pos], 0, -1)) \
                * panel.slope[pos][:, :, None, None]  # objs x n x nodes x K
            pieces.append(np.moveaxis(c_score, 1, 2).reshape(objs.size, NODES, n * K))
            idx.append(layout.c_index[panel.structure[pos]].reshape(objs.size, n * K))
        else:
            pieces.append(object_c[objs])
            idx.append(np.broadcast_to(layout.c_index[0, free], (objs.size, free.size)))
        pieces += [mu_score[objs][:, :, None], sigma_score[objs][:, :, None]]
        idx.append(np.broadcast_to(np.array([layout.mu, layout.log_sigma], dtype=np.intp), (objs.size, 2)))
        yield objs, np.concatenate(idx, axis=1), np.concatenate(pieces, axis=2)


def _scatter(size: int, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A dense size x size matrix of the sums of *values* at (rows, cols), entries with an index -1 dropped."""
    keep = (rows >= 0) & (cols >= 0)
    flat = rows[keep] * size + cols[keep]
    return np.bincount(flat, weights=values[keep], minlength=size * size).reshape(size, size)


def _complete_information(panel: Panel, phi: np.ndarray, state: NodeState, moments=None):
    """(gradient of L, expected complete-data information) at the quadrature (module docstring)."""
    layout = panel.layout
    P, K = layout.size, layout.n_categories
    beta, _c, mu, sigma = layout.unpack(phi)
    post = state.posterior[panel.oi]  # reads x nodes
    p, e, v = moments if moments is not None else _moments(state.p)
    grad = np.zeros(P)
    a = panel.slope
    grad[:layout.n_assessors] = np.bincount(panel.ai, weights=a * (np.einsum("rq,rq->r", post, e) - panel.code),
                                            minlength=layout.n_assessors) - beta / SEVERITY_PRIOR_SD**2
    mean_p = np.einsum("rq,krq->rk", post, p)
    c_rows = layout.c_index[panel.structure]  # reads x K
    free = c_rows >= 0
    grad += np.bincount(c_rows[free], weights=(a[:, None] * (panel.onehot - mean_p))[free], minlength=P)
    z = (state.theta - mu) / sigma
    grad[layout.mu] = float(np.sum(state.posterior * z)) / sigma
    grad[layout.log_sigma] = float(np.sum(state.posterior * (z * z - 1.0)))

    info = np.zeros((P, P))
    A = layout.n_assessors
    a2 = a * a  # every second derivative of a read carries its slope squared
    info[np.arange(A), np.arange(A)] = np.bincount(panel.ai, a2 * np.einsum("rq,rq->r", post, v), A) \
        + 1.0 / SEVERITY_PRIOR_SD**2
    k = np.arange(K, dtype=float)
    cross = (np.einsum("rq,krq->rk", post * e, p) - mean_p * k) * a2[:, None]  # -a^2 E[P_k (k - E)], reads x K
    per_assessor = np.stack([np.bincount(panel.ai, cross[:, j], A) for j in range(K)], axis=1)  # A x K
    c_of_a = layout.c_index[layout.group]  # A x K: each assessor's intercepts in phi
    has = c_of_a >= 0
    a_idx = np.broadcast_to(np.arange(A)[:, None], has.shape)[has]
    info[a_idx, c_of_a[has]] = per_assessor[has]  # one entry per (assessor, intercept): no repeats
    info[c_of_a[has], a_idx] = per_assessor[has]
    _add_intercept_information(info, panel, post, p, mean_p)
    O = panel.n_objects
    info[layout.mu, layout.mu] += O / sigma**2
    info[layout.mu, layout.log_sigma] += 2.0 * float(np.sum(state.posterior * z)) / sigma
    info[layout.log_sigma, layout.mu] = info[layout.mu, layout.log_sigma]
    info[layout.log_sigma, layout.log_sigma] += 2.0 * float(np.sum(state.posterior * z * z))
    return grad, info


def _add_intercept_information(info: np.ndarray, panel: Panel, post: np.ndarray, p: np.ndarray,
                               mean_p: np.ndarray) -> None:
    """Add the intercepts' block of the complete-data information, E[diag(P) - P P'] summed over each structure's
    reads: one K x K product over all reads and nodes for the rating scale, one per assessor for partial credit."""
    layout = panel.layout
    K = layout.n_categories
    G = layout.c_index.shape[0]
    a2 = panel.slope**2
    w = post * a2[:, None]
    if G == 1:  # K (K + 1) / 2 dot products over all reads and nodes, no K x reads x nodes temporary
        blocks = np.zeros((1, K, K))
        for k in range(K):
            weighted = p[k] * w
            for j in range(k, K):
                blocks[0, k, j] = blocks[0, j, k] = -float(np.vdot(weighted, p[j]))
        blocks[0, np.arange(K), np.arange(K)] += (mean_p * a2[:, None]).sum(axis=0)
    else:
        per_read = -np.einsum("krq,jrq->rkj", p * w[None], p)
        per_read[:, np.arange(K), np.arange(K)] += mean_p * a2[:, None]
        blocks = np.zeros((G, K, K))
        np.add.at(blocks, panel.structure, per_read)
    rows = np.repeat(layout.c_index, K, axis=1).ravel()
    cols = np.tile(layout.c_index, (1, K)).ravel()
    keep = (rows >= 0) & (cols >= 0)
    info[rows[keep], cols[keep]] += blocks.ravel()[keep]  # each (structure, k, j) is its own entry: no repeats


def _missing_information(panel: Panel, phi: np.ndarray, state: NodeState, moments=None) -> np.ndarray:
    """Sum over objects of the posterior covariance of the complete-data score (Louis 1982)."""
    P = panel.layout.size
    rows, cols, values = [], [], []
    for objs, idx, U in object_blocks(panel, phi, state, moments):
        w = state.posterior[objs]
        mean = np.einsum("oq,oqd->od", w, U)
        cov = np.matmul(np.swapaxes(U * w[:, :, None], 1, 2), U) - mean[:, :, None] * mean[:, None, :]
        d = idx.shape[1]
        rows.append(np.repeat(idx, d, axis=1).ravel())
        cols.append(np.tile(idx, (1, d)).ravel())
        values.append(cov.ravel())
    return _scatter(P, np.concatenate(rows), np.concatenate(cols), np.concatenate(values))


def _constrained_solve(info: np.ndarray, constraints: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """The solution x of info x = rhs + constraints lambda with constraints' x = 0 (a Lagrange multiplier per
    constraint), by a Cholesky factor of *info* and the constraints' Schur complement; None when *info* is not
    positive definite."""
    try:
        factor = sla.cho_factor(info, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    x = sla.cho_solve(factor, rhs, check_finite=False)
    Y = sla.cho_solve(factor, constraints, check_finite=False)
    multiplier = np.linalg.solve(constraints.T @ Y, constraints.T @ x)
    out = x - Y @ multiplier
    return out if np.all(np.isfinite(out)) else None


def constrained_covariance(info: np.ndarray, constraints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The covariance of the constrained estimate, I^-1 - I^-1 C (C' I^-1 C)^-1 C' I^-1 (the top-left block of the
    bordered matrix's inverse; Aitchison & Silvey 1958), and the lower Cholesky factor L of the information I
    (the draws' root is Cov L: :mod:`.posterior`)."""
    factor = sla.cho_factor(info, lower=True, check_finite=False)
    inverse = sla.cho_solve(factor, np.eye(info.shape[0]), check_finite=False)
    Y = inverse @ constraints
    cov = inverse - Y @ np.linalg.solve(constraints.T @ Y, Y.T)
    return (cov + cov.T) / 2.0, np.tril(factor[0])


@dataclass
class MarginalFit:
    """The maximum of the marginal likelihood: parameters, their covariance, the final quadrature."""

    panel: Panel
    phi: np.ndarray
    covariance: np.ndarray  # of phi, constrained (bordered inverse of the observed information)
    information: np.ndarray  # observed information at the maximum (with the severities' prior)
    information_root: np.ndarray  # its lower Cholesky factor
    constraints: np.ndarray
    state: NodeState
    iterations: int
    converged: bool

    @property
    def layout(self) -> Layout:
        return self.panel.layout


def _start(panel: Panel, constraints: np.ndarray) -> np.ndarray:
    """Starting values from the category counts: each structure's intercepts from its log count ratios less a
    common slope, each assessor's severity from where their categories sit against the panel's."""
    layout = panel.layout
    phi = np.zeros(layout.size)
    K = layout.n_categories
    k = np.arange(K, dtype=float)
    counts = np.zeros((layout.group.max() + 1, K))
    np.add.at(counts, (panel.structure, panel.code), 1.0)
    mean_code = np.bincount(panel.ai, weights=panel.code, minlength=layout.n_assessors) / np.maximum(
        np.bincount(panel.ai, minlength=layout.n_assessors), 1)
    panel_mean = float(panel.code.mean())
    for g in range(counts.shape[0]):
        used = np.flatnonzero(layout.used[g])
        lo, hi = used[0], used[-1]
        log_ratio = np.log(counts[g] + 0.5) - np.log(counts[g, lo] + 0.5)
        slope = (log_ratio[hi] - log_ratio[lo]) / max(hi - lo, 1)
        c = log_ratio - slope * (k - lo)
        free = layout.c_index[g] >= 0
        phi[layout.c_index[g][free]] = c[free]
    beta = np.clip(-(mean_code - panel_mean), -3.0, 3.0)
    weights = constraints[:layout.n_assessors]
    beta -= weights @ (weights.T @ beta / np.maximum((weights * weights).sum(axis=0), 1e-300))
    phi[:layout.n_assessors] = beta
    phi[layout.mu] = 0.0
    phi[layout.log_sigma] = 0.0
    return phi


def _adapted(panel: Panel, phi: np.ndarray, centre: np.ndarray, spread: np.ndarray, rounds: int):
    """The quadrature re-centred on each object's posterior *rounds* times (Schilling & Bock 2005)."""
    state = evaluate(panel, phi, centre, spread)
    for _ in range(rounds):
        centre, spread = state.mean, np.maximum(state.sd, 1e-3)
        state = evaluate(panel, phi, centre, spread)
    return state, centre, spread


def _fallback_step(panel: Panel, phi: np.ndarray, complete: np.ndarray, constraints: np.ndarray,
                   grad: np.ndarray) -> np.ndarray:
    """An ascent step where the observed information is not positive definite (far from the maximum): Fisher
    scoring -- the complete-data information with mu's and log sigma's block replaced by its expectation over the
    objects' distribution, O diag(1/sigma^2, 2) (the block at the nodes, [[1/s^2, 2z/s], [2z/s, 2z^2]], is not
    positive definite itself); the reads' blocks are already expected informations.  Should even that fail, a
    gradient step scaled by the information's diagonal."""
    layout = panel.layout
    sigma = layout.unpack(phi)[3]
    fisher = complete.copy()
    m, ls = layout.mu, layout.log_sigma
    fisher[m, m], fisher[m, ls], fisher[ls, m] = panel.n_objects / sigma**2, 0.0, 0.0
    fisher[ls, ls] = 2.0 * panel.n_objects
    step = _constrained_solve(fisher, constraints, grad)
    if step is None:
        step = _constrained_solve(np.diag(np.maximum(np.diag(fisher), 1e-8)), constraints, grad)
    return step


def _off_centre(state: NodeState, centre: np.ndarray, spread: np.ndarray) -> float:
    """How far the objects' posteriors have moved from their nodes: the largest shift of the mean, or change of
    the SD, in units of the nodes' spread."""
    return float(max(np.max(np.abs(state.mean - centre) / spread, initial=0.0),
                     np.max(np.abs(np.log(np.maximum(state.sd, 1e-3) / spread)), initial=0.0)))


#: Nodes are re-centred when a posterior has moved by more than this share of its spread (and before stopping,
#: unless within CENTRED): the quadrature is accurate either way, centred it needs fewest nodes.
RECENTRE, CENTRED = 0.25, 0.05


def fit_marginal(panel: Panel, constraints: np.ndarray) -> MarginalFit:
    """Maximise the marginal likelihood (module docstring); returns the fit with its covariance."""
    O = panel.n_objects
    phi = _start(panel, constraints)
    state, centre, spread = _adapted(panel, phi, np.zeros(O), np.ones(O), 0)
    converged, iteration, observed = False, 0, None
    for iteration in range(1, MAX_ITERATIONS + 1):
        moments = _moments(state.p)
        grad, complete = _complete_information(panel, phi, state, moments)
        observed = complete - _missing_information(panel, phi, state, moments)
        step = _constrained_solve(observed, constraints, grad)
        if step is None or float(grad @ step) <= 0.0:  # not an ascent direction: the observed information is not
            step = _fallback_step(panel, phi, complete, constraints, grad)  # positive definite here
        phi, state, moved = _line_search(panel, phi, step, state, centre, spread)
        off = _off_centre(state, centre, spread)
        if moved < TOLERANCE and off <= CENTRED:
            converged = True
            break
        if off > RECENTRE or moved < TOLERANCE:
            centre, spread = state.mean, np.maximum(state.sd, 1e-3)
            state = evaluate(panel, phi, centre, spread)
    if not converged:  # converged: the information of the last step's start is the maximum's (it moved < 1e-7)
        moments = _moments(state.p)
        _grad, complete = _complete_information(panel, phi, state, moments)
        observed = complete - _missing_information(panel, phi, state, moments)
    try:
        covariance, root = constrained_covariance(observed, constraints)
    except np.linalg.LinAlgError:
        raise InputError("the ordinal model's information matrix is singular at its maximum: some severity or "
                         "threshold is not determined by the reads (e.g. an assessor whose reads carry no "
                         "information)") from None
    return MarginalFit(panel, phi, covariance, observed, root, constraints, state, iteration, converged)


def _line_search(panel: Panel, phi: np.ndarray, step: np.ndarray, state: NodeState, centre, spread):
    """phi + t step for the largest t in 1, 1/2, ... that does not lower the likelihood (same nodes); the largest
    parameter change made."""
    # a step never moves a parameter by more than 5 logits at once (far from the maximum Newton can overshoot)
    t = min(1.0, 5.0 / max(float(np.max(np.abs(step))), 1e-300))
    for _ in range(40):
        trial = phi + t * step
        new = evaluate(panel, trial, centre, spread)
        if new.loglik >= state.loglik - 1e-12 * abs(state.loglik):
            return trial, new, float(np.max(np.abs(t * step)))
        t /= 2.0
    return phi, state, 0.0
