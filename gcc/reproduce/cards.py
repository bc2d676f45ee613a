"""Run cards: the notebooks of a batch, their profiles' parameters and their order.

Each source notebook ``notebooks/<name>.md`` (MyST markdown read by jupytext; a JSON
``<name>.ipynb`` during the transition) has a run card ``notebooks/<name>.yaml`` (title, order,
depends, per-profile parameters, timeout; see CONTRIBUTING.md). This module discovers the
notebooks, reads and checks their cards, orders them by ``depends`` and resolves the
parameters papermill injects.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import Any

from gcc.notebooks import SOURCE_SUFFIXES, is_text_notebook, parameters_cell, read_source
from gcc.validation import InstanceOf, Interval, NoneOr, invalid, validate

from .locations import default_notebooks_dir, relative

__all__ = [
    "PROFILES",
    "NotebookCard",
    "load_yaml",
    "load_card",
    "discover",
    "order_notebooks",
    "notebook_parameters",
    "resolve_parameters",
]

#: Profiles every run card may fill. ``ci`` must run the whole batch in minutes on two
#: cores, ``default`` on a laptop, ``paper`` at the papers' full scale (a GPU helps).
PROFILES = ("ci", "default", "paper")


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


def load_yaml(path: Path) -> dict:
    """The mapping stored in the YAML file ``path`` (an empty file is an empty mapping)."""
    import yaml

    data = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(data, dict):
        raise invalid("path", "load_yaml", "a YAML file holding a mapping", str(path),
                      f"it holds a {type(data).__name__}")
    return data


def load_card(notebook: Path) -> NotebookCard:
    """Read ``<name>.yaml`` beside the source notebook ``<name>.md`` or ``.ipynb`` (no card: all defaults).

    Raises
    ------
    ValueError
        If an entry of the card is malformed (``profiles`` not a mapping of known profiles,
        ``order`` or ``timeout`` not a number, ``depends`` not a name or list of names).
    """
    notebook = Path(notebook)
    name = notebook.stem
    card_path = notebook.with_suffix(".yaml")
    if not card_path.exists() and notebook.with_suffix(".yml").exists():
        card_path = notebook.with_suffix(".yml")
    data = load_yaml(card_path) if card_path.exists() else {}
    owner = f"run card {relative(card_path)}"
    profiles = validate(data.get("profiles") or {}, _PROFILES, "profiles", owner)
    unknown = sorted(set(profiles) - set(PROFILES))
    if unknown:
        raise invalid("profiles", owner, f"a mapping whose keys are among {list(PROFILES)}", unknown)
    for profile, params in profiles.items():
        validate(params, _PARAMETERS, f"profiles.{profile}", owner)
    depends = data.get("depends") or []
    depends = [depends] if isinstance(depends, str) else validate(depends, _DEPENDS, "depends", owner)
    if not all(isinstance(d, str) for d in depends):
        raise invalid("depends", owner, _DEPENDS, depends)
    return NotebookCard(
        name=name,
        path=notebook,
        title=str(data.get("title") or name),
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
    cards = {}
    for suffix in reversed(SOURCE_SUFFIXES):  # the preferred suffix comes last and wins
        for path in sorted(folder.glob(f"*{suffix}")):
            if path.name.startswith((".", "_")) or path.stem.endswith("-checkpoint"):
                continue
            if suffix == ".md" and not is_text_notebook(path):
                continue
            cards[path.stem] = load_card(path)
    return dict(sorted(cards.items()))


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
    """Names and default values (as source text) declared in the notebook's ``parameters`` cell."""
    from papermill.translators import papermill_translators

    cell = parameters_cell(read_source(path))
    if cell is None:
        return {}
    # A source notebook need not carry kernel metadata; the runner always uses a Python kernel.
    translator = papermill_translators.find_translator("python3", "python")
    return {p.name: p.default for p in translator.inspect(cell)}


def resolve_parameters(card: NotebookCard, profile: str) -> dict[str, Any]:
    """The parameters papermill injects: the profile's values, plus ``profile`` if declared."""
    params = dict(card.profiles.get(profile, {}))
    declared = notebook_parameters(card.path)
    if "profile" in declared:
        params["profile"] = profile
    return params
