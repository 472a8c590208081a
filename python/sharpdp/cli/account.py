"""`sharpdp account`: certified delta(epsilon) or epsilon(delta) of a shuffled BMG randomizer."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "account", parents=[parent],
        help="certified delta for an epsilon (or epsilon for a delta) of a shuffled BMG at n users",
        description=(
            "Certified privacy profile of n shuffled messages of the blanket-mixed Gaussian "
            "randomizer (gamma, sigma0) (seed 001). With --epsilon: the certified upper delta and "
            "the accountant's [lower, upper] bracket. With --delta: the smallest certified epsilon "
            "(safe end of its bracket). gamma = 0 is the Gaussian randomizer."))
    p.add_argument("--gamma", type=float, required=True, help="blanket mass in [0, 1)")
    p.add_argument("--sigma0", type=float, required=True, help="Gaussian scale > 0")
    p.add_argument("--n", type=int, required=True, help="number of users >= 1")
    p.add_argument("--dim", type=int, default=1, help="dimension d >= 1 (default 1)")
    from sharpdp.shuffle.adjacency import ADJACENCIES, DEFAULT_ADJACENCY

    p.add_argument("--adjacency", choices=ADJACENCIES, default=DEFAULT_ADJACENCY,
                   help="neighbouring relation (default zero_out); replace with gamma = 0 is bounded "
                        "through bot (weak triangle inequality, looser)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--epsilon", type=float, help="epsilon >= 0 (nats): report the certified delta")
    target.add_argument("--delta", type=float, help="delta in (0, 1): report the certified epsilon")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from sharpdp import _validation as V
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer

    n = V.integer("--n", args.n, lo=1)
    gamma = V.real("--gamma", args.gamma, lo=0.0, hi=1.0, hi_open=True)
    sigma0 = V.real("--sigma0", args.sigma0, lo=0.0, lo_open=True)
    dim = V.integer("--dim", args.dim, lo=1)
    eps = None if args.epsilon is None else V.real("--epsilon", args.epsilon, lo=0.0)
    delta = None if args.delta is None else V.probability_open("--delta", args.delta)
    rnd = GaussianRandomizer(sigma0, dim) if gamma == 0.0 else BlanketMixedGaussian(gamma, sigma0, dim)
    from sharpdp.shuffle.accountant import ShuffleAccountant

    from sharpdp.cli import CliError

    try:
        acc = ShuffleAccountant(rnd, n, adjacency=args.adjacency)
    except NotImplementedError as exc:
        raise CliError(f"--adjacency: {exc}") from None
    out: dict[str, Any] = {
        "randomizer": {"gamma": gamma, "sigma0": sigma0, "dim": dim, "chi_lo": rnd.chi_lo,
                       "mse_single": rnd.mse_single},
        "n": n,
        "adjacency": args.adjacency,
    }
    if eps is not None:
        lo, up = acc.get_delta_bounds(eps)  # get_delta(eps) is the upper end
        out.update(epsilon=eps, delta=float(up), delta_lower=float(lo), delta_upper=float(up))
    else:
        out.update(delta=delta, epsilon=float(acc.get_epsilon(float(delta))))  # type: ignore[arg-type]
    return out


def format_text(r: dict[str, Any]) -> str:
    rd = r["randomizer"]
    head = (f"BMG gamma = {rd['gamma']:.6g}, sigma0 = {rd['sigma0']:.6g}, dim = {rd['dim']} "
            f"(chi_lo = {rd['chi_lo']:.6g}, Err_1 = {rd['mse_single']:.6g}); n = {r['n']}, {r['adjacency']} adjacency")
    if "delta_upper" in r:
        body = (f"epsilon = {r['epsilon']:.6g}: certified delta = {r['delta']:.6g} "
                f"(accountant bracket [{r['delta_lower']:.6g}, {r['delta_upper']:.6g}])")
    else:
        body = f"delta = {r['delta']:.6g}: certified epsilon = {r['epsilon']:.6g} (nats)"
    return head + "\n" + body
