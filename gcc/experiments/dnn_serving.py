"""Coded serving of the DNN chapter's networks on Dask: tail latency and accuracy together.

:func:`run_serving` is the notebook's experiment: the trained networks of ``dnn_models`` served
to requests of K test images by uncoded, replication, GCC and BACC (at one or more S), with and
without an injected straggler; :func:`serving_table` the tidy table, :func:`tail_verdicts` the
verdicts, :func:`plot_pareto` the accuracy-against-p99 figure. Scheme keys: ``"uncoded"``,
``"replication"``, ``"gcc_s<S>"``, ``"bacc_s<S>"``.
"""
from __future__ import annotations

import dataclasses
import time
from numbers import Integral, Real
from typing import Any, Mapping, Sequence

import numpy as np

from gcc.codes import make
from gcc.distributed.baselines import Replication, Uncoded
from gcc.distributed.inject import Injection
from gcc.experiments.plotting import SCHEME_STYLES
from gcc.experiments.verdicts import band_verdict
from gcc.validation import (SEED, Interval, ListOf, Options, check_int, invalid, validate,
                            validate_params)

__all__ = ["TABLE_COLUMNS", "served_networks", "serving_schemes", "scheme_label", "serving_injections",
           "serving_experiment", "serving_table", "pareto_front", "tail_verdicts", "overall_verdict",
           "plot_pareto", "plot_measured_vs_simulated", "ServingRun", "run_serving", "record", "device_table"]

#: the table contract: these columns first, in this order
TABLE_COLUMNS = ["model", "dataset", "scheme", "n_workers", "n_inputs", "stragglers", "injection", "requests",
                 "p50_ms", "p99_ms", "p999_ms", "accuracy", "relacc"]
_FAMILY_LABELS = {"uncoded": "Uncoded", "replication": "Replication", "gcc": "GCC", "bacc": "BACC"}
_STYLE = {family: SCHEME_STYLES[family] for family in _FAMILY_LABELS}  # the book's colour and marker
_COUNT = Interval(Integral, 1, None)
_MS = Interval(Real, 0, None)


def scheme_label(key: str) -> str:
    """Display name of a scheme key: ``"gcc_s2"`` -> ``"GCC (S = 2)"``."""
    family, _, s = str(key).partition("_s")
    if family not in _FAMILY_LABELS:
        raise invalid("key", "scheme_label", f"a scheme key of serving_schemes ({sorted(_FAMILY_LABELS)} family)", key)
    return _FAMILY_LABELS[family] + (f" (S = {s})" if s else "")


def served_networks(prepared, models: Sequence[str], device: str | None = None) -> dict:
    """What :func:`serving_experiment` needs of each of ``models`` of :func:`gcc.experiments.dnn_models.from_run`.

    Returns name -> ``ref`` (:func:`gcc.distributed.serving.network_ref` of its cache file, on
    ``device``, default each worker's best), ``exact`` (the network at the master), ``images`` /
    ``labels`` (the test split), ``dataset``, ``n_parameters``, ``file`` (the checkpoint's name).
    """
    from gcc.distributed.serving import checkpoint_file, network_ref

    models = validate(models, ListOf(Options(tuple(prepared))), "models", "served_networks")
    out = {}
    for name in models:
        entry = prepared[name]
        path = checkpoint_file(str(entry["info"]["key"]))
        out[name] = {"ref": network_ref(path, device), "exact": entry["f"], "images": entry["splits"].x_test,
                     "labels": entry["splits"].y_test, "dataset": entry["info"]["dataset"],
                     "n_parameters": int(entry["info"]["n_parameters"]), "file": path.name}
    return out


