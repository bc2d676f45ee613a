"""Run cards: the notebooks of a batch, their profiles' parameters and their order.

Each source notebook ``notebooks/<name>.md`` (MyST markdown read by jupytext; a JSON
``<name>.ipynb`` during the transition) has a run card ``notebooks/<name>.yaml`` (title, order,
depends, per-profile parameters, timeout; see CONTRIBUTING.md). This module discovers the
notebooks, reads and checks their cards, orders them by ``depends`` and resolves the
parameters papermill injects.

Every problem of a card is a ``ValueError`` in the contract's form that names the card and the
entry: a YAML syntax error or a repeated key names the line, an unknown entry or a profile's
parameter that the notebook's ``parameters`` cell does not declare names the closest valid name
(a typo such as ``n_trails`` would otherwise run the notebook with its default and report ok).
"""
from __future__ import annotations

import ast
import difflib
import os
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import Any

from gcc.notebooks import SOURCE_SUFFIXES, assigned_values, checked_parameters_cell, is_text_notebook, yaml_error
from gcc.validation import InstanceOf, Interval, NoneOr, invalid, validate

from .locations import default_notebooks_dir, relative

__all__ = [
    "PROFILES",
    "NotebookCard",
    "CARD_ENTRIES",
    "load_yaml",
    "load_card",
    "check_parameter_types",
    "find_notebooks",
    "check_notebooks_dir",
    "discover",
    "order_notebooks",
    "notebook_parameters",
    "check_parameters",
    "resolve_parameters",
]

#: Profiles every run card may fill. ``ci`` must run the whole batch in minutes on two
#: cores, ``default`` on a laptop, ``paper`` at the papers' full scale (a GPU helps).
PROFILES = ("ci", "default", "paper")

#: The entries a run card may have.
CARD_ENTRIES = ("title", "order", "depends", "profiles", "timeout")


@dataclass
class NotebookCard:
    """One source notebook and its run card.

    Attributes
    ----------
    name : str
        File stem, e.g. ``"worst_case_rate"``; also the results folder name.
    path : pathlib.Path
        The source notebook (stored without outputs).
    title : str
        Shown in the status table.
    order : float
        Run order within the batch (low first).
    depends : list of str
        Notebooks whose saved results this one reads; they run first.
    profiles : dict
        ``{profile: {parameter: value}}``; missing keys keep the notebook's defaults.
    timeout : float or None
        Per-cell execution timeout in seconds (None: no limit).
    card_path : pathlib.Path or None
        The run card (None when the notebook has none: all defaults).
    """

    name: str
    path: Path
    title: str = ""
    order: float = 1000.0
    depends: list[str] = field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    timeout: float | None = None
    card_path: Path | None = None


# What the entries of a run card must be.
_PROFILES = InstanceOf(dict, "a mapping of profiles to parameter mappings")
_PARAMETERS = NoneOr(InstanceOf(dict, "a mapping of parameter names to values"))
_DEPENDS = InstanceOf(list, "a notebook name or a list of notebook names")
_TIMEOUT = NoneOr(Interval(Real, 0, None, closed="neither"))
_TITLE = NoneOr(InstanceOf(str, "a str"))


def _closest(name: str, names) -> str:
    """``did you mean 'x'?`` for the valid name closest to ``name``, else the list of valid names."""
    names = [str(n) for n in names]
    close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"valid names: {', '.join(names)}" if names else "there is none"


