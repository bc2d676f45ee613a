"""JupyterLab opens a text notebook as a notebook with the companion's kernel and runs its first cells.

A JupyterLab server is started on loopback (127.0.0.1, a free port, a random token) with the
repository as its root. Through its REST API the MyST notebook ``notebooks/quickstart.md`` opens as a
notebook (jupytext's contents manager), a session starts the ``gcc-companion`` kernel, and the first
cells run over the kernel's websocket (parameters, then the run context and the first measurement,
writing into a temporary results root). Headless Chromium then loads the notebook in JupyterLab's UI and
must show a notebook panel with its cells. Everything is bounded in time; the server is stopped at the end.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = "notebooks/quickstart.md"
pytestmark = pytest.mark.slow

pytest.importorskip("jupyterlab", reason="JupyterLab is not installed: pip install -e '.[lab]'")
pytest.importorskip("jupytext")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str, data: dict | None = None, method: str | None = None, timeout: float = 30):
    req = urllib.request.Request(url, data=json.dumps(data).encode() if data is not None else None,
                                 method=method, headers={"Authorization": f"token {token}",
                                                         "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"null")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A running JupyterLab server: (base url, token, results root of its kernels)."""
    tmp = tmp_path_factory.mktemp("lab")
    port, token = _free_port(), secrets.token_hex(16)
    # jupyter/labconfig (installed into the venv by `make install`) opens .md notebooks as notebooks;
    # the test's own layer turns autosave off, so the browser never writes the source notebook.
    (tmp / "config" / "labconfig").mkdir(parents=True)
    (tmp / "config" / "labconfig" / "default_setting_overrides.json").write_text(
        json.dumps({"@jupyterlab/docmanager-extension:plugin": {"autosave": False}}))
    env = dict(os.environ, GCC_RESULTS_ROOT=str(tmp / "results"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTER_CONFIG_PATH=os.pathsep.join([str(tmp / "config"), str(REPO / "jupyter")]),
               MPLBACKEND="module://matplotlib_inline.backend_inline")
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={REPO}", "--ServerApp.open_browser=False", "--LabApp.news_url=",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly", "--ServerApp.allow_root=True",
           f"--LabApp.workspaces_dir={tmp / 'workspaces'}"]
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                _get(f"{base}/api/status", token, timeout=5)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + (tmp / "server.log").read_text()[-3000:])
                time.sleep(0.5)
        yield base, token, tmp / "results"
    finally:
        if proc.poll() is None:  # the server and the kernels it started, by their process group
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        log.close()


def test_the_text_notebook_opens_as_a_notebook(lab):
    base, token, _ = lab
    model = _get(f"{base}/api/contents/{NOTEBOOK}?type=notebook&content=1", token)
    assert model["type"] == "notebook"
    cells = model["content"]["cells"]
    assert cells[0]["cell_type"] == "markdown" and "Quickstart" in cells[0]["source"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", [])
    assert model["content"]["metadata"]["kernelspec"]["name"] == "gcc-companion"


async def _execute(ws_url: str, sources: list[str], timeout: float) -> list[dict]:
    """Run each source on the kernel behind ``ws_url``; the replies and the outputs, per cell."""
    from tornado.websocket import websocket_connect

    conn = await asyncio.wait_for(websocket_connect(ws_url), timeout)
    results = []
    try:
        for source in sources:
            msg_id = uuid.uuid4().hex
            await conn.write_message(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "test",
                           "session": uuid.uuid4().hex, "version": "5.3"},
                "parent_header": {}, "metadata": {}, "channel": "shell",
                "content": {"code": source, "silent": False, "store_history": True,
                            "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
            outputs, reply, idle = [], None, False
            while reply is None or not idle:
                raw = await asyncio.wait_for(conn.read_message(), timeout)
                assert raw is not None, "the kernel's websocket closed"
                msg = json.loads(raw)
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind = msg["header"]["msg_type"]
                if kind == "execute_reply":
                    reply = msg["content"]
                elif kind == "status" and msg["content"]["execution_state"] == "idle":
                    idle = True
                elif kind in ("stream", "execute_result", "display_data", "error"):
                    outputs.append(msg["content"] | {"type": kind})
            results.append({"reply": reply, "outputs": outputs})
    finally:
        conn.close()
    return results


def test_the_companion_kernel_runs_the_first_cells(lab):
    base, token, results_root = lab
    model = _get(f"{base}/api/contents/{NOTEBOOK}?type=notebook&content=1", token)
    code = [c["source"] for c in model["content"]["cells"] if c["cell_type"] == "code"]
    session = _get(f"{base}/api/sessions", token, method="POST", data={
        "path": NOTEBOOK, "type": "notebook", "name": "quickstart.md", "kernel": {"name": "gcc-companion"}})
    try:
        assert session["kernel"]["name"] == "gcc-companion"
        ws = (f"ws://127.0.0.1:{base.rsplit(':', 1)[1]}/api/kernels/{session['kernel']['id']}/channels"
              f"?token={token}")
        # The parameters cell at a small size (as papermill would inject it), then the first cell after it.
        small = code[0] + "\nn_workers_grid = [20, 40]\nn_trials = 2\n"
        replies = asyncio.run(_execute(ws, [small, code[1]], timeout=180))
    finally:
        _get(f"{base}/api/sessions/{session['id']}", token, method="DELETE")
    for cell in replies:
        errors = [o for o in cell["outputs"] if o["type"] == "error"]
        assert cell["reply"]["status"] == "ok" and not errors, errors
    record = json.loads((results_root / "quickstart" / "run.json").read_text())
    assert record["parameters"]["n_trials"] == 2 and record["tables"]["results"]["rows"] == 2 * 2 * 2


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def test_chromium_shows_the_notebook_in_jupyterlab(lab, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium on PATH: `make chromium` installs Debian's chromium (needs root and apt-get)")
    base, token, _ = lab
    url = f"{base}/lab/tree/{NOTEBOOK}?token={token}"
    shot = tmp_path / "lab.png"
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--window-size=1400,1000", "--virtual-time-budget=30000"]
    proc = subprocess.run(common + [f"--user-data-dir={tmp_path / 'p2'}", f"--screenshot={shot}", url],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0 and shot.exists() and shot.stat().st_size > 20_000, proc.stderr[-3000:]
    out = os.environ.get("GCC_SCREENSHOT_DIR")
    if out:  # keep the screenshot for a person to look at
        shutil.copy(shot, Path(out) / "jupyterlab_quickstart.png")
    dom = subprocess.run(common + [f"--user-data-dir={tmp_path / 'p1'}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=240)
    assert dom.returncode == 0, dom.stderr[-3000:]
    body = dom.stdout.split("<body", 1)[-1]
    cells = re.findall(r'<div[^>]+class="[^"]*\bjp-Cell\b[^"]*\bjp-CodeCell\b', body)
    assert re.search(r'class="[^"]*\bjp-NotebookPanel\b', body), \
        "JupyterLab did not open the text notebook as a notebook"
    assert len(cells) >= 3 and "Quickstart" in body
    assert "Python (gcc companion)" in body, "the notebook is not on the gcc-companion kernel"
