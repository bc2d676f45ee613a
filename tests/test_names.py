"""Names that explain themselves: the two scheme registries, the renamed modules, one vocabulary.

The straggler-model interface (``sample`` / ``sample_many`` for every model) is tested in
test_stragglers.py (``test_every_model_honours_the_interface``).
"""
import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest

import gcc
from gcc import cpgc


# --------------------------------------------------------------------------- the registries
def test_codes_registry_builds_every_scheme_by_key_and_alias():
    for key, cls in gcc.codes.SCHEMES.items():
        code = gcc.codes.make(key.upper(), 4, 12)
        assert type(code) is cls and (code.n_inputs, code.n_workers) == (4, 12)
    for alias, key in gcc.codes.ALIASES.items():
        assert type(gcc.codes.make(alias, 3, 8)) is gcc.codes.SCHEMES[key]
    assert set(gcc.codes.LABELS) == set(gcc.codes.SCHEMES)


def test_cpgc_registry_builds_every_scheme_by_key_and_alias():
    for key in cpgc.SCHEMES:
        code = cpgc.make_code(key, n_workers=8)
        assert isinstance(code, cpgc.CPGCCode) and code.name == key
    for alias, key in cpgc.ALIASES.items():
        assert cpgc.make_code(alias.upper(), n_workers=8).name == key
    assert set(cpgc.LABELS) == set(cpgc.SCHEMES)


def test_the_two_registries_are_disjoint_and_reject_each_others_keys():
    """Two kinds of scheme (encode/decode data points; assign gradient blocks): no shared key."""
    gcc_names = set(gcc.codes.SCHEMES) | set(gcc.codes.ALIASES)
    cpgc_names = set(cpgc.SCHEMES) | set(cpgc.ALIASES)
    assert not gcc_names & cpgc_names
    for name in sorted(cpgc_names):
        with pytest.raises(ValueError, match="^The 'name' parameter of make must be one of"):
            gcc.codes.make(name, 3, 8)
    for name in sorted(gcc_names):
        with pytest.raises(ValueError, match="^The 'scheme' parameter of make_code must be"):
            cpgc.make_code(name, n_workers=8)
    assert hasattr(gcc.codes.make(next(iter(gcc_names)), 3, 8), "decode")
    assert not hasattr(cpgc.make_code("rcsc", n_workers=8), "decode")


def test_the_registries_and_the_cpgc_core_say_why_they_differ():
    """Where the two meanings of K meet, each side names the other and says what K counts."""
    registry = importlib.import_module("gcc.codes.registry")
    for doc in (registry.__doc__, importlib.import_module("gcc.cpgc.codes").__doc__):
        assert "gcc.cpgc.make_code" in doc or "gcc.codes.make" in doc
        assert "workers" in doc and "K" in doc
    for doc in (cpgc.__doc__, importlib.import_module("gcc.cpgc.codes").__doc__):
        assert "K is the number of workers" in doc or "K is the\nnumber of workers" in doc
        assert "inputs" in doc


# --------------------------------------------------------------------------- renamed modules
def test_renamed_modules_import_and_the_old_names_are_gone():
    runs = importlib.import_module("gcc.straggler_runs")
    assert runs.longest_straggler_run is gcc.longest_straggler_run
    package = Path(gcc.__file__).parent        # (an editable install elsewhere may still import them)
    assert not (package / "runs.py").exists() and not (package / "codes" / "_full_spline.py").exists()
    assert not hasattr(gcc.backend, "LinearOperator")      # scipy's name: the codes' matrices are arrays


def test_one_format_value():
    """gcc.display.format_value writes numbers for pages; error messages use short_repr."""
    from gcc import display, validation
    assert not hasattr(validation, "format_value")
    assert display.format_value(412.345, "ms") == "412 ms"
    assert validation.short_repr("gcv") == "'gcv'"
    assert "Got 'gcv' instead." in str(validation.invalid("x", "f", "an int", "gcv"))


# --------------------------------------------------------------------------- one vocabulary
CORE_MODULES = ["gcc.codes.base", "gcc.codes.spline", "gcc.codes.berrut", "gcc.codes.lagrange",
                "gcc.codes.bspline", "gcc.codes.registry", "gcc.stragglers", "gcc.adversary",
                "gcc.straggler_runs"]


def _public_signatures():
    for name in CORE_MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if attr.startswith("_") or getattr(obj, "__module__", None) != name:
                continue
            if inspect.isclass(obj):
                yield f"{name}.{attr}", obj.__init__
                for meth, fn in vars(obj).items():
                    if not meth.startswith("_") and inspect.isfunction(fn):
                        yield f"{name}.{attr}.{meth}", fn
            elif inspect.isfunction(obj):
                yield f"{name}.{attr}", obj


def test_a_number_of_stragglers_is_called_stragglers():
    """The straggler models, the adversary and the codes' helpers share one argument name."""
    seen = []
    for where, fn in _public_signatures():
        params = inspect.signature(fn).parameters
        assert "n_stragglers" not in params, where
        if "stragglers" in params:
            seen.append(where)
    assert {"gcc.codes.base.block_received",
            "gcc.codes.base.Code.block_estimates", "gcc.codes.lagrange.LagrangeCode.recovery_threshold",
            "gcc.stragglers.FixedCount", "gcc.stragglers.ContiguousBlock", "gcc.stragglers.WorstCase",
            "gcc.adversary.worst_case_stragglers", "gcc.adversary.block_losses"} <= set(seen)
    np.testing.assert_array_equal(gcc.codes.base.block_received(6, stragglers=2, start=1), [0, 3, 4, 5])
    assert gcc.LagrangeCode(3, 8).recovery_threshold(deg_f=1, stragglers=2) == 5
    assert gcc.FixedCount(stragglers=2).stragglers == 2
