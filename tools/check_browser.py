"""Open notebooks in JupyterLab in a headless Chromium, as a new user would, and Run All (issue 20).

Usage (``make check-browser`` runs it)::

    FEDLIB_PROFILE=smoke python tools/check_browser.py [--chromium /usr/bin/chromium] [NOTEBOOK ...]

The notebooks are copied, with their paired scripts and ``jupytext.toml``, into a temporary root:
the checkout is never written to (no outputs, no autosave). JupyterLab runs on 127.0.0.1 with a
random token, temporary runtime/settings/workspace folders and autosave off. For each notebook the
check fails on: a kernel dialog ("Select Kernel"), a document marked modified right after opening,
an error output, a ``TqdmWarning`` or the virtual environment's path in any output, and progress
that is not rendered as a widget. Screenshots go to ``build/browser/<group>_<name>.png``.
Needs the ``playwright`` Python package (not its browsers) and a system Chromium.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BOOKS = ["tutorials/safl_basics.ipynb", "tutorials/split_learning_and_fusion.ipynb",
                 "tutorials/your_own_strategy.ipynb",
                 "fedqs/table1_aggregation_gap.ipynb", "smofi/main_accuracy.ipynb"]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def stage(tmp: Path, books: list[str]) -> Path:
    """A throw-away project root holding copies of the notebooks (and what they link to)."""
    root = tmp / "project"
    shutil.copytree(ROOT / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for name in ("pyproject.toml", "jupytext.toml"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, root / name)
    if (ROOT / "docs").is_dir():
        shutil.copytree(ROOT / "docs", root / "docs")
    for book in books:
        if not (root / "notebooks" / book).exists():
            sys.exit(f"check-browser: no notebook notebooks/{book}")
    settings = tmp / "settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    news = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(tmp: Path, root: Path, token: str, port: int, log) -> subprocess.Popen:
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"), FEDLIB_PROFILE="smoke",
               FEDLIB_RESULTS=str(tmp / "results"), FEDLIB_REPORT_DIR=str(tmp / "reports"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("FEDLIB_PROGRESS", None)  # what a user gets: auto
    # a relative FEDLIB_DATA / FEDLIB_CACHE made absolute here: each kernel starts in its notebook's folder
    env.update({k: str(Path(os.path.abspath(os.path.expanduser(env[k]))))
                for k in ("FEDLIB_DATA", "FEDLIB_CACHE") if env.get(k)})
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
           "--LabApp.expose_app_in_browser=True", "--ServerApp.open_browser=False"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # containers
    # its own process group: stop_lab() ends the server and the kernels it started, nothing else
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/api/status?token={token}"
    for _ in range(240):
        if proc.poll() is not None:
            sys.exit(f"check-browser: JupyterLab exited with {proc.returncode}; see its log")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return proc
        except OSError:
            time.sleep(0.5)
    stop_lab(proc)
    sys.exit("check-browser: JupyterLab did not answer within 120 s")


def stop_lab(proc: subprocess.Popen) -> None:
    """End the server's process group (the server and its kernels)."""
    import signal

    for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=wait_s)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


# JavaScript run in the page: the current notebook's state, read from JupyterLab's own models.
STATE_JS = """() => {
  const app = window.jupyterapp; const panel = app && app.shell.currentWidget;
  if (!panel || !panel.content || !panel.content.model) return null;
  const ctx = panel.sessionContext; const cells = panel.content.model.cells; const out = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type === 'code') out.push({count: c.executionCount, outputs: c.outputs.toJSON()});
  }
  return {dirty: panel.context.model.dirty, status: ctx.session && ctx.session.kernel ?
          ctx.session.kernel.status : 'none', kernel: ctx.kernelDisplayName, cells: out,
          metadata: panel.content.model.metadata};
}"""


SCROLL_TO_END_JS = """async () => {
  const nb = window.jupyterapp.shell.currentWidget.content; const last = nb.widgets.length - 1;
  nb.activeCellIndex = last; await nb.scrollToItem(last, 'start');
  const out = nb.widgets[last].node.querySelector('.jp-OutputArea');
  if (out) out.scrollIntoView({block: 'end'});
}"""


