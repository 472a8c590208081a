"""Certified calibration of the Gaussian randomizer (:func:`calibrate_gaussian`, docs/calibration.md)."""

from __future__ import annotations

import math

from sharpdp import _validation as V
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.call_heap import kept_first
from sharpdp.shuffle.calibration.cheap_cert import CheapSearch
from sharpdp.shuffle.calibration.gauss_shape import shape_slope, shape_x
from sharpdp.shuffle.calibration.few_evals import one_loose
from sharpdp.shuffle.calibration.estimates import (
    big_jump_estimate,
    big_jump_jensen,
    jump_regime,
    phi_bar,
    template_scalar,
)
from sharpdp.shuffle.calibration.search import (
    CERT_REL_TOL,
    STAGE1_TOL,
    CalibrationReport,
    check_progress,
    check_targets,
    jensen_start,
    model_root,
)
from sharpdp.shuffle.randomizers import GaussianRandomizer


@kept_first  # one kept C heap over the evaluations at n >= limits.BODY45_KEPT_HEAP_N (speed only): docs/calibration.md §18.1
def calibrate_gaussian_report(n: int, epsilon: float, delta: float, *, adjacency: str = "zero_out",
                              progress: bool | None = False) -> CalibrationReport:
    """:func:`calibrate_gaussian` with its certificate (bracket and evaluation count).

    Parameters and errors as :func:`calibrate_gaussian`.

    Returns
    -------
    CalibrationReport
        ``randomizer`` is the calibrated :class:`GaussianRandomizer` (dim 1).
    """
    from sharpdp.shuffle.templates import gaussian_chi_chua

    n = V.integer("n", n, lo=1)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    delta = V.probability_open("delta", delta)
    progress = check_progress(progress)
    check_targets(n, epsilon, delta, 1)
    if not isinstance(adjacency, str):
        raise TypeError(f"adjacency must be a string, got {type(adjacency).__name__}")
    from sharpdp.shuffle.adjacency import check_adjacency

    check_adjacency(adjacency)

    scale = 0.5 if adjacency == "replace" else 1.0  # (as in calibrate_bmg_report)

    def chi(x: float) -> float:
        try:
            return gaussian_chi_chua(math.exp(x))
        except (OverflowError, ZeroDivisionError, ValueError):
            return 0.0

    def template(x: float) -> float:
        c = chi(x)
        return template_scalar(scale * c, n, epsilon) if c > 0.0 else 1.0

    def base(x: float, t=None) -> float:  # log of the template plus the single-big-jump estimate
        return math.log(max(template(x) + big_jump_estimate(0.0, math.exp(x), n, epsilon), 1e-300))

    def log_template(x: float, t=None) -> float:
        return math.log(max(template(x), 1e-300))

    def start_base(x: float, t=None) -> float:  # base with the big jump's Jensen correction (docs/calibration.md §10)
        s0 = math.exp(x)
        jump = big_jump_estimate(0.0, s0, n, epsilon) * (1.0 + big_jump_jensen(0.0, s0, n, epsilon))
        return math.log(max(template(x) + jump, 1e-300))

    target = math.log(delta) - 0.5 * math.log1p(CERT_REL_TOL)
    x_t = model_root(log_template, None, target)  # the blanket weight 2 Phibar(1/sigma0) there gates the jump
    bases = (base, log_template) if jump_regime(n, 2.0 * phi_bar(math.exp(-x_t)), epsilon) else (log_template,)
    s = CheapSearch(lambda x, t: GaussianRandomizer(math.exp(x), 1), bases, lambda x, t: math.exp(2.0 * x),
                    n, epsilon, delta, adjacency, progress, "calibrating Gaussian")
    try:
        # the start: where the base model meets the target (at n >= 1e7 with the jump's Jensen correction: at eps > 0.01,
        # docs/calibration.md §10; on the loose search at eps <= 0.01, §13)
        jensen = jensen_start(n, epsilon) or (s.loose and limits.CAL_LOOSE_JENSEN_GAUSS)
        x0 = model_root(start_base if bases[0] is base and jensen else bases[0], None, target)
        if s.loose and bases[0] is base:  # (the shape model's root on the loose search: docs/calibration.md §16.1)
            xs = shape_x(x0, n, epsilon, target, adjacency)
            x0 = x0 if xs is None else xs
            s.safe_slope = lambda x: shape_slope(x, n, epsilon, adjacency)  # (stage 3's first step: §20)
        s.evaluate(x0, None, False)  # picks the base; stage 1 steps on it through this evaluation (docs/calibration.md §3)
        xb = s.bracket(x0, None, target, STAGE1_TOL, 1 if one_loose(s, target) else 6)  # (§21.2: one loose call)
        s.certify(xb, None)
    finally:
        s.bar.close()
    if s.best is None:  # (certify returns only with a certified point)
        raise RuntimeError("calibration: no certified point")
    _, x, t, lo, up = s.best
    return CalibrationReport(GaussianRandomizer(math.exp(x), 1), epsilon, delta, (lo, up), s.full,
                             certificate=s.source[(x, t)], decisions=s.count - s.full,
                             rel_tol=s.rel_of.get((x, t), s.cert_rel))  # (§15: a cheaper certifying rel_tol)


