"""The runner's contract (issue 15): it checks everything it can before a notebook runs, every
message names the option, the file and the entry, and a batch killed at any moment leaves no
half-written result and is redone exactly where it stopped.

Tiny synthetic notebooks in temporary folders with their own cards; the real batch never runs.
"""
from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gcc import atomic, reproduce, results
from gcc.notebooks import parameters, read_source
from gcc.results import RunContext

from test_reproduce import code_cell, status_of, tiny, write_notebook, write_text_notebook

REPO = Path(__file__).resolve().parent.parent


def cli(capsys, *args: str) -> tuple[int, str]:
    """``python -m gcc.reproduce ARGS`` in this process: exit status and stderr."""
    rc = reproduce.main(list(args))
    return rc, capsys.readouterr().err


def folders(tmp: Path) -> list[str]:
    return ["--notebooks-dir", str(tmp / "nb"), "--output-dir", str(tmp / "gen"), "--results-root", str(tmp / "res")]


def message(excinfo) -> str:
    text = str(excinfo.value)
    assert "<unicode string>" not in text and "Traceback" not in text
    assert re.match(r"^The '.+' parameter of .+ must be .+\. Got .+ instead\.$", text, re.S), text
    return text


# --------------------------------------------------------------------------- run-card parameters
def test_a_typo_in_a_run_card_names_card_profile_key_and_the_closest_parameter(tmp_path, capsys):
    tiny(tmp_path / "nb", card={"title": "Tiny", "profiles": {"ci": {"n": 2}, "paper": {"seeds": 9}}})
    card = reproduce.discover(tmp_path / "nb")["tiny"]
    with pytest.raises(ValueError) as excinfo:
        reproduce.resolve_parameters(card, "ci")  # a typo in any profile, not only the one run
    text = message(excinfo)
    assert text.startswith("The 'profiles.paper' parameter of run card ") and "tiny.yaml" in text
    assert "declares in its parameters cell (did you mean 'seed'?)" in text and text.endswith("Got 'seeds' instead.")

    # The batch refuses before it runs anything (exit 2), --list too.
    rc, err = cli(capsys, *folders(tmp_path), "--profile", "ci")
    assert rc == 2 and "'profiles.paper'" in err and "'seeds'" in err
    assert not (tmp_path / "res" / "tiny" / "run.json").exists()
    assert cli(capsys, *folders(tmp_path), "--list")[0] == 2


def test_closest_names_and_notebooks_without_a_parameters_cell(tmp_path):
    write_notebook(tmp_path / "a", "plain", [("code", "seed = 0\nn_trials = 5", ["parameters"])],
                   {"profiles": {"ci": {"n_trails": 2}}})
    with pytest.raises(ValueError, match=r"did you mean 'n_trials'\?\)\. Got 'n_trails' instead\.$"):
        reproduce.resolve_parameters(reproduce.discover(tmp_path / "a")["plain"], "ci")
    write_notebook(tmp_path / "b", "bare", [("code", "x = 1", [])], {"profiles": {"ci": {"x": 2}}})
    with pytest.raises(ValueError, match="it has no code cell tagged 'parameters'"):
        reproduce.resolve_parameters(reproduce.discover(tmp_path / "b")["bare"], "ci")
    write_notebook(tmp_path / "c", "far", [("code", "alpha = 1", ["parameters"])], {"profiles": {"ci": {"zzz": 2}}})
    with pytest.raises(ValueError, match=r"\(valid names: alpha\)\. Got 'zzz' instead\.$"):
        reproduce.resolve_parameters(reproduce.discover(tmp_path / "c")["far"], "ci")


