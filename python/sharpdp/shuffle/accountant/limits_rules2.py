"""The switches of the accountant's speed rules of sessions 45 on, read as ``limits.<NAME>`` only.

The continuation of ``limits_rules.py`` (which reached the accountant's 600-line rule): ``limits`` re-exports every
name here the same way, so tests and users pin a rule with ``limits.<NAME> = value`` (never import a switch by name: a
pinned value would not reach you). Each switch cites the docs section that proves its rule; the value that reproduces
an earlier session's floats is in ``tests/_main_floats34.py``. New switches are appended at the end of this file under
``# session N, NAME``.
"""

# session 45, eps45
#: phase 1 skipped where get_epsilon starts at the single-big-jump root and that model's spread there is at most this;
#: phase 2 then probes the model's root first (docs/accountant.md §8.25; ``accountant/start_probe.py``). 0.0: off (main's
#: search); 0.02 measured
EPS45_START_PROBE = 0.0
