"""Bridges to other differential-privacy libraries (installed with the ``[interop]`` extra).

- :mod:`sharpdp.interop.dp_accounting`: shuffled rounds as Google dp_accounting privacy-loss
  distributions, events and a PLD accountant.
- :mod:`sharpdp.interop.opendp`: a shuffled round as an OpenDP measurement whose privacy map
  returns its certified privacy profile (``make_shuffled_round``).

Usage, neighbouring relations and what each route certifies: ``docs/embedding.md``.

This package sits above the domains: it imports :mod:`sharpdp.shuffle`, no domain imports it.
"""
