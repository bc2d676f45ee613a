"""One description of the machine that produced a number: CPU, platform, load and GPU.

Every table, status page, benchmark and ``hardware.json`` of the companion describes its
machine with :func:`describe` (a dict for provenance files) or :func:`summary_line` (one line
for a page or a benchmark's output). Nothing here imports torch: the GPU is read from
``nvidia-smi`` unless torch is already loaded.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

__all__ = ["describe", "summary_line", "gpu_names"]


def gpu_names() -> list[str]:
    """Names of the NVIDIA GPUs present (empty without ``nvidia-smi`` or a GPU).

    Uses torch's view when torch is already imported (it honours ``CUDA_VISIBLE_DEVICES``),
    otherwise ``nvidia-smi -L``, so that describing a machine never imports torch.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            return []
        except Exception:  # noqa: BLE001 - informational only; a broken driver is "no GPU"
            return []
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.split(":", 1)[1].split("(")[0].strip() for line in out.splitlines() if ":" in line]


def describe(client=None, device=None) -> dict:
    """The machine (and optionally the Dask cluster and torch device) a run used.

    Parameters
    ----------
    client : distributed.Client, optional
        Adds ``n_workers``, ``threads_per_worker`` and ``scheduler`` of the cluster.
    device : str or torch.device, optional
        The torch device the run computed on; adds ``device`` and, for a CUDA device,
        ``gpu_name``, ``gpu_memory_gib``, ``cuda_version``, ``driver`` and ``cudnn``.

    Returns
    -------
    dict
        ``machine``, ``system``, ``platform``, ``processor``, ``cpu_count``, ``python``,
        ``gpus`` (list of names), ``load_avg_1min`` (where the OS has one) and the optional
        keys above. JSON-serialisable.

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
        "gpus": gpu_names(),
    }
    try:
        desc["load_avg_1min"] = round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        pass
    if device is not None:
        desc["device"] = str(device)
        torch = sys.modules.get("torch")
        if torch is not None and str(device).startswith("cuda") and torch.cuda.is_available():
            dev = torch.device(device)
            props = torch.cuda.get_device_properties(dev)
            desc.update(gpu_name=props.name, gpu_memory_gib=round(props.total_memory / 2**30, 1),
                        cuda_version=torch.version.cuda, cudnn=torch.backends.cudnn.version())
            if shutil.which("nvidia-smi"):
                try:
                    desc["driver"] = subprocess.run(
                        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                        capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
                except (OSError, subprocess.SubprocessError, IndexError):
                    pass
    if client is not None:
        info = client.scheduler_info(n_workers=-1)
        workers = info["workers"]
        desc["n_workers"] = len(workers)
        desc["threads_per_worker"] = sorted({w.get("nthreads", 1) for w in workers.values()})
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
    if info.get("gpus"):
        text += ", GPU " + ", ".join(info["gpus"])
    return text
