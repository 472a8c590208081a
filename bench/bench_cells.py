"""Microbenchmark of LognormalLaw.cells: the compiled kernel (cpp/kernels/lognormal_cells.hpp, the library's
path) against the numpy reference it replaced (tests/_lognormal_cells_reference.py), side by side.

``python bench/bench_cells.py [--ks 1000,10000,100000] [--repeat 5]`` prints, per grid size K, the best CPU
time (``time.process_time``) of one ``cells`` call of each, on a heavy-tailed BMG replace law (two terms) and a
zero-out law (one term), grids spanning the laws' bodies (mostly narrow cells at large K), and the load
average. ``--pair`` times instead the heavy round's dominating pair alone (bench/bench_composition.py's
``heavy`` round: export_interval, then dominating_pair; CPU seconds, caches cleared, the one-time imports of
sharpdp.interop.dp_accounting done before the timed or counted region), ``--profile`` its
``privacy_profile`` on 300 points of [0, 5] (a fresh accountant); with ``--instr`` each of them is counted instead
in a fresh process under callgrind (instructions, load-proof: bench/_instr.py), e.g.
``python bench/bench_cells.py --pair --profile --instr``. ``--power`` times instead the power step's accurate DFT (one
``power`` call of the compiled core on three synthetic windows, best of ``--repeat``).

``--cells`` measures the profile / pair goals of docs/embedding.md §3.2 (300-point ``privacy_profile`` <= 1 s, or
<= 10x one ``get_delta_bounds``; export + pair <= 2 s) across cells of the regime map (bench/bench_regimes.py's
families, n = 1e2 .. 1e8, zero-out and replace adjacency; ``--families``, ``--ns``, ``--timeout`` CPU s per call).
Per cell three fresh interpreters (imports not charged; CPU held to ``--timeout`` by bench_regimes' watchdog):
(1) ``export_interval`` then ``dominating_pair`` (the ``to_pld`` path): CPU, certified values, its samples' range;
(2) ``privacy_profile`` on 300 points of [0, e_top], e_top the pair's first sample eps with delta <= 1e-13 (the
range the pair resolves: its refinement floor, docs/composition.md §2.2; or its last sample); (3) one ``get_delta_bounds`` at e_ref, the first
sample eps with delta <= 1e-6; with ``--after-pair`` (4) the same profile on a new accountant after the export and
pair in one interpreter (only the profile timed: chords between the round's cached values, docs/composition.md
§2.24). E.g. ``python bench/bench_cells.py --cells --timeout 60``.
``--joint 400,4096,512`` prints docs/composition.md §2.30.3's two-dimensional prototype (an estimate: float sums
without round-off or aliasing bounds) against the accountant's 300-point profile of 10-RR (eps0 = 4), n = 1e6.
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import sys
import time

import numpy as np

from sharpdp.shuffle.laws import LognormalLaw

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from _lognormal_cells_reference import cells_reference  # noqa: E402

LAWS = {
    "two-term (replace, r=1.3)": LognormalLaw(0.4, 0.9, 1.3, weight=2.0, b_minus=-0.7),
    "one-term (zero-out, r=2.5)": LognormalLaw(-0.2, 1.5, 2.5, z_lo=-4.0),
}


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def cells_table(ks, repeat):
    rows = [f"load average {os.getloadavg()[0]:.2f}; best of {repeat} CPU seconds per call"]
    rows.append(f"{'law':28s} {'K':>8s} {'numpy ref':>11s} {'C++':>11s} {'speed-up':>9s}")
    for name, law in LAWS.items():
        lo = law.a - 3.0 * law.std()
        for K in ks:
            h = 8.0 * law.std() / K

            def lib(law=law, lo=lo, h=h, K=K):
                law._cells_memo = None  # (a fresh grid each time: the per-call memo not measured)
                law.cells(lo, h, K)

            t_ref = _best(lambda law=law, lo=lo, h=h, K=K: cells_reference(law, lo, h, K), repeat)
            t_cpp = _best(lib, repeat)
            rows.append(f"{name:28s} {K:8d} {t_ref:11.5f} {t_cpp:11.5f} {t_ref / t_cpp:8.1f}x")
    return rows


def _heavy_accountant():
    from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches

    clear_caches()
    return ShuffleAccountant(BlanketMixedGaussian(0.04089409561900239, 0.5960134902126553, 1), 10**5)


def _pair_api():
    """(export_interval, dominating_pair), imported before any timed or counted region: the first import of
    sharpdp.interop.dp_accounting loads dp_accounting and scipy.signal (~0.6 s CPU, once per process), which is
    not the pair's work."""
    from sharpdp.interop.dp_accounting import export_interval
    from sharpdp.shuffle import dominating_pair

    return export_interval, dominating_pair


