"""`sharpdp account`: certified delta(epsilon) or epsilon(delta) of a shuffled BMG or k-RR randomizer."""

from __future__ import annotations

import argparse
import math
import sys
from contextlib import contextmanager, nullcontext
from typing import Any, Iterator, NoReturn

from sharpdp.cli.account_rounds import BASIC_LOWER, COMPOSED_LOWER, compose_rounds, smallest_text
from sharpdp.cli.rounding import g_down, g_up, short_floats
from sharpdp.cli.errors import integer_number, real_number
from sharpdp.cli.notes import DELTA_HELP



def _users(value) -> int:
    """``--n`` as an int in [1, 1e9], the range the accountant certifies (docs/accountant_tail.md §11)."""
    from sharpdp import _validation as V

    n = V.integer("--n", value, lo=1)
    if n > 10**9:
        raise ValueError(f"--n must be <= 1000000000 (the largest n the accountant certifies: its grids' size caps "
                         f"are set for n <= 1e9, docs/accountant_tail.md §11), got {n}")
    return n

def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "account", parents=[parent],
        help="certified delta for an epsilon (or epsilon for a delta) of n shuffled messages of a "
             "blanket-mixed Gaussian (BMG) or k-ary randomized response (k-RR) randomizer",
        epilog=("examples: sharpdp account --gamma 0.95 --sigma0 4.6 --n 1000000 --epsilon 1e-5 (BMG: delta); "
                "sharpdp account --k 2 --epsilon0 1 --n 1000 --adjacency replace --delta 1e-6 (k-RR: epsilon)."),
        description=(
            "Certified privacy profile of n shuffled messages of the blanket-mixed Gaussian "
            "randomizer (gamma, sigma0) of 'Shuffling-Aware Optimization for Private Vector Mean Estimation'. With "
            "--epsilon: the certified delta (an upper bound on the mechanism's delta, via the privacy-blanket "
            "bound) and how tightly the accountant computed that bound: a lower value of the blanket bound "
            "(not a lower bound on the mechanism's delta). The relative gap is <= 1 percent when the value is >= "
            "1e-24 and the grid fits its size caps; below 1e-24 only the upper value is refined. With --delta: "
            "the smallest certified epsilon (safe end of its bracket). gamma = 0 is the Gaussian randomizer. "
            "With --k K --epsilon0 E0 instead of --gamma/--sigma0: k-ary randomized response; for k = 2, "
            "--adjacency replace and n <= 1e9 the sharp bound (the shuffled mechanism's own delta, worst case "
            "over datasets: sharpdp.shuffle.ExactShuffleAccountant) is reported, else the blanket bound; the "
            "output says which (\"bound\"). With --rounds K > 1 the K rounds of that same bound are composed "
            "(ComposedAccountant takes either accountant)."))
    p.add_argument("--gamma", type=real_number, default=None, help="BMG: blanket mass in [0, 1)")
    p.add_argument("--sigma0", type=real_number, default=None, help="BMG: Gaussian scale > 0")
    p.add_argument("--k", type=_number, default=None,
                   help="k-ary randomized response: number of categories k >= 2 (with --epsilon0)")
    p.add_argument("--epsilon0", type=real_number, default=None, help="k-RR: local epsilon in (0, 300] nats")
    p.add_argument("--n", type=_number, required=True,
                   help="number of users, 1 <= n <= 1e9 (an integer; integer-valued forms such as 1e6 are accepted)")
    p.add_argument("--dim", type=integer_number, default=None, help="BMG: dimension d >= 1 (default 1)")
    from sharpdp.shuffle.adjacency import ADJACENCIES, DEFAULT_ADJACENCY

    from sharpdp.cli.errors import ADJACENCY_ALIAS_HELP, adjacency_name

    p.add_argument("--adjacency", choices=ADJACENCIES, default=DEFAULT_ADJACENCY, type=adjacency_name,
                   help="neighbouring relation (default zero_out: one user's input replaced by a null input whose "
                        "message is drawn from the blanket law; the output states the replace-one guarantee it "
                        "implies); replace: one user's input changed into any other; replace with gamma = 0 is "
                        f"bounded through bot (weak triangle inequality, looser); {ADJACENCY_ALIAS_HELP}")
    p.add_argument("--explain", action="store_true",
                   help="print the BMG's notes under the answer in full (what chi_lo and mse_single are, in which units, "
                        "and how chi_lo relates to --adjacency replace), then what epsilon, delta, the bracket and the "
                        "adjacency mean in plain words (as sharpdp mean --explain); without it each BMG note is one "
                        "line (docs/cli.md §10, §12)")
    p.add_argument("--rounds", type=integer_number, default=1,
                   help="number K >= 1 of such rounds composed (default 1); K > 1 reports the certified "
                        "composed delta (or epsilon) of the K rounds (sharpdp.shuffle.ComposedAccountant); it builds "
                        "the round's dominating pair from up to 400 certified values: seconds at n <= 10^6, minutes "
                        "for heavy-tailed rounds (BMG, gamma = 0) at n >= 10^7 (the output says so at the start)")
    p.add_argument("--bound", choices=("auto", "sharp", "blanket"), default="auto",
                   help="k-RR: which bound (default auto: the sharp one where it applies, except --rounds > 1 at "
                        f"n > {SHARP_ROUNDS_N:,}, where composing the sharp round costs tens of seconds and more (about "
                        "5 s of CPU at n = 2e6, 20 s at 1e8, a few hundred values of 0.2-9 s each at 1e9) and the "
                        "blanket one seconds; the output says which and why); sharp: refuse where it does not "
                        "apply; blanket: the privacy-blanket bound (ShuffleAccountant)")
    p.add_argument("--discretization", type=real_number, default=None,
                   help="privacy-loss lattice step (nats) for --rounds > 1 (default: a BMG round at --epsilon: "
                        "the model-placed pair's top / 400, printed as the loss lattice; otherwise the "
                        "single-round epsilon at delta 1e-10, / 400). Given, the round's pair is built from its "
                        "full certified privacy profile (seconds more; the model-placed pair is about 1-6 %% "
                        "looser, docs/composition.md §4.2)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--epsilon", type=real_number,
                        help="epsilon in [0, 700] (nats): report the certified delta (docs/cli.md §6)")
    target.add_argument("--delta", type=real_number, help=f"{DELTA_HELP}: report the certified epsilon")


