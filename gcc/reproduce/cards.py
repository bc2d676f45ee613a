"""Run cards: ``notebooks/<name>.yaml`` beside a source notebook (``title``, ``order``, ``depends``, and the
``ci`` and ``paper`` overrides of its parameters cell)."""
from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gcc.notebooks import SOURCE_SUFFIXES, complaint, is_text_notebook, parameters, read_text, shown_path
from gcc.validation import TEXT, InstanceOf, Interval, ListOf, Options, Satisfies, invalid, validate, validate_params

__all__ = ["PROFILES", "OVERRIDES", "Card", "load_yaml", "load_card", "discover", "order_notebooks",
           "resolve_parameters"]

#: The profiles of a batch: ``ci`` (minutes on two cores), ``default`` (a laptop: the book), ``paper``.
PROFILES = ("ci", "default", "paper")
#: The profiles a run card may override (``default`` is the parameters cell).
OVERRIDES = ("ci", "paper")


# The entries a run card may have (defaults: Card's).
_ENTRIES = {"title": TEXT, "order": Interval(float),
            "depends": ListOf(TEXT, min_len=0, description="a list of notebook names"),
            "profiles": InstanceOf(dict, "a mapping of profiles to parameter mappings")}
_PARAMETERS = Satisfies(lambda v: isinstance(v, dict) and all(isinstance(k, str) and k.isidentifier() for k in v),
                        "a mapping whose keys are parameter names")


@dataclass(frozen=True)
class Card:
    """One source notebook and its run card (``card_path`` None: no card, every default)."""

    name: str
    path: Path
    title: str = ""
    order: float = 1000.0
    depends: tuple[str, ...] = ()
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    card_path: Path | None = None

    @property
    def owner(self) -> str:
        """How messages name the card."""
        return f"run card {shown_path(self.card_path)}" if self.card_path else f"notebook {shown_path(self.path)}"