def calibrate_gaussian(n: int, epsilon: float, delta: float, *, adjacency: str = "zero_out",
                       progress: bool | None = False):
    """The 1-D Gaussian local randomizer (gamma = 0) with a small sigma0 certified at (epsilon, delta, n).

    Uses the accountant's infimum blanket for the Gaussian randomizer (the shuffle paper, Section
    4.3; docs/accountant.md); the certified delta decreases in sigma0 (a larger
    sigma0 is a post-processing). Same method as :func:`calibrate_bmg` in one dimension
    (x = log sigma0; every evaluation at rel_tol 1e-2 is a candidate answer): the base model is
    the template at Chua et al.'s index chi_chua(sigma0) plus, where sqrt(n w) (e^eps - 1) >= 1.5
    (w = 2 Phibar(1/sigma0) the infimum blanket's weight), the single-big-jump estimate (both
    estimates only); the start is where it meets delta; then safeguarded secant steps, and the
    model's boundary point (never beyond the smallest searched sigma0 whose certified upper value
    is already <= delta; regula falsi between certified-bad and known-good sigma0 after a failed
    certification), refined while it predicts a relative gain in sigma0^2 above 1e-4.
    At most 10 accountant evaluations unless every certification fails. The returned sigma0 is
    certified; it is the smallest certified one the search found, not a proved minimum: the
    stopping rule's gain is a model's prediction, so a sigma0 smaller by ~5e-4 (relative) can
    also be certified (seen at (10, 2, 1e-3); optimality only, never privacy).

    Parameters
    ----------
    n : int
        Number of users, 1 <= n <= 1e9.
    epsilon : float
        Target epsilon >= 0 (nats).
    delta : float
        Target delta in (0, 1).
    adjacency : {"zero_out", "replace"}
        Neighbouring relation passed to the accountant ("replace" is bounded through bot, see
        ``ShuffleAccountant``; each evaluation then costs about 12 zero-out certifications).
    progress : bool or None, default False
        As in :func:`calibrate_bmg` (default: no bar).

    Returns
    -------
    GaussianRandomizer
        With ``dim = 1`` (the accountant supports the Gaussian randomizer in one dimension),
        whose certified delta(epsilon) at rel_tol 1e-2 (0.02 at n >= 1e7, epsilon <= 0.01, docs/calibration.md
        §12) was verified <= delta.

    Raises
    ------
    ValueError
        If n < 1 or > 1e9, epsilon < 0 or > 700, delta not in (0, 1) or <= n 1e-38 (below the
        release sampler's smallest charge, docs/sampling.md §4), any is NaN, or an unknown
        ``adjacency``.
    TypeError
        If ``progress`` is not True, False or None.
    RuntimeError
        If no certified sigma0 is found (never expected).
    """
    return calibrate_gaussian_report(n, epsilon, delta, adjacency=adjacency, progress=progress).randomizer