# above this n, --bound auto composes the blanket round instead of the sharp one (k = 2, replace, --rounds > 1): the
# sharp round's dominating pair costs one sharp value per profile sample (a few hundred), ~12 CPU s for 10 rounds at
# n = 1e6, but 0.2-9 s per value at n = 1e9 (delta 1e-6 ... 1e-24) and over 12 CPU minutes in all; the blanket
# pair there takes ~11 CPU s (3 rounds, epsilon0 = 1)
SHARP_ROUNDS_N = 10**6


def _number(text: str) -> int | float:
    """An option value as int when it is written as one, else as float (validated in ``run``, so
    "1e6" is accepted as the integer 10**6 and "1.5" is refused there naming the option)."""
    try:
        return int(text)
    except ValueError:
        return float(text)


_number.__name__ = "number"  # argparse's message for a bad value: "invalid number value: 'abc'"


def _usage_error(message: str, parameter: str | None = None) -> NoReturn:
    """A missing or conflicting option, reported as argparse reports a missing required one (one
    line on stderr, with --json also a JSON object on stdout, exit status 2 through SystemExit): the
    randomizer options are required as a group (--gamma/--sigma0 or --k/--epsilon0), which argparse
    cannot express."""
    from sharpdp.cli import usage_error

    usage_error("account", message, parameter)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sharpdp import _validation as V

    if args.k is not None or args.epsilon0 is not None:
        if args.gamma is not None or args.sigma0 is not None:
            _usage_error("give either --k/--epsilon0 (k-ary randomized response) or --gamma/--sigma0 (BMG), not both",
                         "--gamma" if args.gamma is not None else "--sigma0")
        if args.k is None or args.epsilon0 is None:
            _usage_error(f"the following arguments are required: {'--k' if args.k is None else '--epsilon0'} "
                         f"(k-ary randomized response needs both --k and --epsilon0)")
        if args.dim is not None:
            _usage_error("--dim is a BMG option (k-ary randomized response has no dimension)")
        return _run_krr(args, _users(args.n))
    if args.gamma is None or args.sigma0 is None:
        _usage_error(f"the following arguments are required: {'--gamma' if args.gamma is None else '--sigma0'} "
                     f"(BMG: --gamma and --sigma0; k-ary randomized response: --k and --epsilon0)")
    n = _users(args.n)
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer

    gamma = V.real("--gamma", args.gamma, lo=0.0, hi=1.0, hi_open=True)
    sigma0 = V.real("--sigma0", args.sigma0, lo=0.0, lo_open=True)
    dim = V.integer("--dim", 1 if args.dim is None else args.dim, lo=1)
    eps = None if args.epsilon is None else _epsilon(args.epsilon)
    delta = None if args.delta is None else V.probability_open("--delta", args.delta)
    rnd = GaussianRandomizer(sigma0, dim) if gamma == 0.0 else BlanketMixedGaussian(gamma, sigma0, dim)
    from sharpdp.cli import CliError
    from sharpdp.shuffle.accountant import ShuffleAccountant

    if getattr(args, "bound", "auto") == "sharp":
        raise CliError("--bound sharp: the sharp bound covers k-ary randomized response (--k 2, --adjacency "
                       "replace) only; the BMG is accounted by the blanket bound")
    try:
        acc = ShuffleAccountant(rnd, n, adjacency=args.adjacency)
    except NotImplementedError as exc:
        raise CliError(f"--adjacency: {exc}") from None
    out: dict[str, Any] = {
        # (null in JSON where a figure overflows a double, e.g. mse_single at sigma0 ~ 1e300)
        "randomizer": {"gamma": gamma, "sigma0": sigma0, "dim": dim, "chi_lo": _finite_or_none(rnd.chi_lo),
                       "mse_single": _finite_or_none(rnd.mse_single)},
        "n": n,
        "adjacency": args.adjacency,
        "via_bottom": acc.via_bottom,  # replace-one bounded through bot (docs/accountant.md §9)
        **_sampler_status(rnd),
    }
    rounds = V.integer("--rounds", args.rounds, lo=1)
    out.update(_answer(acc, rounds, eps, delta, args.discretization, _BLANKET_LOWER))
    out.update(neighbours(out), notes_in_full=bool(getattr(args, "explain", False)))
    return out


