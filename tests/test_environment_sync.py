"""environment.yml must mirror every requirement of pyproject.toml, specifier for specifier."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _split(requirement: str) -> tuple[str, str]:
    """``"jupyter-book>=1.0.4.post1,<2"`` -> ``("jupyter-book", ">=1.0.4.post1,<2")``, names normalised."""
    requirement = requirement.split(";")[0].strip()
    match = re.match(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$", requirement)
    assert match, f"unparsable requirement {requirement!r}"
    name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
    spec = ",".join(sorted(s.strip().replace(" ", "") for s in match.group(3).split(",") if s.strip()))
    return name, spec


def _pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    own = re.sub(r"[-_.]+", "-", project["name"]).lower()
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs.extend(extra)
    out = {}
    for req in reqs:
        name, spec = _split(req)
        if name == own:  # the "all" extra refers back to the package itself
            continue
        assert out.get(name, spec) == spec, f"pyproject pins {name} twice differently"
        out[name] = spec
    return out


def _environment_requirements() -> tuple[dict[str, str], str]:
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    out = {}
    python = ""
    for dep in env["dependencies"]:
        items = dep["pip"] if isinstance(dep, dict) else [dep]
        for item in items:
            if item.startswith("-e") or item in (".",):
                continue
            name, spec = _split(item)
            if name == "python":
                python = spec
            elif name != "pip":
                out[name] = spec
    return out, python


def test_environment_mirrors_pyproject_pins():
    pyproject = _pyproject_requirements()
    environment, _ = _environment_requirements()
    missing = sorted(set(pyproject) - set(environment))
    extra = sorted(set(environment) - set(pyproject))
    differ = {n: (pyproject[n], environment[n]) for n in set(pyproject) & set(environment)
              if pyproject[n] != environment[n]}
    assert not missing, f"in pyproject.toml but not in environment.yml: {missing}"
    assert not extra, f"in environment.yml but not in pyproject.toml: {extra}"
    assert not differ, f"pins differ (pyproject, environment.yml): {differ}"


def test_environment_python_matches_requires_python():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    _, python = _environment_requirements()
    assert python == project["requires-python"].replace(" ", "")


def test_environment_installs_the_package_itself():
    text = (REPO / "environment.yml").read_text()
    assert re.search(r"^\s*-\s*-e\s+\.\s*$", text, re.M), "environment.yml must pip-install the companion (-e .)"
