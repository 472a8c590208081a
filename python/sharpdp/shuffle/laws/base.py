"""The :class:`Law` interface of the privacy-amplification variable, and the protocol dispatch
:func:`laws_for` (docs/accountant.md §1-§2).

The certified accountant (:mod:`sharpdp.shuffle.accountant`) only needs the scalar law
of ``L`` through a few functionals, each returned together with a rigorous bound on
its floating-point error:

* ``cells(x0, h, K)``: for the cells ``[x0 + j h, x0 + (j+1) h]``, ``j = 0..K-1``, the
  mass ``m_j = P(L in cell)`` and the local first moment ``w_j = E[(L - x_j)/h; L in cell]``
  (so ``0 <= w_j <= m_j``), plus absolute error bounds ``eta_m``, ``eta_w``. The
  mean-preserving ("hat") rounding of docs/accountant.md §3.2 puts ``m_j - w_j`` on ``x_j`` and ``w_j`` on
  ``x_{j+1}``.
* ``prob_below(x)`` / ``prob_above(x)`` (with error bounds), ``tail_upper(T) >=
  E[(L - T)_+]`` and ``tail_lower(B) >= E[(-B - L)_+]`` (rounded up), ``support()``,
  ``mean()``, ``std()``.

Two concrete families cover every randomizer implemented so far: :class:`FiniteLaw`
(atoms: k-RR, binary RR, any finite output space) and :class:`LognormalLaw`
(``L = a + b exp(r Z - r^2/2) + b_minus exp(-r Z - r^2/2)``, monotone in Z ~ N(0, 1) possibly
restricted to ``Z > z_lo``, with a mass multiplier; ``b_minus = 0`` is the plain lognormal
law), combined by :class:`SumLaw`.

Plug-in protocol for new randomizers
------------------------------------
Every randomizer (the contract of :mod:`sharpdp.shuffle.contract`) provides, and
:func:`laws_for` calls::

    randomizer.privacy_amplification_laws(epsilon: float, adjacency: str)
        -> list[tuple[float, Law]]

returning one ``(gamma, law)`` entry per neighbouring pair and order that must be
covered (``adjacency`` is ``"zero_out"`` or ``"replace"``); ``gamma`` in (0, 1] is the
blanket mass and ``law`` the law of ``l_eps(Y)``, ``Y ~ R_BG``, for that pair. The
accountant reports the maximum of its certified upper value over the list. It should
raise ``NotImplementedError`` for an adjacency it does not support.

Vectorised members used by the far-tail treatment (docs/accountant_tail.md §4):
``stop_loss(t)`` (a bracket of E[(L - t)_+] on an array), ``prob_above_up(x)`` (an upper bound on
P(L > x) on an array), ``spread()`` (a scale of the bulk). ``continuous`` and ``atomic`` tell the
engine which paths apply (a law family plugs in through this interface alone).
"""

from __future__ import annotations

import math

import numpy as np

U = float(np.finfo(float).eps) / 2.0  # unit roundoff 2^-53

# product, one sum and one quotient of non-negative terms is within 8 u (sum of the terms'
# magnitudes) of the exact one; twice that (the factor 2 also covers the rounding of the bound).
COMBO_ULPS = 16.0



def check_threshold(T) -> None:
    if not math.isfinite(T):
        raise ValueError(f"T must be finite, got {T!r}")


