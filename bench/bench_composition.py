"""Benchmarks of certified multi-round composition, dp_accounting side by side.

Two ways to run it:

* ``python bench/bench_composition.py [--rounds private,heavy] [--points 300] [--ks 1,10,100,1000]``
  prints one table per round (CPU seconds, ``time.process_time``, and the load average; caches
  cleared before each build): (1) a privacy profile of ``--points`` eps (one sweep,
  ``privacy_profile``) against the same number of independent ``get_delta`` calls (a fresh
  accountant each); (2) the default export (``export_interval`` + ``dominating_pair`` = ``to_pld``)
  with its number of certified values and their summed accountant time, i.e. what the same values
  cost as independent calls; (3) dp_accounting's own PLD of a Gaussian mechanism of the same
  delta(eps) scale on the same lattice (what "fast" means to its users); (4) k-fold composition
  (k in ``--ks``) of the exported pair by sharpdp's certified ``ComposedAccountant`` and by
  dp_accounting's ``self_compose`` at the eps where dp_accounting's delta is 1e-6: both deltas,
  their ratio and the times; (4b) the same with each route's default lattice (``ComposedAccountant``'s default step
  is the export's since session 33, so both routes compose one pair, built once: docs/composition.md §4.6; before,
  ``auto_interval``, a second pair): epsilon at delta = 1e-6 and delta at dp_accounting's eps
  (docs/composition.md §4.5); (4c) ``ShufflePLDAccountant()`` with every default (its step picked at the query,
  docs/composition.md §4.8) composing the round k times: its step, epsilon at 1e-6 against the native one, CPU s, and
  the number of builds of the round's pair in the whole table (one per round per process: docs/composition.md §2.3,
  §4.7); (5) with ``--calibrate 2,5,10``: ``calibrate_bmg_report(..., rounds=K)`` at
  the flights table's shape (what ``sharpdp mean --rounds K`` spends; epsilons from ``--calibrate-eps``, e.g.
  0.01,0.1,1,2,4); (6) with ``--cli 2,3,5,10``: ``python -m sharpdp mean --rounds K --epsilon E`` itself, a
  fresh process per cell (wall, CPU, candidates); (7) with ``--account 2,10,100``: ``python -m sharpdp account
  --rounds K`` of each round of ``--rounds`` at ``--account-delta`` (default 1e-6), a fresh process per cell (wall,
  CPU, the composed epsilon it prints). Rounds: ``private`` = BMG(0.95, 4.6), n = 1e4 (eps ~ 5e-4 at delta =
  1e-6); ``heavy`` = the BMG calibrate_bmg picks at n = 1e5, eps = 1, delta = 1e-6 (slow: minutes).
* ``python -m pytest bench/bench_composition.py --benchmark-only -s`` (pytest-benchmark): one
  BMG(0.95, 4.6) round at n = 1e6 (zero-out), its dominating pair built once from the certified
  profile (cost reported in extra_info), then k rounds composed by ``ComposedAccountant``
  (certified) and by dp_accounting's PLD self-composition of the same pair (uncertified floats).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, ComposedAccountant, ShuffleAccountant, clear_caches, dominating_pair

dpa = pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import pld_from_pair  # noqa: E402

DX = 1e-6  # lattice step (nats): the round's delta falls from 4.5e-6 to 1e-18 within ~1e-4 nats
_STATE: dict = {}


def state():
    if not _STATE:
        acc = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**6)
        t = time.perf_counter()
        pair = dominating_pair(acc, DX, max_evaluations=80)
        _STATE.update(acc=acc, pair=pair, pair_seconds=time.perf_counter() - t,
                      pld=pld_from_pair(pair))
    return _STATE


def eps_for(k: int) -> float:
    return 3e-5 * math.sqrt(k)


@pytest.mark.parametrize("k", [2, 10, 100])
def test_sharpdp_composed(benchmark, k):
    s = state()
    ca = ComposedAccountant([(s["acc"], k)], DX)
    ca._pairs = [s["pair"]]  # the pair built once (the same object dominating_pair returns)
    eps = eps_for(k)
    benchmark.group = f"compose k={k} BMG n=1e6"
    up = benchmark.pedantic(ca.get_delta, args=(eps,), rounds=3, iterations=1)
    ref = float(s["pld"].self_compose(k).get_delta_for_epsilon(eps))
    benchmark.extra_info.update(eps=eps, delta=up, dp_accounting=ref, rel_diff=up / ref - 1,
                                pair_seconds=s["pair_seconds"], samples=int(s["pair"].sample_epsilons.size))
    assert abs(up / ref - 1) <= 0.01


@pytest.mark.parametrize("k", [2, 10, 100])
def test_dp_accounting_composed(benchmark, k):
    s = state()
    eps = eps_for(k)
    benchmark.group = f"compose k={k} BMG n=1e6"

    def run():
        return float(s["pld"].self_compose(k).get_delta_for_epsilon(eps))

    d = benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info.update(eps=eps, delta=d)


def test_dp_accounting_gaussian_reference(benchmark):
    """dp_accounting's own 100-fold Gaussian composition at the same lattice, for scale."""
    benchmark.group = "compose k=100 BMG n=1e6"

    def run():
        acc = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_SPECIAL, 1e-4)
        acc.compose(dpa.GaussianDpEvent(30.0), 100)
        return acc.get_delta(0.3)

    benchmark.pedantic(run, rounds=3, iterations=1)