@validate_params({"n_inputs": _COUNT, "n_workers": _COUNT})
def serving_schemes(n_inputs: int, n_workers: int, stragglers=(1, 2)) -> dict:
    """The schemes compared: keyword arguments of :func:`gcc.distributed.coded_compute` per key.

    Parameters
    ----------
    n_inputs, n_workers : int
        K and N (N > K).
    stragglers : sequence of int
        The S at which GCC waits for the fastest N - S (BACC: the first).

    Returns
    -------
    dict
        ``uncoded`` (K workers, all K awaited), ``replication`` (the K images over N workers, first
        copy of each), ``gcc_s<S>`` (``gcc.codes.make("gcc", K, N)``) and ``bacc_s<S>``.
    """
    owner = "serving_schemes"
    n_workers = check_int(n_workers, "n_workers", owner, minimum=n_inputs + 1, constraint="an int > n_inputs")
    s_gcc = validate(stragglers, ListOf(Interval(Integral, 1, n_workers - 1), distinct=True), "stragglers", owner)
    schemes = {"uncoded": {"code": Uncoded(n_inputs)},
               "replication": {"code": Replication(n_inputs, n_workers)}}
    for family, values in (("gcc", s_gcc), ("bacc", s_gcc[:1])):
        code = make(family, n_inputs, n_workers)
        for s in values:
            schemes[f"{family}_s{s}"] = {"code": code, "n_stragglers": s}
    return schemes


@validate_params({"base_ms": _MS, "slowdown": Interval(Real, 1, None), "n_slow": Interval(Integral, 1, None)})
def serving_injections(base_ms: float, slowdown: float = 10.0, n_slow: int = 1) -> dict:
    """The two scenarios: ``"straggler"`` (``n_slow`` workers per request slowed ``slowdown`` x) and ``"none"``.

    Every task carries ``base_ms`` of emulated compute on top of the network's forward pass; a
    slowed worker takes ``slowdown`` times both.
    """
    return {"straggler": Injection(base_s=base_ms / 1e3, n_random_slow=int(n_slow), slowdown=float(slowdown)),
            "none": Injection(base_s=base_ms / 1e3)}


def serving_experiment(client, networks: Mapping[str, Mapping], schemes: Mapping, injections: Mapping, *,
                       n_inputs: int, n_requests: int, seed: int = 0, warmup: int = 2, timeout: float = 60.0):
    """Serve the same requests with every scheme, per network and injection; one row per request.

    ``networks``, ``schemes``, ``injections``: :func:`served_networks` (loaded on the workers),
    :func:`serving_schemes`, :func:`serving_injections`; the rest as in
    :func:`gcc.distributed.serving.serve_requests` (the same seed: the same images and straggler draws
    everywhere). Returns its rows with ``model``, ``dataset``, ``injection``, ``scheme_family`` and
    ``stragglers`` in front.
    """
    import pandas as pd

    from gcc.distributed.serving import serve_requests

    if not isinstance(networks, Mapping) or not networks:
        raise invalid("networks", "serving_experiment",
                      "a non-empty mapping model name -> {ref, exact, images, labels, dataset}", networks)
    frames = []
    for name, net in networks.items():
        for scenario, injection in injections.items():
            table = serve_requests(client, schemes, net["ref"], net["images"], net["labels"], n_inputs=n_inputs,
                                   n_requests=n_requests, injection=injection, seed=seed, exact=net["exact"],
                                   warmup=warmup, timeout=timeout)
            waited = {k: int(v.get("n_stragglers") or 0) for k, v in schemes.items()}
            table.insert(0, "stragglers", [waited[s] if waited[s] else int(n - k) if s == "replication" else 0
                                           for s, n, k in zip(table.scheme, table.n_coded, table.n_inputs)])
            table.insert(0, "scheme_family", table["scheme"].str.partition("_s")[0])
            table.insert(0, "injection", scenario)
            table.insert(0, "dataset", net["dataset"])
            table.insert(0, "model", name)
            frames.append(table)
    return pd.DataFrame(pd.concat(frames, ignore_index=True))


