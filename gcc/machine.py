"""One description of the machine that produced a number: CPU, platform, load and GPU.

Nothing here imports torch: the GPUs are read from ``nvidia-smi`` unless torch is loaded.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

__all__ = ["describe", "summary_line"]


def _gpu_names() -> list[str]:
    """Names of the NVIDIA GPUs present: torch's view if torch is loaded, else ``nvidia-smi -L``."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None:
            return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        if not shutil.which("nvidia-smi"):
            return []
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10).stdout
    except Exception:  # noqa: BLE001 - informational only; a broken driver is "no GPU"
        return []
    return [line.split(":", 1)[1].split("(")[0].strip() for line in out.splitlines() if ":" in line]


def describe(client=None) -> dict:
    """The machine (and optionally the Dask cluster) a run used, as a JSON-serialisable dict.

    Parameters
    ----------
    client : distributed.Client, optional
        Adds ``n_workers``, ``threads_per_worker`` and ``scheduler`` of the cluster.

    Returns
    -------
    dict
        ``machine``, ``system``, ``platform``, ``processor``, ``cpu_count``, ``python``, ``gpus``
        and ``load_avg_1min`` (where the OS has one).

    Examples
    --------
    >>> from gcc.machine import describe
    >>> info = describe()
    >>> sorted(k for k in ("cpu_count", "platform", "python") if k in info)
    ['cpu_count', 'platform', 'python']
    """
    desc = {
        "machine": platform.machine(),
        "system": platform.system(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "gpus": _gpu_names(),
    }
    if hasattr(os, "getloadavg"):
        desc["load_avg_1min"] = round(os.getloadavg()[0], 2)
    if client is not None:
        info = client.scheduler_info(n_workers=-1)
        desc["n_workers"] = len(info["workers"])
        desc["threads_per_worker"] = sorted({w.get("nthreads", 1) for w in info["workers"].values()})
        desc["scheduler"] = info.get("address")
    return desc


def summary_line(info: dict | None = None) -> str:
    """One line for a page or a benchmark: ``x86_64 Linux, 2 CPU core(s), GPU NVIDIA H200``.

    Parameters
    ----------
    info : dict, optional
        A :func:`describe` result; measured now when omitted.
    """
    info = describe() if info is None else info
    if not isinstance(info, dict) or not {"machine", "system", "cpu_count"} <= set(info):
        from .validation import invalid

        raise invalid("info", "summary_line", "None or a dict returned by gcc.machine.describe()", info)
    text = f"{info['machine']} {info['system']}, {info['cpu_count']} CPU core(s)"
    return text + (", GPU " + ", ".join(info["gpus"]) if info.get("gpus") else "")
