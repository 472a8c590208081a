"""Numba kernels (JIT-compiled lazily on first call; never imported by sharpdp/__init__)."""