@pytest.mark.parametrize("card, pattern", [
    ({"depend": ["x"]}, r"^The 'entries' parameter of run card .*t\.yaml must be among title, order, depends, "
                        r"profiles \(did you mean 'depends'\?\)\. Got 'depend' instead\.$"),
    ({"profiles": {"papr": {}}}, r"'profiles' .* among ci, paper \(did you mean 'paper'\?\)\. Got 'papr' instead\.$"),
    ({"profiles": {"default": {"n": 2}}}, r"'profiles' .* \(the notebook's parameters cell holds the defaults\)\. "
                                          r"Got 'default' instead\.$"),
    ({"profiles": {"ci": [1, 2]}}, r"^The 'profiles\.ci' parameter of run card .*must be a mapping"),
    ({"profiles": {"ci": {1: 2}}}, r"'profiles\.ci' .* a mapping whose keys are parameter names\. Got \{1: 2\}"),
    ({"order": "soon"}, r"^The 'order' parameter of run card .*t\.yaml must be a finite real number\. Got 'soon'"),
    ({"order": [1]}, r"'order' .* Got \[1\] instead"),
    ({"order": True}, r"'order' .* Got True instead"),
    ({"order": float("nan")}, r"'order' .* Got nan instead"),
    ({"title": ["a"]}, r"'title' .* must be a str\. Got \['a'\] instead"),
    ({"depends": [3]}, r"'depends' .* Got \[3\] instead"),
])
def test_malformed_run_card_entries_name_the_file_and_the_entry(tmp_path, card, pattern):
    tiny(tmp_path, "t", card)
    with pytest.raises(ValueError, match=pattern) as excinfo:
        reproduce.discover(tmp_path)
    message(excinfo)


@pytest.mark.parametrize("text, line, pattern", [
    ("title: x\nprofiles:\n  ci: {n: 2: 3}\n", 3, r"valid YAML \(while parsing a flow mapping; line 3, column 7"),
    ("title: x\nprofiles:\n  ci:\n    n: 2\n    n: 3\n", 5, r"\('n' is set twice; line 5, column 5"),
    ("title: [unclosed\norder: 1\n", 2, r"\(while parsing a flow sequence; line 1, column 8"),
    ("\tprofiles: {}\n", 1, r"found character '\\t' that cannot start any token"),
])
def test_yaml_errors_name_the_file_and_the_line(tmp_path, text, line, pattern):
    tiny(tmp_path, "t", {})
    (tmp_path / "t.yaml").write_text(text)
    with pytest.raises(ValueError, match=pattern) as excinfo:
        reproduce.discover(tmp_path)
    text = message(excinfo)
    assert text.startswith("The 'path' parameter of run card ") and f"line {line}, column" in text
    assert "t.yaml" in str(excinfo.value)


def test_a_card_that_is_not_a_mapping_or_not_text_is_rejected(tmp_path):
    tiny(tmp_path, "t", {})
    (tmp_path / "t.yaml").write_text("- a\n- b\n")
    with pytest.raises(ValueError, match=r"must be a YAML file holding a mapping \(it holds a list\)") as excinfo:
        reproduce.discover(tmp_path)
    message(excinfo)
    (tmp_path / "t.yaml").write_bytes(b"title: \xff\xfe\n")
    with pytest.raises(ValueError, match=r"must be a UTF-8 text file \(byte 7 cannot be decoded\)"):
        reproduce.discover(tmp_path)


def test_the_repository_cards_pass_every_check():
    for card in reproduce.discover(REPO / "notebooks").values():
        for profile in reproduce.PROFILES:
            reproduce.resolve_parameters(card, profile)


# --------------------------------------------------------------------------- corrupt notebooks
JSON_CELL = {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None}


