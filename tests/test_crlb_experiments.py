"""Section 5 experiments and the `sharpdp crlb` command ("Privacy-Preserving Cramer-Rao Lower Bound")."""

import json
import math

import numpy as np
import pytest

from sharpdp.cli import main
from sharpdp.apps import crlb_experiments as E


def _check_5_1(r):
    for j, s in enumerate(r["s"]):
        b = r["bound"][j]
        assert b == pytest.approx((0.04 + 1 / s) * r["classical"][j] / 0.04, rel=1e-10)  # isotropic closed form
        if "gaussian" in r["mse"]:
            g, se = r["mse"]["gaussian"][j], r["stderr"]["gaussian"][j]
            assert abs(g - b) < 5 * se, "Gaussian mechanism (18)-(19) must attain the bound"
        for name in set(r["mse"]) - {"gaussian"}:
            assert r["mse"][name][j] - b > 3 * r["stderr"][name][j], f"{name} should lie above the bound at s={s}"


def test_5_1_gaussian_on_the_bound_others_above():
    # Seed 1: the grid release of gaussian_mechanism (docs/sampling.md §9) draws 4 words from the shared
    # generator instead of R m normals, which shifted every later draw; at the former seed 20240601 the
    # heavy-tailed cauchy_data MSE missed the 3-stderr margin by 0.1 (89.3 - 5.1 vs 3 x 28.1; seeds 1, 2, 3
    # clear it by 87 vs 45, 67 vs 40, 124 vs 98): an outlier-driven stderr, not a change of the mechanism.
    # The multiplicative mechanism (2/3 of the CPU at 1000 trials) runs apart at 150 trials: its margin is
    # 9.5 and 8.7 stderr at seed 1 (5.6-11.8 at seeds 2, 3), where the heavy-tailed cauchy_data needs the 1000.
    # laplace_data (an ML fit, a third of the rest's CPU at 1000 trials) runs apart at 300: 7.7 and 8.4 stderr
    # above the bound at seed 1 (3 needed; 7.1-9.4 at seeds 2, 3; cauchy_data 5.7 then). The Gaussian mechanism
    # keeps its 1000 trials (cheap): 0.8 stderr from the bound at seed 1, and a 15 % error of its noise variance
    # fails (at 300 trials it passed).
    runs = [(["gaussian", "laplace_output", "cauchy_data", "trigonometric_output", "quantization_output"], 1000),
            (["laplace_data"], 300)]
    for names, trials in runs:
        r = E.mechanism_comparison(s_grid=[0.5, 5.0], trials=trials, rng=1, mechanisms=names)
        assert list(r["mse"]) == names
        _check_5_1(r)
    r = E.mechanism_comparison(s_grid=[0.5, 5.0], trials=150, rng=1, mechanisms=["multiplicative_data"])
    assert list(r["mse"]) == ["multiplicative_data"]
    _check_5_1(r)
    with pytest.raises(ValueError, match="mechanisms"):
        E.mechanism_comparison(s_grid=[1.0], trials=2, mechanisms=["gaussian", "nope"])


def test_gauss_laplace_density_normalised():
    import scipy.integrate

    for sig, b in ((0.2, 3.0), (0.2, 0.3), (1.0, 0.5)):
        f = E._log_gauss_laplace(sig, b)
        total = scipy.integrate.quad(lambda x: math.exp(f(np.array(x))), -np.inf, np.inf)[0]
        assert total == pytest.approx(1.0, abs=1e-8)
        # Laplace limit far in the tail: log f(x) ~ log(1/(2b)) + sig^2/(2b^2) - x/b
        x = 30 * b + 10 * sig
        assert f(np.array(x)) == pytest.approx(math.log(1 / (2 * b)) + sig**2 / (2 * b * b) - x / b, rel=1e-9)