def _unique_key_loader():
    """A safe YAML loader for which a key repeated in one mapping is an error (PyYAML keeps the last)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node.start_mark)
                except TypeError:  # an unhashable key: the base class reports it
                    break
                if first is not key_node.start_mark:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"{key!r} is set twice (first at line {first.line + 1})", key_node.start_mark)
            return super().construct_mapping(node, deep)

    return Loader


def load_yaml(path: Path, owner: str | None = None) -> dict:
    """The mapping stored in the YAML file ``path`` (an empty file is an empty mapping).

    Parameters
    ----------
    path : path
    owner : str, optional
        How messages name the file (default ``"YAML file <path>"``).

    Raises
    ------
    ValueError
        If the file is not UTF-8, not valid YAML (the message names the line and quotes it),
        repeats a key within one mapping, or holds something other than a mapping.
    """
    import yaml

    path = Path(path)
    owner = owner or f"YAML file {relative(path)}"
    if not path.is_file():
        raise invalid("path", "load_yaml", "an existing YAML file", relative(path))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise invalid("path", owner, "a UTF-8 text file", relative(path),
                      f"byte {err.start} cannot be decoded") from None
    try:
        data = yaml.load(text, Loader=_unique_key_loader())
    except yaml.YAMLError as err:
        raise yaml_error(err, text, owner) from None
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise invalid("path", owner, "a YAML file holding a mapping", relative(path),
                      f"it holds a {type(data).__name__}")
    return data


def load_card(notebook: Path) -> NotebookCard:
    """Read ``<name>.yaml`` beside the source notebook ``<name>.md`` or ``.ipynb`` (no card: all defaults).

    Raises
    ------
    ValueError
        If the card is not valid YAML or an entry is malformed (an entry other than
        :data:`CARD_ENTRIES`, ``profiles`` not a mapping of known profiles to mappings of
        parameter names, ``order`` or ``timeout`` not a number, ``title`` not a text,
        ``depends`` not a name or list of names). Whether the parameters are declared by the
        notebook is checked by :func:`check_parameters`.
    """
    notebook = Path(notebook)
    if not (notebook.is_file() and notebook.suffix in SOURCE_SUFFIXES):
        raise invalid("notebook", "load_card", "an existing source notebook (<name>.md or <name>.ipynb)",
                      relative(notebook))
    name = notebook.stem
    card_path = notebook.with_suffix(".yaml")
    if not card_path.exists() and notebook.with_suffix(".yml").exists():
        card_path = notebook.with_suffix(".yml")
    owner = f"run card {relative(card_path)}"
    data = load_yaml(card_path, owner) if card_path.exists() else {}
    for entry in data:
        if entry not in CARD_ENTRIES:
            raise invalid("entries", owner, f"among {', '.join(CARD_ENTRIES)}", entry, _closest(entry, CARD_ENTRIES))
    profiles = validate(data.get("profiles") or {}, _PROFILES, "profiles", owner)
    for profile in profiles:
        if profile not in PROFILES:
            raise invalid("profiles", owner, f"a mapping whose keys are among {', '.join(PROFILES)}", profile,
                          _closest(profile, PROFILES))
    for profile, params in profiles.items():
        validate(params, _PARAMETERS, f"profiles.{profile}", owner)
        for key in params or {}:
            if not (isinstance(key, str) and key.isidentifier()):
                raise invalid(f"profiles.{profile}", owner, "a mapping whose keys are parameter names", key)
    depends = data.get("depends") or []
    depends = [depends] if isinstance(depends, str) else validate(depends, _DEPENDS, "depends", owner)
    if not all(isinstance(d, str) for d in depends):
        raise invalid("depends", owner, _DEPENDS, depends)
    return NotebookCard(
        name=name,
        path=notebook,
        title=validate(data.get("title"), _TITLE, "title", owner) or name,
        order=validate(data.get("order", 1000), Interval(Real), "order", owner),
        depends=list(depends),
        profiles={k: dict(v or {}) for k, v in profiles.items()},
        timeout=validate(data.get("timeout"), _TIMEOUT, "timeout", owner),
        card_path=card_path if card_path.exists() else None,
    )


def discover(notebooks_dir: Path | None = None) -> dict[str, NotebookCard]:
    """All source notebooks of ``notebooks_dir`` with their run cards, keyed by name.

    Text notebooks (``*.md`` with a jupytext front matter) and JSON ``*.ipynb``; when both exist
    for one name, the text notebook is the source. Hidden notebooks (``.x``, ``_x``), plain
    markdown files and Jupyter checkpoints are left out.
    """
    folder = Path(notebooks_dir) if notebooks_dir else default_notebooks_dir()
    return {name: load_card(path) for name, path in find_notebooks(folder).items()}


def find_notebooks(folder: Path) -> dict[str, Path]:
    """The source notebooks of ``folder`` (no run card read), keyed by name in name order.

    See :func:`discover` for what counts as a source notebook.
    """
    found: dict[str, Path] = {}
    for suffix in reversed(SOURCE_SUFFIXES):  # the preferred suffix comes last and wins
        for path in sorted(Path(folder).glob(f"*{suffix}")):
            if path.name.startswith((".", "_")) or path.stem.endswith("-checkpoint"):
                continue
            if suffix == ".md" and not is_text_notebook(path):
                continue
            found[path.stem] = path
    return dict(sorted(found.items()))


def check_notebooks_dir(path, name: str, owner: str) -> Path:
    """``path`` (absolute) if it is an existing folder holding at least one source notebook.

    Parameters
    ----------
    path : path
    name, owner : str
        The argument and its receiver, for the message.

    Raises
    ------
    ValueError
        If the folder does not exist, is a file, or holds no ``<name>.md`` text notebook and no
        ``<name>.ipynb`` (a batch of nothing would report ``0 ok`` and succeed).
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise invalid(name, owner, "a folder path", path)
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise invalid(name, owner, "an existing folder of source notebooks", str(path),
                      "it is a file" if folder.exists() else "it does not exist")
    if not find_notebooks(folder):
        raise invalid(name, owner, "a folder holding at least one source notebook (<name>.md or <name>.ipynb)",
                      str(path), "it holds none")
    return folder