@pytest.mark.parametrize("content, pattern", [
    ('{"cells": [\n  {"cell_type": "code",}\n]}', r"^The 'path' parameter of notebook .*bad\.ipynb must be a notebook "
                                                 r"that jupytext and nbformat read \(Expecting property name "
                                                 r"enclosed in double quotes: line 2 column 24"),
    ("", r"'path' .* \(Expecting value: line 1 column 1"),
    ("[1, 2]", r"'path' .* must be a notebook that jupytext and nbformat read"),
    (json.dumps({"cells": [JSON_CELL, {**JSON_CELL, "cell_type": "cod"}], "metadata": {}, "nbformat": 4,
                 "nbformat_minor": 4}), r"^The 'path' parameter .* \(at cells\.1: .* is not valid under any of the "
                                      r"given schemas\)"),
    (json.dumps({"cells": [{**JSON_CELL, "metadata": {"tags": "parameters"}}], "metadata": {}, "nbformat": 4,
                 "nbformat_minor": 4}), r"^The 'path' parameter .* \(at cells\.0\.metadata\.tags: 'parameters' is "
                                        r"not of type 'array'\)"),
    (json.dumps({"cells": [{**JSON_CELL, "execution_count": "x"}], "metadata": {}, "nbformat": 4,
                 "nbformat_minor": 4}), r"\(at cells\.0\.execution_count: 'x' is not of type"),
])
def test_a_corrupt_json_notebook_names_the_file_and_the_field(tmp_path, content, pattern):
    (tmp_path / "bad.ipynb").write_text(content)
    with pytest.raises(ValueError, match=pattern) as excinfo:
        read_source(tmp_path / "bad.ipynb")
    message(excinfo)


FRONT = "---\njupytext:\n  text_representation:\n    format_name: myst\n---\n"


@pytest.mark.parametrize("content, pattern", [
    (FRONT + "# x\n\n```{code-cell} ipython3\n:tags: [parameters\nx = 1\n```\n",
     r"^The 'path' parameter of notebook .*bad\.md must be a notebook that jupytext and nbformat read \(Code cell 1 "
     r"at line 8 could not be read: Invalid YAML; while parsing a flow sequence; line 1, column 7"),
    (FRONT + "# x\n\n```{code-cell} ipython3\n---\ntags: [parameters\n---\nx = 1\n```\n",
     r"^The 'path' parameter .* \(Code cell 1 at line 8 could not be read: Invalid YAML"),
    ("---\njupytext:\n  text_representation: [\n---\n# x\n",  # PyYAML notices it on the next line
     r"^The 'path' parameter of notebook .*bad\.md must be a notebook that jupytext and nbformat read \(while parsing "
     r"a flow node; expected the node content, but found '<document start>'; line 4, column 1"),
])
def test_a_corrupt_text_notebook_names_the_file_and_the_line(tmp_path, content, pattern):
    (tmp_path / "bad.md").write_text(content)
    with pytest.raises(ValueError, match=pattern) as excinfo:
        read_source(tmp_path / "bad.md")
    message(excinfo)


def test_the_batch_refuses_a_corrupt_notebook_before_running_anything(tmp_path, capsys):
    tiny(tmp_path / "nb", "good", {"order": 1})
    write_text_notebook(tmp_path / "nb", "broken", "# B\n\n" + code_cell("x = 1", ["parameters"]).replace(
        ":tags: [parameters]", ":tags: [parameters"), {"order": 2})
    rc, err = cli(capsys, *folders(tmp_path), "--profile", "ci")
    assert rc == 2 and "notebook " in err and "broken.md" in err and "could not be read: Invalid YAML" in err
    assert not (tmp_path / "res" / "good").exists()  # nothing ran
    (tmp_path / "nb" / "broken.md").write_bytes(b"---\njupytext: \xff\n---\n")
    rc, err = cli(capsys, *folders(tmp_path), "--list")
    assert rc == 2 and "broken.md must be a UTF-8 text file" in err