def test_pair_of_a_heavy_tailed_round(benchmark):
    """Building one dominating pair for a heavy-tailed BMG round: the BMG calibrate_bmg picks at
    n = 1e4, eps = 1, delta = 1e-6 (gamma = 0.0463, sigma0 = 0.758), zero-out, Delta = 1e-4,
    accountant rel_tol 1e-2. Records the number of certified profile values and the CPU time."""
    benchmark.group = "dominating pair, heavy-tailed BMG n=1e4"

    def run():
        clear_caches()  # measure a build, not the process-wide cache (docs/composition.md §2.3)
        acc = ShuffleAccountant(BlanketMixedGaussian(0.0462579752243591, 0.7578495751181393, 1), 10**4)
        calls = [0]
        inner = acc.get_delta_bounds

        def counted(eps):
            calls[0] += int(np.size(eps))
            return inner(eps)

        acc.get_delta_bounds = counted
        t = time.process_time()
        pair = dominating_pair(acc, 1e-4, progress=False)
        return acc, pair, calls[0], time.process_time() - t

    acc, pair, calls, cpu = benchmark.pedantic(run, rounds=1, iterations=1)
    eps = np.linspace(-0.5, 3.6, 42)
    up = acc.privacy_profile(eps)
    ratio = pair.get_delta(eps) / up
    sel = up >= 1e-12
    benchmark.extra_info.update(profile_values=calls, cpu_seconds=cpu, max_ratio_to_get_delta=float(ratio[sel].max()))
    assert np.all(ratio >= 1.0) and calls <= 400


def test_pair_of_a_second_accountant_is_cached(benchmark):
    """One build per round per process: a new accountant of the same round (as dp_accounting's
    calibration loops create) gets the pair from the shared cache (docs/composition.md §2.3)."""
    s = state()  # the first build (pair_seconds)
    benchmark.group = "pair of a second accountant, same round"

    def again():
        return dominating_pair(ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**6), DX, max_evaluations=80)

    pair = benchmark.pedantic(again, rounds=3, iterations=1)
    benchmark.extra_info.update(first_build_seconds=s["pair_seconds"])
    assert pair is s["pair"]


# ------------------------------------------------------------------------------------------ script

ROUNDS = {
    "private": ((0.95, 4.6), 10**4),
    "heavy": ((0.04089409561900239, 0.5960134902126553), 10**5),  # calibrate_bmg(1e5, 1, 1e-6, 1)
}


def _cpu(fn, *args, **kw):
    t = time.process_time()
    out = fn(*args, **kw)
    return out, time.process_time() - t


