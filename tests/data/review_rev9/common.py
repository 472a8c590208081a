"""What sweep.py and sweep_d0.py share: the "old" mode (run the tree at PYTHONPATH, e.g. main at 2bba757 with the
same _core, bypassing the editable install; must run before sharpdp is imported) and the (adjacency, eps0, n) grid."""
import itertools
import sys

if len(sys.argv) > 2 and sys.argv[2] == "old":
    sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower() and "skbc" not in repr(f).lower()]

GRID = list(itertools.product(("replace", "zero_out"), (1e-3, 0.1, 1.0, 4.0, 20.0), (1, 2, 3, 10, 100, 1000, 10**7)))