def _epsilon(value: float) -> float:
    """``--epsilon`` in nats: a real in [0, 700] (EPS_MAX, the cap ``sharpdp mean`` has too: docs/cli.md §6).

    Raises
    ------
    ValueError
        Naming ``--epsilon``: not a real >= 0, or above 700 (delta(eps) is non-increasing, so the certified
        delta at 700 nats holds at every larger epsilon).
    """
    from sharpdp import _validation as V
    from sharpdp.shuffle.accountant.limits import EPS_MAX

    # (inf, or 1e400 parsed as inf: the line above 700, like sharpdp mean, not "must be finite")
    eps = value if value == float("inf") else V.real("--epsilon", value, lo=0.0)
    if eps > EPS_MAX:
        given = f"{eps!r} nats is" if eps < math.inf else "the value given (beyond the double range, read as inf) is"
        raise ValueError(f"--epsilon: {given} above {EPS_MAX:g}, the largest epsilon sharpdp account certifies and "
                         f"sharpdp mean accepts (e^epsilon must be finite); delta(epsilon) is non-increasing, so the "
                         f"certified delta at epsilon = {EPS_MAX:g} holds at every larger epsilon")
    return eps


def _sampler_status(rnd: Any) -> dict[str, Any]:
    """Whether the randomizer's release sampler can draw this release (``can_sample``) and, if not, why
    (``sampler_refusal``, the randomizer's message in the CLI's wording: what a CLI user can do, never an API
    parameter): the certificate covers the mechanism's law either way (docs/cli.md §5)."""
    from sharpdp.cli.errors import cli_wording

    refusal = rnd.sampler_refusal
    return {"can_sample": refusal is None, "sampler_refusal": None if refusal is None else cli_wording(refusal)}


def _sampler_text(r: dict[str, Any]) -> str:
    """The text line of a release that the sampler refuses ("" when it can sample it)."""
    if r.get("can_sample", True):
        return ""
    from sharpdp.cli.errors import cli_wording  # (a caller's dict may hold the API's text: format_text is public)

    return (f"\nrelease sampler: cannot sample this randomizer ({cli_wording(r['sampler_refusal'])}); the certificate "
            f"above is "
            f"of the mechanism's law, but sharpdp cannot draw a release of it")


def _finite_or_none(v: float) -> float | None:
    """v, or None (JSON null; printed "inf") when it overflows a double."""
    return float(v) if math.isfinite(v) else None


def _g(v: float | None) -> str:
    return "inf" if v is None else f"{v:.6g}"


_BLANKET_LOWER = ("lower value of the blanket bound (the accountant's accuracy), not a lower bound on the "
                  "mechanism's delta")


def _answer(acc: Any, rounds: int, eps, delta, discretization, lower_meaning: str) -> dict[str, Any]:
    """The certified answer of ``acc``: composed over ``rounds``, or delta's bracket at ``eps``, or
    epsilon at ``delta``; ``lower_meaning`` says what the bracket's lower end is. With the units of its
    figures (``epsilon_unit``, ``delta_unit``: docs/cli.md §1)."""
    from sharpdp.cli import UNITS

    return {**_certified(acc, rounds, eps, delta, discretization, lower_meaning), **UNITS}


def _certified(acc: Any, rounds: int, eps, delta, discretization, lower_meaning: str) -> dict[str, Any]:
    if rounds > 1:
        return compose_rounds(acc, rounds, eps, delta, discretization)
    from sharpdp.cli import bracket_note

    if eps is not None:
        with _wait(f"certified delta at epsilon = {eps:g} nats", "one certified value"):
            lo, up = acc.get_delta_bounds(eps)  # get_delta(eps) is the upper end
        lo, up = float(lo), float(up)
        gap = (up - lo) / lo if lo > 0 else math.inf
        floor = _charge_floor(acc, eps, up)
        charge = 0.0 if floor is None else floor["charge"]
        return {"epsilon": eps, "delta": up, "delta_lower": lo, "delta_upper": up, "delta_lower_meaning": lower_meaning,
                "bracket_relative_gap": gap if math.isfinite(gap) else None,
                "bracket_note": bracket_note(lo, up, gap, acc.rel_tol, charge),
                "sampler_charge_floor": floor}
    with _wait(f"certified epsilon at target delta = {delta:g}", "a search on certified values"):
        try:
            found = float(acc.get_epsilon(float(delta)))
        except ValueError as exc:  # (advice naming API parameters: the CLI's own; figures as the CLI prints them)
            from sharpdp.cli.errors import cli_wording

            raise ValueError(short_floats(cli_wording(str(exc)), keep=(float(delta),))) from None
    out = {"delta": delta, "epsilon": found, "sampler_charge": _charge_at(acc, found, float(delta))}
    if found == 0.0:  # (a bare "epsilon = 0" reads like an error: show the certified value that allows it)
        out["delta_at_zero"] = float(acc.get_delta(0.0))
    return out