class Law:
    """Base class of the law of L (see module docstring for the interface).

    ``value_error`` (float >= 0, units of L): a per-user bound on |stored value - true value| of L,
    the rounding of the law's stored atoms / location parameter by the code that built it
    (docs/accountant.md §3.2.2); 0 for a law whose stored values are exact. The accountant charges
    it with the lattice positions (Lemma 3.2.1) and in its closed forms.
    """

    value_error = 0.0
    moved_by = 0.0  # on a copy made by moved(): a bound on the largest |move| of its values

    def top_bound(self) -> float:
        """Upper bound on the true law's largest value: ``support()[1] + value_error``."""
        hi = self.support()[1]
        if self.value_error == 0.0:
            return hi
        t = hi + self.value_error
        return t + 4.0 * U * abs(t) + 1e-300  # rounded up (towards 0 when negative)

    def support(self) -> tuple[float, float]:
        raise NotImplementedError

    def shifted(self, up: bool) -> "Law":
        """The stored law with every value moved by ``value_error`` (rounded outwards) up (``up``) or
        down, and ``value_error`` 0: its values dominate (up) or are dominated by (down) the true
        law's, user by user (docs/accountant_tail.md §12). ``self`` when ``value_error`` is 0."""
        if self.value_error == 0.0:
            return self
        return self.moved(self.value_error if up else -self.value_error)

    def moved(self, c: float) -> "Law":
        """A copy with every value moved by at least |c| in the direction of c, and value_error 0; its
        attribute ``moved_by`` bounds the largest |move| (so the true values are within ``moved_by +
        value_error`` of the copy's)."""
        raise NotImplementedError(f"{type(self).__name__} cannot be shifted")

    def mean(self) -> float:
        raise NotImplementedError

    def std(self) -> float:
        raise NotImplementedError

    def cells(self, x0: float, h: float, K: int):
        raise NotImplementedError

    def prob_below(self, x: float) -> tuple[float, float]:
        """(P(L < x), error bound)."""
        raise NotImplementedError

    def prob_above(self, x: float) -> tuple[float, float]:
        """(P(L >= x), error bound): an atom at x counts (docs/accountant.md §2.1); continuous laws: P(L > x)."""
        raise NotImplementedError

    def tail_upper(self, T: float) -> float:
        """Upper bound on E[(L - T)_+] (rounded up)."""
        raise NotImplementedError

    def tail_lower(self, B: float) -> float:
        """Upper bound on E[(-B - L)_+] (rounded up)."""
        raise NotImplementedError

    def tail_upper_bracket(self, T: float) -> tuple[float, float]:
        """Rigorous (lower, upper) bounds on the stop-loss E[(L - T)_+].

        At T = 0 and n = 1 this is the blanket divergence itself, D_up = E[L_+] (the shuffle paper
        appendix, Lemma 5.3 of Balle et al. 2019 with one user), which the accountant uses.

        Parameters
        ----------
        T : float
            Threshold (finite; units of L, dimensionless).

        Returns
        -------
        (float, float)
            0 <= lower <= E[(L - T)_+] <= upper, rounding included. This default gives 0 as
            the lower bound; FiniteLaw, LognormalLaw and SumLaw give closed forms.

        Raises
        ------
        ValueError
            T is NaN or infinite.
        """
        check_threshold(T)
        return 0.0, self.tail_upper(T)

    # --- the vectorised interface of the far-tail treatment (docs/accountant_tail.md §4) ---
    continuous = False  # a law with a density part (the far-tail treatment and the clamped cap apply)

    @property
    def atomic(self) -> bool:
        """Finitely many atoms (exact blocks apply, docs/accountant.md §5): :meth:`atoms` is not None."""
        return self.atoms() is not None

    def stop_loss(self, t) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised rigorous bracket (lo, up) of tau(t) = E[(L - t)_+] for an array t (float64,
        any length; default: :meth:`tail_upper_bracket` point by point)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        br = [self.tail_upper_bracket(float(x)) for x in t]
        return np.array([b[0] for b in br]), np.array([b[1] for b in br])

    def prob_above_up(self, x) -> np.ndarray:
        """Vectorised upper bound on P(L > x) for an array x (default: :meth:`prob_above` point by point)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        return np.array([sum(self.prob_above(float(v))) for v in x])

    def spread(self) -> float:
        """A scale of the bulk of L (the interquartile range where cheap, else the sd): the far-tail
        lattice step must resolve it for the centroid (lower) law to keep its mass apart."""
        return self.std()

    def raw_moments(self, c: float = 0.0, second: bool = True) -> tuple[float, float, float]:
        """(mass, E[L - c; part], E[(L - c)^2; part]) of the (sub-)law (``second=False``: the last one NaN)."""
        raise NotImplementedError

    # capabilities the engine's special treatments ask for (a law family opts in by overriding them; the engine
    # never dispatches on the class)
    def atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(values, probs) of a law with finitely many atoms (the blocks and exact atom sums of
        docs/accountant.md §5 use them), else None."""
        return None

    def heavy_form(self):
        """The closed-form deep tail's description of the law (``HeavyForm``, docs/accountant_tail.md §23), or None
        (then the far-tail treatment computes its deep tail by FFT)."""
        return None

    # The density and tail-moment bounds the closed-form deep tail asks of a law with a heavy_form (docs/accountant_tail.md
    # §18, §23); only such laws implement them, and the closed form asks no other law.
    def density_up(self, s) -> np.ndarray:
        """Upper bounds (float64 array) on the sup of L's density over [s, inf) (laws with :meth:`heavy_form`)."""
        raise NotImplementedError(f"{type(self).__name__} has no heavy_form: no density bounds")

    def density_lo(self, s) -> np.ndarray:
        """Lower bounds (float64 array) on L's density at s (laws with :meth:`heavy_form`)."""
        raise NotImplementedError(f"{type(self).__name__} has no heavy_form: no density bounds")

    def second_moment_above_up(self, x) -> np.ndarray:
        """Upper bounds (float64 array) on E[(L - a)^2; L > x], a the heavy form's location (laws with
        :meth:`heavy_form`)."""
        raise NotImplementedError(f"{type(self).__name__} has no heavy_form: no tail moments")

    def two_term_form(self):
        """The jump term's closed-form bracket at a clamp for a law unbounded below (``TwoTermForm``: the BMG's
        replace-one law, docs/accountant_tail.md §32), or None."""
        return None

    def one_term(self) -> tuple[float, float, float] | None:
        """(a, G, r) when L = a + G exp(r V - r^2/2), V standard normal, on the whole range with weight 1
        (the closed-form deep tail of docs/accountant_tail.md §18 uses it), else None."""
        return None