def serving_table(requests):
    """The tidy table: one row per (model, injection, scheme), :data:`TABLE_COLUMNS` first.

    ``n_workers`` is the workers a request occupies (K for uncoded, N otherwise); the extra
    columns are those of :func:`gcc.distributed.serving.summarize_serving` plus
    ``scheme_family``, ``label``, ``cluster_workers`` and ``pareto`` (on the accuracy-p99 front of
    its model and injection).
    """
    from gcc.distributed.serving import summarize_serving

    by = ["model", "dataset", "injection", "scheme", "scheme_family", "stragglers", "n_inputs"]
    summary = summarize_serving(requests, by=by)
    summary["cluster_workers"] = requests.groupby(by, sort=False)["n_workers"].first().to_numpy()
    summary["n_workers"] = summary["n_coded"]
    summary["label"] = [scheme_label(s) for s in summary["scheme"]]
    summary["pareto"] = pareto_front(summary)
    rest = [c for c in summary.columns if c not in TABLE_COLUMNS]
    return summary[TABLE_COLUMNS + rest]


def pareto_front(table, x: str = "p99_ms", y: str = "accuracy", by: Sequence[str] = ("model", "injection")):
    """True for the rows no other row of their group beats on both ``x`` (lower) and ``y`` (higher).

    Returns
    -------
    numpy.ndarray of bool
    """
    values = table[[x, y]].to_numpy(dtype=float)
    keys = table[list(by)].astype(str).agg("|".join, axis=1).to_numpy() if by else np.zeros(len(table), str)
    xs, ys = values[:, 0], values[:, 1]
    # beaten[i, j]: row j of the same group is no worse than row i on both and better on one
    beaten = ((keys[:, None] == keys[None, :]) & (xs[None, :] <= xs[:, None]) & (ys[None, :] >= ys[:, None])
              & ((xs[None, :] < xs[:, None]) | (ys[None, :] > ys[:, None])))
    return np.isfinite(values).all(axis=1) & ~beaten.any(axis=1)


@validate_params({"ratio_goal": Interval(Real, 0, None, closed="neither"), "accuracy_band": Interval(Real, 0, 1),
                  "level": Interval(Real, 0, 1, closed="neither"), "resamples": Interval(Integral, 100, None),
                  "seed": SEED})
def tail_verdicts(requests, scheme: str = "gcc_s1", baseline: str = "uncoded", injection: str = "straggler",
                  ratio_goal: float = 0.5, accuracy_band: float = 0.05, level: float = 0.95, resamples: int = 2000,
                  seed: int = 0):
    """Per network: does ``scheme`` cut ``baseline``'s p99 to at most ``ratio_goal`` at an accuracy cost within the band?

    A bootstrap over the paired requests gives the ``level`` intervals of the p99 ratio and of the
    accuracy drop (``baseline`` minus ``scheme``), each placed by
    :func:`gcc.experiments.verdicts.band_verdict` against [0, ``ratio_goal``] and
    [-``accuracy_band``, ``accuracy_band``].

    Returns
    -------
    pandas.DataFrame
        ``model``, the ratio and the drop with their intervals, ``tail_verdict``, ``accuracy_verdict``
        and ``verdict``: ``"supported"`` (both inside), ``"refuted"`` (either beyond) or ``"undecided"``.
    """
    import pandas as pd

    owner = "tail_verdicts"
    for arg, value in (("scheme", scheme), ("baseline", baseline)):
        if value not in set(requests["scheme"]):
            raise invalid(arg, owner, f"a scheme of the table ({sorted(set(requests['scheme']))})", value)
    if injection not in set(requests["injection"]):
        raise invalid("injection", owner, f"an injection of the table ({sorted(set(requests['injection']))})", injection)
    rng = np.random.default_rng(seed)
    alpha = (1 - level) / 2
    rows = []
    for model, g in requests[requests.injection == injection].groupby("model", sort=False):
        a = g[g.scheme == scheme].set_index("request")
        b = g[g.scheme == baseline].set_index("request")
        common = a.index.intersection(b.index)
        a, b = a.loc[common], b.loc[common]
        la, lb = a["latency_s"].to_numpy(float), b["latency_s"].to_numpy(float)
        da = (b["correct"] - a["correct"]).to_numpy(float) / a["n_inputs"].to_numpy(float)
        ok = np.isfinite(la) & np.isfinite(lb)
        la, lb, da = la[ok], lb[ok], da[ok]
        ratio = np.percentile(la, 99) / np.percentile(lb, 99) if la.size else np.nan
        drop = float(da.mean()) if da.size else np.nan
        if la.size >= 2:
            idx = rng.integers(0, la.size, size=(resamples, la.size))
            ratios = np.percentile(la[idx], 99, axis=1) / np.percentile(lb[idx], 99, axis=1)
            drops = da[idx].mean(axis=1)
            r_lo, r_hi = np.quantile(ratios, [alpha, 1 - alpha])
            d_lo, d_hi = np.quantile(drops, [alpha, 1 - alpha])
        else:
            r_lo = r_hi = d_lo = d_hi = np.nan
        tail = band_verdict(r_lo, r_hi, 0.0, ratio_goal)
        acc = band_verdict(d_lo, d_hi, -accuracy_band, accuracy_band)
        both = ("supported" if tail == "inside" and acc == "inside" else
                "refuted" if "above" in (tail, acc) else "undecided")
        rows.append({"model": model, "p99_ratio": ratio, "ratio_low": r_lo, "ratio_high": r_hi, "accuracy_drop": drop,
                     "drop_low": d_lo, "drop_high": d_hi, "tail_verdict": tail, "accuracy_verdict": acc,
                     "verdict": both})
    return pd.DataFrame(rows)