def wait_for(page, predicate, timeout_s: float, what: str):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        state = page.evaluate(STATE_JS)
        if state is not None and predicate(state):
            return state
        dialog = page.query_selector(".jp-Dialog")
        if dialog is not None:
            return {"dialog": dialog.inner_text()}
        time.sleep(1.0)
    raise TimeoutError(f"{what} after {timeout_s:.0f} s")


#: what a notebook prints when it cannot do its job although no cell raised (issue 60)
_MISSING_DATA = ("not found under", "needs download", "dataset not on this machine")
_RUNS_LINE = re.compile(r"\[fedlib\] (\d+) run\(s\): (\d+) read from the result store, (\d+) trained")


def content_problems(texts: list[str], widget_outputs: int) -> list[str]:
    """Silent failures in a notebook's output texts: a dataset missing, runs asked for and none read or
    trained, runs trained with no progress widget rendered."""
    joined = "\n".join(texts)
    counts = [tuple(int(x) for x in m.groups()) for m in _RUNS_LINE.finditer(joined)]
    ran = sum(n for n, _, _ in counts)
    # a dataset the notebook lists as not here is fine beside runs on the ones that are (e.g. CIFAR-100 left out);
    # with no run at all the notebook showed nothing
    found = [f"an output says a dataset is missing ({w!r}) and no run was read or trained"
             for w in _MISSING_DATA if w in joined and not ran]
    if counts and ran == 0:
        found.append("it read and trained 0 runs")
    if any(trained for *_, trained in counts) and not widget_outputs:
        found.append("runs trained but no progress widget was rendered")
    return found


def output_texts(state: dict) -> list[str]:
    """Every text an output of the notebook holds (streams, plain-text and HTML results)."""
    out = []
    for cell in state["cells"]:
        for o in cell["outputs"]:
            out.append(str(o.get("text", "")))
            data = o.get("data", {})
            out += [str(data.get(k, "")) for k in ("text/plain", "text/html", "text/markdown")]
    return out


def problems_in(state: dict, venv: str) -> list[str]:
    """Error outputs, TqdmWarnings and the venv path in a notebook's outputs."""
    found = []
    for i, cell in enumerate(state["cells"]):
        for o in cell["outputs"]:
            text = json.dumps(o)
            if o.get("output_type") == "error":
                found.append(f"code cell {i}: {o.get('ename')}: {o.get('evalue')}")
            if "TqdmWarning" in text or "IProgress not found" in text:
                found.append(f"code cell {i}: TqdmWarning in an output")
            if venv and venv in text:
                found.append(f"code cell {i}: the virtual environment's path {venv} in an output")
    return found


