"""More core entry points of the contract test (tests/test_contract_properties.py): splines, codes, CPGC master.

:func:`entries` builds one :class:`Entry` per public function, class or method of gcc/splines.py,
gcc/gcv.py, gcc/backend.py, gcc/codes and gcc/cpgc/{master, simulate, elimination} that the shared
module does not list yet: the smoothing helpers (``check_knots``, ``check_x_eval``,
``check_y``, the ``Knots`` constraint), the operators (``lagrange_matrix``,
``berrut_matrix``, ``banded_decoder``), what a code offers besides encode/decode (``decoder_matrix``,
``clear_cache``, ``with_params``, the ``check_finite`` flags) and the CPGC master's parts (``IncrementalRREF``,
``SimulationResult.summary``). Every message must be in the contract's form.

Kept apart from the shared module so that these cases can change without touching the others.
"""
from __future__ import annotations

import numpy as np


def _rref_add(row):
    from gcc.cpgc.master import IncrementalRREF

    rref = IncrementalRREF(3, sparse=False)
    rref.add(np.array([1.0, 1.0, 0.0]))
    return rref.add(row)


def entries(ns: dict) -> list:
    """The entries; ``ns`` is the contract module's namespace (Entry and the strategies)."""
    import contract_table as st

    import gcc
    from gcc import cpgc
    from gcc.codes.berrut import berrut_matrix
    from gcc.codes.bspline import banded_decoder
    from gcc.codes.lagrange import lagrange_matrix
    from gcc.cpgc.master import IncrementalRREF
    from gcc.splines import Knots, check_knots, check_x_eval, check_y

    Entry, ints, reals, FLAGS, real_arrays, index_arrays = (
        ns[k] for k in ("Entry", "ints", "reals", "FLAGS", "real_arrays", "index_arrays"))
    K, N, XN, X3 = ns["K"], ns["N"], ns["XN"], ns["X3"]
    xs = st.sampled_from([[-0.5, 0.2, 0.1], [0.0, 0.0, 0.5], [0.0, 1e-300, 0.5], [-0.5, 0.5j, 0.9],
                          [np.nan, 0, 1], "abc", [[0.1, 0.2, 0.3]], None])
    out = [
        Entry("splines.check_knots", check_knots, dict(x=XN, name="x", owner="f"), dict(x=xs)),
        Entry("splines.check_x_eval", check_x_eval, dict(x_eval=X3, owner="f"),
              dict(x_eval=real_arrays((K,), extra_axis=True, wrong_len=False))),
        Entry("splines.check_y", check_y, dict(y=np.ones(K), n=K, owner="f"),
              dict(y=real_arrays((K,), complex_ok=True))),
        Entry("splines.Knots", lambda gap, relative: Knots(gap=gap, relative=relative).convert([0.0, 0.5]),
              dict(gap=1e-12, relative=True), dict(gap=reals(0), relative=FLAGS)),
        Entry("lagrange_matrix", lagrange_matrix, dict(nodes=X3, z=XN),
              dict(nodes=xs, z=real_arrays((N,), extra_axis=True, wrong_len=False))),
        Entry("berrut_matrix", berrut_matrix, dict(nodes=X3, z=XN),
              dict(nodes=xs, z=real_arrays((N,), extra_axis=True, wrong_len=False))),
        Entry("banded_decoder", banded_decoder, dict(nodes=XN, alphas=X3),
              dict(nodes=st.one_of(xs, st.just(XN[:3])), alphas=real_arrays((K,), extra_axis=True, wrong_len=False))),
    ]
    for cls, extra in ((gcc.SplineCode, dict(lam_dec=1e-3)), (gcc.BerrutCode, {}), (gcc.LagrangeCode, {}),
                       (gcc.BSplineCode, {})):
        name = cls.__name__

        def code(cls=cls, extra=extra):
            return cls(K, N, **extra)

        out += [
            Entry(f"{name}.decoder_matrix", lambda received, code=code: code().decoder_matrix(received),
                  dict(received=list(range(N - 1))), dict(received=index_arrays(N, N - 1, none_ok=True))),
            Entry(f"{name}.clear_cache", lambda encoder, code=code: code().clear_cache(encoder),
                  dict(encoder=True), dict(encoder=FLAGS)),
            Entry(f"{name}.with_params", lambda n_workers, code=code: code().with_params(n_workers=n_workers),
                  dict(n_workers=N + 1), dict(n_workers=ints(K))),
            Entry(f"{name}.encode(check_finite)", lambda check_finite, code=code: code().encode(
                np.ones(K), check_finite=check_finite), dict(check_finite=True), dict(check_finite=FLAGS)),
            Entry(f"{name}.decode(check_finite)", lambda check_finite, code=code: code().decode(
                np.ones(N), check_finite=check_finite), dict(check_finite=False), dict(check_finite=FLAGS)),
        ]
    out += [
        Entry("cpgc.IncrementalRREF", IncrementalRREF, dict(n_unknowns=3, sparse=True, scale=1.0, tol=1e-9),
              dict(n_unknowns=ints(1), sparse=FLAGS, scale=reals(0), tol=reals(0, lo_open=True))),
        Entry("cpgc.IncrementalRREF.add", _rref_add, dict(row=np.array([0.0, 1.0, 1.0])),
              dict(row=real_arrays((3,), extra_axis=True))),
        Entry("cpgc.SimulationResult.summary",
              lambda level: cpgc.simulate("mds", n_workers=6, trials=20).summary(level),
              dict(level=0.9), dict(level=reals(0, 1, True, True))),
    ]
    return out