def overall_verdict(verdicts) -> str:
    """``"supported"`` when at least two networks support the claim, ``"refuted"`` when two refute it."""
    counts = verdicts["verdict"].value_counts()
    if counts.get("supported", 0) >= 2:
        return "supported"
    if counts.get("refuted", 0) >= 2:
        return "refuted"
    return "undecided"


def plot_pareto(table, model: str):
    """Accuracy against p99 latency for one network, one point per scheme and S (filled: one straggler,
    hollow: none); the dashed line joins the straggler scenario's Pareto front.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.lines import Line2D

    from .plotting import REFERENCE, figure, finish, log_axis

    if model not in set(table["model"]):
        raise invalid("model", "plot_pareto", f"a model of the table ({sorted(set(table['model']))})", model)
    sel = table[table.model == model]
    fig, (ax,) = figure(1, height=3.8)
    for scenario, filled in (("straggler", True), ("none", False)):
        part = sel[sel.injection == scenario]
        for _, row in part.iterrows():
            color, marker = _STYLE[row["scheme_family"]]
            size = 40 if int(row["stragglers"]) <= 1 or row["scheme_family"] in ("uncoded", "replication") else 80
            ax.scatter(row["p99_ms"], row["accuracy"], s=size, marker=marker, color=color if filled else "none",
                       edgecolors=color, linewidths=1.3)
        front = part[part["pareto"]].sort_values("p99_ms")
        if scenario == "straggler" and len(front):
            ax.plot(front["p99_ms"], front["accuracy"], **REFERENCE)
    ax.set_xscale("log")
    log_axis(ax)
    ax.set_xlabel("99th percentile of the latency per request (ms)")
    ax.set_ylabel("accuracy (decoded)")
    ax.set_title(f"{model}: accuracy against tail latency")
    # One entry per family, then what fill, size and the dashed line mean (not one per point).
    families = [f for f in _FAMILY_LABELS if f in set(sel["scheme_family"])]
    handles = [Line2D([], [], ls="none", marker=_STYLE[f][1], color=_STYLE[f][0], label=_FAMILY_LABELS[f])
               for f in families]
    handles += [Line2D([], [], ls="none", marker="o", color="0.3", label="filled: one straggler"),
                Line2D([], [], ls="none", marker="o", mfc="none", color="0.3", label="hollow: none"),
                Line2D([], [], ls="none", marker="o", ms=9, mfc="none", color="0.3", label="large: S >= 2"),
                Line2D([], [], **REFERENCE, label="Pareto front (straggler)")]
    fig.legend(handles=handles, loc="outside lower center", ncol=4)
    return finish(fig)


def plot_measured_vs_simulated(table, injection: str = "straggler"):
    """Measured against simulated p50 and p99 per (network, scheme): the gap is the engine's cost.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .plotting import REFERENCE, figure, finish, log_axis

    sel = table[table.injection == injection]
    fig, (ax,) = figure(1, height=3.6)
    for family, part in sel.groupby("scheme_family", sort=False):
        color, marker = _STYLE[family]
        ax.scatter(part["simulated_p50_ms"], part["p50_ms"], marker=marker, facecolors="none", edgecolors=color,
                   label=f"{_FAMILY_LABELS[family]}, median")
        ax.scatter(part["simulated_p99_ms"], part["p99_ms"], marker=marker, color=color,
                   label=f"{_FAMILY_LABELS[family]}, p99")
    lo = float(np.nanmin(sel[["simulated_p50_ms", "simulated_p99_ms"]].to_numpy())) * 0.8
    hi = float(np.nanmax(sel[["p50_ms", "p99_ms"]].to_numpy())) * 1.2
    ax.plot([lo, hi], [lo, hi], **REFERENCE, label="measured = simulated")
    ax.set_xscale("log")
    ax.set_yscale("log")
    log_axis(ax, "x")
    log_axis(ax, "y")
    ax.set_xlabel("simulated (the injected waits added up, ms)")
    ax.set_ylabel("measured (ms)")
    ax.legend(ncol=2, loc="upper left")
    return finish(fig)


