"""scripts/bench --pages: group over a million records, the dashboard's
render and the report page's render (imported by scripts/bench).

  group 1M         pycore group --format text, and --format html
                   --output-dir, over COUNT records (--count, default
                   1,000,000): scripts/bench-group's input of
                   --shard-count records (default 100,000; made when
                   missing, at --input or in the work directory) named
                   COUNT/shard-count times; median wall and CPU of RUNS,
                   the largest peak RSS (wait4's rusage)
  dashboard render the index page of that --output-dir (its first page,
                   index.html) loaded by headless Chromium
                   (src/tests/lib/pycoretest/htmlpage.py): the first
                   contentful paint and the load event (best of 3)
  page render      pycore analyze --format html of a gcore snapshot of
                   src/tests/e2e/scenarios/many_threads.py with 200 and
                   with 1,000 workers (each stack its own), loaded the same
                   way
"""
import importlib.machinery
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src", "tests", "lib"))


def bench_group_module():
    loader = importlib.machinery.SourceFileLoader("bench_group", os.path.join(HERE, "bench-group"))
    spec = importlib.util.spec_from_loader("bench_group", loader)
    m = importlib.util.module_from_spec(spec)
    loader.exec_module(m)
    return m


def best_render(browser, path, tries=3):
    paints, loads = [], []
    for _ in range(tries):
        _, problems, secs = browser.load(path)
        if problems:
            raise SystemExit("bench: %s in Chromium: %s" % (path, problems[:3]))
        loads.append(secs)
        if browser.paint is not None:
            paints.append(browser.paint)
    return (min(paints) if paints else None), min(loads)


def thread_page(pycore, python, n, work):
    """The HTML page of a snapshot of many_threads.py's N workers."""
    import pycoretest as pt
    d = os.path.join(work, "threads-%d" % n)
    os.makedirs(d, exist_ok=True)
    core, _, _ = pt.take_snapshot(pt.Target(python), "many_threads", d, args=[str(n)])
    page = os.path.join(d, "page.html")
    with open(page, "wb") as f:
        subprocess.run([pycore, "analyze", "--format", "html", core], stdout=f, check=True)
    os.unlink(core)
    return page


def pages_bench(a, python, work, markdown_head, markdown_table):
    bg = bench_group_module()
    shard = a.input or os.path.join(work, "input.jsonl")
    if not os.path.exists(shard):
        bases = bg.base_reports(a.pycore, "/usr/bin/python3.11" if os.path.exists("/usr/bin/python3.11") else python,
                                work, False)
        bg.make_input(shard, bases, a.shard_count, 2000)
    with open(shard, "rb") as f:
        lines = sum(1 for _ in f)
    size = os.path.getsize(shard)
    shards = max(1, a.count // lines)
    inputs = [shard] * shards
    rows = []
    if a.markdown:
        markdown_head("pycore group and the HTML pages", a, python)
        print("group: scripts/bench-group's records (real reports%s, %.0f KB a record on average) "
              "in a file of %d lines (%.1f GB) named %d times: %d records; median of %d runs, the largest peak "
              "RSS.  Render: headless Chromium, best of 3, first contentful paint and load event.\n"
              % ("" if a.input else " of its six scenarios", size / lines / 1024, lines, size / 1e9, shards,
                 lines * shards, a.runs))
    for fmt in ("text", "pages"):
        bg.run_measured(*bg.group_argv(a.pycore, fmt, inputs, work))
        walls, cpus, rss = [], [], []
        for _ in range(a.runs):
            w, c, m, rc, _ = bg.run_measured(*bg.group_argv(a.pycore, fmt, inputs, work))
            walls.append(w)
            cpus.append(c)
            rss.append(m)
        label = "group %s, %s" % ("1M" if lines * shards == 1000000 else lines * shards,
                                  "text" if fmt == "text" else "html --output-dir")
        rows.append([label, "%.1f s" % statistics.median(walls), "%.1f s" % statistics.median(cpus),
                     "%.1f MB" % (max(rss) / 1024), "exit %d" % rc])
        if not a.markdown:
            print(" | ".join(rows[-1]))
    from pycoretest.htmlpage import CHROMIUM, Browser
    if not CHROMIUM:
        print("(no chromium: no render times)")
    else:
        browser = Browser(work)
        try:
            index = os.path.join(work, "pages", "index.html")
            paint, load = best_render(browser, index)
            names = os.listdir(os.path.dirname(index))
            npages = sum(1 for n in names if n.startswith("index"))
            rows.append(["dashboard render (index of %d groups%s)"
                         % (sum(1 for n in names if n.startswith("group-")),
                            ", page 1 of %d" % npages if npages > 1 else ""),
                         "first paint %s" % ("%.2f s" % paint if paint is not None else "?"),
                         "load %.2f s" % load, "%d KB" % (os.path.getsize(index) // 1024), ""])
            if not a.markdown:
                print(" | ".join(rows[-1]))
            for n in (200, 1000):
                page = thread_page(a.pycore, python, n, work)
                paint, load = best_render(browser, page)
                rows.append(["page render, %d threads" % (n + 1),
                             "first paint %s" % ("%.2f s" % paint if paint is not None else "?"),
                             "load %.2f s" % load, "%d KB" % (os.path.getsize(page) // 1024), ""])
                if not a.markdown:
                    print(" | ".join(rows[-1]))
        finally:
            browser.close()
    if a.markdown:
        markdown_table(["workload", "wall / first paint", "CPU / load", "peak RSS / page size", ""], rows)
    shutil.rmtree(os.path.join(work, "pages"), ignore_errors=True)