def check_book(page, base: str, token: str, book: str, shots: Path, timeout_s: float,
               run_all: bool = True) -> dict:
    """Open one notebook, check it is clean, Run All, wait, check the outputs; a result dict."""
    t0 = time.monotonic()
    # JupyterLab's first load on a busy 2-core machine can take longer than playwright's 30 s default
    page.goto(f"{base}/lab/tree/notebooks/{book}?token={token}&reset", timeout=min(timeout_s, 300) * 1000)
    state = wait_for(page, lambda s: s["status"] == "idle", 180, "kernel not idle")
    res = {"notebook": book, "problems": []}
    if "dialog" in state:
        res["problems"].append(f"dialog on opening: {state['dialog'][:200]!r}")
        return res
    time.sleep(2.0)  # let late metadata updates (kernel info, language_info) land
    state = page.evaluate(STATE_JS)
    res["kernel"] = state["kernel"]
    if state["dirty"]:
        res["problems"].append("marked modified right after opening (metadata differs from what "
                               f"JupyterLab writes: {json.dumps(state['metadata'])})")
    if not run_all:
        return res
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    def done(s: dict) -> bool:  # every cell ran, or one failed (Run All stops there: waiting longer is a hang)
        errors = any(o.get("output_type") == "error" for c in s["cells"] for o in c["outputs"])
        return s["status"] == "idle" and (errors or all(c["count"] for c in s["cells"]))

    try:
        state = wait_for(page, done, timeout_s, "Run All not finished")
    except TimeoutError as err:
        res["problems"].append(str(err))
        state = page.evaluate(STATE_JS)
        page.screenshot(path=str(shots / (book.replace("/", "_").removesuffix(".ipynb") + "_timeout.png")))
        res["cells_not_run"] = sum(not c["count"] for c in state["cells"])
    if "dialog" in state:
        res["problems"].append(f"dialog while running: {state['dialog'][:200]!r}")
        return res
    res["problems"] += problems_in(state, sys.prefix)
    outputs = [o for c in state["cells"] for o in c["outputs"]]
    res["widget_outputs"] = sum(WIDGET_MIME in o.get("data", {}) for o in outputs)
    res["progress_elements"] = len(page.query_selector_all(".jp-OutputArea .widget-hprogress"))
    res["stderr_outputs"] = sum(o.get("name") == "stderr" for o in outputs)
    if res["widget_outputs"] and not res["progress_elements"]:
        res["problems"].append("progress widgets in the outputs but none rendered (lab extension?)")
    if not res["widget_outputs"] and res["stderr_outputs"]:
        res["problems"].append("progress is not a widget (text on stderr)")
    res["problems"] += content_problems(output_texts(state), res["progress_elements"])
    res["seconds"] = round(time.monotonic() - t0, 1)
    shot = shots / (book.replace("/", "_").removesuffix(".ipynb") + ".png")
    page.evaluate(SCROLL_TO_END_JS)  # the last cell: the comparison table
    time.sleep(2.0)
    page.screenshot(path=str(shot), full_page=True)
    bars = page.query_selector_all(".jp-OutputArea .widget-hprogress")
    if bars:  # a second picture: the first progress widget
        bars[0].scroll_into_view_if_needed()
        page.screenshot(path=str(shot.with_name(shot.stem + "_progress.png")))
    res["screenshot"] = str(shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("books", nargs="*", default=DEFAULT_BOOKS, help="paths under notebooks/")
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--out", default=str(ROOT / "build" / "browser"), help="screenshot folder")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per notebook's Run All")
    ap.add_argument("--open-only", action="store_true", help="open and check, do not Run All")
    args = ap.parse_args(argv)
    if not Path(args.chromium).exists():
        sys.exit(f"check-browser: no Chromium at {args.chromium}; on Debian: "
                 "apt-get update && apt-get install -y chromium (or pass --chromium PATH)")
    from playwright.sync_api import sync_playwright

    shots = Path(args.out).resolve()
    shots.mkdir(parents=True, exist_ok=True)
    token, port = secrets.token_hex(16), free_port()
    with tempfile.TemporaryDirectory(prefix="fedlib-browser-") as tmp:
        tmp = Path(tmp)
        root = stage(tmp, args.books)
        with open(shots / "jupyterlab.log", "w") as log:
            lab = start_lab(tmp, root, token, port, log)
            try:
                results = run_books(args, token, port, shots, tmp)
            finally:
                stop_lab(lab)
    return report(results)


def run_books(args, token: str, port: int, shots: Path, tmp: Path) -> list[dict]:
    from playwright.sync_api import sync_playwright

    results = []
    with sync_playwright() as pw:
        # a fresh profile (user data dir) in the temporary folder
        browser = pw.chromium.launch_persistent_context(
            str(tmp / "chromium-profile"), executable_path=args.chromium, args=CHROMIUM_FLAGS,
            headless=True, viewport={"width": 1400, "height": 1000})
        page = browser.new_page()
        for book in args.books:
            print(f"check-browser: {book} ...", flush=True)
            results.append(check_book(page, f"http://127.0.0.1:{port}", token, book, shots, args.timeout,
                                      run_all=not args.open_only))
            print(json.dumps(results[-1]), flush=True)
            page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
        browser.close()
    return results


def report(results: list[dict]) -> int:
    bad = [r for r in results if r["problems"]]
    for r in results:
        print(f"{'FAIL' if r['problems'] else 'ok  '} {r['notebook']}: {r.get('seconds', '-')} s, "
              f"kernel {r.get('kernel')!r}, {r.get('widget_outputs', 0)} progress widgets "
              f"({r.get('progress_elements', 0)} rendered), screenshot {r.get('screenshot', '-')}")
        for p in r["problems"]:
            print(f"     - {p}")
    print(f"check-browser: {len(results) - len(bad)} of {len(results)} notebooks clean")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