def test_real_data_loader(monkeypatch):
    y, H = E.load_triglyceride_data()
    assert y.shape == (442,) and H.shape == (442, 5)
    # reference: records of sklearn.datasets.load_diabetes(scaled=False) (age, sex, bmi, bp, ..., s5, s6), taken
    # from scikit-learn's loader (the module reads its data file without importing it)
    first, second, last = ([59.0, 2.0, 32.1, 101.0, 4.8598], [48.0, 1.0, 21.6, 87.0, 3.8918],
                           [36.0, 1.0, 19.6, 71.0, 4.5951])
    for i, (age, sex, bmi, bp, s5) in ((0, first), (1, second), (441, last)):
        assert H[i].tolist() == [1.0, age, bmi, sex, bp] and y[i] == s5, i
    assert y.mean() == pytest.approx(4.641410859728507, rel=1e-14)
    # without the data file where it is expected: scikit-learn's loader, the same table
    import os

    monkeypatch.setattr(os.path, "isfile", lambda path: False)
    y2, H2 = E.load_triglyceride_data()
    assert np.array_equal(y2, y) and np.array_equal(H2, H)
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


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """One run of the default experiment (5.2) through the CLI, ``--json``: (result, its text, the out dir).

    The text is the command's text mode of the same result (``sharpdp.cli.crlb.format_text``, which
    ``main`` prints without ``--json``), so the 5.2 experiment and its plot run once for both tests."""
    import contextlib
    import io

    from sharpdp.cli.crlb import format_text

    out_dir = tmp_path_factory.mktemp("crlb52")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["crlb", "--trials", "2", "--seed", "1", "--out", str(out_dir), "--json"]) == 0
    r = json.loads(buf.getvalue())
    return r, format_text(r), out_dir


def test_cli_default_runs_on_real_data(default_run):
    out, _, out_dir = default_run
    assert out["experiment"] == "5.2" and out["k0"] == 5 and len(out["k"]) == 100
    assert (out_dir / "crlb_5_2.png").stat().st_size > 1000
    header = (out_dir / "crlb_5_2.csv").read_text().splitlines()[0]
    assert header.startswith("k,bound,mse")


def test_cli_5_3_text_and_errors(tmp_path, capsys):
    """A real run and the bad arguments, in-process through main() (an exception escaping main would fail
    the test where a subprocess printed a traceback; the exit status is main's return value or argparse's
    SystemExit code; the ``python -m sharpdp.cli`` entry point is run by tests/test_cli_mean.py)."""
    capsys.readouterr()
    code = main(["crlb", "--experiment", "5.3", "--trials", "5", "--seed", "2", "--out", str(tmp_path), "--no-plot"])
    out, err = capsys.readouterr()
    assert code == 0 and "Section 5.3" in out and (tmp_path / "crlb_5_3.csv").exists(), err
    # --no-plot: the CSV only, and the text says so (the PNG: test_cli_default_runs_on_real_data)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crlb_5_3.csv"] and "(--no-plot)" in out
    for bad in (["--trials", "0"], ["--seed", "-3"], ["--experiment", "9.9"]):
        try:
            code = main(["crlb", "--out", str(tmp_path), *bad])
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        assert code == 2 and "Traceback" not in err and out == "", (bad, out, err)
        assert len(err.strip().splitlines()) == 1, (bad, err)


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


def test_5_2_mse_below_bound_is_monte_carlo_error():
    """With 100 repetitions the MSE fell below the bound at 86-89 % of steps for one seed, unexplained.

    The bound holds for unbiased estimators and Algorithm 3 attains it in expectation; the data noise is
    drawn once per block, so for one seed the curve can sit below the bound at most steps. Across seeds
    it is below at some and above at others, and the 95 % t-interval across blocks covers the bound.
    """
    from scipy.stats import t as student_t

    below, covered = [], []
    for seed in (1, 2, 3, 4):
        r = E.recursive_identification(blocks=3, block_size=40, repetitions=3, rng=seed)
        ok = ~np.isnan(r["bound"])
        assert r["blocks"] == 3 and np.all(r["mse_stderr"][ok] > 0)
        half = student_t.ppf(0.975, 2) * r["mse_stderr"][ok]
        below.append(np.mean(r["mse"][ok] < r["bound"][ok]))
        covered.append(np.mean(np.abs(r["mse"][ok] - r["bound"][ok]) <= half))
    assert min(below) < 0.5 < max(below)  # not systematic: the side depends on the seed
    assert np.mean(covered) >= 0.8 and min(covered) >= 0.6  # steps are correlated: coverage varies by seed


