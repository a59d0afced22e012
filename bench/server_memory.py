"""Memory the server holds with every page opened once, and what each page's imports cost.

    python -m bench.server_memory [--root DIR ...] [--repeat 3] [--imports]

Launch ``streamlit run app.py`` (headless, loopback, environment as on Streamlit Community Cloud:
no ``MALLOC_ARENA_MAX`` unless ``--malloc-arena-max``), open every page of ``content.pages.PAGES``
once, in order, in Debian's headless Chromium (each page its own visit, as a class arriving by
link), wait until the page has finished and settled, and read the server's resident memory
(``VmRSS`` in /proc, KiB) after each page; the figure is the RSS once all pages have been opened.
Several ``--root`` checkouts (say this one and ``git archive`` of an older commit) are measured
interleaved, ``--repeat`` times each, so the ratio holds on a busy machine. The server is also
checked for torch: a mapped ``libtorch`` means something imported it.

``--imports``: for each page, a fresh interpreter imports what app.py imports (the base every page
shares), then the page script's own top-level imports, and prints the RSS that adds and which
third-party packages load. Pages run as scripts, so this is the price of reaching the page at all.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.concurrency import start_server  # noqa: E402
from content.pages import PAGES  # noqa: E402

MiB = 2**20
OURS = ("app_pages", "charts", "classroom", "content", "glossary", "lessons", "measure", "simulators", "ui")


def status_kib(pid: int, field: str) -> int:
    """A ``/proc/<pid>/status`` field in KiB (VmRSS: resident now; VmHWM: the peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def torch_mapped(pid: int) -> bool:
    """Whether the process has torch's shared libraries mapped (imported torch at some point)."""
    return "libtorch" in Path(f"/proc/{pid}/maps").read_text()


def rss_by_mapping(pid: int) -> dict[str, float]:
    """Resident MiB per kind of mapping: the heap and anonymous memory, and file mappings grouped
    by the package they belong to (``site-packages/<package>``), from ``/proc/<pid>/smaps``."""
    totals: dict[str, float] = {}
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if "-" in head[0] and not head[0].endswith(":"):
            path = head[5].strip() if len(head) > 5 else "[anon]"
            if "site-packages/" in path:
                path = "site-packages/" + path.split("site-packages/")[1].split("/")[0]
            elif path.startswith("/"):
                path = "[other files]"
            name = path
        elif head[0] == "Rss:":
            totals[name] = totals.get(name, 0.0) + int(head[1]) / 1024
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def streamlit_caches(url: str) -> dict[str, float]:
    """MiB Streamlit itself counts per cache (``/_stcore/metrics``: st.cache_data and
    st.cache_resource entries by function, session state per session), largest first."""
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url + "/_stcore/metrics", timeout=30) as response:
        text = response.read().decode()
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("cache_memory_bytes{"):
            labels, value = line[len("cache_memory_bytes{") :].rsplit("}", 1)
            fields = dict(part.split("=", 1) for part in labels.split(",") if "=" in part)
            kind = fields.get("cache_type", "?").strip('"')
            name = fields.get("cache", "?").strip('"').rsplit(":", 1)[-1]
            key = f"{kind}:{name}"
            totals[key] = totals.get(key, 0.0) + float(value) / MiB
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def page_paths() -> list[tuple[str, str]]:
    """(title, path under the server's URL) for every page, the default page at ``/``."""
    return [(info.title, "" if info.default else info.url_path) for info in PAGES]


def one_run(browser, root: Path, malloc_arena_max: int) -> dict:
    """Open every page once on a fresh server from ``root``; RSS after start and after each page."""
    from tests.e2e.conftest import settle

    data = tempfile.mkdtemp(prefix="bench-server-memory-")
    os.environ.update({"GFG_DATA_DIR": data, "GFG_CLASS_DB": ""})
    with start_server(root / "app.py", cwd=root, timeout_s=180, malloc_arena_max=malloc_arena_max) as server:
        steps = [("started", status_kib(server.pid, "VmRSS") / 1024)]
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            for title, path in page_paths():
                page.goto(f"{server.url}/{path}", wait_until="commit")
                settle(page)
                steps.append((title, status_kib(server.pid, "VmRSS") / 1024))
        finally:
            context.close()
        return {
            "steps": steps,
            "rss_mib": steps[-1][1],
            "hwm_mib": status_kib(server.pid, "VmHWM") / 1024,
            "torch": torch_mapped(server.pid),
            "mappings": rss_by_mapping(server.pid),
            "caches": streamlit_caches(server.url),
        }