@dataclasses.dataclass
class ServingRun:
    """What one run of the notebook measured (:func:`run_serving`).

    ``requests``, ``table``, ``verdicts``, ``overall``: :func:`serving_experiment`, :func:`serving_table`,
    :func:`tail_verdicts`, :func:`overall_verdict`; ``devices``: worker index (sorted addresses) ->
    {network: device}; ``machine``: :func:`gcc.machine.describe` with the cluster; ``networks``: network
    -> ``{"n_parameters", "dataset"}``; ``seconds``: wall time on the cluster; ``settings``: K, N, the S
    list, requests, emulated compute and slow-down.
    """

    requests: Any
    table: Any
    verdicts: Any
    overall: str
    devices: dict
    machine: dict
    networks: dict
    seconds: float
    settings: dict


def run_serving(prepared, models: Sequence[str], *, n_workers: int = 8, n_inputs: int = 4, stragglers=(1, 2),
                n_requests: int = 100, warmup: int = 2, base_ms: float = 5.0, slowdown: float = 10.0,
                n_slow: int = 1, device: str | None = None,
                scheduler_address: str | None = None, seed: int = 0, timeout: float = 180.0) -> ServingRun:
    """The whole experiment: open a cluster, load the networks on it, serve, summarise, judge.

    Parameters are those of the notebook (see :func:`serving_schemes`, :func:`serving_injections`,
    :func:`serving_experiment`); ``prepared`` is :func:`gcc.experiments.dnn_models.from_run`.

    Returns
    -------
    ServingRun
    """
    from gcc.distributed.cluster import open_cluster
    from gcc.distributed.serving import load_on_workers
    from gcc.machine import describe

    networks = served_networks(prepared, models, device=device)
    schemes = serving_schemes(n_inputs, n_workers, stragglers)
    injections = serving_injections(base_ms, slowdown, n_slow)
    started = time.perf_counter()
    with open_cluster(n_workers=n_workers, address=scheduler_address, timeout=timeout) as client:
        machine = describe(client=client)
        loaded = load_on_workers(client, [net["ref"] for net in networks.values()])
        requests = serving_experiment(client, networks, schemes, injections, n_inputs=n_inputs,
                                      n_requests=n_requests, seed=seed, warmup=warmup)
    names = {net["ref"].name: name for name, net in networks.items()}
    devices = {i: {names[ref]: dev for ref, dev in per.items()} for i, per in enumerate(loaded.values())}
    verdicts = tail_verdicts(requests, scheme=next(k for k in schemes if k.startswith("gcc_s")))
    settings = {"n_workers": n_workers, "n_inputs": n_inputs, "stragglers": list(stragglers), "n_requests": n_requests,
                "base_ms": base_ms, "slowdown": slowdown, "n_slow": n_slow}
    return ServingRun(requests=requests, table=serving_table(requests), verdicts=verdicts,
                      overall=overall_verdict(verdicts), devices=devices, machine=machine,
                      networks={k: {"n_parameters": v["n_parameters"], "dataset": v["dataset"]}
                                for k, v in networks.items()},
                      seconds=time.perf_counter() - started, settings=settings)


