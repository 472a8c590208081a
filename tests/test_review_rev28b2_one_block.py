"""Review rev28b (session 28), claim 3: one block of all users up to ONE_BLOCK_ATOMS = 300 000 count vectors for
>= 3-atom laws (docs/accountant_atoms.md §13). Reference: the same accountant with the cap patched back to the old
60 000 (old path) at rel_tol 1e-3; both brackets are certified, so they must overlap (lower of each <= upper of the
other, 1e-12 relative slack). RandomizedResponse(k, eps0) replace at n = 50..200 and PrivUnit(0.75, 0.2, 10)."""

import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import blocks
from sharpdp.shuffle.randomizers import PrivUnit, RandomizedResponse


def _reports(b, n, adj, eps_list):
    return [ShuffleAccountant(b, n, adj, rel_tol=1e-3).report(e) for e in eps_list]


def _clear():
    from sharpdp.shuffle import clear_caches
    clear_caches()


def _check(b, n, adj, eps_list, monkeypatch, used):
    orig = blocks.one_block

    def spy(*a, **k):
        used.append(1)
        return orig(*a, **k)

    monkeypatch.setattr(blocks, "one_block", spy)
    import sharpdp.shuffle.accountant.driver as drv
    monkeypatch.setattr(drv, "one_block", spy)
    ob = blocks.block
    shapes = []

    def bspy(gamma, law, nn):
        r = ob(gamma, law, nn)
        shapes.append(None if r is None else (r.t == nn))
        return r

    monkeypatch.setattr(blocks, "block", bspy)
    monkeypatch.setattr(drv, "block", bspy)
    _clear()
    new = _reports(b(), n, adj, eps_list)
    used.append(("new", tuple(shapes)))
    shapes.clear()
    monkeypatch.setattr(blocks, "ONE_BLOCK_ATOMS", 60_000)
    _clear()
    old = _reports(b(), n, adj, eps_list)
    used.append(("old", tuple(shapes)))
    monkeypatch.undo()
    _clear()
    for e, r, s in zip(eps_list, new, old):
        assert r.lower <= r.upper and s.lower <= s.upper
        assert r.lower <= s.upper * (1 + 1e-12) and s.lower <= r.upper * (1 + 1e-12), \
            (str(b()), n, e, (r.lower, r.upper), (s.lower, s.upper))


@pytest.mark.parametrize("k,eps0", [(3, 1.0), (3, 4.0), (5, 4.0), (5, 8.0), (10, 1.0), (10, 8.0), (7, 4.0)])
def test_krr_replace_one_block(k, eps0, monkeypatch):
    used = []
    for n in (50, 80, 120, 160, 200):
        _check(lambda: RandomizedResponse(k, eps0), n, "replace", [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0], monkeypatch, used)
    print(k, eps0, used)


@pytest.mark.parametrize("n", [50, 80, 100, 120])
def test_privunit_one_block(n, monkeypatch):
    used = []
    _check(lambda: PrivUnit(0.75, 0.2, 10), n, "replace", [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0], monkeypatch, used)
    print(n, used)
    if n >= 80:  # the new cap takes the one-block closed form where the old cap did not (the path differs)
        assert any(u[0] == "new" and any(u[1]) for u in used if isinstance(u, tuple))
        assert any(u[0] == "old" and not any(u[1]) for u in used if isinstance(u, tuple))