def _charge_at(acc: Any, eps: float, delta: float) -> dict[str, Any] | None:
    """The release sampler's charge in the certified value at ``eps`` (docs/sampling.md §4): the charge and the
    floor 2 n sampler_tv no epsilon goes below; where the charge makes at least half of ``delta``, also the smallest
    certified value (:func:`_smallest_certified` over [0, eps_tau]: what get_epsilon's refusal names,
    docs/accountant.md §8.3); None without a charge (k-RR's exact law, sampler_charge=False)."""
    e = min(eps, getattr(acc, "eps_tau", math.inf))
    if not (hasattr(acc, "sampler_term") and math.isfinite(e) and acc.sampler_term(e) > 0.0):
        return None
    out = {"charge": acc.sampler_term(e), "floor_at_any_epsilon": acc.sampler_term(0.0),
           "smallest_certified_delta": None, "smallest_at_epsilon": None, "values_searched": 0,
           "meaning": "the release sampler's total-variation charge (1 + e^eps) n sampler_tv included in the "
                      "certified delta at this epsilon, and its value at epsilon = 0, a lower bound on every certified "
                      "delta; where the charge makes at least half of delta, smallest_certified_delta: the smallest "
                      "certified value found by the golden-section search over [0, eps_tau] of get_epsilon's own "
                      "refusal (values_searched values, within a CPU and wall budget), at smallest_at_epsilon "
                      "(docs/sampling.md §4, docs/accountant.md §8.3, docs/cli.md §2)"}
    if out["charge"] >= 0.5 * delta:
        v, at, count = _smallest_certified(acc, acc.eps_tau, (delta, eps), "the certified epsilon's delta is mostly "
                                           "the release sampler's charge: searching the smallest certified delta")
        out.update(smallest_certified_delta=v, smallest_at_epsilon=at, values_searched=count)
    return out


@contextmanager
def _wait(step: str, what: str, why: str | None = None) -> Iterator[None]:
    """One certified answer, a wait with nothing to count, by the progress rule (``sharpdp._progress.PROGRESS_RULE``):
    in a log ``"account: STEP: N s"`` lines (the first after 2 s, then every 5 s, and ``(done)``) and, after 5 s, a
    note on why it takes long; on a terminal, where a step prints no line, that note at the start. ``why``: that
    note (default: ``what`` and how long one certified value takes, measured: docs/cli.md §2)."""
    from sharpdp._progress import is_terminal, progress_step
    from sharpdp.cli import slow_note

    why = why or (f"{what}, with no count to show progress on (one certified value takes milliseconds for k-RR and "
                  "most BMGs, up to seconds for heavy-tailed BMGs at n >= 10^8 or a small epsilon, and a search "
                  "several such values; with the Gaussian randomizer (gamma = 0) a search takes a few seconds at "
                  "n = 1000, tens of seconds at n = 10^6 and minutes at n = 10^9 on a busy machine: docs/accountant.md "
                  "§6.2, docs/cli.md §2); Ctrl-C stops it")
    terminal = is_terminal(sys.stderr)
    if terminal:
        print(f"sharpdp account: {step}: {why}", file=sys.stderr, flush=True)
    # (on a terminal the step prints only an interrupted line)
    with progress_step(f"account: {step}"), \
            (nullcontext() if terminal else slow_note("account", f"still computing after 5 s: {why}")):
        yield


#: The smallest certified value below a charge-dominated epsilon is searched with at most this many golden-section
#: steps, this much CPU time (s) and this much wall time (s: under load the CPU budget alone took 6 s of wall time);
#: every value seen is certified, so stopping early only leaves a larger one.
FLOOR_STEPS = 24
FLOOR_CPU = 2.0
FLOOR_WALL = 3.0


def _charge_floor(acc: Any, eps: float, up: float) -> dict[str, Any] | None:
    """Where the release sampler's charge makes at least half of the certified value ``up`` at ``eps``: the
    charge, the floor 2 n sampler_tv no epsilon goes below, and the smallest certified value found at an epsilon
    <= ``eps`` (also a certified delta at ``eps``: docs/cli.md §2); None elsewhere (no charge, or a small one)."""
    e = min(eps, getattr(acc, "eps_tau", math.inf))
    c = acc.sampler_term(e) if hasattr(acc, "sampler_term") and math.isfinite(e) else 0.0
    if not (up > 0.0 and c > 0.0 and c >= 0.5 * up):  # (0.5 * up rounds to 0 for the least subnormal up)
        return None
    best = _smallest_certified(acc, e, (up, eps), f"the certified delta at {eps:g} nats is mostly the release "
                                                  "sampler's charge: searching a smaller certified delta at a smaller "
                                                  "epsilon")
    return {"charge": c, "charge_epsilon": e, "eps_tau": _finite_or_none(acc.eps_tau), "sampler_tv_per_message": acc.sampler_tau / acc.n,
            "floor_at_any_epsilon": acc.sampler_term(0.0), "smallest_certified_delta": best[0],
            "smallest_at_epsilon": best[1], "values_searched": best[2],
            "meaning": ("the certified delta is mostly the release sampler's charge (1 + e^eps) n sampler_tv "
                        "(docs/sampling.md §4), which grows with epsilon up to eps_tau (above it the value at eps_tau "
                        "is reported) and is at least floor_at_any_epsilon = 2 n sampler_tv at every epsilon; "
                        "sampler_tv grows with the release sampler's noise table (about 13.2 sigma0 / h entries for "
                        "a BMG, h = 2^-grid_bits; BlanketMixedGaussian.sample refuses tables above 2^18 entries: "
                        "docs/sampling.md §2.2, §4). smallest_certified_delta, the "
                        "smallest certified value found at an epsilon <= this one (a golden-section search of "
                        "values_searched values), is also a certified delta at this epsilon, since delta is "
                        "non-increasing in epsilon (docs/cli.md §2)")}


