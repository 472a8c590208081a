"""Bridges to other differential-privacy libraries (installed with the ``[interop]`` extra).

- :mod:`sharpdp.interop.dp_accounting`: shuffled rounds as Google dp_accounting privacy-loss
  distributions, events and a PLD accountant.

This package sits above the domains: it imports :mod:`sharpdp.shuffle`, no domain imports it.
"""