class UnitBoundLaw(Law):
    """Stand-in for a law whose closed forms leave the double range but whose blanket divergence
    is known to be at most 1 (E[L_+] <= 1: L_+ <= dP/d omega for L = (dP - e^eps dQ)/d omega).
    The accountant reports the bracket [0, 1] for it (``trivial_bound`` marks it)."""

    trivial_bound = True

    def support(self):
        return -math.inf, math.inf

    def mean(self):
        return math.nan

    def std(self):
        return math.inf

    def tail_upper(self, T):
        check_threshold(T)
        return 1.0 + max(-T, 0.0)  # E[(L - T)_+] <= E[L_+] + (-T)_+ <= 1 + (-T)_+

    def tail_upper_bracket(self, T):
        return 0.0, self.tail_upper(T)


def laws_for(randomizer, epsilon: float, adjacency: str):
    """Laws of the amplification variable for every pair/order that must be covered.

    Parameters
    ----------
    randomizer : sharpdp.shuffle.LocalRandomizer
        Any object with ``privacy_amplification_laws(epsilon, adjacency)`` (the randomizer
        contract of :mod:`sharpdp.shuffle.contract`; also a lower-form adapter).
    epsilon : float
        epsilon >= 0 (nats).
    adjacency : {"zero_out", "replace"}

    Returns
    -------
    list of (gamma, Law)

    Raises
    ------
    ValueError
        As the randomizer's method (e.g. GaussianRandomizer with dim > 1).
    NotImplementedError
        As the randomizer's method: an adjacency without a proven worst-case pair (e.g.
        GaussianRandomizer, gamma = 0, with "replace"; the accountant then bounds replace-one
        through bot).
    TypeError
        The randomizer has no ``privacy_amplification_laws`` method.
    """
    fn = getattr(randomizer, "privacy_amplification_laws", None)
    if fn is None:
        raise TypeError(f"randomizer: {type(randomizer).__name__} has no privacy_amplification_laws(epsilon, adjacency)")
    return list(fn(epsilon, adjacency))



__all__ = ["COMBO_ULPS", "Law", "U", "UnitBoundLaw", "check_threshold", "laws_for"]