def _smallest_certified(acc: Any, hi: float, start: tuple[float, float], why: str) -> list:
    """[value, epsilon, values computed]: the smallest fresh certified value (``report``: the laws' value plus the
    release sampler's charge) met by a golden-section search of [0, ``hi``] in FLOOR_STEPS steps within the CPU and
    wall budgets, or ``start`` (a value already known, at an epsilon) if none is smaller. With ``hi`` = eps_tau these
    are the points of get_epsilon's own search below the charge's plateau (docs/accountant.md §8.3, the value its
    refusal names) as long as the budget lasts."""
    import time

    from sharpdp.shuffle.accountant.golden import golden_min

    best = [*start, 0]
    stop, stop_wall = time.process_time() + FLOOR_CPU, time.monotonic() + FLOOR_WALL

    def value(x: float) -> float:
        if time.process_time() > stop or time.monotonic() > stop_wall:
            return math.nan  # (golden_min ignores NaN values)
        v = float(acc.report(x).upper)
        best[2] += 1
        if v < best[0]:
            best[:2] = [v, x]
        return v

    with _wait(f"smallest certified delta at epsilon <= {hi:g} nats", "",
               f"{why} (no new value after {FLOOR_CPU:g} s of CPU or {FLOOR_WALL:g} s of wall time; the value under "
               "way is finished; docs/cli.md §2)"):
        golden_min(value, 0.0, hi, FLOOR_STEPS)
    return best


def _floor_text(f: dict[str, Any] | None, eps: float, delta: float) -> str:
    """The text line of :func:`_charge_floor` (empty when there is none); the smaller value found is shown when
    it is at most 0.9 ``delta`` (the value reported at ``eps``)."""
    if f is None:
        return ""
    where = (f" at eps_tau = {f['charge_epsilon']:.4g} nats (reported for every larger epsilon)"
             if f["charge_epsilon"] < eps else "")
    smaller = (f"; a smaller certified delta, {g_up(f['smallest_certified_delta'])} at epsilon = "
               f"{g_up(f['smallest_at_epsilon'], 4)} nats, also holds at epsilon = {eps:.6g} nats (delta is non-increasing in "
               f"epsilon; smallest of {f['values_searched']} values searched, docs/cli.md §2)"
               if f["smallest_certified_delta"] <= 0.9 * delta else "")
    return (f"\nsampler's charge floor: the release sampler's charge {f['charge']:.3g}{where} makes most of this "
            f"value; it grows with epsilon and is at least {_FLOOR_NAME} = {g_down(f['floor_at_any_epsilon'], 3)} at every "
            f"epsilon (sampler_tv = {f['sampler_tv_per_message']:.3g} per message grows with the noise table's "
            f"length, about 13.2 sigma0 / h entries: docs/sampling.md §4, docs/cli.md §2){smaller}")


#: "2 n sampler_tv" with no-break spaces: the expression stays on one line of the wrapped text
_FLOOR_NAME = "2\u00a0n\u00a0sampler_tv"

_SHARP_MEANING = ("sharp: the shuffled mechanism's own delta, worst case over all neighbouring datasets "
                  "(ExactShuffleAccountant, docs/sharp_krr.md)")
_BLANKET_MEANING = "blanket: the privacy-blanket upper bound (ShuffleAccountant)"
#: What the bracket printed by ``--epsilon`` is, per bound; said only where a bracket is printed (the ``--delta``
#: answer prints none: its text used to name one, docs/cli.md §10)
_BRACKET_OF = {"sharp": "; the bracket is of delta itself",
               "blanket": "; the lower value is of the bound, not a lower bound on the mechanism's delta"}


def krr_field_help(k: int) -> dict[str, str]:
    """What k-RR's ``mse_single`` is (printed under the answer, as :data:`sharpdp.cli.BMG_FIELD_HELP` explains the
    BMG's figures; ``RandomizedResponse.mse_single``), for this ``k``."""
    how = ("inputs +-1 and the estimator Y/t: 4 e^epsilon0 / (e^epsilon0 - 1)^2" if k == 2 else
           "the one-hot frequency estimator, its squared error summed over the k coordinates")
    return {"mse_single": f"worst-case squared error of one user's unbiased estimate ({how}); the estimate from n "
                          "users' messages has mean squared error mse_single / n"}