def test_cli_5_2_explains_mse_below_bound(default_run):
    r, out, out_dir = default_run
    assert "Monte Carlo error" in out and "unbiased" in out and "Privacy-Preserving Cramer-Rao Lower Bound" in out
    flat = " ".join(out.split())  # (the text is wrapped at 80 columns: the wording is checked, not the line breaks)
    assert " ".join(r["why_mse_below_bound"].split()) in flat and f"seed {r['seed']} (rerun with --seed" in flat
    header = (out_dir / "crlb_5_2.csv").read_text().splitlines()[0]
    assert "mse_stderr" in header


@pytest.mark.parametrize("seed", [0, 9])
def test_5_2_rank_deficient_starts_begin_at_the_first_invertible_step(seed):
    """Seeds 0 and 9 (the CLI's --seed) put collinear records first in a block (the binary `sex`
    equals the intercept up to scale): `sharpdp crlb` failed with "Singular matrix". Every estimator
    now starts at the first step with invertible information, as the paper's Algorithms 2-3 do."""
    r = E.recursive_identification(repetitions=1, rng=np.random.default_rng(seed))
    k0 = r["k0"]
    assert k0 > 5  # later than n = 5: a rank-deficient start occurred
    for key in ("bound", "mse", "mse_laplace", "bound_identity", "mse_identity"):
        assert np.all(np.isnan(r[key][: k0 - 1])) and np.all(np.isfinite(r[key][k0 - 1:])), key


def test_laplace_rls_starts_at_full_rank_and_is_least_squares():
    """Reference: numpy's rank and least squares on the rows seen so far, with the same noise."""
    H = np.column_stack([np.ones(8), [1, 1, 1, 2, 2, 1, 2, 1], [3.0, 1, 4, 1, 5, 9, 2, 6]])
    y = np.linspace(0.0, 1.0, 8)
    est, k0 = E._laplace_rls(y, H, 0.5, np.random.default_rng(4))
    z = y + np.random.default_rng(4).laplace(0.0, 0.5, 8)
    first = next(k for k in range(1, 9) if np.linalg.matrix_rank(H[:k]) == 3)
    assert k0 == first == 4
    assert np.all(np.isnan(est[: k0 - 1]))
    for k in range(k0, 9):
        ref = np.linalg.lstsq(H[:k], z[:k], rcond=None)[0]
        np.testing.assert_allclose(est[k - 1], ref, rtol=1e-10, atol=1e-12)


def test_cli_reports_the_seed_it_used(tmp_path, capsys):
    """An experiment on public data: the seed drawn without --seed is printed and reproduces the run."""
    assert main(["crlb", "--experiment", "5.3", "--trials", "3", "--out", str(tmp_path / "a"), "--json",
                 "--no-plot"]) == 0
    r = json.loads(capsys.readouterr().out)
    seed = r["seed"]
    assert isinstance(seed, int) and seed >= 0 and r["files"]["png"] is None
    assert main(["crlb", "--experiment", "5.3", "--trials", "3", "--seed", str(seed), "--out", str(tmp_path / "b"),
                 "--no-plot"]) == 0
    text = capsys.readouterr().out
    assert f"seed {seed} (rerun with --seed {seed} to reproduce" in " ".join(text.split())  # (wrapped at 80)
    assert (tmp_path / "a" / "crlb_5_3.csv").read_text() == (tmp_path / "b" / "crlb_5_3.csv").read_text()