def _round(name: str, points: int, ks: list[int]) -> list[str]:
    import sharpdp.shuffle as sh
    from sharpdp.interop.dp_accounting import export_interval, pld_from_pair
    from sharpdp.shuffle.profile import doubling_epsilon

    (gamma, sigma0), n = ROUNDS[name]
    make = lambda: sh.ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, 1), n)  # noqa: E731
    rows = [f"round {name}: BMG({gamma:.6g}, {sigma0:.6g}), n = {n}, zero-out, accountant rel_tol 1e-2"]
    builds = _count_builds()

    # (1) profile sweep vs independent calls, on [0, eps at delta = 1e-12]
    clear_caches()
    e12 = doubling_epsilon(make(), 1e-12)
    grid = np.linspace(0.0, e12, points)
    clear_caches()
    prof, t_prof = _cpu(make().privacy_profile, grid)
    t_ind = 0.0
    clear_caches()  # (the independent calls must not reuse the sweep's process-wide caches: docs/composition.md §2.3)
    for e in grid.tolist():
        v, t = _cpu(make().get_delta, e)
        t_ind += t
    rows.append(f"  profile, {points} eps in [0, {e12:.4g}]: one sweep {t_prof:.2f} s CPU; {points} independent "
                f"get_delta {t_ind:.2f} s ({t_ind / points * 1e3:.0f} ms each)")

    # (2) the default export: lattice step + pair, its values and their summed accountant time
    clear_caches()
    acc = make()
    spent = [0.0, 0]
    inner = acc._report  # (both report and the upper-first values of get_delta_bounds(lower=False) go through it)

    def timed(*a, **kw):
        r, t = _cpu(inner, *a, **kw)
        spent[0] += t
        spent[1] += 1
        return r

    acc._report = timed
    dx, t_dx = _cpu(export_interval, acc)
    pair, t_pair = _cpu(dominating_pair, acc, dx, progress=False)
    pld, t_pld = _cpu(pld_from_pair, pair)
    rows.append(f"  export (to_pld): export_interval {t_dx:.2f} s + pair {t_pair:.2f} s + PLD {t_pld:.3f} s CPU; "
                f"Delta = {dx:.4g}; {spent[1]} certified values costing {spent[0]:.2f} s as accountant calls")

    # (3) dp_accounting's PLD of a Gaussian mechanism with delta(eps) on the same scale and lattice
    sigma = 1.0 / max(e12, 1e-300) * 7.0  # delta(eps) ~ 1e-12 near e12 for sensitivity 1
    g_pld, t_g = _cpu(dpa.pld.privacy_loss_distribution.from_gaussian_mechanism, sigma,
                      value_discretization_interval=dx)
    _, t_gd = _cpu(lambda: [g_pld.get_delta_for_epsilon(float(e)) for e in grid])
    rows.append(f"  dp_accounting Gaussian PLD (sigma {sigma:.4g}, same Delta): build {t_g:.3f} s + "
                f"{points} get_delta_for_epsilon {t_gd:.3f} s CPU")

    # (4) k-fold composition, native (certified) vs dp_accounting, at dp_accounting's eps for 1e-6
    for k in ks:
        comp, t_dk = _cpu(pld.self_compose, k)
        eps = float(comp.get_epsilon_for_delta(1e-6))
        d_ref = float(comp.get_delta_for_epsilon(eps))
        ca = ComposedAccountant([(acc, k)], dx, progress=False)
        up, t_nk = _cpu(ca.get_delta, eps)
        rows.append(f"  k = {k:5d}: eps = {eps:.6g}; sharpdp {up:.9g} ({t_nk:.2f} s), dp_accounting "
                    f"{d_ref:.9g} ({t_dk:.2f} s); sharpdp / dp_accounting - 1 = {up / d_ref - 1:.2e}")

    # (4b) as a user meets them: ComposedAccountant on its own default lattice (the export's step since session 33:
    # the same pair, docs/composition.md §4.6) against the default export, epsilon at delta = 1e-6 and delta at
    # dp_accounting's eps (docs/composition.md §4.5)
    ca1 = ComposedAccountant([(acc, 1)], progress=False)
    p2, t_p2 = _cpu(ca1.pairs)
    rows.append(f"  defaults: ComposedAccountant's step {ca1.value_discretization_interval:.4g} (its pair {t_p2:.2f} s "
                f"CPU{', the export pair itself' if p2[0] is pair else ', a second pair'}) against the export's "
                f"{dx:.4g}")
    for k in ks:
        comp = pld.self_compose(k)
        eps = float(comp.get_epsilon_for_delta(1e-6))
        ca = ComposedAccountant([(acc, k)], progress=False)
        e_nat, t_e = _cpu(ca.get_epsilon, 1e-6)
        d_nat = float(ca.get_delta(eps))
        rows.append(f"  k = {k:5d}, defaults: eps at 1e-6 sharpdp {e_nat:.6g} ({t_e:.2f} s) / dp_accounting {eps:.6g} "
                    f"- 1 = {e_nat / eps - 1:.2e}; delta at that eps: sharpdp / dp_accounting - 1 = "
                    f"{d_nat / float(comp.get_delta_for_epsilon(eps)) - 1:.2e}")

    # (4c) dp_accounting's accountant with shuffled rounds, every default (docs/composition.md §4.7-§4.8)
    from sharpdp.interop.dp_accounting import ShufflePLDAccountant, ShuffledRoundEvent

    before = len(builds)
    for k in ks:
        spa = ShufflePLDAccountant(progress=False)
        spa.compose(ShuffledRoundEvent(BlanketMixedGaussian(gamma, sigma0, 1), n), k)
        e_spa, t_spa = _cpu(spa.get_epsilon, 1e-6)
        e_nat = ComposedAccountant([(acc, k)], progress=False).get_epsilon(1e-6, xtol=1e-6)
        step = getattr(spa, "value_discretization_interval", spa._value_discretization_interval)  # (before §4.8)
        rows.append(f"  k = {k:5d}, ShufflePLDAccountant(): step {step:.4g}, eps at 1e-6 "
                    f"{e_spa:.6g} ({t_spa:.2f} s CPU with its compose) / native {e_nat:.6g} - 1 = "
                    f"{e_spa / e_nat - 1:.2e}; new builds {len(builds) - before}")
    rows.append(f"  builds of the round's pair in this table: {len(builds)} (after each clear_caches above)")
    _count_builds(stop=True)
    return rows