# --------------------------------------------------------------------------- options and folders
def test_folders_must_exist_and_hold_notebooks(tmp_path, capsys, monkeypatch):
    (tmp_path / "empty").mkdir()
    (tmp_path / "prose").mkdir()
    (tmp_path / "prose" / "README.md").write_text("# Not a notebook\n")
    (tmp_path / "file").write_text("x")
    for folder, detail in (("nowhere", "it does not exist"), ("file", "it is a file"),
                           ("empty", "it holds none"), ("prose", "it holds none")):
        for args in ([], ["--list"]):
            rc, err = cli(capsys, "--notebooks-dir", str(tmp_path / folder), *args)
            assert rc == 2, (folder, args)
            assert "The 'notebooks_dir' parameter of discover must be" in err and detail in err
            assert "0 ok" not in err
    monkeypatch.setenv("GCC_NOTEBOOKS_DIR", str(tmp_path / "nowhere"))
    rc, err = cli(capsys, "--list")
    assert rc == 2 and "'notebooks_dir'" in err and "nowhere" in err
    with pytest.raises(ValueError, match=r"^The 'notebooks_dir' parameter of discover must be an existing folder"):
        reproduce.run_batch("ci")

    tiny(tmp_path / "nb")
    for flag in ("--output-dir", "--results-root"):
        rc, err = cli(capsys, *folders(tmp_path), flag, str(tmp_path / "file" / "below"))
        name = flag[2:].replace("-", "_")
        assert rc == 2 and f"'{name}' parameter of run_batch must be a folder this process can create and write" in err
        assert "(Not a directory)" in err
        rc, err = cli(capsys, *folders(tmp_path), flag, str(tmp_path / "file"))
        assert rc == 2 and "(File exists)" in err
    rc, err = cli(capsys, *folders(tmp_path), "--build-book", "--no-run", "--book-output", str(tmp_path / "file"))
    assert rc == 2 and "'--book-output'" in err
    assert not (tmp_path / "res").exists()


@pytest.mark.parametrize("args, pattern", [
    (["--timeout", "-5"], "'timeout' parameter of run_batch must be a finite real number > 0 or None. Got -5.0"),
    (["--timeout", "0"], "'timeout' .* Got 0.0 instead"),
    (["--timeout", "nan"], "'timeout' .* Got nan instead"),
    (["--timeout", "inf"], "'timeout' .* Got inf instead"),
    (["--no-run"], "'--no-run' .* must be given with --build-book \\(it is an option of the book build\\)"),
    (["--all-pages"], "'--all-pages' .* must be given with --build-book"),
    (["--only", "nosuch"], "'only' parameter of order_notebooks must be a list of existing notebooks"),
])
def test_invalid_options_exit_2_with_the_option_named(tmp_path, capsys, args, pattern):
    tiny(tmp_path / "nb")
    rc, err = cli(capsys, *folders(tmp_path), *args)
    assert rc == 2 and re.search(pattern, err), err
    assert not (tmp_path / "res").exists()


def test_run_batch_checks_its_timeout(tmp_path):
    tiny(tmp_path / "nb")
    with pytest.raises(ValueError, match="^The 'timeout' parameter of run_batch must be a finite real number > 0"):
        reproduce.run_batch("ci", notebooks_dir=tmp_path / "nb", timeout=-5)


# --------------------------------------------------------------------------- atomic writes
def test_an_interrupted_write_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "table.csv"
    atomic.write_text(target, "a\n1\n")
    with pytest.raises(RuntimeError):
        with atomic.replacing(target) as tmp:
            tmp.write_text("a\n2\n")  # half of the new table, then the writer fails
            raise RuntimeError("killed")
    assert target.read_text() == "a\n1\n" and sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]


