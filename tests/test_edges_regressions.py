"""Regression tests with the exact inputs of the edge-case review (non-accountant items).

Each example expects a clear error (ValueError/TypeError naming the parameter), a finished call,
or the corrected value against an independent reference (mpmath, brute-force enumeration).
"""

import math
import time

import mpmath
import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

import sharpdp.shuffle as sh
from sharpdp.cli import main
from sharpdp.crlb import gaussian_mechanism, ppcrlb
from sharpdp.histogram import ShiftedLogGaussian
from sharpdp.histogram.lower_bounds import released_renyi


# ---------------------------------------------------------------- RandomizedResponse.estimate / sample
@pytest.mark.parametrize("messages,exc,needle", [
    (np.array([0.0, np.nan, 1.0]), ValueError, "finite"),  # was "'list' argument must have no negative elements"
    (np.array([0.0, 1.5, 1.0]), ValueError, "integer"),  # was accepted silently
    (np.array([True, False, True]), TypeError, "dtype bool"),  # boolean arrays as RR inputs
    (np.array([0, 1 + 1j]), TypeError, "complex"),
    (np.array(["0", "1"]), TypeError, "dtype"),  # was "invalid literal for int()"
    (np.array([0, 3]), ValueError, r"\[0, 3\)"),
])
def test_rr_estimate_bad_messages(messages, exc, needle):
    rr = sh.RandomizedResponse(3, 1.0)
    with pytest.raises(exc, match=rf"^messages.*{needle}"):
        rr.estimate(messages)
    with pytest.raises(exc, match=r"^x"):
        rr.sample(messages, rng=0)


def test_rr_estimate_mean_checks_messages_first():
    with pytest.raises(ValueError, match="^messages"):
        sh.RandomizedResponse(2, 1.0).estimate_mean(np.array([0.0, np.nan]))
    assert sh.RandomizedResponse(2, 1.0).estimate_mean(np.array([1, 1, 0, 1.0])) == pytest.approx(
        float(np.diff(sh.RandomizedResponse(2, 1.0).estimate(np.array([1, 1, 0, 1])))[0]))


# ---------------------------------------------------------------- PrivUnit, optimal_bmg, gaussian_chi_chua
def test_privunit_cap_below_double_range():
    """PrivUnit(0.7, 0.9999999999, 1000) raised ZeroDivisionError."""
    with pytest.raises(ValueError, match="theta=0.9999999999 leaves a cap of measure 0"):
        sh.PrivUnit(0.7, 0.9999999999, 1000)


def test_optimal_bmg_tiny_chi():
    """optimal_bmg(1e-308, 1) raised ZeroDivisionError; now a BMG meeting the constraint."""
    t = time.process_time()
    b = sh.optimal_bmg(1e-308, 1)
    assert time.process_time() - t < 5.0
    assert b.chi_lo >= 1e-308 and 0 < b.gamma < 1 and b.sigma0 > 0
    # chi_lo's closed form in 50-digit arithmetic (independent of the log-space evaluation)
    mpmath.mp.dps = 50
    g, s = mpmath.mpf(b.gamma), mpmath.mpf(b.sigma0)
    exact = mpmath.sqrt(g / ((1 - g) ** 2 * mpmath.expm1(1 / s**2)))
    assert exact >= mpmath.mpf("1e-308") * (1 - mpmath.mpf("1e-12"))
    assert float(exact) == pytest.approx(b.chi_lo, rel=1e-12)
    # the large-chi side stays as before (continuity of the rewritten objective)
    assert sh.optimal_bmg(2.0, 1).mse_single == pytest.approx(10.75, rel=1e-3)


@pytest.mark.parametrize("sigma0", [1e-3, 0.05, 0.2, 0.3, 1.0, 7.0, 100.0, 316.0, 317.0, 1e4, 1e200])
def test_gaussian_chi_chua_every_sigma0(sigma0):
    """gaussian_chi_chua(1e-3) raised "math range error"; compare with 50-digit mpmath."""
    mpmath.mp.dps = 60
    a = 1 / mpmath.mpf(sigma0) ** 2
    # V = e^{4a} - 2 e^{2a} + e^a = e^a (expm1(3a) - 2 expm1(a)), exact to 60 digits at any a
    ref = 1 / mpmath.sqrt(mpmath.exp(a) * (mpmath.expm1(3 * a) - 2 * mpmath.expm1(a)))
    got = sh.gaussian_chi_chua(sigma0)
    if ref < mpmath.mpf("1e-300"):
        assert got == 0.0  # below the double range (documented)
    else:
        assert got == pytest.approx(float(ref), rel=1e-12)