def _count_builds(stop: bool = False) -> list:
    """Count the constructions of dominating pairs (``profile._build``, the cache's miss path) from now on; ``stop``:
    restore it."""
    from sharpdp.shuffle import profile

    real = _STATE.pop("real_build", None)
    if real is not None:
        profile._build = real
    if stop:
        return []
    seen: list = []
    real = _STATE["real_build"] = profile._build

    def counting(accountant, *a, **kw):
        seen.append(profile.round_key(accountant))
        return real(accountant, *a, **kw)

    profile._build = counting
    return seen


def _calibration_rows(ks: list[int], epsilons: list[float]) -> list[str]:
    """``sharpdp mean --rounds K``'s calibration on the default data's shape (n = 327 346, d = 4, delta = 1e-6,
    zero-out) at each epsilon: CPU s, candidates and certified profile values (load-independent), the
    certified composed delta (docs/composition.md §4.1-§4.2)."""
    from sharpdp.shuffle import calibrate_bmg_report

    rows = ["k-round calibration (n = 327346, d = 4, delta = 1e-6, zero-out; docs/composition.md §4.1-§4.2)"]
    for eps in epsilons:
        for k in ks:
            clear_caches()
            calls = [0]
            orig = ShuffleAccountant.get_delta_bounds

            def counted(self, epsilon, *a, **kw):
                calls[0] += int(np.size(epsilon))
                return orig(self, epsilon, *a, **kw)

            ShuffleAccountant.get_delta_bounds = counted
            try:
                rep, t = _cpu(calibrate_bmg_report, 327346, eps, 1e-6, 4, rounds=k, progress=False)
            finally:
                ShuffleAccountant.get_delta_bounds = orig
            b = rep.randomizer
            rows.append(f"  eps = {eps:g}, K = {k:3d}: {t:.2f} s CPU, {rep.composed_certifications} candidate(s), "
                        f"{calls[0]} certified values; BMG({b.gamma:.6g}, {b.sigma0:.6g}); certified composed "
                        f"delta {rep.delta_bounds[1]:.6g} (reference lower {rep.delta_bounds[0]:.6g})")
    return rows


