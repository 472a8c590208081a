"""Certified calibration of the blanket-mixed Gaussian (:func:`calibrate_bmg`, docs/calibration.md)."""

from __future__ import annotations

import math

from sharpdp import _validation as V
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.call_heap import kept_first
from sharpdp.shuffle.calibration.estimates import (
    big_jump_estimate,
    big_jump_jensen,
    jump_regime,
    template_chi,
    template_scalar,
)
from sharpdp.shuffle.calibration.optimal import optimal_bmg
from sharpdp.shuffle.calibration.rounds import calibrate_bmg_rounds
from sharpdp.shuffle.calibration.search import (
    CERT_REL_TOL,
    MODEL_OK,
    PROBE_DT,
    STAGE1_TOL,
    T_BOX,
    T_RADIUS,
    CalibrationReport,
    Search,
    check_progress,
    check_targets,
    expit,
    jensen_start,
    model_start,
)
from sharpdp.shuffle.randomizers import BlanketMixedGaussian


def _bmg_err(x: float, t: float, dim: int) -> float:
    """Err_1 of the BMG with logit(gamma) = t and sigma0 = e^x (the shuffle paper, Section 4.2)."""
    g, a = expit(t), expit(-t)
    return dim * math.exp(2.0 * x) / (a * a) + g / a


def _bmg_chi_lo(t: float, x: float) -> float:
    """chi_lo of the BMG with logit(gamma) = t and sigma0 = e^x (0 when it underflows)."""
    g, a = expit(t), expit(-t)
    try:
        return math.sqrt(g / (a * a * math.expm1(math.exp(-2.0 * x))))
    except (OverflowError, ZeroDivisionError):
        return 0.0


@kept_first  # one kept C heap over the evaluations at n >= limits.BODY45_KEPT_HEAP_N (speed only): docs/calibration.md §18.1
def calibrate_bmg_report(n: int, epsilon: float, delta: float, dim: int, *, adjacency: str = "zero_out",
                         progress: bool | None = None, rounds: int = 1) -> CalibrationReport:
    """:func:`calibrate_bmg` with its certificate: the certified bracket and the evaluation count.

    Parameters and errors as :func:`calibrate_bmg`.

    Returns
    -------
    CalibrationReport
        ``randomizer`` is the calibrated :class:`BlanketMixedGaussian`; ``delta_bounds`` its
        certified (lower, upper) at ``epsilon`` from the accountant at ``rel_tol`` (1e-2; 0.02 at n >= 1e7,
        epsilon <= 0.01: docs/calibration.md §12) (for
        ``rounds > 1``: from the composed accountant, see :class:`CalibrationReport`).
    """
    n = V.integer("n", n, lo=1)
    epsilon = V.real("epsilon", epsilon, lo=0.0)
    delta = V.probability_open("delta", delta)
    progress = check_progress(progress)
    dim = V.integer("dim", dim, lo=1)
    check_targets(n, epsilon, delta, dim)
    if not isinstance(adjacency, str):
        raise TypeError(f"adjacency must be a string, got {type(adjacency).__name__}")
    if adjacency not in ("zero_out", "replace"):
        raise ValueError(f"adjacency must be 'zero_out' or 'replace', got {adjacency!r}")
    rounds = V.integer("rounds", rounds, lo=1)
    if rounds > 1:
        return calibrate_bmg_rounds(n, epsilon, delta, dim, rounds, adjacency, progress, calibrate_bmg_report)

    def make(x: float, t: float) -> BlanketMixedGaussian:
        return BlanketMixedGaussian(expit(t), math.exp(x), dim)

    # replace-one: the antipodal pair has sensitivity 2, so the template is taken at chi / 2
    # (an estimate of where the boundary lies, not a bound)
    scale = 0.5 if adjacency == "replace" else 1.0

    def template(x: float, t: float) -> float:
        chi = _bmg_chi_lo(t, x)
        return template_scalar(scale * chi, n, epsilon) if chi > 0.0 else 1.0

    def base(x: float, t: float) -> float:  # log of the template plus the single-big-jump estimate
        return math.log(max(template(x, t) + big_jump_estimate(expit(t), math.exp(x), n, epsilon), 1e-300))

    def log_template(x: float, t: float) -> float:
        return math.log(max(template(x, t), 1e-300))

    def start_base(x: float, t: float) -> float:  # base with the big jump's Jensen correction (docs/calibration.md §10)
        g, s0 = expit(t), math.exp(x)
        jump = big_jump_estimate(g, s0, n, epsilon) * (1.0 + big_jump_jensen(g, s0, n, epsilon))
        return math.log(max(template(x, t) + jump, 1e-300))

    chi0 = template_chi(n, epsilon, delta) / scale
    b0 = optimal_bmg(chi0, dim)
    bases = (base, log_template) if jump_regime(n, b0.gamma, epsilon) else (log_template,)
    err = lambda x, t: _bmg_err(x, t, dim)  # noqa: E731
    s = Search(make, bases, err, n, epsilon, delta, adjacency, progress, "calibrating BMG", T_BOX)
    try:
        target = math.log(delta) - 0.5 * math.log1p(CERT_REL_TOL)
        # the start: the optimum of Err_1 on the base model near the template's optimal BMG
        t_guess = math.log(b0.gamma) - math.log1p(-b0.gamma)
        start = start_base if bases[0] is base and jensen_start(n, epsilon) else bases[0]
        x0, t0 = model_start(start, err, target, t_guess)
        s.evaluate(x0, t0, False)  # picks the base; stage 1 steps on it through this evaluation (docs/calibration.md §3)
        # stage 1: the boundary at that gamma (3% in delta)
        xb = s.bracket(x0, t0, target, STAGE1_TOL, 5)
        # where the single big jump carries most of delta and the base model is exact to MODEL_OK
        # where stage 1 ended, its optimum in gamma (the start) is kept and only x is refined (at
        # large n or epsilon, where evaluations are slow)
        vb = next(p[2] for p in reversed(s.pts) if p[0] == xb and p[1] == t0)
        exact = (s.use_template and s.template is base and abs(vb - base(xb, t0)) <= MODEL_OK
                 and big_jump_estimate(expit(t0), math.exp(xb), n, epsilon) >= template(xb, t0))
        exact = exact or (s.loose and limits.CAL_LOOSE_SKIP_PROBES)  # (docs/calibration.md §12)
        if not exact:
            # stage 2: two probes of the gamma dependence, at the boundary chi of stage 1
            coef = s.fit(xb, t0)
            xt = s.trust(xb, t0, coef)
            xr = min(max(s.root(target, t0, coef, xb, t0), xb - xt), xb + xt)
            for dt in (-PROBE_DT, PROBE_DT):
                if T_BOX[0] <= t0 + dt <= T_BOX[1]:
                    s.evaluate(xr, t0 + dt, False)
        # stage 3: model optimum, certified; improved while the model predicts a gain
        s.certify(xb, t0, t_radius=0.0 if exact else T_RADIUS)
    finally:
        s.bar.close()
    if s.best is None:  # (certify returns only with a certified point)
        raise RuntimeError("calibration: no certified point")
    _, x, t, lo, up = s.best
    if t is None:  # (the 2-D search evaluates at a shape coordinate t)
        raise RuntimeError("calibration: no certified point")
    return CalibrationReport(make(x, t), epsilon, delta, (lo, up), s.full, certificate=s.source[(x, t)],
                             decisions=s.count - s.full, rel_tol=s.cert_rel)