def test_a_write_killed_by_sigkill_leaves_the_old_file_and_a_hidden_leftover(tmp_path):
    target = tmp_path / "results.csv"
    target.write_text("old\n")
    code = ("import sys, time; from pathlib import Path; from gcc import atomic\n"
            "with atomic.replacing(Path(sys.argv[1])) as tmp:\n"
            "    with open(tmp, 'w') as f:\n"
            "        f.write('new,half'); f.flush(); Path(sys.argv[1] + '.started').touch(); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(target)], cwd=REPO)
    try:
        wait_for(Path(str(target) + ".started"), proc)
    finally:
        proc.kill()
        proc.wait(30)
    assert target.read_text() == "old\n"
    leftovers = [p for p in tmp_path.iterdir() if atomic.PARTIAL_MARK in p.name]
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".results.csv")
    # Another notebook's leftovers in a shared folder are left alone; its own are removed.
    atomic.remove_partials(tmp_path, prefix="other.")
    assert [p for p in tmp_path.iterdir() if atomic.PARTIAL_MARK in p.name] == leftovers
    atomic.remove_partials(tmp_path, prefix="results.")
    assert not any(atomic.PARTIAL_MARK in p.name for p in tmp_path.iterdir())


def test_run_context_writes_atomically_and_checks_names_and_values(tmp_path):
    run = RunContext("demo", {"seed": 0}, root=tmp_path)
    atomic.partial_path(run.folder / "results.csv").write_text("a killed run's half table")
    run = RunContext("demo", {"seed": 0}, root=tmp_path)  # a new run removes what a killed one left
    run.save_table([{"scheme": "gcc", "loss": 0.5}], "results")
    run.save_json({"x": 1}, "machine")
    assert sorted(p.name for p in run.folder.iterdir()) == ["machine.json", "results.csv", "run.json"]
    for bad in ("../elsewhere", "", ".hidden", "a/b"):
        with pytest.raises(ValueError, match="^The 'name' parameter of RunContext.save_table must be a plain"):
            run.save_table([{"a": 1}], bad)
    with pytest.raises(ValueError, match=r"^The 'number' parameter of RunContext.value\('p99'\) must be a finite "
                                         r"real number or a str\. Got nan instead\.$"):
        run.value("p99", float("nan"), unit="ms")
    with pytest.raises(ValueError, match=r"^The 'digits' parameter of RunContext.value\('p99'\) must be an int in "
                                         r"\[1, 17\]"):
        run.value("p99", 1.5, digits=0)
    with pytest.raises(ValueError, match=r"^The 'fmt' parameter of RunContext.value\('p99'\) must be a format "
                                         r"specification of a number \(Unknown format code .z. for object of type"):
        run.value("p99", 1.5, fmt="zz")
    assert "p99" not in json.loads((run.folder / "run.json").read_text())["values"]
    with pytest.raises(ValueError, match=r"^The 'table' parameter of RunContext.save_table must be a pandas.DataFrame "
                                         r"or a list of row mappings\. Got 5 instead\.$"):
        run.save_table(5, "results")
    with pytest.raises(ValueError, match=r"^The 'data' parameter of RunContext.save_json must be a mapping"):
        run.save_json([("a", 1)], "pairs")
    with pytest.raises(ValueError, match=r"^The 'fig' parameter of RunContext.save_figure must be a matplotlib Figure"):
        run.save_figure("not a figure", "loss")
    with pytest.raises(ValueError, match=r"^The 'parameters' parameter of RunContext must be a mapping"):
        RunContext("demo", [1, 2], root=tmp_path)
    assert sorted(p.name for p in run.folder.iterdir()) == ["machine.json", "results.csv", "run.json"]


# --------------------------------------------------------------------------- killed batches
def wait_for(marker: Path, proc: subprocess.Popen, timeout: float = 240) -> None:
    end = time.monotonic() + timeout
    while not marker.exists():
        assert proc.poll() is None, f"the process ended before {marker.name} appeared"
        assert time.monotonic() < end, f"{marker.name} did not appear in {timeout} s"
        time.sleep(0.2)