def server_runs(roots: list[Path], repeat: int, malloc_arena_max: int) -> dict[Path, list[dict]]:
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS

    runs: dict[Path, list[dict]] = {root: [] for root in roots}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            for i in range(repeat):
                for root in roots:
                    run = one_run(browser, root, malloc_arena_max)
                    runs[root].append(run)
                    steps = "  ".join(f"{title} {mib:.0f}" for title, mib in run["steps"])
                    print(
                        f"[{i + 1}/{repeat}] {root}: {run['rss_mib']:.1f} MiB after every page "
                        f"(peak {run['hwm_mib']:.1f}; torch {'LOADED' if run['torch'] else 'not loaded'})\n"
                        f"    RSS MiB after: {steps}\n"
                        f"    by mapping (MiB): "
                        + ", ".join(f"{name} {mib:.1f}" for name, mib in list(run["mappings"].items())[:8])
                        + f"\n    Streamlit's caches: {sum(run['caches'].values()):.1f} MiB: "
                        + ", ".join(f"{name} {mib:.2f}" for name, mib in list(run["caches"].items())[:10]),
                        flush=True,
                    )
        finally:
            browser.close()
    return runs


# A fresh interpreter: RSS after app.py's imports, then after one page script's top-level imports.
IMPORT_CHILD = r"""
import importlib, json, sys
sys.path.insert(0, {root!r})
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
start = rss()
for name in {base!r}:
    importlib.import_module(name)
base_mib = rss()
before = set(sys.modules)
for name, attrs in {imports!r}:
    module = importlib.import_module(name)
    for attr in attrs:  # ``from package import module`` imports the submodule
        if not hasattr(module, attr):
            importlib.import_module(name + "." + attr)
new = sorted({{m.split(".")[0] for m in set(sys.modules) - before}})
print(json.dumps({{"start": start, "base": base_mib, "after": rss(), "new": new,
                  "torch": "torch" in sys.modules, "transformers": "transformers" in sys.modules}}))
"""


def top_level_imports(script: Path) -> list[tuple[str, list[str]]]:
    """(module, names) for each import at the top of a script (not those inside functions)."""
    found = []
    for node in ast.parse(script.read_text()).body:
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def import_costs(root: Path) -> list[dict]:
    base = [name for name, _ in top_level_imports(root / "app.py")]
    rows = []
    for info in PAGES:
        code = IMPORT_CHILD.format(root=str(root), base=base, imports=top_level_imports(root / info.path))
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
        ).stdout
        rows.append({"page": info.title, **json.loads(out.strip().splitlines()[-1])})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, action="append", help="app checkout(s); default this one")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--malloc-arena-max", type=int, default=0, help="0: as on Community Cloud")
    parser.add_argument("--imports", action="store_true", help="only the per-page import costs")
    args = parser.parse_args(argv)
    roots = [root.resolve() for root in (args.root or [ROOT])]

    for root in roots:
        rows = import_costs(root)
        print(f"\nImports, {root} (fresh interpreter; app.py's imports = base):")
        base, bare = rows[0]["base"], rows[0]["start"]
        print(f"  base {base - bare:+.1f} MiB over a bare interpreter ({base:.1f} MiB)")
        for row in rows:
            third = [m for m in row["new"] if m not in OURS]
            flags = " TORCH" * row["torch"] + " TRANSFORMERS" * row["transformers"]
            added = row["after"] - row["base"]
            print(f"  {row['page']:<18} {added:+6.1f} MiB  new packages: {', '.join(third) or '-'}{flags}")
    if args.imports:
        return 0

    runs = server_runs(roots, args.repeat, args.malloc_arena_max)
    print("\nServer RSS with every page opened once (median of runs, MiB; 1 MiB = 1.048576 MB):")
    medians = {}
    for root, results in runs.items():
        medians[root] = statistics.median(r["rss_mib"] for r in results)
        values = ", ".join(f"{r['rss_mib']:.1f}" for r in results)
        print(f"  {root}: {medians[root]:.1f} MiB = {medians[root] * MiB / 1e6:.1f} MB  (runs {values})")
    if len(roots) > 1:
        first = medians[roots[0]]
        for root in roots[1:]:
            print(f"  {root} / {roots[0]}: {medians[root] / first:.3f}")
    return 1 if any(r["torch"] for results in runs.values() for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
