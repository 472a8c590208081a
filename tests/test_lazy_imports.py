"""The command line's parser and the package's namespaces load no engine code (lazy imports, PEP 562)."""

import subprocess
import sys

import pytest


def test_cli_parser_loads_no_numpy_and_no_engine():
    code = ("import sys; from sharpdp.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('numpy', 'scipy', 'sharpdp.shuffle.accountant', 'sharpdp.distributed._engine')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("package", ["sharpdp.shuffle", "sharpdp.distributed"])
def test_every_public_name_resolves_to_its_defining_object(package):
    import importlib

    mod = importlib.import_module(package)
    for name in mod.__all__:
        value = getattr(mod, name)
        assert value is getattr(importlib.import_module(mod._MODULES[name]), name)
        assert name in dir(mod)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        mod.not_a_name  # noqa: B018


def test_submodules_are_attributes_after_importing_the_package():
    code = ("import sharpdp.shuffle as S, sharpdp.distributed as D; "
            "print(S.randomizers.bmg.bmg_chi_up.__name__, S.accountant.ShuffleAccountant.__name__, D._mean.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["bmg_chi_up", "ShuffleAccountant", "sharpdp.distributed._mean"]