def calibrate_bmg(n: int, epsilon: float, delta: float, dim: int, *, adjacency: str = "zero_out",
                  progress: bool | None = None, rounds: int = 1) -> BlanketMixedGaussian:
    """BMG with the smallest worst-case single-user MSE whose certified shuffled delta(epsilon) <= delta.

    Searches (gamma, sigma0) for the blanket-mixed Gaussian randomizer ("Shuffling-Aware
    Optimization for Private Vector Mean Estimation", Algorithm "Blanket-Mixed Gaussian Mechanism") minimising ``Err_1 =
    d sigma0^2/(1-gamma)^2 + gamma/(1-gamma)`` (Section 4.2) subject to
    a *certified* upper bound on the privacy profile of the shuffled protocol <= delta
    (Appendix "Computing the shuffled (epsilon, delta) guarantee"): the upper value of
    ``ShuffleAccountant(bmg, n, adjacency, rel_tol=r).get_delta_bounds(epsilon)`` with
    r = 1e-2, the accountant's default accuracy, or r = 0.02 at n >= 1e7, epsilon <= 0.01
    (``docs/calibration.md`` §12; the report's ``rel_tol`` names r, and a fresh accountant
    at r reproduces its bracket). The true delta(epsilon) is therefore <= delta; where
    r = 0.02, a fresh accountant at the default accuracy returns another certified upper
    value, at most (1 + 1e-2) times the truth where that call meets its rel_tol (at most 1.01 delta).

    Method (at most 10 accountant evaluations unless every certification fails;
    ``docs/calibration.md``): the coordinates are x = log sigma0 and t = logit(gamma). Every
    certifying evaluation is ``get_delta_bounds`` at rel_tol = r, and any evaluated point whose certified
    upper value is <= delta is a candidate answer. The search models log delta (the log-midpoint
    of the certified bracket) as a base plus a local quadratic correction in (x, t) fitted to the
    evaluations. The base is the log of the asymptotic template at chi_lo
    (:func:`template_delta_estimate`, the finite-a form of f_{n,eps}(chi), Lemma
    "shuffle-index-profile-seq-no-t"; for "replace" at chi_lo / 2, sensitivity 2) plus, where
    sqrt(n gamma) (e^eps - 1) >= 1.5, a single-big-jump estimate (the stop-loss E[(L - T)_+] of
    one user's amplification variable at T = (n - 1) gamma (e^eps - 1), the others at their
    mean: the leading term of the accountant's far tail, which carries delta at large n or
    epsilon); the first evaluation keeps that base or the template alone, whichever is nearer.
    Both are estimates, never bounds. (1) Start at the base model's optimum of Err_1 (within
    4 in logit(gamma) of :func:`optimal_bmg` at the chi where the template meets delta) and find
    the boundary along x at that gamma (safeguarded secant steps, to 3 % in delta). (2) Two
    probes at logit(gamma) +- 0.25 give the gamma dependence; they are skipped where the big
    jump dominates and the base matches the stage-1 evaluation to 2 % (the base's gamma optimum
    is then kept). (3) The model's constrained optimum of Err_1 (inside a trust region: at most
    0.25 in x, and at most a step the steepest observed slope turns into a factor e^1.5 in
    delta) is evaluated; after a failure the next step is a fallback along x to the safe side at
    the same gamma (by the linearised excess, or by regula falsi towards the smallest sigma0 at
    that gamma whose certified upper value is already <= delta; no step goes past that point);
    the model is refitted and re-aimed while it predicts a relative gain in Err_1 above 1e-4
    and the budget of 10 evaluations lasts (a model's prediction, not a proved minimum: the result
    is certified, and the smallest Err_1 among the certified points searched).

    Parameters
    ----------
    n : int
        Number of users, 1 <= n <= 1e9 (the accountant's range).
    epsilon : float
        Target epsilon >= 0 (nats).
    delta : float
        Target delta in (0, 1).
    dim : int
        Dimension d >= 1 (delta does not depend on it; Err_1 does).
    adjacency : {"zero_out", "replace"}
        Neighbouring relation passed to the accountant ("replace": the antipodal unit pair,
        see ``ShuffleAccountant``; the template start guess is the zero-out one).
    progress : bool or None
        ``None`` (default): one progress bar on stderr (tqdm if installed, plain lines
        otherwise) over the accountant evaluations, its total the budget of 10 (it grows only
        in a fallback after failed certifications) and set to the evaluations made when the
        calibration ends (100 %), appearing only if the calibration runs longer than one
        second; ``True``: shown at once; ``False``: never. (For ``rounds > 1`` the bar counts
        candidates, each a single-round calibration plus one composed certification; total 4.)
    rounds : int, default 1
        Number k >= 1 of rounds the guarantee covers: the returned BMG, run k times on the
        same data (adaptively composed, zero-out or replace adjacency as above), is certified
        (epsilon, delta)-DP in total: ``ComposedAccountant([(ShuffleAccountant(bmg, n,
        adjacency), k)]).get_delta(epsilon) <= delta`` (``docs/composition.md`` §4) was
        checked before returning. ``rounds=1`` is the single-round calibration above, unchanged.
        For k > 1 the search is a heuristic on a one-parameter family, not the constrained
        optimum: per-round targets (epsilon / sqrt(k), delta_G(epsilon / sqrt(k); sigma))
        on the Gaussian mechanism's profile delta_G (Balle & Wang, "Improving the Gaussian
        Mechanism for Differential Privacy", Theorem 8), started where k Gaussian rounds of
        noise sigma compose to (epsilon, delta) (sigma_1 = sqrt(k) sigma_total: mu-GDP
        composition, Dong, Roth & Su, "Gaussian Differential Privacy", Corollary 3.3), each
        calibrated by the single-round method, then corrected from at most 4 composed
        certifications (a Gaussian-equivalent shift fitted to each certified value; after a
        failure the step goes to the safe side); if none of them certifies, the last failed
        BMG's sigma0 is increased at the same gamma (a post-processing: more noise) in growing
        steps, at most 6 more certifications. Each composed certification builds a
        dominating pair (a few hundred accountant profile evaluations).

    Returns
    -------
    BlanketMixedGaussian
        The calibrated randomizer, with ``0 < gamma < 1``, whose certified delta(epsilon) at
        rel_tol 1e-2 (0.02 at n >= 1e7, epsilon <= 0.01, docs/calibration.md §12) was verified <= delta. Its ``mse_single`` is near the minimum over the
        searched parameters (within a few 1e-4 relative: the model's predicted gain 1e-4 and
        the certification margins). :func:`calibrate_bmg_report` also returns the
        certified bracket and the number of evaluations.

    Raises
    ------
    ValueError
        If n < 1 or > 1e9, epsilon < 0, delta not in (0, 1), dim < 1, any is NaN,
        ``adjacency`` is not one of the above, or ``rounds`` is not an integer >= 1; if epsilon >
        700 (a randomizer calibrated at 700 is certified for every larger epsilon); if delta <= n
        dim 1e-38, below the release sampler's smallest charge at any sigma0 (docs/sampling.md §4);
        if ``rounds`` is so large that the composed grid exceeds the FFT size cap; if rounds > 1 and
        epsilon / sqrt(rounds) > 5 nats (outside the k-round search's range, docs/composition.md §4.1
        "Range": calibrate one round at (epsilon / rounds, delta / rounds) instead).
    TypeError
        If ``adjacency`` is not a string, ``rounds`` is not a number (e.g. a bool), or
        ``progress`` is not True, False or None.
    RuntimeError
        If no parameters with a certified delta <= delta are found (never expected: the
        certified delta drops to 0 as chi grows).
    """
    return calibrate_bmg_report(n, epsilon, delta, dim, adjacency=adjacency, progress=progress,
                                rounds=rounds).randomizer