def _run_krr(args: argparse.Namespace, n: int) -> dict[str, Any]:
    """k-ary randomized response: the sharp accountant where it applies, else the blanket one."""
    from sharpdp import _validation as V
    from sharpdp.shuffle import RandomizedResponse
    from sharpdp.shuffle.accountant import ShuffleAccountant
    from sharpdp.cli import CliError
    from sharpdp.shuffle.certified import sharp_applies

    k = V.integer("--k", args.k, lo=2)
    e0 = V.real("--epsilon0", args.epsilon0, lo=0.0, hi=300.0, lo_open=True)
    eps = None if args.epsilon is None else _epsilon(args.epsilon)
    delta = None if args.delta is None else V.probability_open("--delta", args.delta)
    rounds = V.integer("--rounds", args.rounds, lo=1)
    rnd = RandomizedResponse(k, e0)
    out: dict[str, Any] = {"randomizer": {"k": k, "epsilon0": e0, "mse_single": rnd.mse_single},
                           "n": n, "adjacency": args.adjacency, **_sampler_status(rnd)}
    # --rounds K > 1 composes the same round (ComposedAccountant takes ExactShuffleAccountant through the
    # one-round contract, docs/sharp_krr.md §5 "Composition"): the sharp round where it applies
    applies = sharp_applies(rnd, n, args.adjacency)
    choice = getattr(args, "bound", "auto")
    if choice == "sharp" and not applies:
        raise CliError(f"--bound sharp: not available here ({_why_not_sharp(k, n, args.adjacency)})")
    slow = rounds > 1 and n > SHARP_ROUNDS_N
    sharp = applies and (choice == "sharp" or (choice == "auto" and not slow))
    if sharp and slow:
        print(f"sharpdp account: warning: composing the sharp bound at n = {n}: its dominating pair needs a few "
              "hundred sharp values, each 0.2-9 s at n = 1e9 (more than 12 CPU minutes in all there); --bound "
              "blanket composes the looser blanket bound in seconds", file=sys.stderr, flush=True)
    if sharp:
        from sharpdp.shuffle import ExactShuffleAccountant

        acc: Any = ExactShuffleAccountant(rnd, n, args.adjacency)
    else:
        acc = ShuffleAccountant(rnd, n, adjacency=args.adjacency)
    out["bound"] = "sharp" if sharp else "blanket"
    out["bound_meaning"] = ((_SHARP_MEANING if sharp else _BLANKET_MEANING)
                            + (_BRACKET_OF[out["bound"]] if eps is not None else ""))
    if rounds > 1:
        out["bound_meaning"] = (
            f"{out['bound']}: each of the {rounds} rounds bounded by "
            + ("the shuffled mechanism's own delta, worst case over all neighbouring datasets "
               "(ExactShuffleAccountant, docs/sharp_krr.md)" if sharp else
               "the privacy-blanket upper bound (ShuffleAccountant)")
            + ", composed by ComposedAccountant (the smaller of its dominating pair's composition and basic "
              "composition, docs/composition.md §4.3)")
    if not sharp:
        out["bound_why_not_sharp"] = (
            "--bound blanket" if choice == "blanket" else
            f"--rounds {rounds} > 1 at n > {SHARP_ROUNDS_N:,}: composing the sharp round costs tens of seconds "
            "and more (about 5 s of CPU at n = 2e6, 20 s at 1e8, a few hundred sharp values of 0.2-9 s each at "
            "n = 1e9), the blanket one seconds; --bound sharp "
            "composes the sharp one anyway" if applies else _why_not_sharp(k, n, args.adjacency))
    lower = "certified lower bound on the mechanism's delta" if sharp else _BLANKET_LOWER
    out.update(_answer(acc, rounds, eps, delta, args.discretization, lower))
    if rounds > 1 and "delta_lower" in out and out["delta_lower_meaning"] != BASIC_LOWER:
        out["delta_lower_meaning"] = COMPOSED_LOWER
    out.update(neighbours(out))
    return out


def _why_not_sharp(k: int, n: int, adjacency: str) -> str:
    """Which condition of the sharp route fails (k = 2, replace, n <= N_MAX)."""
    from sharpdp.shuffle.exact_krr import N_MAX

    if k != 2:
        return f"k = {k}: the sharp worst case is proved for k = 2 only (docs/sharp_krr.md §5)"
    if adjacency != "replace":
        return "the sharp bound covers --adjacency replace only"
    return f"n = {n} > {N_MAX}: the sharp bound covers n <= {N_MAX} (branch and bound over classes, docs/sharp_krr.md §4.11)"