def record(run, result: ServingRun, profile: str = "default") -> None:
    """Save the run's tables and files, and the values and tables the chapter quotes (a RunContext)."""
    from gcc.machine import summary_line

    run.save_table(result.requests, "requests")
    run.save_table(result.table, "results")
    run.save_table(result.verdicts, "verdicts")
    run.save_json({"machine": result.machine, "devices": result.devices, "settings": result.settings}, "cluster")
    v = result.verdicts
    run.value("verdict", result.overall, note="verdict on the motivation: supported / refuted / undecided")
    run.value("n_supported", int((v.verdict == "supported").sum()), note="networks that support it")
    run.value("n_networks", len(v), note="networks served")
    run.value("profile", str(profile), note="the run card's profile")
    run.value("networks", ", ".join(f"{k} ({n['n_parameters']:,} parameters)" for k, n in result.networks.items()),
              note="the networks served and their sizes")
    from gcc.dnn.data import DISPLAY_NAMES

    name = next(iter(result.networks.values()))["dataset"]
    # a non-breaking hyphen: format_value writes "-" as a minus sign
    run.value("dataset", DISPLAY_NAMES.get(name, name).replace("-", "\u2011"), note="the data set of the requests")
    run.value("n_requests", int(result.settings["n_requests"]), note="requests per network, scenario and scheme")
    run.value("base_ms", float(result.settings["base_ms"]), unit="ms", note="emulated compute per task")
    run.value("machine", summary_line(result.machine), note="the machine")
    run.value("devices", ", ".join(sorted({d for per in result.devices.values() for d in per.values()})),
              note="devices of the networks on the workers")
    run.value("seconds", result.seconds, unit="s", digits=2, note="time on the cluster (start, loading the networks, requests)")
    for r in v.itertuples():
        run.value(f"{r.model}_p99_ratio", r.p99_ratio, digits=2, note=f"{r.model}: GCC p99 over uncoded p99")
        run.value(f"{r.model}_accuracy_drop", r.accuracy_drop, digits=2, note=f"{r.model}: uncoded minus GCC accuracy")
        run.value(f"{r.model}_verdict", r.verdict, note=f"{r.model}: verdict")
    t = result.table
    compact = t[t.injection == "straggler"][["model", "label", "p50_ms", "p99_ms", "p999_ms", "accuracy", "relacc"]]
    run.include(compact.rename(columns=TABLE_HEADERS), "straggler", digits=3)  # the rest of the columns: the CSV
    run.include(v[["model", "p99_ratio", "ratio_low", "ratio_high", "accuracy_drop", "drop_low", "drop_high",
                   "verdict"]].rename(columns=TABLE_HEADERS), "verdicts", digits=3)


def headers(frame) -> dict:
    """The short headers (:data:`TABLE_HEADERS`) of the columns ``frame`` has, for :func:`gcc.display.display_table`."""
    return {k: v for k, v in TABLE_HEADERS.items() if k in frame.columns}


#: short headers of the page's tables (the CSV keeps the column keys)
TABLE_HEADERS = {"label": "scheme", "injection": "stragglers", "p50_ms": "p50 (ms)", "p99_ms": "p99 (ms)",
                 "p999_ms": "p99.9 (ms)", "relacc": "RelAcc", "p99_ratio": "GCC p99 / uncoded",
                 "ratio_low": "p99 ratio low", "ratio_high": "p99 ratio high", "accuracy_drop": "accuracy drop",
                 "drop_low": "drop low", "drop_high": "drop high", "simulated_p50_ms": "simulated p50", "simulated_p99_ms": "simulated p99",
                 "overhead_p50_ms": "overhead p50 (ms)"}


def device_table(result: ServingRun):
    """One row per worker (in sorted address order): the device of each network on it."""
    import pandas as pd

    return pd.DataFrame([{"worker": i, **per} for i, per in result.devices.items()])