def _export_and_pair(acc) -> float:
    """export_interval then dominating_pair; returns export_interval's CPU seconds (imports done beforehand:
    :func:`_pair_api`)."""
    export_interval, dominating_pair = _pair_api()
    t = time.process_time()
    dx = export_interval(acc)
    t_dx = time.process_time() - t
    dominating_pair(acc, dx, progress=False)
    return t_dx


def _profile(acc) -> None:
    acc.privacy_profile(np.linspace(0.0, 5.0, 300))


def heavy_pair():
    acc = _heavy_accountant()
    _pair_api()
    t = time.process_time()
    t_dx = _export_and_pair(acc)
    total = time.process_time() - t
    return [f"load average {os.getloadavg()[0]:.2f}; heavy round pair: export_interval {t_dx:.2f} s + "
            f"dominating_pair {total - t_dx:.2f} s CPU"]


def heavy_profile():
    acc = _heavy_accountant()
    t = time.process_time()
    _profile(acc)
    return [f"load average {os.getloadavg()[0]:.2f}; heavy round privacy_profile (300 points of [0, 5]): "
            f"{time.process_time() - t:.2f} s CPU"]


def _instr_worker(what: str) -> None:
    """Counted child (under callgrind): the call alone between the counters' start and dump."""
    import _instr

    acc = _heavy_accountant()
    if what == "pair":
        _pair_api()
    region = _instr.Region()
    region.start()
    _export_and_pair(acc) if what == "pair" else _profile(acc)
    region.dump(what)


def heavy_instr(whats):
    import _instr

    rows = []
    for what in whats:
        got, _ = _instr.count([sys.executable, __file__, "--instr-worker", what])
        label = "export + pair" if what == "pair" else "300-point profile"
        rows.append(f"heavy round {label}: {got[what] / 1e9:.2f} G instructions (callgrind)")
    return rows


# ----------------------------------------------------------------------------- the goals across regime cells
CELL_NS = (10**2, 10**4, 10**6, 10**8)
CELL_FAMILIES = "bmg,gauss,krr,privunit"
CELL_POINTS = 300
CELL_TOP_DELTA = 1e-13  # the profile's range ends at the pair's first sample at or below it (its refinement floor)


def _cell_specs(families, ns):
    """(label, spec, n, adjacency) of the cells: bench_regimes' randomizer specs; the BMG is the one
    ``calibrate_bmg(n, 1, 1e-6)`` picks (computed here, not timed); replace-one for the Gaussian randomizer goes
    through bot (docs/accountant.md §9; n <= 1e4 here: its legs cost tens of seconds per value at n >= 1e6)."""
    from sharpdp.shuffle import calibrate_bmg

    out = []
    for n in ns:
        if "bmg" in families:
            b = calibrate_bmg(n, 1.0, 1e-6, 1, progress=False)
            spec = {"kind": "bmg", "gamma": b.gamma, "sigma0": b.sigma0}
            for adj in ("zero_out", "replace"):
                out.append((f"BMG({b.gamma:.3g}, {b.sigma0:.3g}) cal. eps=1", spec, n, adj))
        if "gauss" in families:
            for adj in ("zero_out", "replace") if n <= 10**4 else ("zero_out",):
                out.append(("Gaussian s0=1", {"kind": "gaussian", "sigma0": 1.0}, n, adj))
        if "krr" in families:
            for adj in ("zero_out", "replace"):
                out.append(("RR k=2 eps0=1", {"kind": "krr", "k": 2, "eps0": 1.0}, n, adj))
            out.append(("RR k=10 eps0=4", {"kind": "krr", "k": 10, "eps0": 4.0}, n, "replace"))
        if "privunit" in families:
            out.append(("PrivUnit(0.75, 0.2, 10)", {"kind": "privunit", "params": [0.75, 0.2, 10]}, n, "replace"))
    return out