def _format_krr(r: dict[str, Any]) -> str:
    rd = r["randomizer"]
    head = (f"k-RR k = {rd['k']}, epsilon0 = {rd['epsilon0']:.6g} nats (mse_single = {rd['mse_single']:.6g}); "
            f"n = {r['n']}, {r['adjacency']} adjacency; bound: {r['bound_meaning']}")
    if "bound_why_not_sharp" in r:
        head += f" (not sharp: {r['bound_why_not_sharp']})"
    if r.get("rounds", 1) > 1:
        head += f"; {r['rounds']} rounds composed (loss lattice {r['discretization']:.3g} nats)"
    if "delta_upper" in r:
        body = (f"epsilon = {r['epsilon']:.6g} nats: certified delta = {g_up(r['delta'])} (upper bound, {r['bound']})\n"
                f"bracket [{g_down(r['delta_lower'])}, {g_up(r['delta_upper'])}]")
        if "bracket_note" in r:
            body += f": lower value = {r['delta_lower_meaning']}; {r['bracket_note']}"
        elif "delta_lower_meaning" in r:
            body += f": lower value = {r['delta_lower_meaning']}"
    else:
        body = (f"target delta = {r['delta']:.6g}: certified epsilon = {g_up(r['epsilon'])} (nats, {r['bound']} bound: the "
                f"safe end of its search, so the certified delta at this epsilon is <= {r['delta']:.6g})")
        body += _zero_note(r)
    if r.get("composition_route"):  # (--rounds K: which route certified the value, as for the BMG)
        body += f"\nvalue by {r['composition_route']}" + smallest_text(r) + (f"\npair: {r['pair']}" if r.get("pair") else "")
    notes = "".join(f"\n  {k:<10}: {text}" for k, text in krr_field_help(rd["k"]).items())
    return head + "\n" + body + neighbours_text(r) + notes


def neighbours(r: dict[str, Any]) -> dict[str, Any]:
    """``adjacency_meaning`` (and, for zero-out, ``replace_one_implied``) of an answer ``r`` (``epsilon`` and
    ``delta``: the certified delta at epsilon, or the target delta met at the certified epsilon): what its
    (epsilon, delta) promises, and the replace-one (2 epsilon, (1 + e^epsilon) delta) a zero-out guarantee implies
    (:func:`sharpdp.cli.mean_result.replace_one_implied`: the certificate covers both orders, x vs null and null
    vs x, for one round and for K rounds composed; docs/cli.md §9, §10)."""
    from sharpdp.cli.mean_result import replace_one_implied

    if r["adjacency"] == "replace":
        return {"adjacency_meaning": _REPLACE_MEANING}
    eps, delta = float(r["epsilon"]), float(r["delta"])
    at = float(r.get("certified_at_epsilon") or eps)  # (--rounds: the composed value may be certified below eps)
    f = r.get("sampler_charge_floor")
    if f is not None and f["smallest_certified_delta"] <= 0.9 * delta:  # (the certified delta the text prints)
        delta, at = float(f["smallest_certified_delta"]), float(f["smallest_at_epsilon"])
    # zero-out (at, delta) implies replace-one (2 at, (1 + e^at) delta), hence (2 eps, (1 + e^at) delta) for
    # eps >= at: the factor at the epsilon where delta is certified (e^25 at 25 nats against e^0.41 at 0.41)
    implied = replace_one_implied(min(at, eps), delta)
    implied.update(epsilon=2.0 * eps, meaning=_IMPLIED_MEANING)
    return {"adjacency_meaning": _ZERO_OUT_MEANING, "replace_one_implied": implied}


_IMPLIED_MEANING = ("the (epsilon, delta) this zero-out mechanism satisfies under replace-one adjacency (one user's "
                    "input changed into any other), by the triangle inequality through the null input: (2 e, "
                    "(1 + e^e) d) from the certified (e, d), e the epsilon at which d is certified (at most the "
                    "answer's epsilon; a value certified at a smaller epsilon holds at this one), delta rounded up; "
                    "--adjacency replace certifies replace-one directly (often tighter)")
_REPLACE_MEANING = ("replace-one: neighbouring datasets of n users differ in one user's input, changed into any other "
                    "input (the usual (epsilon, delta)-DP of a fixed-size dataset)")
_ZERO_OUT_MEANING = ("zero-out: neighbouring datasets of n users differ in one user's input, replaced by a null input "
                     "whose message is drawn from the blanket law (docs/embedding.md §1); not the usual replace-one "
                     "guarantee: replace_one_implied is the one it implies")


def neighbours_text(r: dict[str, Any]) -> str:
    """The ``neighbours:`` line of the text: what the (epsilon, delta) above is a guarantee for (empty for a result
    without ``adjacency_meaning``, e.g. a caller's own dict)."""
    if "adjacency_meaning" not in r:
        return ""
    if r["adjacency"] == "replace":
        return f"\nneighbours: {_REPLACE_MEANING}"
    from sharpdp.cli.rounding import g_up

    implied = r["replace_one_implied"]
    return (f"\nneighbours: zero-out (one user's input replaced by a null input whose message is drawn from the "
            f"blanket law: docs/embedding.md §1), NOT the usual replace-one: under replace-one (one user's input "
            f"changed into another) this implies ({implied['epsilon']:.6g}, {g_up(implied['delta'])})-DP (through the "
            f"null input); --adjacency replace certifies replace-one directly (often tighter than this implication)")


def _zero_note(r: dict[str, Any]) -> str:
    """Why a certified epsilon of 0 is an answer: the round's certified delta at epsilon = 0 is within the target."""
    if r.get("delta_at_zero") is None:
        return ""
    return (f"\nthe round is (0, delta)-DP: its certified delta at epsilon = 0 is {g_up(r['delta_at_zero'])} <= "
            f"{r['delta']:.6g}")


