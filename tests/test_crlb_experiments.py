"""Section 5 experiments and the `sharpdp crlb` command (seed 002)."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from sharpdp.cli import main
from sharpdp.apps import crlb_experiments as E


def test_5_1_gaussian_on_the_bound_others_above():
    r = E.mechanism_comparison(s_grid=[0.5, 5.0], trials=1000, rng=20240601)
    for j, s in enumerate(r["s"]):
        b = r["bound"][j]
        assert b == pytest.approx((0.04 + 1 / s) * r["classical"][j] / 0.04, rel=1e-10)  # isotropic closed form
        g, se = r["mse"]["gaussian"][j], r["stderr"]["gaussian"][j]
        assert abs(g - b) < 5 * se, "Gaussian mechanism (18)-(19) must attain the bound"
        for name in E.MECHANISMS_5_1[1:]:
            assert r["mse"][name][j] - b > 3 * r["stderr"][name][j], f"{name} should lie above the bound at s={s}"


def test_gauss_laplace_density_normalised():
    import scipy.integrate

    for sig, b in ((0.2, 3.0), (0.2, 0.3), (1.0, 0.5)):
        f = E._log_gauss_laplace(sig, b)
        total = scipy.integrate.quad(lambda x: math.exp(f(np.array(x))), -np.inf, np.inf)[0]
        assert total == pytest.approx(1.0, abs=1e-8)
        # Laplace limit far in the tail: log f(x) ~ log(1/(2b)) + sig^2/(2b^2) - x/b
        x = 30 * b + 10 * sig
        assert f(np.array(x)) == pytest.approx(math.log(1 / (2 * b)) + sig**2 / (2 * b * b) - x / b, rel=1e-9)


def test_real_data_loader():
    y, H = E.load_triglyceride_data()
    assert y.shape == (442,) and H.shape == (442, 5)
    assert np.all(H[:, 0] == 1.0) and set(np.unique(H[:, 3])) == {1.0, 2.0}
    assert 3.0 < y.min() and y.max() < 7.0  # log scale
    assert 15 < H[:, 1].mean() < 80 and 15 < H[:, 2].mean() < 40  # raw age, BMI


def test_5_2_structure_and_bound_tracking():
    r = E.recursive_identification(blocks=2, block_size=60, repetitions=3, rng=3)
    assert r["k0"] == 5
    assert np.all(np.isnan(r["bound"][:4])) and np.all(np.isfinite(r["bound"][4:]))
    assert np.all(np.diff(r["bound"][4:]) < 0)  # more data, smaller bound
    # empirical MSE of Algorithm 3 follows the bound (real data: loose 3x band)
    ratio = r["mse"][20:] / r["bound"][20:]
    assert np.all((ratio > 1 / 3) & (ratio < 3))
    with pytest.raises(ValueError, match="blocks"):
        E.recursive_identification(blocks=10, block_size=100)


def test_5_3_ml_beats_direct_averaging():
    r = E.laplacian_measurements(K_grid=(100, 400), trials=400, rng=5)
    K = r["K"].astype(float)
    # direct averaging: exact MSE 1/K + 1/K^2 (Gaussian) and 1/K + 2/K^2 (Laplace)
    for name, ref in (("mse_avg_gaussian", 1 / K + 1 / K**2), ("mse_avg_laplace", 1 / K + 2 / K**2)):
        assert np.all(np.abs(r[name] - ref) < 5 * ref * math.sqrt(2 / r["trials"]) * 1.5)
    assert np.all(r["mse_ml"] < 0.8 * r["mse_avg_gaussian"])
    assert np.all(r["mse_ml"] > r["classical"] * 0.7)
    np.testing.assert_allclose(r["ml_trace_ratio"], K)


def test_cli_default_runs_on_real_data(tmp_path, capsys):
    assert main(["crlb", "--trials", "1", "--seed", "1", "--out", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["experiment"] == "5.2" and out["k0"] == 5 and len(out["k"]) == 100
    assert (tmp_path / "crlb_5_2.png").stat().st_size > 1000
    header = (tmp_path / "crlb_5_2.csv").read_text().splitlines()[0]
    assert header.startswith("k,bound,mse")


def test_cli_5_3_text_and_errors(tmp_path):
    ok = subprocess.run([sys.executable, "-m", "sharpdp.cli", "crlb", "--experiment", "5.3", "--trials", "5",
                         "--seed", "2", "--out", str(tmp_path)], capture_output=True, text=True)
    assert ok.returncode == 0 and "Section 5.3" in ok.stdout and (tmp_path / "crlb_5_3.csv").exists()
    for bad in (["--trials", "0"], ["--seed", "-3"], ["--experiment", "9.9"]):
        res = subprocess.run([sys.executable, "-m", "sharpdp.cli", "crlb", "--out", str(tmp_path), *bad],
                             capture_output=True, text=True)
        assert res.returncode == 2 and "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1


def test_multiplicative_mechanism_information_calibration():
    """Fisher information of z = y / V, V ~ N(1, tau^2): (2 + 1/tau^2)/y^2 (|y| >= eps),
    and the chi-square constant e^{4/tau^2} - 1 bounding the truncated region."""
    import scipy.integrate
    from scipy.stats import norm

    tau = E.MULT_TAU
    rng = np.random.default_rng(11)
    y, h = 1.7, 1e-5
    z = y / (1 + tau * rng.standard_normal(400_000))

    def logp(yy):  # density of z = yy / V by change of variables
        return norm.logpdf(yy / z, 1.0, tau) + np.log(abs(yy)) - 2 * np.log(np.abs(z))

    score = (logp(y + h) - logp(y - h)) / (2 * h)
    info = np.mean(score**2)
    ref = (2 + 1 / tau**2) / y**2
    assert abs(info - ref) < 5 * np.std(score**2) / math.sqrt(z.size)
    chi2 = scipy.integrate.quad(lambda v: norm.pdf(-v, 1, tau) ** 2 / norm.pdf(v, 1, tau), -40, 40)[0] - 1
    assert chi2 == pytest.approx(math.expm1(4 / tau**2), rel=1e-8)
    # eps is set so that the worst case equals s
    zs, eps = E._multiplicative_mechanism(np.array([[0.1, 3.0]]), 2.0, rng)
    assert E._mult_info_constant(tau) / eps**2 == pytest.approx(2.0)


def test_probabilistic_quantiser_unbiased_and_law():
    rng = np.random.default_rng(12)
    x, delta, R = 0.37, 0.8, 400_000
    q = E._probabilistic_quantiser(np.full(R, x), delta, rng)
    assert abs(q.mean() - x) < 5 * q.std() / math.sqrt(R)
    # output law P(z = j Delta) = R(a+1) - 2R(a) + R(a-1), a = j - x/Delta, r = tau/Delta
    from scipy.stats import norm

    r = E.QUANT_RATIO

    def ramp(u):
        return u * norm.cdf(u / r) + r * norm.pdf(u / r)

    for j in (-1, 0, 1, 2):
        a = j - x / delta
        p = ramp(a + 1) - 2 * ramp(a) + ramp(a - 1)
        freq = np.mean(np.isclose(q, j * delta))
        assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / R) + 1e-12
    assert 1.0 < E._quant_info_constant() < 10.0
