"""Randomizers reduced to a finite table of output classes (k-RR, PrivUnit): shared machinery.

From the table (see :mod:`sharpdp.shuffle.tables`) the shuffle indices and the law of the
privacy-amplification variable l_eps(Y) = (R_x1(Y) - e^eps R_x1'(Y)) / R_BG(Y), Y ~ R_BG,
follow exactly (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
Definition 2.5 (Section 2.4)).
"""

from __future__ import annotations

from sharpdp import _validation as V
from sharpdp.shuffle import tables as TB
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.randomizers._base import RandomizerBase, memo_laws

__all__ = ["LowerForm", "TableRandomizer"]


class TableRandomizer(RandomizerBase):
    """Common machinery of randomizers reduced to a finite table of output classes.

    Subclasses set ``gamma`` and implement ``_table()`` returning ``(R, w, bg, pairs_by_adj)``:
    rows of ``R`` are representative inputs, ``w`` the class measures, ``bg`` the blanket per
    symbol, ``pairs_by_adj`` the worst-case neighbouring row pairs for each adjacency (the
    blanket row is appended to ``R`` as the last row, standing for ⊥).
    """

    gamma: float

    def _table(self):
        raise NotImplementedError

    def _rows(self, epsilon: float, adjacency: str, lower: bool):
        """(gamma, R_x1, R_x1', reference, w, eps) per law: reference R_BG (the blanket law), or each
        representative R_x0 (the lower form)."""
        eps = V.real("epsilon", epsilon, lo=0.0)
        check_adjacency(adjacency)
        R, w, bg, pairs = self._table()
        if not lower:
            return [(self.gamma, R[a], R[b], bg, w, eps) for a, b in pairs[adjacency]]
        return [(1.0, R[a], R[b], R[x0], w, eps) for a, b in pairs[adjacency] for x0 in range(R.shape[0] - 1)]

    def _pav_atoms(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        """Atoms of l_eps(Y), Y ~ R_BG, per worst-case pair and order: list of (gamma, values, probs)."""
        return [(g, *TB.table_pav_atoms(*row)) for g, *row in self._rows(epsilon, adjacency, False)]

    def _lower_form_atoms(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        """Atoms of the lower form's l~_eps(V) = (R_x1 - e^eps R_x1')(V) / R_x0(V), V ~ R_x0 (`docs/accountant.md`
        §1.8).

        One (1.0, values, probs) triple per worst-case pair and representative x0 in X; the
        hockey-stick divergence of (x1, x0, ..., x0) vs (x1', x0, ..., x0) is the accountant's
        value of this law with gamma = 1, a lower bound on the true delta(eps).
        """
        return [(g, *TB.table_pav_atoms(*row)) for g, *row in self._rows(epsilon, adjacency, True)]

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        """Laws of the privacy-amplification variable for the accountant.

        Parameters
        ----------
        epsilon : float
            eps >= 0 in nats.
        adjacency : {"zero_out", "replace"}
            Neighbouring relation.

        Returns
        -------
        list of (float, FiniteLaw)
            ``(gamma, law)`` per worst-case neighbouring pair and order, law = atoms of
            L = l_eps(Y), Y ~ R_BG (`docs/accountant.md` §1.3); the accountant takes the max.
        """
        return [(g, TB.table_pav_law(*row)) for g, *row in self._rows(epsilon, adjacency, False)]

    def lower_form_laws(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        """``(1.0, FiniteLaw)`` pairs of the lower form D_lo (`docs/accountant.md` §1.8); see
        :meth:`_lower_form_atoms`; each law carries its rounding bound ``value_error``).

        The laws do not depend on n: they are kept per randomizer, epsilon, adjacency and table (an
        accountant per n of one randomizer builds them once; the same law objects, never modified)."""
        rows = self._rows(epsilon, adjacency, True)  # (validates epsilon and adjacency)
        R, w, bg, pairs = self._table()  # (in the key: a randomizer whose attributes changed gets new laws)
        key = ("lower form", rows[0][-1] if rows else None, adjacency, R.shape, R.tobytes(), w.tobytes(),
               bg.tobytes(), repr(pairs[adjacency]))
        return memo_laws(self, key, lambda: [(g, TB.table_pav_law(*row)) for g, *row in rows])

    def lower_form(self) -> "LowerForm":
        """This randomizer's lower form as an accountant input: see :class:`LowerForm`."""
        return LowerForm(self)


class LowerForm:
    """Adapter presenting a randomizer's lower-form laws through the accountant protocol.

    ``ShuffleAccountant(r.lower_form(), n, adjacency).get_delta_bounds(eps)[0]`` is a certified
    lower value of max over the representative pairs and x0 of D_lo(eps), the exact hockey-stick
    divergence of the shuffled outputs on (x1, x0, ..., x0) vs (x1', x0, ..., x0) (`docs/accountant.md`
    §1.8), hence a lower bound on the true delta(eps); with the upper
    value of ``ShuffleAccountant(r, n, adjacency)`` it brackets delta(eps).
    """

    def __init__(self, randomizer: TableRandomizer) -> None:
        self.randomizer = randomizer

    def chi_lo_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        return self.randomizer.chi_lo_for(adjacency)

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        return self.randomizer.lower_form_laws(epsilon, adjacency)