# ---------------------------------------------------------------- clones
def test_clones_delta_huge_n_refused_fast():
    """clones_delta(1.0, 10**18, 0.1) allocated 75-93 GiB."""
    t = time.process_time()
    with pytest.raises(ValueError, match="^n: "):
        sh.clones_delta(1.0, 10**18, 0.1)
    with pytest.raises(ValueError, match="^n: "):
        sh.clones_epsilon(1.0, 10**18, 1e-6)
    assert time.process_time() - t < 1.0


def _clones_brute_force(eps0, n, eps):
    """D_{e^eps}(P || Q) of the clones pair by enumerating every point (c, a, d)."""
    p = math.exp(eps0) / (math.exp(eps0) + 1)
    ee = math.exp(eps)
    pc = math.exp(-eps0)
    mass_p, mass_q = {}, {}
    for c in range(n):
        wc = binom.pmf(c, n - 1, pc)
        for a in range(c + 1):
            wa = wc * binom.pmf(a, c, 0.5)
            for d, (pd_, qd) in ((1, (p, 1 - p)), (0, (1 - p, p))):
                key = (a + d, c - a + 1 - d)
                mass_p[key] = mass_p.get(key, 0.0) + wa * pd_
                mass_q[key] = mass_q.get(key, 0.0) + wa * qd
    return sum(max(mass_p[k] - ee * mass_q[k], 0.0) for k in mass_p)


@pytest.mark.parametrize("eps0,n,eps", [(1.0, 20, 0.1), (2.0, 35, 0.5), (0.5, 12, 0.05), (3.0, 25, 1.2)])
def test_clones_delta_matches_brute_force(eps0, n, eps):
    exact = _clones_brute_force(eps0, n, eps)
    got = sh.clones_delta(eps0, n, eps)
    assert got >= exact * (1 - 1e-12)
    assert got <= exact * (1 + 1e-9) + 1e-15


# ---------------------------------------------------------------- GeneralRandomizer, template, rng
def test_general_randomizer_huge_grid_refused():
    from numba import njit

    @njit
    def dens(y, x):
        return 0.5 + 0.25 * x * y

    with pytest.raises(ValueError, match="^cells"):
        sh.GeneralRandomizer(dens, [-1.0, 1.0], (-1.0, 1.0), cells=10**12)


@pytest.mark.parametrize("kwargs,name", [
    (dict(chi=math.nan, n=100, epsilon=0.5), "chi"), (dict(chi=-1.0, n=100, epsilon=0.5), "chi"),
    (dict(chi=0.0, n=100, epsilon=0.5), "chi"), (dict(chi=2.0, n=0, epsilon=0.5), "n"),
    (dict(chi=2.0, n=-5, epsilon=0.5), "n"), (dict(chi=2.0, n=1.5, epsilon=0.5), "n"),
    (dict(chi=2.0, n=100, epsilon=math.nan), "epsilon"), (dict(chi=2.0, n=100, epsilon=-1.0), "epsilon"),
])
def test_template_delta_estimate_bad_input(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=f"^{name}"):
        sh.template_delta_estimate(**kwargs)


def test_template_delta_estimate_value():
    # (phi(a) - a Phi(-a)) / (chi sqrt(n)) with a = chi eps sqrt(n), written out
    chi, n, eps = 2.0, 100, 0.05
    a = chi * eps * math.sqrt(n)
    ref = (math.exp(-a * a / 2) / math.sqrt(2 * math.pi) - a * 0.5 * math.erfc(a / math.sqrt(2))) / (chi * 10)
    got = sh.template_delta_estimate(chi, n, eps)
    assert isinstance(got, float) and got == pytest.approx(ref, rel=1e-14)
    assert sh.template_delta_estimate([chi, chi], n, eps).shape == (2,)