def _card_owner(card: NotebookCard) -> str:
    return f"run card {relative(card.card_path)}" if card.card_path else f"notebook {card.name!r}"


def order_notebooks(cards: dict[str, NotebookCard], only: list[str] | None = None) -> list[NotebookCard]:
    """Topological order by ``depends``; ties by (``order``, name).

    With ``only``, the selection is extended by everything it depends on (their cache
    makes that cheap when unchanged).

    Raises
    ------
    ValueError
        If ``only`` or a ``depends`` entry names no discovered notebook, or the
        ``depends`` entries form a cycle.
    """
    if only:
        if isinstance(only, str) or not all(isinstance(n, str) for n in only):
            raise invalid("only", "order_notebooks", "a list of notebook names", only)
        missing = [n for n in only if n not in cards]
        if missing:
            raise invalid("only", "order_notebooks", f"a list of existing notebooks {sorted(cards)}", missing)
        wanted: set[str] = set()
        stack = list(only)
        while stack:
            name = stack.pop()
            if name in wanted:
                continue
            wanted.add(name)
            stack.extend(d for d in cards[name].depends if d in cards)
    else:
        wanted = set(cards)
    for name in sorted(wanted):
        for dep in cards[name].depends:
            if dep not in cards:
                raise invalid("depends", _card_owner(cards[name]), "a list of existing notebooks", dep)
    done: list[NotebookCard] = []
    placed: set[str] = set()
    pending = sorted((cards[n] for n in wanted), key=lambda c: (c.order, c.name))
    while pending:
        for card in pending:
            if all(d in placed for d in card.depends):
                done.append(card)
                placed.add(card.name)
                pending.remove(card)
                break
        else:
            raise invalid("depends", "the run cards", "free of cycles", [c.name for c in pending],
                          "these notebooks wait for each other")
    return done


def notebook_parameters(path: Path) -> dict[str, Any]:
    """Names and default values (as source text) declared in the notebook's ``parameters`` cell.

    Read as Python (:func:`gcc.notebooks.assigned_values`), the names that
    :class:`gcc.results.RunContext` records: every top-level assignment counts, whatever its comment.
    """
    cell = checked_parameters_cell(path)       # a syntax error names its line
    return {} if cell is None else assigned_values(cell.source)