def _closest(name, names) -> str:
    """The hint "did you mean ...?" with the closest of ``names``, else the list of them."""
    close = difflib.get_close_matches(str(name), list(names), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else f"valid names: {', '.join(names) or 'there is none'}"


def load_yaml(path: Path, owner: str | None = None) -> dict:
    """The mapping in the YAML file ``path`` (empty file: {}); a syntax error or a key set twice names its line."""
    import yaml

    path, owner = Path(path), owner or f"YAML file {shown_path(path)}"
    if not path.is_file():
        raise invalid("path", "load_yaml", "an existing YAML file", shown_path(path))
    text = read_text(path, owner)

    class Unique(yaml.SafeLoader):  # PyYAML silently keeps the last of a repeated key
        def construct_mapping(self, node, deep=False):
            keys = [self.construct_object(k, deep=True) for k, _ in node.value]
            for i, (k, _) in enumerate(node.value):
                if isinstance(keys[i], str) and keys[i] in keys[:i]:
                    raise yaml.constructor.ConstructorError(None, None, f"{keys[i]!r} is set twice", k.start_mark)
            return super().construct_mapping(node, deep)

    try:
        data = yaml.load(text, Loader=Unique) or {}
    except yaml.YAMLError as err:
        raise invalid("path", owner, "valid YAML", shown_path(path), complaint(err)) from None
    if not isinstance(data, dict):
        raise invalid("path", owner, "a YAML file holding a mapping", shown_path(path),
                      f"it holds a {type(data).__name__}")
    return data


def load_card(notebook: Path) -> Card:
    """The run card ``<name>.yaml`` beside the source notebook ``<name>.md`` or ``.ipynb`` (none: defaults)."""
    notebook = Path(notebook)
    if not (notebook.is_file() and notebook.suffix in SOURCE_SUFFIXES):
        raise invalid("notebook", "load_card", "an existing source notebook (<name>.md or <name>.ipynb)",
                      shown_path(notebook))
    card_path = notebook.with_suffix(".yaml")
    card = Card(notebook.stem, notebook, title=notebook.stem, card_path=card_path if card_path.exists() else None)
    data = load_yaml(card_path, card.owner) if card.card_path else {}
    data = {**data, "depends": data.get("depends") or [], "profiles": data.get("profiles") or {}}
    for key, value in data.items():
        if key not in _ENTRIES:
            raise invalid("entries", card.owner, f"among {', '.join(_ENTRIES)}", key, _closest(key, _ENTRIES))
        validate(value, _ENTRIES[key], key, card.owner)
    for profile, params in data["profiles"].items():
        if profile not in OVERRIDES:
            detail = ("the notebook's parameters cell holds the defaults" if profile == "default"
                      else _closest(profile, OVERRIDES))
            raise invalid("profiles", card.owner, f"a mapping whose keys are among {', '.join(OVERRIDES)}", profile,
                          detail)
        validate(params or {}, _PARAMETERS, f"profiles.{profile}", card.owner)
    return replace(card, **{**data, "depends": tuple(data["depends"]),
                            "profiles": {k: dict(v or {}) for k, v in data["profiles"].items()}})


def discover(notebooks_dir: Path) -> dict[str, Card]:
    """Every source notebook of ``notebooks_dir`` with its run card, by name (a text notebook wins over
    ``.ipynb``; hidden ones left out); a ValueError unless it is a folder holding at least one."""
    folder, found = Path(notebooks_dir).expanduser().resolve(), {}
    if not folder.is_dir():
        raise invalid("notebooks_dir", "discover", "an existing folder of source notebooks", str(notebooks_dir),
                      "it is a file" if folder.exists() else "it does not exist")
    for suffix in reversed(SOURCE_SUFFIXES):
        for path in sorted(folder.glob(f"*{suffix}")):
            if not (path.name.startswith((".", "_")) or path.stem.endswith("-checkpoint")
                    or suffix == ".md" and not is_text_notebook(path)):
                found[path.stem] = path
    if not found:
        raise invalid("notebooks_dir", "discover", "a folder holding at least one source notebook (<name>.md or "
                      "<name>.ipynb)", str(notebooks_dir), "it holds none")
    return {name: load_card(path) for name, path in sorted(found.items())}


def order_notebooks(cards: dict[str, Card], only: list[str] | None = None) -> list[Card]:
    """Dependencies first, then (``order``, name); ``only`` adds what its notebooks depend on; a
    ``ValueError`` for an unknown name in ``only`` or ``depends``, or a cycle."""
    only = [only] if isinstance(only, str) else only
    missing = [n for n in only or [] if n not in cards]
    if missing:
        raise invalid("only", "order_notebooks", f"a list of existing notebooks {sorted(cards)}", missing)
    wanted, stack = set(), list(only or cards)
    while stack:
        name = stack.pop()
        if name not in wanted:
            wanted.add(name)
            for dep in cards[name].depends:
                if dep not in cards:
                    raise invalid("depends", cards[name].owner, "a list of existing notebooks", dep)
                stack.append(dep)
    done: list[Card] = []
    pending = sorted((cards[n] for n in wanted), key=lambda c: (c.order, c.name))
    while pending:
        ready = next((c for c in pending if all(d in {x.name for x in done} for d in c.depends)), None)
        if ready is None:
            raise invalid("depends", "the run cards", "free of cycles", [c.name for c in pending],
                          "these notebooks wait for each other")
        done.append(ready)
        pending.remove(ready)
    return done


# a default of this type -> (the types a value may have, how the message names them)
_KINDS = ((bool, (bool,), "a bool"), (int, (int,), "an int"), (float, (int, float), "a number"),
          (str, (str,), "a str"), ((list, tuple), (list, tuple), "a list"), (dict, (dict,), "a mapping"))


def _check(name: str, value, default, text: str, owner: str, where: str) -> None:
    """``value`` has the type of the cell's ``default`` (a float takes any number, None anything)."""
    for kind, accepted, what in _KINDS:
        if isinstance(default, kind):
            if not isinstance(value, accepted) or (isinstance(value, bool) and kind is not bool):
                raise invalid(where, owner, f"{what} (the type of the notebook's default {name} = {text})", value)
            return


@validate_params({"profile": Options(PROFILES)})
def resolve_parameters(card: Card, profile: str, overrides: dict | None = None) -> tuple[dict, dict]:
    """The parameters of ``card``'s run in ``profile``, with ``overrides`` (``-p NAME VALUE``) over the card's.

    Returns
    -------
    parameters : dict
        The parameters cell's defaults with the overrides over them: what ``run.json`` records.
    injected : dict
        What papermill injects (the overrides, and ``profile`` when the cell declares it).
    """
    declared = parameters(card.path)
    owner = f"notebook {shown_path(card.path)}"
    defaults = {}
    for name, text in declared.items():
        try:
            defaults[name] = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise invalid(name, owner, "a literal in the cell tagged 'parameters' (the runner records it)",
                          text) from None
    sources = [(card.owner, f"profiles.{p}", values) for p, values in card.profiles.items()]
    sources.append(("python -m gcc.reproduce", "-p", overrides or {}))
    for source, where, values in sources:
        for key, value in values.items():
            if key not in declared:
                what = "a parameter that" if where == "-p" else "a mapping of the parameters that"
                raise invalid(where, source, f"{what} {shown_path(card.path)} declares in its parameters cell", key,
                              _closest(key, declared) if declared else "it has no code cell tagged 'parameters'")
            _check(key, value, defaults[key], declared[key], source, f"{where}.{key}" if where != "-p" else f"-p {key}")
    injected = {**card.profiles.get(profile, {}), **(overrides or {})}
    if "profile" in declared:
        injected["profile"] = profile
    return {**defaults, **injected}, injected
