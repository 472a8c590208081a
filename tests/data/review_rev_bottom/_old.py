"""A replace-one accountant of the Gaussian randomizer, with or without the short-cuts of docs/accountant.md
§9.3-§9.4 (`ViaBottom.SHORTCUTS = False`: the plain split search of §9, main's search before them; the stored
results were made against a frozen copy of that module, with the same values)."""
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant


def accountant(s, n, old):
    """ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace"), through the plain search if ``old``."""
    a = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace")
    if old:
        a._bottom.SHORTCUTS = False
    return a