def sleepy(folder: Path, gate: Path) -> None:
    """Three notebooks run in order: ``first``, then ``slow`` (it saves a table, then waits while ``gate``
    exists: the test kills the batch there), then ``last``."""
    tiny(folder, "first", {"order": 1})
    write_text_notebook(folder, "slow", "# Slow\n\n" + code_cell("seed = 0\nn = 3", ["parameters"]) + code_cell(
        "import os, time\nfrom pathlib import Path\nfrom gcc.results import RunContext\n"
        "run = RunContext()\n"
        "run.save_table([{'i': i} for i in range(n)], 'results')\n"
        f"gate = Path({str(gate)!r})\n"
        "if gate.exists():\n"
        "    (gate.parent / 'kernel.pid').write_text(str(os.getpid()))\n"
        "    (gate.parent / 'inside').touch()\n"
        "    time.sleep(120)\n"
        "run.value('rows', n)"), {"order": 2})
    tiny(folder, "last", {"order": 3})


# ``python -m gcc.reproduce`` with the library fingerprint pinned: other people may edit gcc/ while
# this runs, and only what the test does may decide what is cached.
PINNED = ("import sys; from gcc import results; results.library_fingerprint = lambda: 'pinned'; "
          "from gcc.reproduce import main; sys.exit(main(sys.argv[1:]))")


def batch_command(tmp: Path) -> list[str]:
    return [sys.executable, "-c", PINNED, "--profile", "ci", *folders(tmp)]


def start_batch(tmp: Path) -> subprocess.Popen:
    return subprocess.Popen(batch_command(tmp), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def end_kernel(tmp: Path) -> None:
    """Make sure the orphaned kernel of a killed batch is gone (it exits by itself within a second)."""
    pid = int((tmp / "kernel.pid").read_text())
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)


def complete_files(folder: Path) -> None:
    """Every visible file of a results folder is whole (CSV and JSON parse); temporaries are hidden."""
    for path in folder.iterdir():
        if path.name.startswith("."):
            assert atomic.PARTIAL_MARK in path.name
            continue
        if path.suffix == ".csv":
            assert list(csv.DictReader(path.open())), path
        elif path.suffix == ".json":
            json.loads(path.read_text())


