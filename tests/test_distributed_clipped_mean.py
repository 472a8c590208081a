"""The Dask engine's diagnostic `true_mean_clipped`: the mean of the clipped rows in original units, equal to
`true_mean` digit for digit when nothing is clipped (it was the unit-ball round trip, off in the last digits)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

from sharpdp.distributed import private_mean  # noqa: E402
from sharpdp.shuffle import calibrate_bmg  # noqa: E402

N = 400


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.uniform(0.1, 9.7, N), "b": rng.normal(0.3, 2.0, N)})
    return dd.from_pandas(df, npartitions=3, sort=False), df.to_numpy(dtype=np.float64)


@pytest.fixture(scope="module")
def bmg():
    return calibrate_bmg(N, 2.0, 1e-6, 2)


def _exact_mean(x):
    return np.array([float(sum(Fraction(v) for v in col) / len(col)) for col in x.T])


@pytest.mark.parametrize("bounds", [[[0.0, 10.0], [-20.0, 20.0]], [[0.0, 5.0], [-1.0, 1.0]]])
def test_true_mean_clipped_is_the_clipped_rows_mean(frame, bmg, bounds):
    ddf, x = frame
    b = np.array(bounds)
    res = private_mean(ddf, ["a", "b"], b, 2.0, 1e-6, rng=1, randomizer=bmg)
    clipped = np.clip(x, b[:, 0], b[:, 1])
    assert np.array_equal(res.true_mean_clipped, _exact_mean(clipped))  # correctly rounded, like true_mean
    assert np.array_equal(res.true_mean, _exact_mean(x))
    if res.values_clipped == 0:
        assert np.array_equal(res.true_mean_clipped, res.true_mean)
    else:
        assert not np.array_equal(res.true_mean_clipped, res.true_mean)