@pytest.mark.parametrize("call", [
    lambda rng: sh.BlanketMixedGaussian(0.5, 1.0, 1).sample(np.zeros((2, 1)), rng=rng),
    lambda rng: sh.RandomizedResponse(3, 1.0).sample(np.array([0, 1]), rng=rng),
    lambda rng: ShiftedLogGaussian(0.2).release([1, 2], rng=rng),
    lambda rng: gaussian_mechanism([1.0], [[1.0]], rng=rng),
])
def test_rng_seed_range(call):
    """rng=2**70 was accepted silently; a bool seed too."""
    with pytest.raises(ValueError, match="^rng"):
        call(2**70)
    with pytest.raises(TypeError, match="^rng"):
        call(True)
    a, b = call(2**64 - 1), call(2**64 - 1)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("call,name", [
    (lambda: sh.BlanketMixedGaussian(0.5, 1.0, 1).sample(np.array([[0.1 + 0.2j]]), rng=0), "x"),
    (lambda: sh.PrivUnit(0.7, 0.2, 3).sample(np.eye(3) + 0j, rng=0), "x"),
    (lambda: ShiftedLogGaussian(0.2).release(np.array([1 + 0j]), rng=0), "counts"),
    (lambda: gaussian_mechanism(np.array([1 + 1j]), [[1.0]], rng=0), "y"),
    (lambda: ppcrlb(np.eye(2) * (1 + 1j), np.eye(2), np.eye(2)), "H"),
    (lambda: ppcrlb(np.eye(2), [[1, 0], [0, 1j]], np.eye(2)), "S"),
])
def test_complex_inputs_refused(call, name):
    with pytest.raises(TypeError, match=f"^{name}"):
        call()


def test_released_renyi_names_mechanism():
    """"'str' object has no attribute 'sigma'"."""
    with pytest.raises(TypeError, match="^mechanism must be a ShiftedLogGaussian"):
        released_renyi("a", 3, 2.0)
    with pytest.raises(ValueError, match="^kmax"):
        released_renyi(ShiftedLogGaussian(0.2), 3, 2.0, kmax=0)


def test_shuffle_exports():
    from sharpdp.shuffle.calibration import calibrate_gaussian
    from sharpdp.shuffle.certified import smallest_certified_delta
    from sharpdp.shuffle.clones import clones_epsilon

    assert sh.calibrate_gaussian is calibrate_gaussian
    assert sh.clones_epsilon is clones_epsilon
    assert sh.smallest_certified_delta is smallest_certified_delta


# ---------------------------------------------------------------- sharpdp mean warnings
def test_mean_warns_epsilon_zero_and_outside_bounds(tmp_path, capsys):
    """An income mean of -63 365 with bounds 0:500 000 was printed without remark; epsilon = 0 too."""
    path = tmp_path / "income.csv"
    pd.DataFrame({"income": np.random.default_rng(0).uniform(0, 1000, 2000)}).to_csv(path, index=False)
    code = main(["mean", "--csv", str(path), "--bounds", "0:500000", "--epsilon", "0", "--seed", "1", "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "--epsilon 0" in err and "useless" in err
    import json

    res = json.loads(out)
    est = res["private_mean"][0]
    outside = not 0.0 <= est <= 500000.0
    assert outside  # at epsilon = 0 the noise dwarfs the bounds (seed 1: about 6e6)
    assert "outside the public bounds" in err and any("outside the public bounds" in w for w in res["warnings"])


def test_cli_arithmetic_error_is_one_line(monkeypatch, capsys):
    """OverflowError / ZeroDivisionError inside a command printed a full traceback."""
    import sharpdp.cli.account as account

    for exc in (OverflowError("math range error"), ZeroDivisionError("float division by zero")):
        def boom(args, exc=exc):
            raise exc

        monkeypatch.setattr(account, "run", boom)
        code = main(["account", "--gamma", "0.5", "--sigma0", "0.02", "--n", "1", "--epsilon", "1"])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert "numerical failure" in err and type(exc).__name__ in err