def _cli_rows(ks: list[int], epsilons: list[float]) -> list[str]:
    """``python -m sharpdp mean --rounds K --epsilon E --seed 1`` in a fresh process per cell (what a user
    waits for: imports, the table, the calibration, the release): wall and CPU s (the child's user + sys),
    the load average before the cell, and the candidates the output reports (load-independent)."""
    import os
    import re
    import resource
    import subprocess
    import sys

    rows = ["sharpdp mean --rounds K --epsilon E (default data; fresh process per cell)"]
    for eps in epsilons:
        for k in ks:
            load = os.getloadavg()[0]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            r = subprocess.run([sys.executable, "-m", "sharpdp", "mean", "--rounds", str(k), "--epsilon", str(eps),
                                "--seed", "1"], capture_output=True, text=True)
            wall = time.monotonic() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            cands = re.search(r"search +: (\d+) candidate", r.stdout)
            cert = re.search(r"certified delta = ([0-9.e+-]+)", r.stdout)
            rows.append(f"  eps = {eps:g}, K = {k:3d}: wall {wall:.1f} s, CPU {cpu:.1f} s (load {load:.1f}); "
                        f"{cands.group(1) if cands else '?'} candidate(s); certified delta "
                        f"{cert.group(1) if cert else '?'}" + ("" if r.returncode == 0 else f"; exit {r.returncode}"))
    return rows


def _account_rows(names: list[str], ks: list[int], delta: float) -> list[str]:
    """``python -m sharpdp account --gamma G --sigma0 S --n N --rounds K --delta D --json`` in a fresh process per
    cell (imports, the round's pair, the certified composition): wall and CPU s (the child's user + sys), the load
    average before the cell, and the certified composed epsilon it prints."""
    import json
    import os
    import resource
    import subprocess
    import sys

    rows = [f"sharpdp account --rounds K --delta {delta:g} (fresh process per cell)"]
    for name in names:
        (gamma, sigma0), n = ROUNDS[name]
        for k in ks:
            load = os.getloadavg()[0]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            r = subprocess.run([sys.executable, "-m", "sharpdp", "account", "--gamma", repr(gamma), "--sigma0",
                                repr(sigma0), "--n", str(n), "--rounds", str(k), "--delta", repr(delta), "--json"],
                               capture_output=True, text=True)
            wall = time.monotonic() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            try:
                out = json.loads(r.stdout)
                eps = out.get("epsilon", "?")
            except ValueError:
                eps = "?"
            rows.append(f"  {name}, K = {k:4d}: wall {wall:.1f} s, CPU {cpu:.1f} s (load {load:.1f}); epsilon {eps}"
                        + ("" if r.returncode == 0 else f"; exit {r.returncode}: {r.stderr.strip()[-200:]}"))
    return rows


def main(argv=None) -> None:
    import argparse
    import os

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", default="private", help="comma-separated: private, heavy")
    ap.add_argument("--points", type=int, default=300)
    ap.add_argument("--ks", default="1,10,100,1000")
    ap.add_argument("--calibrate", default="", help="comma-separated K: rows of calibrate_bmg_report(..., rounds=K) at "
                                                    "the flights table's shape (e.g. 2,5,10)")
    ap.add_argument("--calibrate-eps", default="0.01", help="comma-separated epsilons for --calibrate and --cli")
    ap.add_argument("--cli", default="", help="comma-separated K: `sharpdp mean --rounds K --epsilon E` in fresh "
                                              "processes (wall, CPU, candidates), E from --calibrate-eps")
    ap.add_argument("--account", default="", help="comma-separated K: `sharpdp account --rounds K` of each round of "
                                                  "--rounds in fresh processes (wall, CPU, the composed epsilon)")
    ap.add_argument("--account-delta", type=float, default=1e-6)
    ap.add_argument("--skip-tables", action="store_true", help="only the --calibrate, --cli and --account rows")
    a = ap.parse_args(argv)
    ks = [int(x) for x in a.ks.split(",") if x]
    print(f"load average {os.getloadavg()}; CPU seconds (process_time)", flush=True)
    names = [x.strip() for x in a.rounds.split(",") if x.strip()]  # (--rounds "": none)
    for name in [] if a.skip_tables else names:
        for row in _round(name, a.points, ks):
            print(row, flush=True)
    epsilons = [float(x) for x in a.calibrate_eps.split(",") if x]
    if a.calibrate:
        for row in _calibration_rows([int(x) for x in a.calibrate.split(",") if x], epsilons):
            print(row, flush=True)
    if a.cli:
        for row in _cli_rows([int(x) for x in a.cli.split(",") if x], epsilons):
            print(row, flush=True)
    if a.account:
        for row in _account_rows(names, [int(x) for x in a.account.split(",") if x], a.account_delta):
            print(row, flush=True)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
