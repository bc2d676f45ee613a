"""The bad-input sweep of issue 26: one test per class of malformed or extreme input.

Each case was a silent wrong result, an O(N^2) stall or an unclear error; each now gives the
contract's ValueError naming the argument (or the file, folder, card or variable), or the
documented result, checked against an independent reference.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import nbformat
import numpy as np
import pytest

import gcc
from gcc import cpgc, reproduce
from gcc.codes import lagrange
from gcc.reproduce import cards

REPO = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- losses of no points
@pytest.mark.parametrize("func", [gcc.mse_loss, gcc.metrics.rmse_mean_of_norms, gcc.metrics.rmse_root_mean_square])
@pytest.mark.parametrize("shapes", [((0,), (0,)), ((0, 3), (0, 3)), ((4, 0, 2), (0, 2))])
def test_a_loss_of_no_points_is_an_error_not_nan(func, shapes):
    est, true = np.zeros(shapes[0]), np.zeros(shapes[1])
    with pytest.raises(ValueError, match=rf"'true' parameter of {func.__name__} must be an array with at "
                                         r"least one point on its K axis"):
        func(est, true)


# --------------------------------------------------------------------------- CPGC: q near boundaries
_DECIMALS = [f"{i / 20:.2f}" for i in range(20)] + ["0.15", "0.3", "0.7", "0.999", "0.9999999999999999"]


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 5, 6, 7, 10, 20, 40, 64, 100])
def test_required_blocks_is_the_ceiling_for_q_as_written(n_blocks):
    for text in _DECIMALS:
        expected = math.ceil(Decimal(n_blocks) * (1 - Decimal(text)))      # exact decimal arithmetic
        assert cpgc.required_blocks(n_blocks, float(text)) == expected, (n_blocks, text)


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 5, 6, 10, 40])
def test_required_blocks_just_below_and_above_every_boundary(n_blocks):
    """q = 1 - m/n written as a decimal asks for m blocks; the float just below it for m + 1, just
    above it for m (the exact binary value of those floats is the reference)."""
    for m in range(1, n_blocks + 1):
        q = float(Decimal(n_blocks - m) / Decimal(n_blocks)) if (n_blocks - m) * 10 ** 6 % n_blocks == 0 else None
        if q is None:               # 1 - m/n is no short decimal (e.g. 1/3): covered by the float test below
            continue
        assert cpgc.required_blocks(n_blocks, q) == m, (n_blocks, m)
        for side in (0.0, 1.0):
            near = float(np.nextafter(q, side))
            if near == q or not 0 <= near < 1:
                continue
            exact = math.ceil(n_blocks * (1 - Fraction(near)))
            assert cpgc.required_blocks(n_blocks, near) == exact == (m + 1 if side == 0.0 else m)


def test_a_tolerance_just_below_one_still_waits_for_one_block():
    q = float(np.nextafter(1.0, 0.0))
    assert [cpgc.required_blocks(n, q) for n in (1, 5, 40, 1000)] == [1, 1, 1, 1]
    master = cpgc.Master(cpgc.make_code("rcsc", 6), q)
    assert master.need == 1 and not master.complete


# --------------------------------------------------------------------------- LCC: many received workers
def _decoder(code, received, direct):
    code.clear_cache()
    saved = lagrange.DIRECT_MAX_RECEIVED
    lagrange.DIRECT_MAX_RECEIVED = 10 ** 9 if direct else 0
    try:
        return code.decoder_matrix(received)
    finally:
        lagrange.DIRECT_MAX_RECEIVED = saved
        code.clear_cache()


@pytest.mark.parametrize("points", ["chebyshev", "equispaced"])
@pytest.mark.parametrize("given_betas", [False, True])
@pytest.mark.parametrize("n_workers, n_stragglers", [(12, 1), (40, 5), (60, 3), (200, 20)])
def test_lcc_straggler_corrected_weights_equal_the_direct_sums(points, given_betas, n_workers, n_stragglers):
    rng = np.random.default_rng(n_workers + n_stragglers)
    betas = np.sort(rng.uniform(-1, 1, n_workers)) if given_betas else None
    code = gcc.LagrangeCode(4, n_workers, points=points, betas=betas)
    received = np.sort(rng.choice(n_workers, n_workers - n_stragglers, replace=False))
    direct, corrected = _decoder(code, received, True), _decoder(code, received, False)
    np.testing.assert_allclose(corrected, direct, rtol=0, atol=1e-11 * np.abs(direct).max())


def test_lcc_decode_of_many_workers_does_no_pairwise_work(monkeypatch):
    """N = 6000, S = 30: the weights come from the closed form corrected for the stragglers (no sum
    over |F| x |F| pairs), and the decode still recovers a polynomial f exactly."""
    calls = []
    real = lagrange._log_weights
    monkeypatch.setattr(lagrange, "_log_weights", lambda nodes: calls.append(len(nodes)) or real(nodes))
    code = gcc.LagrangeCode(3, 6000)
    rng = np.random.default_rng(0)
    received = np.sort(rng.choice(6000, 6000 - 30, replace=False))
    X = np.array([0.3, -0.2, 0.5])
    est = code.decode(code.encode(X)[received] ** 2, received)      # f = x^2: degree 4 in z
    np.testing.assert_allclose(est, X ** 2, atol=1e-8)
    assert all(n <= 3 for n in calls), calls                        # only the encoder's K nodes


def test_lcc_given_betas_compute_the_full_weights_once(monkeypatch):
    calls = []
    real = lagrange._log_weights
    monkeypatch.setattr(lagrange, "_log_weights", lambda nodes: calls.append(len(nodes)) or real(nodes))
    betas = np.sin(np.linspace(-np.pi / 2, np.pi / 2, 2600)) * (1 - 1e-9)    # Chebyshev-like, given
    code = gcc.LagrangeCode(2, 2600, betas=betas)
    for seed in range(3):
        received = np.sort(np.random.default_rng(seed).choice(2600, 2590, replace=False))
        code.decoder_matrix(received)
    assert [n for n in calls if n > 2] == [2600]


# --------------------------------------------------------------------------- the model cache
@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gcc.dnn import data, training

    folder = tmp_path_factory.mktemp("cache")
    digits = data.load_digits16(size=28)
    previous = os.environ.get("GCC_MODEL_CACHE")
    os.environ["GCC_MODEL_CACHE"] = str(folder)
    try:
        first = training.train_embedded_model("lenet5", data=digits, recipe=_FAST, threads=1)
    finally:
        os.environ.pop("GCC_MODEL_CACHE") if previous is None else os.environ.update(GCC_MODEL_CACHE=previous)
    return training, digits, folder, first


_FAST = {"epochs": 1, "train_images": 256, "warmup_epochs": 0}


def _again(trained, monkeypatch, folder=None):
    training, digits, cache, _ = trained
    monkeypatch.setenv("GCC_MODEL_CACHE", str(folder or cache))
    return training.train_embedded_model("lenet5", data=digits, recipe=_FAST, threads=1)


def test_the_cache_keeps_a_checksum_beside_each_weights_file(trained, monkeypatch):
    folder, key = trained[2], trained[3].key
    weights = folder / f"{key}.pt"
    recorded = (folder / f"{key}.pt.sha256").read_text().split()[0]
    assert recorded == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert _again(trained, monkeypatch).cache_hit


def test_a_flipped_bit_in_cached_weights_is_an_error_naming_the_file(trained, monkeypatch, tmp_path):
    folder, key = trained[2], trained[3].key
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in (f"{key}.pt", f"{key}.pt.sha256", f"{key}.json"):
        (copy / name).write_bytes((folder / name).read_bytes())
    raw = bytearray((copy / f"{key}.pt").read_bytes())
    raw[len(raw) // 2] ^= 0x01
    (copy / f"{key}.pt").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=rf"must be a model cache whose weights match their checksums.*{key}\.pt"):
        _again(trained, monkeypatch, copy)


def test_an_entry_written_before_checksums_loads_and_gets_one(trained, monkeypatch, tmp_path):
    folder, key = trained[2], trained[3].key
    old = tmp_path / "old"
    old.mkdir()
    for name in (f"{key}.pt", f"{key}.json"):               # as older versions wrote the cache
        (old / name).write_bytes((folder / name).read_bytes())
    again = _again(trained, monkeypatch, old)
    assert again.cache_hit and again.test_accuracy == trained[3].test_accuracy
    assert (old / f"{key}.pt.sha256").read_text().split()[0] == hashlib.sha256(
        (old / f"{key}.pt").read_bytes()).hexdigest()


@pytest.mark.parametrize("entry, value", [("test_accuracy", 7.0), ("val_accuracy", "high"),
                                          ("train_seconds", -1.0)])
def test_a_cached_accuracy_out_of_range_names_the_file(trained, monkeypatch, tmp_path, entry, value):
    folder, key = trained[2], trained[3].key
    for name in (f"{key}.pt", f"{key}.pt.sha256"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    meta = json.loads((folder / f"{key}.json").read_text())
    meta[entry] = value
    (tmp_path / f"{key}.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=rf"{key}\.json' parameter of train_model must be a model cache entry "
                                         rf"whose '{entry}'"):
        _again(trained, monkeypatch, tmp_path)


def test_a_model_cache_at_a_file_fails_before_training(trained, monkeypatch, tmp_path):
    training = trained[0]
    target = tmp_path / "not-a-folder"
    target.write_text("x")

    def no_training(*args, **kwargs):
        raise AssertionError("trained before checking GCC_MODEL_CACHE")

    monkeypatch.setattr(training, "_fit", no_training)
    for folder in (target, target / "below"):
        with pytest.raises(ValueError, match=r"'GCC_MODEL_CACHE' parameter of train_model must be a folder"):
            _again(trained, monkeypatch, folder)


# --------------------------------------------------------------------------- IDX files
def test_float64_idx_images_are_rejected_naming_the_file(tmp_path):
    pytest.importorskip("torch")
    from gcc.dnn import data

    def idx(array, code):
        header = bytes([0, 0, code, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
        return header + array.astype({0x08: ">u1", 0x0E: ">f8"}[code]).tobytes()

    rng = np.random.default_rng(0)
    (tmp_path / "train-images-idx3-ubyte").write_bytes(idx(rng.uniform(0, 1, (20, 28, 28)), 0x0E))
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(idx(np.arange(20) % 10, 0x08))
    (tmp_path / "t10k-images-idx3-ubyte").write_bytes(idx(rng.integers(0, 256, (10, 28, 28)), 0x08))
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(idx(np.arange(10) % 10, 0x08))
    with pytest.raises(ValueError, match=r"must be IDX files of uint8 images and labels.*train-images-idx3-ubyte "
                                         r"holds float64 images"):
        data.load_mnist_format(tmp_path, val_size=5)


# --------------------------------------------------------------------------- results folders
def test_a_results_root_that_cannot_be_written_names_the_folder(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("x")
    monkeypatch.setenv("GCC_RESULTS_ROOT", str(blocked))
    with pytest.raises(ValueError, match=r"'GCC_RESULTS_ROOT' parameter of RunContext must be a folder "
                                         r"this process can create and write.*file/nb"):
        gcc.results.RunContext("nb", {"seed": 0})
    with pytest.raises(ValueError, match=r"'GCC_RESULTS_ROOT' parameter of results_dir"):
        gcc.results.results_dir("nb")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_results_folder_names_the_folder(tmp_path, monkeypatch):
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb").chmod(0o555)
    try:
        with pytest.raises(ValueError, match=r"Permission denied"):
            gcc.results.RunContext("nb", {"seed": 0}, root=tmp_path)
    finally:
        (tmp_path / "nb").chmod(0o755)


# --------------------------------------------------------------------------- the runner
_FRONT = ("---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
          "    format_version: 0.13\nkernelspec:\n  display_name: Python 3\n  language: python\n"
          "  name: python3\n---\n\n# tiny\n\n")


def _text_notebook(folder: Path, parameters: str, profiles: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "tiny.md"
    source.write_text(_FRONT + "```{code-cell} ipython3\n:tags: [parameters]\n" + parameters
                      + "\n```\n\n```{code-cell} ipython3\nprint(n)\n```\n")
    (folder / "tiny.yaml").write_text(json.dumps({"title": "Tiny", "order": 1, "profiles": profiles}))
    return source


@pytest.mark.parametrize("value, expected", [(7, "a list"), ("20, 40", "a list"), ({"a": 1}, "a list")])
def test_a_card_value_of_the_wrong_type_is_rejected_by_the_runner(tmp_path, value, expected):
    _text_notebook(tmp_path, "seed = 0\nn = 3\nn_workers_grid = [20, 40]\nlam = 0.5", {"ci": {"n_workers_grid": value}})
    card = reproduce.discover(tmp_path)["tiny"]
    with pytest.raises(ValueError, match=rf"'profiles.ci.n_workers_grid' parameter of run card .*tiny.yaml must be "
                                         rf"{expected} \(the type of the notebook's default n_workers_grid = \[20, 40\]\)"):
        reproduce.resolve_parameters(card, "ci")


@pytest.mark.parametrize("key, value, ok", [("n", 2, True), ("n", 2.5, False), ("n", True, False),
                                            ("lam", 1, True), ("lam", "x", False), ("flag", 1, False),
                                            ("name", "b", True), ("name", 3, False), ("anything", [1], True)])
def test_card_types_follow_the_notebook_defaults(tmp_path, key, value, ok):
    _text_notebook(tmp_path, "seed = 0\nn = 3\nlam = 0.5\nflag = False\nname = 'a'\nanything = None",
                   {"paper": {key: value}})
    card = reproduce.discover(tmp_path)["tiny"]
    if ok:
        assert reproduce.resolve_parameters(card, "paper")[1][key] == value
    else:
        with pytest.raises(ValueError, match=rf"'profiles.paper.{key}' parameter of run card"):
            reproduce.resolve_parameters(card, "paper")


def test_a_default_that_is_not_a_literal_is_named(tmp_path):
    """The runner records every parameter: a default it cannot read without running the cell is refused."""
    _text_notebook(tmp_path, "seed = 0\nn = 3\ngrid = list(range(3))", {"ci": {"n": 2}})
    with pytest.raises(ValueError, match=r"^The 'grid' parameter of notebook .*tiny.md must be a literal in the cell "
                                         r"tagged 'parameters' \(the runner records it\)\. Got 'list\(range\(3\)\)'"):
        reproduce.resolve_parameters(reproduce.discover(tmp_path)["tiny"], "ci")


def test_the_repository_cards_agree_with_their_notebooks_types():
    for card in reproduce.discover(REPO / "notebooks").values():
        for profile in cards.PROFILES:
            reproduce.resolve_parameters(card, profile)


def test_a_syntax_error_in_the_parameters_cell_names_its_line(tmp_path):
    _text_notebook(tmp_path / "md", "seed = 0\nn = = 3", {"ci": {"n": 2}})
    with pytest.raises(ValueError, match=r"'line 18' parameter of notebook .*tiny.md must be valid Python in the "
                                         r"cell tagged 'parameters' \(invalid syntax.*Got 'n = = 3'"):
        reproduce.resolve_parameters(reproduce.discover(tmp_path / "md")["tiny"], "ci")
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("seed = 0\nfor = 1")
    cell.metadata["tags"] = ["parameters"]
    nb.cells.append(cell)
    (tmp_path / "js").mkdir()
    nbformat.write(nb, tmp_path / "js" / "tiny.ipynb")
    (tmp_path / "js" / "tiny.yaml").write_text(json.dumps({"title": "T", "order": 1, "profiles": {"ci": {"seed": 1}}}))
    with pytest.raises(ValueError, match=r"'line 2 of the cell' parameter of notebook .*tiny.ipynb"):
        reproduce.resolve_parameters(reproduce.discover(tmp_path / "js")["tiny"], "ci")


def test_the_runner_names_a_results_folder_it_cannot_write(tmp_path):
    _text_notebook(tmp_path / "nb", "seed = 0\nn = 3", {"ci": {"n": 2}})
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / "tiny").write_text("a file where the notebook's folder goes")
    proc = subprocess.run([sys.executable, "-m", "gcc.reproduce", "--notebooks-dir", str(tmp_path / "nb"),
                           "--output-dir", str(tmp_path / "gen"), "--results-root", str(tmp_path / "res"),
                           "--profile", "ci"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"cannot write {tmp_path / 'res' / 'tiny'} in the folder {tmp_path / 'res'}" in proc.stderr


# --------------------------------------------------------------------------- the second sweep (issue 26)
_X4 = np.linspace(-1, 1, 12).reshape(4, 3)
_TRIALS = dict(f=np.square, X=_X4, straggler_model=gcc.FixedCount(2), trials=2, seed=0)


@pytest.mark.parametrize("call, pattern", [
    (lambda: gcc.accuracy(np.zeros((0, 3)), np.zeros(0, int)), r"'scores' parameter of accuracy .* K, C >= 1"),
    (lambda: gcc.mean_ci(np.zeros((2, 2))), r"'values' parameter of mean_ci must be an array of shape \(n,\)"),
    (lambda: gcc.run_trials({"": gcc.SplineCode(4, 8)}, **_TRIALS), r"'codes' .* non-empty str keys"),
    (lambda: gcc.run_trials({"gcc": gcc.SplineCode(4, 8)}, **dict(_TRIALS, X=np.zeros((4, 0)))),
     r"'X' parameter of run_trials .* no empty axis .*\(4, 0\)"),
    (lambda: gcc.summarize(gcc.run_trials({"gcc": gcc.SplineCode(4, 8)}, **_TRIALS).iloc[:0]),
     r"'df' parameter of summarize must be a table with at least one row"),
    (lambda: cpgc.make_code("rcsc", 10**7), r"'n_workers' parameter of make_code must be an int in \[1, 4096\]"),
])
def test_what_used_to_return_nan_an_empty_table_or_a_memory_error_is_named(call, pattern):
    """Each returned NaN, an empty or zero-width result, or a MemoryError, silently."""
    with pytest.raises(ValueError, match=pattern):
        call()


# --------------------------------------------------------------------------- the third sweep (issue 26)
_CODE48 = gcc.SplineCode(4, 8)
_RUN = dict(codes={"gcc": _CODE48}, f=np.sin, X=np.linspace(-1, 1, 4), trials=2, seed=0)


@pytest.mark.parametrize("call, pattern", [
    (lambda: gcc.Bernoulli(0.5, min_survivors=9).sample(np.random.default_rng(0), 8),
     r"'min_survivors' parameter of Bernoulli must be an int <= n_workers \(= 8\)\. Got 9"),
    (lambda: gcc.Bernoulli(0.5, min_survivors=9).sample_many(np.random.default_rng(0), 8, 3),
     r"'min_survivors' parameter of Bernoulli must be an int <= n_workers \(= 8\)\. Got 9"),
    (lambda: gcc.run_trials(straggler_model=gcc.Bernoulli(0.5, min_survivors=9), **_RUN),
     r"'straggler_model.min_survivors' parameter of run_trials must be an int in \[1, n_workers = 8\]\. Got 9"),
    (lambda: gcc.run_trials(straggler_model=gcc.FixedCount(1), extra_columns={3: 1}, **_RUN),
     r"'extra_columns' parameter of run_trials must be a dict with str keys .*3 is no str"),
    (lambda: cpgc.arrival_times(cpgc.uncoded_cyclic_code(2, 2), np.ones((0, 2))),
     r"'speeds' parameter of arrival_times must be an array of shape \(trials >= 1, 2\) \(it has no rows\)"),
    (lambda: cpgc.completion(cpgc.uncoded_cyclic_code(2, 2), np.ones((0, 2))),
     r"'speeds' parameter of completion must be an array of shape \(trials >= 1, 2\) \(it has no rows\)"),
    (lambda: cpgc.rref_recoverable(np.ones((2, 0))),
     r"'matrix' parameter of rref_recoverable must be a 2-D array with at least one column .*\(2, 0\)"),
    (lambda: gcc.chebyshev_points(10**12), r"'n' parameter of chebyshev_points must be an int in \[1, 10000000\]"),
    (lambda: gcc.equispaced_points(10**12), r"'n' parameter of equispaced_points must be an int in \[1, 10000000\]"),
    (lambda: gcc.SplineCode(10**15, 10**15), r"'n_inputs' parameter of SplineCode must be an int in \[1, 10000000\]"),
    (lambda: gcc.LagrangeCode(4, 10**15), r"'n_workers' parameter of LagrangeCode must be an int in \[1, 10000000\]"),
    (lambda: gcc.relacc(np.ones((2, 3)), np.eye(3), [0, 1, 2]),
     r"'est' parameter of relacc must be an array of shape \(\.\.\., K, C\) = \(\.\.\., 3, 3\) .*\(2, 3\)"),
    (lambda: gcc.summarize(gcc.run_trials(straggler_model=gcc.FixedCount(1), **_RUN).assign(loss=np.inf)),
     r"'value' parameter of summarize must be the name of a column of finite \(or NaN\) numbers .*Got 'loss'"),
    (lambda: gcc.evaluate(_CODE48, np.sin, None, range(8)), r"'X' parameter of evaluate must be an array"),
])
def test_a_bound_the_work_would_break_is_named_first(call, pattern):
    """Each returned a flagged or empty result, a NaN table, a MemoryError or a message naming another argument."""
    with pytest.raises(ValueError, match=pattern):
        call()


# --------------------------------------------------------------------------- the third sweep: runner, results, course
@pytest.mark.parametrize("profile", ["nope", None, 3, "", "CI"])
def test_an_unknown_profile_is_refused_by_every_public_path(tmp_path, profile):
    _text_notebook(tmp_path, "seed = 0\nn = 3", {})
    card = reproduce.discover(tmp_path)["tiny"]
    with pytest.raises(ValueError, match=r"^The 'profile' parameter of resolve_parameters must be one of 'ci', "):
        reproduce.resolve_parameters(card, profile)
    with pytest.raises(ValueError, match=r"^The 'profile' parameter of run_batch must be one of 'ci', "):
        reproduce.run_batch(profile, notebooks_dir=tmp_path)


def test_a_missing_notebooks_dir_or_a_file_and_a_bool_timeout_are_refused(tmp_path):
    (tmp_path / "afile").write_text("x")
    for folder, detail in ((tmp_path / "missing", "it does not exist"), (tmp_path / "afile", "it is a file")):
        with pytest.raises(ValueError, match=rf"'notebooks_dir' parameter of discover .*\({detail}\)"):
            reproduce.discover(folder)
    with pytest.raises(ValueError, match=r"^The 'timeout' parameter of run_batch must be .* Got True instead"):
        reproduce.run_batch("ci", timeout=True)
    _text_notebook(tmp_path / "nb", "seed = 0\nn = 3", {})
    for kwargs, pattern in (({"overrides": "x"}, r"'overrides' parameter of run_batch must be a mapping or None"),
                            ({"notebooks_dir": 3}, r"'notebooks_dir' parameter of run_batch must be a path or None"),
                            ({"output_dir": 3}, r"'output_dir' parameter of run_batch must be a folder")):
        with pytest.raises(ValueError, match=pattern):
            reproduce.run_batch("ci", **{"notebooks_dir": tmp_path / "nb", **kwargs})
    with pytest.raises(ValueError, match=r"^The 'all_pages' parameter of build_book must be a bool"):
        reproduce.build_book(tmp_path / "missing")


@pytest.mark.parametrize("call, pattern", [
    (lambda root: gcc.results.RunContext("nb\n", root=root), r"'notebook' parameter of RunContext .* Got 'nb\\n'"),
    (lambda root: gcc.results.RunContext("nb", {3: 1}, root=root), r"'parameters' parameter of RunContext .* str keys"),
    (lambda root: gcc.results.RunContext("nb", {"x": object()}, root=root), r"'parameters' .* JSON values"),
    (lambda root: gcc.results.RunContext("nb", {"x": math.nan}, root=root), r"'parameters' .* Got \{'x': nan\}"),
    (lambda root: gcc.results.RunContext("nb", root=3), r"^The 'root' parameter of RunContext must be a path"),
    (lambda root: gcc.results.RunContext("nb", root=root).save_json({"a": math.nan}, "j"),
     r"'data' parameter of RunContext.save_json must be a mapping"),
    (lambda root: gcc.results.RunContext("nb", root=root).save_json({"a": object()}, "j"),
     r"'data' parameter of RunContext.save_json must be a mapping"),
    (lambda root: gcc.results.RunContext("nb", root=root).save_json({3: 1}, "j"), r"'data' .* str keys"),
    (lambda root: gcc.results.RunContext("nb", root=root).save_table({"a": [1]}, "t"),
     r"'table' parameter of RunContext.save_table must be a pandas.DataFrame or a list of row mappings"),
    (lambda root: gcc.results.RunContext("nb", root=root).save_table([{"a": object()}], "t"),
     r"'table' parameter of RunContext.save_table must be a table of numbers, text and missing values"),
    (lambda root: gcc.results.RunContext("nb", root=root).save_table([{"a": 1}], "t", note=object()),
     r"'notes' parameter of RunContext.save_table must be a mapping"),
])
def test_what_json_or_a_csv_cannot_hold_is_refused_by_the_run_context(tmp_path, call, pattern):
    """Each was written silently: a key as its str, an object as its repr (an address), NaN as invalid JSON."""
    with pytest.raises(ValueError, match=pattern):
        call(tmp_path)
    assert not list(tmp_path.glob("nb/*.csv")) and not list(tmp_path.glob("nb/j.json"))


def test_valid_numpy_values_missing_cells_and_text_are_kept(tmp_path):
    run = gcc.results.RunContext("nb", {"seed": 0, "grid": (1, 2), "lam": None}, root=tmp_path)
    run.save_json({"n": np.int64(3), "x": np.array([0.5, 1.0]), "nested": {0: "a"}}, "j")
    run.save_table([{"a": "gcc", "b": None, "c": math.nan}, {"a": "bacc", "b": 1, "c": 2.0}], "t", sources=["x"])
    run.value("k", np.float32(0.5), note="text")
    record = gcc.results.read_run_record(tmp_path / "nb")
    assert json.loads((tmp_path / "nb" / "j.json").read_text()) == {"n": 3, "x": [0.5, 1.0], "nested": {"0": "a"}}
    assert record["parameters"] == {"seed": 0, "grid": [1, 2], "lam": None} and record["values"]["k"]["text"] == "0.5"
    assert record["tables"]["t"] == {"file": "t.csv", "rows": 2, "columns": ["a", "b", "c"], "sources": ["x"]}


def test_a_broken_run_record_is_an_error_a_missing_one_is_empty(tmp_path):
    (tmp_path / "afile").write_text("x")
    assert gcc.results.read_run_record(tmp_path / "missing") == {}      # never run
    assert gcc.results.read_run_record(tmp_path / "afile") == {}        # the run's write names the file
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "run.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"^The 'folder' parameter of read_run_record must be a folder whose "
                                         r"run.json is JSON \(Expecting property name"):
        gcc.results.read_run_record(tmp_path / "bad")


def test_a_bad_number_unit_or_digits_of_a_value_names_the_value(tmp_path):
    run = gcc.results.RunContext("nb", root=tmp_path)
    with pytest.raises(ValueError, match=r"^The 'digits' parameter of RunContext.value\('k'\) must be an int in"):
        run.value("k", 1.5, digits=0)
    with pytest.raises(ValueError, match=r"^The 'note' parameter of RunContext.value must be a str"):
        run.value("k", 1.5, note=3)


@pytest.mark.parametrize("call, pattern", [
    (lambda: _course().variant("01_berrut", 0, n_inputs=0), r"'n_inputs' parameter of variant must be an int >= 1"),
    (lambda: _course().feedback.compare_scalar(1.0, math.nan, name="x"),
     r"'reference' parameter of compare_scalar must be a finite real number \(reference = nan\)"),
    (lambda: _course().feedback.compare_arrays(np.ones(3), np.full(3, np.nan), name="x"),
     r"'reference' parameter of compare_arrays must be an array of finite"),
    (lambda: _course().feedback.compare_arrays(np.ones(3), np.ones(3), name=None), r"'name' parameter of compare_"),
    (lambda: _course().feedback.compare_arrays(np.ones(3), np.ones(3), name=3), r"'name' parameter of compare_arrays"),
    (lambda: _course().feedback.compare_scalar(1.0, 1.0, name=""), r"'name' parameter of compare_scalar"),
    (lambda: _course().course.run_nbgrader("--version", timeout=-1), r"'timeout' parameter of run_nbgrader"),
    (lambda: _course().course.run_nbgrader("--version", timeout=0.0), r"'timeout' parameter of run_nbgrader"),
    (lambda: _course().course.run_nbgrader("--version", timeout=math.nan), r"'timeout' parameter of run_nbgrader"),
    (lambda: _course().course.run_nbgrader(3), r"'args' parameter of run_nbgrader must be a sequence of str"),
    (lambda: _course().gradebook.pending("not a url"), r"'db_url' parameter of pending must be a database URL"),
    (lambda: _course().gradebook.pending(3), r"'db_url' parameter of pending must be a database URL"),
    (lambda: _course().gradebook.grade_written("nope", "ada", 1.0), r"'assignment' parameter of grade_written"),
    (lambda: _course().gradebook.grade_written("01_berrut", "ada", -1.0, db_url="sqlite:////nonexistent/gb.db"),
     r"'score' parameter of grade_written must be a finite real number >= 0"),
    (lambda: _course().gradebook.grade_written("01_berrut", "ada", "5", db_url="sqlite:////nonexistent/gb.db"),
     r"'score' parameter of grade_written"),
])
def test_bad_course_input_is_refused_before_nbgrader_or_the_gradebook_runs(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


# --------------------------------------------------------------------------- the sweep's dnn and distributed cases
def _dnn_distributed_cases():
    import pandas as pd

    from gcc.distributed import Replication, open_cluster, simulated_completion, summarize_latency, worker_addresses
    from gcc.distributed.inject import interruptible_sleep
    from gcc.dnn import data, models, training

    x = np.random.default_rng(0).normal(size=(6, 1, 28, 28)).astype(np.float32)
    y = np.arange(6) % 3
    tb = dict(config={"arch": "lenet5", "img_size": 28}, x_train=x, y_train=y, x_val=x, y_val=y, x_test=x, y_test=y,
              recipe={"epochs": 1}, use_cache=False)
    table = pd.DataFrame({"scheme": ["gcc"] * 3, "latency_s": [0.1, 0.2, 0.3], "loss": [0.1, 0.2, 0.3]})
    return [
        (lambda: data.image_batches(100, 4, 10**12, 0), r"'n_batches' parameter of image_batches .* \[1, 1000000\]"),
        (lambda: data.load_digits16(size=10**6), r"'size' parameter of load_digits16 .* \[8, 256\]"),
        (lambda: models.LeNet5(img_size=10**6), r"'img_size' parameter of LeNet5 .* \[12, 1024\]"),
        (lambda: training.evaluate_accuracy(models.LeNet5(), np.full_like(x, np.nan), y),
         r"'x' parameter of evaluate_accuracy must be free of NaN and inf \(x\[0, 0, 0, 0\] = nan\)"),
        (lambda: training.train_model(**dict(tb, recipe={"epochs": 0})),
         r"'recipe' .* \(epochs = 0 is not an int >= 1\)"),
        (lambda: training.train_model(**dict(tb, x_val=np.full_like(x, np.inf))),
         r"'x_val' parameter of train_model must be free of NaN and inf"),
        (lambda: training.train_model(**dict(tb, x_train=np.ones((6, 1, 27, 28), np.float32))),
         r"'x_train' parameter of train_model must be images of shape \(n, 1, 28, 28\) .* \(its images are "
         r"\(1, 27, 28\)\)"),
        (lambda: open_cluster(n_workers=1, processes="yes").__enter__(),
         r"'processes' parameter of open_cluster must be a bool"),
        (lambda: open_cluster(address=3).__enter__(), r"'address' parameter of open_cluster"),
        (lambda: open_cluster(address="not an address", timeout=3).__enter__(), r"'address' parameter of open_cluster"),
        (lambda: worker_addresses(None), r"'client' parameter of worker_addresses must be a distributed.Client"),
        (lambda: Replication(2, 4).encode(np.full(2, np.nan)), r"'X' parameter of Replication.encode .* NaN"),
        (lambda: Replication(2, 4).decode(np.full(2, np.nan), [0, 1]), r"'Y' parameter of Replication.decode .* NaN"),
        (lambda: interruptible_sleep(-1.0), r"'seconds' parameter of interruptible_sleep .* >= 0\.0. Got -1.0"),
        (lambda: simulated_completion(None, np.ones(4)), r"'code' parameter of simulated_completion must be a code"),
        (lambda: simulated_completion("gcc", np.ones(4)), r"'code' parameter of simulated_completion"),
        (lambda: summarize_latency(table, by=None), r"'by' parameter of summarize_latency .* Got None"),
        (lambda: summarize_latency(table, by=3), r"'by' parameter of summarize_latency .* Got 3"),
    ]


@pytest.mark.parametrize("case", range(18))
def test_the_dnn_and_distributed_sweep_cases_are_named(case):
    """Each hung, allocated without bound, passed NaN through, was ignored or failed deep inside torch or Dask."""
    call, pattern = _dnn_distributed_cases()[case]
    with pytest.raises(ValueError, match=pattern):
        call()


def test_min_survivors_up_to_n_workers_samples_as_before():
    rng = np.random.default_rng(3)
    assert gcc.Bernoulli(0.5, min_survivors=8).sample_many(rng, 8, 2).tolist() == (
        np.random.default_rng(3).random((2, 8)) >= 0.5).tolist()


def test_a_timm_checkpoint_that_is_no_state_dict_names_checkpoint_path(tmp_path):
    from gcc.dnn import models

    path = tmp_path / "afile.txt"
    path.write_text("not a checkpoint")
    with pytest.raises(ValueError, match=r"'checkpoint_path' parameter of timm_model must be a state-dict checkpoint"):
        models.timm_model("resnet18", checkpoint_path=path)


def test_a_file_where_a_release_or_book_folder_goes_is_named(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match=r"'out' parameter of generate_release must be a folder .*\(File exists\)"):
        _course().course.generate_release(tmp_path / "afile")
    with pytest.raises(ValueError, match=r"'out' parameter of generate_release must be a folder .* Got 'None'"):
        _course().course.generate_release(None)
    with pytest.raises(ValueError, match=r"'dest' parameter of sync_book must be a folder .*\(File exists\)"):
        _course().build.sync_book([], dest=tmp_path / "afile")


def test_zero_stragglers_is_still_a_variant():
    assert _course().variant("01_berrut", 0, n_stragglers=0).n_stragglers == 0


def _course():
    """The course's modules, imported on use (nbgrader is slow to import)."""
    from types import SimpleNamespace

    from gcc.assignments import build, course, feedback, gradebook, variants

    return SimpleNamespace(build=build, course=course, feedback=feedback, gradebook=gradebook, variant=variants.variant)


def test_a_bad_format_specification_names_fmt(tmp_path):
    from gcc.results import RunContext

    ctx = RunContext("nb", root=tmp_path)
    with pytest.raises(ValueError, match=r"^The 'fmt' parameter of RunContext.value\('k'\) must be a format "
                                         r"specification of a number \(Invalid format specifier"):
        ctx.value("k", 1.0, fmt="{:q}")