def _cell_worker(task_json: str) -> None:
    """One timed call of a cell in this fresh interpreter: prints READY (the watchdog's CPU budget starts there),
    then one JSON line."""
    import json

    import bench_regimes as R
    from sharpdp.shuffle import ShuffleAccountant, clear_caches

    task = json.loads(task_json)
    export_interval, dominating_pair = _pair_api()
    acc = ShuffleAccountant(R._randomizer(task["spec"]), task["n"], task["adjacency"])
    clear_caches()
    print(f"{R._READY}{time.process_time()!r}", flush=True)
    out = {}
    t = time.process_time()
    if task["call"] == "pair":
        dx = export_interval(acc)
        pair = dominating_pair(acc, dx, progress=False)
        se, sd = pair.sample_epsilons, pair.sample_deltas
        first = [np.nonzero(sd <= x)[0] for x in (1e-6, CELL_TOP_DELTA)]
        out.update(values=int(se.size), dx=float(dx), **{k: float(se[i[0]]) if i.size else float(se[-1])
                                                         for k, i in zip(("e_ref", "e_top"), first)})
    elif task["call"] == "profile":
        acc.privacy_profile(np.linspace(0.0, task["e_top"], CELL_POINTS))
    elif task["call"] == "after":  # the profile after the round's pair in one process (docs/composition.md §2.24)
        dominating_pair(acc, export_interval(acc), progress=False)
        fresh = ShuffleAccountant(R._randomizer(task["spec"]), task["n"], task["adjacency"])
        t = time.process_time()
        fresh.privacy_profile(np.linspace(0.0, task["e_top"], CELL_POINTS))
    else:
        lo, up = acc.get_delta_bounds(task["e_ref"])
        out.update(lower=float(lo), upper=float(up))
    out["cpu"] = time.process_time() - t
    print(json.dumps(out), flush=True)


