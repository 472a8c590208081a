"""The compiled core's surface: stubs match the extension, kernels are Python-free, mypy passes."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUB = ROOT / "python" / "sharpdp" / "_core.pyi"


def _stub_members() -> dict[str, set[str]]:
    tree = ast.parse(STUB.read_text())
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            cls = classes[ast.unparse(node.annotation)]
            out[node.target.id] = {b.name if isinstance(b, ast.FunctionDef) else b.target.id for b in cls.body
                                   if isinstance(b, (ast.FunctionDef, ast.AnnAssign))}
    return out


def test_stubs_match_the_extension():
    from sharpdp import _core

    stub = _stub_members()
    assert set(stub) == {"accountant", "samplers", "histogram", "crlb", "exact_krr"}
    for sub, names in stub.items():
        real = {n for n in dir(getattr(_core, sub)) if not n.startswith("_")}
        private = {n for n in names if n.startswith("_")}  # stubbed private members must exist too
        assert all(hasattr(getattr(_core, sub), n) for n in private), private
        names = names - private
        assert names == real, f"_core.{sub}: stub {sorted(names ^ real)} differ"


def test_kernels_do_not_include_python():
    for f in (ROOT / "cpp" / "kernels").iterdir():
        text = f.read_text()
        assert "pybind11" not in text and "Python.h" not in text and "py::" not in text, f.name


def test_samplers_match_the_kernel_check():
    # the Python binding draws the same streams as the standalone kernels
    import numpy as np

    from sharpdp import _core
    from sharpdp._rng import core_key

    z = _core.samplers.standard_normals(100, core_key(42), 1)
    y = _core.samplers._bmg_sample_float_reference(np.zeros((100, 1)), 0.0, 2.0, core_key(42), 3)
    assert np.array_equal(y[:, 0], 2.0 * z)


def test_core_errors_are_value_errors():
    import numpy as np

    from sharpdp import _core
    from sharpdp._rng import core_key

    with pytest.raises(ValueError, match="gamma"):
        _core.samplers._bmg_sample_float_reference(np.zeros((2, 1)), 1.5, 1.0, core_key(0))
    one = np.array([2**64 - 1], dtype=np.uint64)
    with pytest.raises(ValueError, match="grid_bits"):
        _core.samplers.bmg_grid_sample(np.zeros((2, 1)), 0, 60, 1.0, one, one, np.zeros(2, np.uint32), core_key(0))
    with pytest.raises(ValueError, match="guide"):
        _core.samplers.bmg_grid_sample(np.zeros((2, 1)), 0, 2, 1.0, one, one, np.ones(2, np.uint32), core_key(0))
    with pytest.raises(ValueError, match="categories"):
        _core.samplers.krr_sample(np.array([0, 7]), 3, 2**63, core_key(0))
    with pytest.raises(ValueError, match="counts"):
        _core.histogram.release(np.array([-1.0]), 1.0, 0.5, 10, core_key(0))
    with pytest.raises(ValueError, match="grid_bits"):
        _core.histogram.release(np.array([1.0]), 1.0, 0.5, 61, core_key(0))
    with pytest.raises(ValueError, match="counts"):
        _core.histogram.release_float(np.array([-1.0]), 1.0, 0.5, core_key(0))