def format_text(r: dict[str, Any]) -> str:
    """The text output of ``sharpdp account`` (lines wrapped at 80 columns: :func:`sharpdp.cli.wrap_text`)."""
    from sharpdp.cli import BMG_FIELD_HELP, wrap_text
    from sharpdp.cli.notes import bmg_field_help

    if "k" in r["randomizer"]:
        return wrap_text(_format_krr(r))
    rd = r["randomizer"]
    figures = ", ".join(f"{k} = {_g(rd[k])}" for k in BMG_FIELD_HELP)
    name = "Gaussian randomizer (gamma = 0)" if rd["gamma"] == 0 else f"BMG gamma = {rd['gamma']:.6g}"
    head = (f"{name}, sigma0 = {rd['sigma0']:.6g}, dim = {rd['dim']} "
            f"({figures}); n = {r['n']}, {r['adjacency']} adjacency"
            + (" (bounded through bot: x vs bot and bot vs x', looser)" if r.get("via_bottom") else ""))
    if r.get("rounds", 1) > 1:
        head += f"; {r['rounds']} rounds composed (loss lattice {r['discretization']:.3g} nats)"
    if "delta_upper" in r:
        if r.get("rounds", 1) > 1:
            basic = r.get("delta_lower_meaning") == BASIC_LOWER
            at = r.get("certified_at_epsilon", r["epsilon"])
            where = (f", certified at epsilon = {g_up(at, 4)} nats: delta is non-increasing in epsilon" if at < r["epsilon"]
                     else "")
            body = (f"epsilon = {r['epsilon']:.6g} nats: certified delta = {g_up(r['delta'])} (upper bound{where})\n"
                    + (f"value by {r['composition_route']}; bracket [{g_down(r['delta_lower'])}, {g_up(r['delta_upper'])}]: "
                       f"lower value = {r['delta_lower_meaning']}" if basic else
                       f"value by the dominating pair's composition (docs/composition.md §4)\n"
                       f"bracket [reference lower value, certified upper] = "
                       f"[{g_down(r['delta_lower'])}, {g_up(r['delta_upper'])}]\nreference lower value: not a lower bound on delta; "
                       f"this bound's own reference, the same composition computed from the rounds' lower values "
                       f"(what the pair and lattice cost)")
                    + smallest_text(r) + (f"\npair: {r['pair']}" if r.get("pair") else ""))
        else:
            f = r.get("sampler_charge_floor")
            smaller = f is not None and f["smallest_certified_delta"] <= 0.9 * r["delta"]
            value = (f"certified delta = {g_up(f['smallest_certified_delta'])} (upper bound, certified at epsilon = "
                     f"{g_up(f['smallest_at_epsilon'], 4)} nats: delta is non-increasing in epsilon; the value computed "
                     f"at {r['epsilon']:.6g} nats itself, {g_up(r['delta'])}, is mostly the release sampler's charge)"
                     if smaller else f"certified delta = {g_up(r['delta'])} (upper bound)")
            body = (f"epsilon = {r['epsilon']:.6g} nats: {value}\n"
                    f"bracket of the value at {r['epsilon']:.6g} nats [{g_down(r['delta_lower'])}, {g_up(r['delta_upper'])}]: "
                    f"the lower figure is the blanket bound's own lower value (how tightly the accountant computed "
                    f"the bound), not a lower bound on delta; {r['bracket_note']}"
                    + _floor_text(f, r["epsilon"], r["delta"]))
    else:
        body = (f"target delta = {r['delta']:.6g}: certified epsilon = {g_up(r['epsilon'])} (nats), the safe end of "
                f"its search (the certified delta at this epsilon is <= {r['delta']:.6g}"
                + (f" for the {r['rounds']} rounds composed" if r.get("rounds", 1) > 1 else "") + ")" + _zero_note(r))
        if r.get("composition_route"):
            body += f"\nvalue by {r['composition_route']}"
        sc = r.get("sampler_charge")
        if sc is not None and sc["charge"] >= 0.5 * r["delta"]:
            body += (f"\nsampler's charge: the release sampler's charge {sc['charge']:.3g} makes "
                     f"{sc['charge'] / r['delta']:.0%} of this delta; the smallest certified delta is "
                     + (f"{g_up(sc['smallest_certified_delta'], 4)} at epsilon = {g_up(sc['smallest_at_epsilon'], 3)} nats (the "
                        f"smallest of {sc['values_searched']} values of the search get_epsilon's refusal names: "
                        f"docs/accountant.md §8.3); " if sc.get("smallest_certified_delta") is not None else "")
                     + f"no epsilon certifies less than {_FLOOR_NAME} = {g_down(sc['floor_at_any_epsilon'], 3)}, a lower "
                       "bound below it (docs/sampling.md §4, docs/cli.md §2)")
    full = bool(r.get("notes_in_full"))
    notes = "".join(f"\n  {k:<10}: {text}" for k, text in bmg_field_help(r["adjacency"], full).items())
    more = "" if full else "\n  (notes shortened: --explain prints them in full)"
    if full:  # and what the answer's figures mean, in plain words (the notes of sharpdp mean --explain)
        from sharpdp.cli import plain_notes

        more = "\n" + "\n".join(plain_notes(("epsilon", "delta", *(("bracket",) if "delta_upper" in r else ()),
                                               "adjacency")))
    return wrap_text(head + "\n" + body + _sampler_text(r) + neighbours_text(r) + notes + more)