def _cell_call(task: dict, timeout: float) -> dict:
    """``task`` in a fresh interpreter under bench_regimes' CPU watchdog ({"timeout": True} past ``timeout``)."""
    import json
    import subprocess
    import tempfile

    import bench_regimes as R

    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--cell-worker", json.dumps(task)],
                             stdout=subprocess.PIPE, stderr=err)
        data, wall = R._watch(p.pid, p.stdout.fileno(), timeout, None)
        p.stdout.close()
        code = p.wait()
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if wall or code != 0:
        return {"timeout": True} if wall or code == -24 else {"error": (stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(data.decode().strip().splitlines()[-1])


def cells_goal_table(families, ns, timeout, after=False):
    """Markdown rows: per cell the pair's CPU and values, the 300-point profile's CPU, 10x one get_delta_bounds,
    and which goal is missed (printed as each cell finishes); ``after``: one more column, the same profile timed in
    one interpreter after the round's export and pair (chords between its cached values, docs/composition.md §2.24)."""
    def fmt(r):
        return f">{timeout:.0f} s" if r.get("timeout") else f"error ({r['error'][:40]})" if "error" in r else \
            f"{r['cpu']:.2f} s"

    head = ["| cell | n | adjacency | export + pair (values) | 300-point profile on [0, e_top] | 10x get_delta_bounds "
            "(e_ref) | over the goal |" + " profile after the pair |" * after, "|---|---|---|---|---|---|---|" + "---|" * after]
    print(f"load average {os.getloadavg()[0]:.2f} at the start; CPU s per call, fresh interpreters", flush=True)
    print("\n".join(head), flush=True)
    rows = list(head)
    for label, spec, n, adj in _cell_specs(families, ns):
        base = {"spec": spec, "n": n, "adjacency": adj}
        pr = _cell_call(dict(base, call="pair"), timeout)
        e_top, e_ref = pr.get("e_top", 8.0), pr.get("e_ref", 1.0)
        pf = _cell_call(dict(base, call="profile", e_top=e_top), timeout)
        gd = _cell_call(dict(base, call="delta", e_ref=e_ref), timeout)
        ten = 10 * gd["cpu"] if "cpu" in gd else math.inf
        over = []
        if not pf.get("cpu", math.inf) <= max(1.0, ten):
            over.append("profile")
        if not pr.get("cpu", math.inf) <= 2.0:
            over.append("pair")
        vals = f" ({pr['values']})" if "values" in pr else ""
        ref = f"{ten:.2f} s (e_ref {e_ref:.3g})" if "cpu" in gd else fmt(gd)
        row = (f"| {label} | {n:.0e} | {adj} | {fmt(pr)}{vals} | {fmt(pf)} on [0, {e_top:.3g}] | {ref} | "
               f"{', '.join(over) or '-'} |")
        if after:
            row += f" {fmt(_cell_call(dict(base, call='after', e_top=e_top), timeout))} |"
        print(row, flush=True)
        rows.append(row)
    rows.append(f"load average {os.getloadavg()[0]:.2f} at the end")
    print(rows[-1], flush=True)
    return rows


def power_table(repeat):
    """The power step with its accurate DFT (cpp/kernels/accountant.cpp ``power``): best CPU seconds of one call on
    three synthetic transforms (a narrow bulk plus a heavy tail, the shapes of the far-tail treatment's windows at
    n = 1e8, 1e6 and 100), every qualifying frequency recomputed within the engine's budget of 2e7 multiply-adds."""
    from sharpdp._core_loader import core

    rows = [f"load average {os.getloadavg()[0]:.2f}; best of {repeat} CPU seconds per power call"]
    for N, K, n in ((2025000, 442370, 1e8), (291600, 61443, 1e6), (65610, 29560, 100.0)):
        k = np.arange(K + 1)
        g = np.exp(-0.5 * (k * 10 * math.sqrt(n) / N) ** 2) + 1e-6 * (1 + k) ** -1.5
        y = np.bincount(k % N, weights=g / g.sum(), minlength=N)
        z = np.fft.rfft(y)
        rec = core.accountant.power(z, n, 3e-11, N, y, 1e-300, 2e7)[3]
        t = _best(lambda z=z, n=n, N=N, y=y: core.accountant.power(z, n, 3e-11, N, y, 1e-300, 2e7), repeat)
        rows.append(f"N={N:8d} nonzeros={K + 1:7d} n={n:9.0f} recomputed={rec:5d} {t:9.4f} s")
    return rows


# ----------------------------------------------------------------------------- session 47 (docs/composition.md §2.30)
def _krr_joint_profile(eps, n=10**6, k=10, eps0=4.0, h_w=400.0, nd=4096, nw=512):
    """docs/composition.md §2.30.3's prototype (float sums, NO round-off or aliasing bound: an estimate, never a
    certified value): k-RR under replace-one, the joint law of (J, W) (J = users at x1 minus users at x1', exact; W
    hat-rounded to the step ``h_w``, Lemma 2.30) on an nd x nw torus by one inverse 2-D FFT of the per-user
    characteristic function's n-th power, then E[((e^eps0 - 1) J - (e^eps - 1) W)_+] / n at every eps by prefix sums
    along J per W column. Returns (values, CPU s of the law, CPU s of the evaluations)."""
    t0 = time.process_time()
    big = math.exp(eps0)
    g = k / (big + k - 1)
    atoms = [(0, 0, 1.0 - g)]
    for j, w, p in ((1, 1.0, g / k), (-1, big, g / k), (0, 1.0, g * (k - 2) / k)):
        i = math.floor(w / h_w)
        f = w / h_w - i
        atoms += [(j, i, p * (1.0 - f)), (j, i + 1, p * f)]
    shift = int(round(n * sum(p * i for _, i, p in atoms))) - nw // 2
    kd = np.fft.fftfreq(nd) * nd
    kw = np.fft.rfftfreq(nw) * nw
    phi = np.zeros((nd, kw.size), complex)
    for j, i, p in atoms:
        phi += p * np.exp(-2j * np.pi * j * kd / nd)[:, None] * np.exp(-2j * np.pi * i * kw / nw)[None, :]
    law = np.fft.irfft2(phi ** n * np.exp(2j * np.pi * kw * shift / nw)[None, :], s=(nd, nw))
    t1 = time.process_time()
    jv = np.fft.fftfreq(nd) * nd
    order = np.argsort(jv)
    js, ps = jv[order], law[order, :]
    mass = np.cumsum(ps[::-1], axis=0)[::-1]
    first = np.cumsum((ps * js[:, None])[::-1], axis=0)[::-1]
    wv = (np.arange(nw) + shift) * h_w
    out = np.empty(len(eps))
    for t, e in enumerate(eps):
        c = math.expm1(e)
        idx = np.searchsorted(js, c * wv / (big - 1), side="right")
        col = np.nonzero(idx < nd)[0]
        out[t] = ((big - 1) * first[idx[col], col] - c * wv[col] * mass[idx[col], col]).sum() / n
    return out, t1 - t0, time.process_time() - t1


def joint_table(h_w, nd, nw):
    """§2.30.3's rows: the prototype against the accountant's certified 300-point profile of 10-RR (eps0 = 4),
    n = 1e6, replace, on [0, 0.0611] (bench_cells' e_top), both in this process."""
    import bench_regimes as R
    from sharpdp.shuffle import ShuffleAccountant, clear_caches

    eps = np.linspace(0.0, 0.0611, CELL_POINTS)
    joint, t_law, t_eval = _krr_joint_profile(eps, h_w=h_w, nd=nd, nw=nw)
    acc = ShuffleAccountant(R._randomizer({"kind": "krr", "k": 10, "eps0": 4.0}), 10**6, "replace")
    clear_caches()
    t = time.process_time()
    up = np.asarray(acc.privacy_profile(eps), dtype=float)
    t_acc = time.process_time() - t
    rows = [f"joint law h_W = {h_w:g}, {nd} x {nw}: law {t_law:.2f} s, 300 eps {t_eval:.2f} s; accountant {t_acc:.2f} s",
            "| eps | accountant (certified) | joint (estimate) | joint / accountant |", "|---|---|---|---|"]
    for i in range(0, CELL_POINTS, 25):
        rows.append(f"| {eps[i]:.4g} | {up[i]:.6e} | {joint[i]:.6e} | {joint[i] / up[i]:.6f} |" if up[i] > 0 else
                    f"| {eps[i]:.4g} | 0 | {joint[i]:.3e} | - |")
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--pair", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--instr", action="store_true", help="with --pair / --profile: callgrind instruction counts")
    ap.add_argument("--power", action="store_true", help="the power step's accurate DFT instead (best of --repeat)")
    ap.add_argument("--cells", action="store_true", help="the profile / pair goals across regime cells")
    ap.add_argument("--families", default=CELL_FAMILIES)
    ap.add_argument("--ns", default=",".join(f"{n:.0e}" for n in CELL_NS))
    ap.add_argument("--timeout", type=float, default=60.0, help="--cells: CPU seconds per call")
    ap.add_argument("--after-pair", action="store_true", help="--cells: also the profile after the pair, one process")
    ap.add_argument("--joint", default=None, help="h_W,ND,NW: docs/composition.md §2.30.3's 2-D prototype (estimate)")
    a = ap.parse_args(argv)
    if a.joint:
        h_w, nd, nw = a.joint.split(",")
        print("\n".join(joint_table(float(h_w), int(nd), int(nw))))
        return
    if a.cells:
        cells_goal_table(a.families.split(","), [int(float(x)) for x in a.ns.split(",")], a.timeout, a.after_pair)
        return
    whats = [w for w, on in (("pair", a.pair), ("profile", a.profile)) if on]
    if a.power:
        rows = power_table(a.repeat)
    elif a.instr and whats:
        rows = heavy_instr(whats)
    elif whats:
        rows = [r for w in whats for r in (heavy_pair() if w == "pair" else heavy_profile())]
    else:
        rows = cells_table([int(k) for k in a.ks.split(",")], a.repeat)
    print("\n".join(rows))


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) == 3 and sys.argv[1] == "--instr-worker":
        _instr_worker(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "--cell-worker":
        _cell_worker(sys.argv[2])
    else:
        main()