def check_parameters(card: NotebookCard, declared) -> None:
    """Every parameter that a profile of the card sets must be one the notebook declares.

    Parameters
    ----------
    card : NotebookCard
    declared : iterable of str
        The names of the notebook's ``parameters`` cell (:func:`notebook_parameters`).

    Raises
    ------
    ValueError
        Naming the card, the profile and the key, with the closest declared name, e.g.
        ``The 'profiles.ci' parameter of run card notebooks/x.yaml must be a mapping of the
        parameters that notebooks/x.md declares in its parameters cell (did you mean
        'n_trials'?). Got 'n_trails' instead.``
    """
    declared = list(declared)
    for profile in PROFILES:
        for key in card.profiles.get(profile) or {}:
            if key not in declared:
                detail = (_closest(key, declared) if declared
                          else "it has no code cell tagged 'parameters'")
                raise invalid(f"profiles.{profile}", _card_owner(card),
                              f"a mapping of the parameters that {relative(card.path)} declares in its "
                              "parameters cell", key, detail)


def resolve_parameters(card: NotebookCard, profile: str) -> dict[str, Any]:
    """The parameters papermill injects: the profile's values, plus ``profile`` if declared.

    Raises
    ------
    ValueError
        If a profile of the card (any of them, not only ``profile``) sets a parameter that the
        notebook does not declare (:func:`check_parameters`) or gives it a value of another type
        than the notebook's default (:func:`check_parameter_types`).
    """
    params = dict(card.profiles.get(profile, {}))
    cell = checked_parameters_cell(card.path)
    declared = {} if cell is None else assigned_values(cell.source)
    check_parameters(card, declared)
    check_parameter_types(card, "" if cell is None else cell.source)
    if "profile" in declared:
        params["profile"] = profile
    return params


#: a default of this type -> (the types a card's value may have, how the message names them)
_KINDS = ((bool, (bool,), "a bool"), (int, (int,), "an int"), (float, (int, float), "a number"),
          (str, (str,), "a str"), ((list, tuple), (list, tuple), "a list"), (dict, (dict,), "a mapping"))


def _literal_defaults(source: str) -> dict[str, Any]:
    """The parameters whose default (their last assignment in the cell) is a Python literal."""
    out: dict[str, Any] = {}
    for node in ast.parse(source).body if source else ():
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
        for target in targets:
            if isinstance(target, ast.Name):
                try:
                    out[target.id] = (ast.literal_eval(node.value), ast.get_source_segment(source, node.value))
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    out.pop(target.id, None)        # an expression: its type is not known here
    return out


def check_parameter_types(card: NotebookCard, source: str) -> None:
    """Every value a profile of the card sets has the type of the notebook's literal default.

    A list default takes a list, an int an int (not a bool), a float any number, a None default
    anything; defaults that are expressions are not checked.

    Raises
    ------
    ValueError
        Naming the card, the profile, the parameter, the expected type and the default, e.g.
        ``The 'profiles.ci.n_workers_grid' parameter of run card notebooks/x.yaml must be a list
        (the type of the notebook's default n_workers_grid = [20, 40]). Got 7 instead.``
    """
    defaults = _literal_defaults(source)
    for profile in PROFILES:
        for key, value in (card.profiles.get(profile) or {}).items():
            if key not in defaults or defaults[key][0] is None:
                continue
            default, text = defaults[key]
            for kind, accepted, what in _KINDS:
                if isinstance(default, kind):
                    if not isinstance(value, accepted) or (isinstance(value, bool) and kind is not bool):
                        raise invalid(f"profiles.{profile}.{key}", _card_owner(card),
                                      f"{what} (the type of the notebook's default {key} = {text})", value)
                    break