def test_a_killed_batch_leaves_no_half_result_and_the_rerun_redoes_exactly_what_is_missing(tmp_path):
    gate = tmp_path / "gate"
    gate.touch()
    sleepy(tmp_path / "nb", gate)
    proc = start_batch(tmp_path)
    try:
        wait_for(tmp_path / "inside", proc)
        proc.kill()  # SIGKILL: nothing unwinds, only the atomic writes protect the files
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        end_kernel(tmp_path)
    assert proc.returncode == -signal.SIGKILL

    res = tmp_path / "res"
    assert json.loads((res / "first" / "run.json").read_text())["status"] == "ok"
    slow = json.loads((res / "slow" / "run.json").read_text())  # the notebook's own record, never completed
    assert slow.get("status") != "ok" and "cache_key" not in slow
    complete_files(res / "slow")
    assert len(list(csv.DictReader((res / "slow" / "results.csv").open()))) == 3
    assert not (tmp_path / "gen" / "slow.ipynb").exists()  # no half-executed page
    assert not (res / "last").exists()

    gate.unlink()
    proc = subprocess.run(batch_command(tmp_path), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [status_of(proc.stdout, n) for n in ("first", "slow", "last")] == ["cached", "ok", "ok"]
    assert json.loads((res / "slow" / "run.json").read_text())["status"] == "ok"
    assert (tmp_path / "gen" / "slow.ipynb").exists()
    for folder in (res / "slow", tmp_path / "gen"):
        assert not [p.name for p in folder.iterdir() if atomic.PARTIAL_MARK in p.name]


def test_a_cached_run_is_trusted_only_while_its_files_exist(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(results, "library_fingerprint", lambda: "pinned")
    write_text_notebook(tmp_path / "nb", "texty", "# T\n\n" + code_cell("seed = 0\nn = 3", ["parameters"]) + code_cell(
        "from gcc.results import RunContext\nrun = RunContext()\n"
        "run.save_table([{'i': i} for i in range(n)], 'results')\nrun.value('rows', n, note='rows')\n"
        "run.include(run.load_table('results'), 'table')"), {"profiles": {"ci": {"n": 2}}})

    def batch() -> str:
        assert reproduce.main([*folders(tmp_path), "--profile", "ci"]) == 0
        return status_of(capsys.readouterr().out, "texty")

    assert batch() == "ok"
    assert batch() == "cached"
    # A value file removed since is written again from run.json, without a rerun.
    values = tmp_path / "gen" / "values"
    (values / "texty.json").unlink()
    (values / "texty.table.md").unlink()
    assert batch() == "cached"
    assert json.loads((values / "texty.json").read_text()) == {"rows": "2"}
    assert (values / "texty.table.md").read_text().startswith("| i |")
    # A table removed since: the run is redone.
    (tmp_path / "res" / "texty" / "results.csv").unlink()
    assert batch() == "ok"
    assert (tmp_path / "res" / "texty" / "results.csv").exists()


def test_a_failing_notebook_still_fails_the_batch(tmp_path, capsys):
    write_notebook(tmp_path / "nb", "broken", [("code", "seed = 0", ["parameters"]), ("code", "1 / 0", [])],
                   {"title": "Broken"})
    assert reproduce.main([*folders(tmp_path), "--profile", "ci"]) == 1
    out = capsys.readouterr()
    assert "FAILED notebook 'broken'" in out.out + out.err and "ZeroDivisionError" in out.out + out.err
    record = json.loads((tmp_path / "res" / "broken" / "run.json").read_text())
    assert record["status"] == "error"
    # The failed page is kept (it shows the error); no temporary notebook is left.
    assert (tmp_path / "gen" / "broken.ipynb").exists()
    assert not [p.name for p in (tmp_path / "gen").iterdir() if atomic.PARTIAL_MARK in p.name]


def test_library_entry_points_of_the_runner_check_their_arguments(tmp_path):
    with pytest.raises(ValueError, match=r"^The 'path' parameter of load_yaml must be an existing YAML file\."):
        reproduce.load_yaml(tmp_path / "missing.yaml")
    with pytest.raises(ValueError, match=r"^The 'notebook' parameter of load_card must be an existing source notebook"):
        reproduce.load_card(tmp_path / "missing.ipynb")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match=r"^The 'output' parameter of build_book must be a folder this process can"):
        reproduce.build_book(output=tmp_path / "file" / "site")


@pytest.mark.parametrize("cell, line", [("seed = 0\nfit_min = 4.0   # fits over N >= fit_min", 2),
                                        ("seed = 0\nlow, high = -1.0, 1.0   # range", 2)])
def test_a_parameter_line_papermill_cannot_read_is_named(tmp_path, cell, line):
    """papermill's inspection skips a line with '=' in its comment or a tuple assignment: such a
    parameter could not be overridden, so the runner names the line instead of ignoring it."""
    write_notebook(tmp_path, "commented", [("code", cell, ["parameters"])], {"profiles": {"paper": {"seed": 2}}})
    card = reproduce.discover(tmp_path)["commented"]
    with pytest.raises(ValueError, match=rf"^The 'line {line} of the cell' parameter of notebook .*commented\.ipynb "
                                         r"must be one parameter per line") as excinfo:
        reproduce.resolve_parameters(card, "paper")
    assert message(excinfo).endswith(f"Got {cell.splitlines()[line - 1]!r} instead.")
    write_notebook(tmp_path, "fine", [("code", "fit_min = 4.0   # fits over N, from fit_min up\nmax_sets = 5000",
                                       ["parameters"])], {"profiles": {"paper": {"fit_min": 2.0, "max_sets": 20000}}})
    card = reproduce.discover(tmp_path)["fine"]
    assert parameters(card.path) == {"fit_min": "4.0", "max_sets": "5000"}
    assert reproduce.resolve_parameters(card, "paper") == ({"fit_min": 2.0, "max_sets": 20000},
                                                           {"fit_min": 2.0, "max_sets": 20000})
