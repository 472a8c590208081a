"""The switches of the accountant's speed rules of sessions 45 on, read as ``limits.<NAME>`` only.

The continuation of ``limits_rules.py`` (which reached the accountant's 600-line rule): ``limits`` re-exports every
name here the same way, so tests and users pin a rule with ``limits.<NAME> = value`` (never import a switch by name: a
pinned value would not reach you). Each switch cites the docs section that proves its rule; the value that reproduces
an earlier session's floats is in ``tests/_main_floats34.py``. New switches are appended at the end of this file under
``# session N, NAME``.
"""

# session 45, body45
BODY45_KEPT_HEAP = True  # the C heap kept for reuse inside the far-tail round's passes (heap_keep.kept_heap; speed only, the same floats): docs/accountant_tail.md §68
BODY45_KEPT_HEAP_N = 10**7  # from this n on (lattice_pass, jump_term): below, small arrays (speed only): docs/accountant_tail.md §68
