"""Count-dependent zCDP histograms ("Better Privacy Guarantees for Larger Groups").

- :class:`ShiftedLogGaussian`: the shifted-log Gaussian mechanism, its budget v(n), utility,
  per-count epsilon and its C++ release, sampled exactly on a grid (docs/histogram_release.md);
  r = 1 gives the data-independent release.
- :func:`compose` / :class:`ComposedRelease`: budgets of several releases add pointwise.
- :mod:`sharpdp.histogram.lower_bounds`: mechanism-independent lower bounds of section 6 and
  the constants of Table 2.
"""

from sharpdp.histogram.mechanism import (
    EPSILON_METHODS,
    ComposedRelease,
    ShiftedLogGaussian,
    compose,
)

__all__ = ["EPSILON_METHODS", "ComposedRelease", "ShiftedLogGaussian", "compose", "lower_bounds"]


def __getattr__(name: str):
    if name == "lower_bounds":
        import importlib

        return importlib.import_module("sharpdp.histogram.lower_bounds")
    raise AttributeError(f"module 'sharpdp.histogram' has no attribute {name!r}")
