"""The HTML report and the crash dashboard, in a real browser, on real cores.

One interpreter of src/tests/interpreters (the first present of 3.12,
3.13, 3.11, 3.10) makes the cores: a crash (the kernel's core of
crash.py's SIGSEGV), a hang (gcore of threads.py), locals (locals.py,
--locals=deep), asyncio (aio_tasks.py), locks and a deadlock
(lock_waits.py), a stack-only minidump (lldb's, of threads.py), a
truncated core (crash.py's, cut in half), hostile strings
(html_hostile.py: thread, file and function names, locals and exception
messages holding </script>, <img onerror>, javascript: URLs, quotes,
bidi and control characters and bytes that are not UTF-8), 200 threads
of them with --locals, and the child of a fork() from C (forked.py: the
parent's thread states left in its interpreter, shown apart as "left by
fork", as the text shows them).  For each, pycore analyze --format html's page:

  * parsed with Python's html.parser: every tag and attribute one the
    renderer writes, every link a fragment of the page or a page of
    --html-dir, one <style> and one <script>, both allowed by the CSP's
    hashes and nothing else;
  * loaded by headless Chromium from a file:// URL with the network off
    (a DevTools pipe): no console message, no exception, no CSP
    violation, no request but the page's own; the DOM after load has the
    JSON report's facts: every Python thread in one section, its frames
    (file, line, function), variables (name, type, repr) and exception,
    the warnings, the summary, the asyncio tasks, the lock waits and the
    deadlock's threads, each string escaped as the page escapes it;
  * with script disabled (--dump-dom, scriptEnabled=false): the same facts;
  * the hostile strings appear as text and never as markup.

Then pycore batch --html-dir over those dumps and pycore group --format
html over its JSON Lines (given twice, as two shards): the dashboard's
groups, counts and links equal group --format json's, in Chromium too.
Then --output-dir over 1,001 groups of those real records (each record
given, in turn, a fingerprint hash of its group's own, and repeated so
that counts differ): more groups than one index page lists; from
index.html, by its links alone, every index page and every group's page
is reached, the rows in group --format json's order, each group's page
linking back to the index page of its row; each index page's load event
in Chromium is measured and reported (not a pass condition).
Screenshots of one report and of the dashboard (chromium --screenshot)
are made in the build directory, and copied to $PYCORE_SCREENSHOTS when
set.  The 200-thread page's load time is reported (not a pass condition).

Prints TAP; a scenario that cannot run here is skipped by name."""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pycoretest as cs
from pycoretest.htmlpage import CHROMIUM, Browser, Page, check_markup, esc, no_script_dom, screenshot
from pycoretest.minidump import LLDB_NAME, need_lldb, save_minidump
from pycoretest.env import scaled, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
Failure, Skip = cs.Failure, cs.Skip
PREFERRED = ["py3.12", "py3.13", "py3.11", "py3.10"]

# ---------------------------------------------------------------------------
# The report's facts on the page (pycoretest.htmlpage parses it)

def one(node, tag, cls):
    found = [n for n in node.find(tag, cls)]
    return found[0].text() if found else None


def python_threads(report):
    return [t for i in report["interpreters"] for t in i["threads"]]


def frames_of(section):
    """The stack's frames of a thread section (not its exception's)."""
    return [li for li in section.find("li", "frame") if not li.inside("div", "exc")]


def compare_frame(label, li, f):
    kind = [k for k in ("python", "native", "gc") if k in li.cls()]
    if kind != [f["kind"]]:
        raise Failure("%s: a %s frame, the JSON's is %s" % (label, kind, f["kind"]))
    if f["kind"] == "python":
        got = (one(li, "span", "file"), one(li, "span", "lineno"), one(li, "span", "func"))
        want = (esc(f["file"]), str(f["line"]) if f["line"] else "?", esc(f["function"]))
        if got != want:
            raise Failure("%s: frame %r, the JSON's %r" % (label, got, want))
    rows = [tr for tr in li.find("tr", "local")]
    want_l = [(esc(l["name"]), esc(l["type"]), esc(l["repr"]) if l["repr"] is not None else "(no value)")
              for l in (f["locals"] or [])]
    got_l = [(one(tr, "td", "name"), one(tr, "td", "type"), one(tr, "td", "repr")) for tr in rows]
    if got_l != want_l:
        raise Failure("%s: variables %r, the JSON's %r" % (label, got_l[:3], want_l[:3]))
    return len(want_l)


def compare_page(page, report, label):
    """The facts of REPORT (JSON) in PAGE; a summary of what matched."""
    body = page.root
    sections = [s for s in body.find("section", "thread") if "os-thread" not in s.cls()]
    by_tid = {}
    for s in sections:
        for tid in s.attrs.get("data-tids", "").split():
            if tid in by_tid:
                raise Failure("%s: thread %s in two sections" % (label, tid))
            by_tid[tid] = s
    threads = python_threads(report)
    want_tids = sorted(str(t["tid"] if t["tid"] is not None else -1) for t in threads)
    if sorted(by_tid) != want_tids:
        raise Failure("%s: thread sections %s, the JSON's threads %s" % (label, sorted(by_tid), want_tids))
    nframes = nlocals = 0
    for t in threads:
        s = by_tid[str(t["tid"] if t["tid"] is not None else -1)]
        lis = frames_of(s)
        if len(lis) != len(t["frames"]):
            raise Failure("%s: thread %s: %d frames, the JSON has %d" % (label, t["tid"], len(lis), len(t["frames"])))
        for li, f in zip(lis, reversed(t["frames"])):
            nlocals += compare_frame("%s: thread %s" % (label, t["tid"]), li, f)
        nframes += len(lis)
        if t["name"] is not None and len(s.attrs["data-tids"].split()) == 1:
            if one(s, "span", "tname") != esc(t["name"]):
                raise Failure("%s: thread %s named %r, the JSON %r" % (label, t["tid"], one(s, "span", "tname"),
                                                                      esc(t["name"])))
        e = t["exception"]
        if e is not None:
            excs = s.find("div", "exc")
            if not excs or one(excs[0], "span", "exc-type") != esc(e["type"] or "an exception"):
                raise Failure("%s: thread %s: no exception %r" % (label, t["tid"], e["type"]))
            if e["message"] and one(excs[0], "span", "exc-msg") != esc(e["message"]):
                raise Failure("%s: thread %s: message %r, the JSON's %r" % (label, t["tid"],
                                                                            one(excs[0], "span", "exc-msg"),
                                                                            esc(e["message"])))
    warnings = [li.text() for li in body.find("li", "warning")]
    if warnings != [esc(w) for w in report["warnings"]]:
        raise Failure("%s: warnings %r, the JSON's %r" % (label, warnings[:3], report["warnings"][:3]))
    answer = one(body, "p", "answer")
    if answer is None or esc(report["summary"]["text"]) not in answer:
        raise Failure("%s: summary %r, the JSON's %r" % (label, answer, report["summary"]["text"]))
    # thread states left by fork (issue 27): apart, as the text shows them
    stale = [s for s in body.find("section", "stale-thread")]
    want_stale = sorted(str(t["ident"]) for i in report["interpreters"] for t in i["stale_threads"])
    if sorted(s.attrs["data-ident"] for s in stale) != want_stale:
        raise Failure("%s: stale thread states %s, the JSON's %s" % (label, [s.attrs["data-ident"] for s in stale],
                                                                    want_stale))
    for s in stale:
        h3 = s.find("h3")[0].text()
        if "left by fork" not in h3 or "0x%x" % int(s.attrs["data-ident"]) not in h3:
            raise Failure("%s: a stale thread state's heading %r" % (label, h3))
    if report["native_threads"] is not None:
        os_sections = [s for s in body.find("section", "os-thread")]
        if len(os_sections) != len(report["native_threads"]):
            raise Failure("%s: %d sections of OS threads, the JSON has %d" % (label, len(os_sections),
                                                                              len(report["native_threads"])))
    ntasks = 0
    for it in report["interpreters"]:
        for loop in it["asyncio"] or []:
            ntasks += len(loop["tasks"])
    got_tasks = sorted(li.attrs["data-address"] for li in body.find("li", "task"))
    want_tasks = sorted(t["address"] for it in report["interpreters"] for loop in it["asyncio"] or []
                        for t in loop["tasks"])
    if got_tasks != want_tasks:
        raise Failure("%s: tasks %s, the JSON's %s" % (label, got_tasks[:5], want_tasks[:5]))
    edges = sorted((g.attrs["data-from"], g.attrs["data-to"]) for g in body.find("g", "wait-edge"))
    want_edges = sorted((str(t["tid"]), str(t["waiting_on"]["owner"])) for t in threads
                        if t["waiting_on"] and t["waiting_on"]["owner"] is not None and t["tid"] is not None
                        and t["waiting_on"]["owner"] != t["tid"])
    if edges != want_edges:
        raise Failure("%s: wait edges %s, the JSON's %s" % (label, edges, want_edges))
    cyc = sorted(g.attrs["data-tid"] for g in body.find("g", "wait-node") if g.find("rect", "cyc"))
    want_cyc = sorted(str(t) for t in report["summary"]["deadlock"] or [])
    if cyc != want_cyc:
        raise Failure("%s: deadlock drawn for %s, the JSON's %s" % (label, cyc, want_cyc))
    return "%d threads, %d frames, %d variables, %d tasks, %d waits, %d warnings%s" % (
        len(threads), nframes, nlocals, len(got_tasks), len(edges), len(warnings),
        ", %d thread states left by fork" % len(stale) if stale else "")


# ---------------------------------------------------------------------------
# Scenarios

def render(core, args, work, name, ok=(0,)):
    """pycore's JSON report and HTML page of CORE, the page's path."""
    rc, out, err = cs.run_pycore(["analyze", "--format", "json"] + args + [core])
    if rc not in ok:
        raise Failure("JSON: exit %d: %s" % (rc, err.strip()[-300:]))
    report = cs.load_report(out)
    page = os.path.join(work, name + ".html")
    with open(page, "wb") as f:
        p = subprocess.run([os.environ["PYCORE"], "analyze", "--format", "html"] + args + [core], stdout=f,
                           stderr=subprocess.PIPE)
    if p.returncode not in ok:
        raise Failure("HTML: exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace").strip()[-300:]))
    return report, page


def check_page(browser, report, path, work, label):
    with open(path, encoding="utf-8") as f:
        page = Page(f.read())
    check_markup(page, label + " (as written)")
    detail = compare_page(page, report, label + " (as written)")
    dom, problems, secs = browser.load(path)
    if problems:
        raise Failure("%s in Chromium: %s" % (label, problems[:5]))
    live = Page(dom)
    check_markup(live, label + " (Chromium's DOM)")
    compare_page(live, report, label + " (Chromium's DOM)")
    if not live.root.find("button"):
        raise Failure("%s: the script added no button (did it run?)" % label)
    quiet = Page(no_script_dom(browser, path))
    check_markup(quiet, label + " (script off)")
    compare_page(quiet, report, label + " (script off)")
    if quiet.root.find("button"):
        raise Failure("%s: buttons with script off" % label)
    return detail, secs


def check_hostile(page_path, strings):
    """Each hostile string appears as text, escaped, and no markup of the
    page comes from it (check_markup has seen every tag and attribute)."""
    text = Page(open(page_path, encoding="utf-8").read()).root.text()
    missing = [s for s in strings if esc(s) not in text]
    if missing:
        raise Failure("hostile strings not shown as text: %r" % missing)
    return len(strings)


def many_threads(target, work, n):
    """gcore of many_threads.py's N workers, each with a stack of its own;
    (core, its truth's path)."""
    core, truth, _ = cs.take_snapshot(target, "many_threads", work, args=[str(n)])
    return core, truth


def check_many(report, path, truth_path, n, browser):
    """A page of N + 1 threads: the report is the process's truth, every
    thread's stack but the GIL holder's and the crashed one's folded, and
    the page painted within a second in Chromium (three loads, the best)."""
    truth = json.load(open(truth_path))
    if len(truth["threads"]) != n + 1:
        raise Failure("the scenario recorded %d threads, not %d" % (len(truth["threads"]), n + 1))
    cs.compare(truth, report, None)
    page = Page(open(path, encoding="utf-8").read())
    sections = [s for s in page.root.find("section", "thread") if "os-thread" not in s.cls()]
    if len(sections) != n + 1:
        raise Failure("%d thread sections for %d threads (each stack is its own)" % (len(sections), n + 1))
    open_ = [s for s in sections if not s.find("details", "stack")]
    want_open = [s for s in sections if "gil" in s.cls() or "crashed" in s.cls()]
    if open_ != want_open:
        raise Failure("%d thread sections not folded, want %d (the GIL holder's, the crashed one's)"
                      % (len(open_), len(want_open)))
    if page.styles and "style=" in open(path, encoding="utf-8").read().split("</style>", 1)[1]:
        raise Failure("an inline style attribute past the stylesheet")
    paints, loads = [], []
    for _ in range(3):
        _, problems, secs = browser.load(path)
        if problems:
            raise Failure("in Chromium: %s" % problems[:5])
        if browser.paint is None:
            raise Failure("Chromium reported no first paint")
        paints.append(browser.paint)
        loads.append(secs)
    # (the time is said, not asserted: speed is scripts/bench --pages's)
    return ("%d threads, %d sections folded; first paint %.2f s, load %.2f s (best of 3; size %d KB)"
            % (n + 1, len(sections) - len(open_), min(paints), min(loads), os.path.getsize(path) // 1024))


def check_split(browser, pages, inputs, groups, whole):
    """group --format html --output-dir: the index's rows are group
    --format json's groups, each linking its page, which holds the
    group's section as the one-page dashboard shows it (for the 20 it
    shows), its links those of batch --html-dir's pages or the index."""
    out = os.path.join(os.path.dirname(pages), "split")
    p = subprocess.run([os.environ["PYCORE"], "group", "--format", "html", "--html-dir", pages, "--output-dir", out]
                       + list(inputs), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 or p.stdout:
        raise Failure("group --output-dir: exit %d, %d bytes on standard output: %s"
                      % (p.returncode, len(p.stdout), p.stderr.decode()))
    index = os.path.join(out, "index.html")
    written = Page(open(index, encoding="utf-8").read())
    check_markup(written, "split dashboard's index")
    dom, problems, secs = browser.load(index)
    if problems:
        raise Failure("split dashboard's index in Chromium: %s" % problems[:5])
    rows = written.root.find("tr", "group-row")
    got = [(r.attrs["data-hash"], int(r.attrs["data-count"])) for r in rows]
    want = [(g["fingerprint"]["hash"], g["count"]) for g in groups]
    if got != want or [(r.attrs["data-hash"], int(r.attrs["data-count"])) for r in Page(dom).root.find(
            "tr", "group-row")] != want:
        raise Failure("split dashboard's index: groups %s, group --format json's %s" % (got, want))
    if written.root.find("section", "group"):
        raise Failure("split dashboard's index holds groups' sections")
    totals = re.search(r'<span id="reports">(\d+)</span>', open(index).read())
    if not totals or totals.group(0) not in open(os.path.join(os.path.dirname(pages), "pages", "index.html")).read():
        raise Failure("split dashboard's totals differ from the one page's")
    whole_sections = dict((s.attrs["data-hash"], s.text()) for s in whole.root.find("section", "group"))
    for rank, r in enumerate(rows, 1):
        links = [a.attrs["href"] for a in r.find("a") if a.attrs["href"] == "group-%d.html" % rank]
        if not links:
            raise Failure("split dashboard: row %d links no group-%d.html" % (rank, rank))
        path = os.path.join(out, links[0])
        gp = Page(open(path, encoding="utf-8").read())
        check_markup(gp, links[0])
        secs_ = gp.root.find("section", "group")
        if len(secs_) != 1 or secs_[0].attrs["data-hash"] != r.attrs["data-hash"]:
            raise Failure("%s: not the section of group %s" % (links[0], r.attrs["data-hash"]))
        h = r.attrs["data-hash"]
        if h in whole_sections and secs_[0].text() != whole_sections[h]:
            raise Failure("%s: its section differs from the one page's" % links[0])
        bad = [a.attrs["href"] for a in gp.root.find("a") if a.attrs["href"] != "index.html"
               and not os.path.exists(os.path.join(pages, a.attrs["href"]))]
        if bad:
            raise Failure("%s: links to missing pages %s" % (links[0], bad[:3]))
    if len(os.listdir(out)) != len(rows) + 1:
        raise Failure("split dashboard: %d files for %d groups" % (len(os.listdir(out)), len(rows)))
    return "split into an index and %d group pages, the index loaded in %.2f s" % (len(rows), secs)


INDEX_LINK = re.compile(r"^index(-[0-9]+)?\.html$")


def index_number(name):
    m = re.match(r"^index(?:-([0-9]+))?\.html$", name)
    return int(m.group(1) or 1)


def paged_records(jsonl, ngroups):
    """The batch's real records, each of NGROUPS groups one of them
    (in turn) with its fingerprint's hash made the group's own, repeated
    1 to 4 times so that the groups' counts differ: records of more
    groups than one index page lists."""
    records = [json.loads(l) for l in open(jsonl, "rb").read().splitlines()]
    records = [r for r in records if not r.get("error") and r.get("fingerprint")]
    if not records:
        raise Failure("the batch made no report with a fingerprint")
    out = []
    for g in range(ngroups):
        rec = dict(records[g % len(records)])
        rec["fingerprint"] = dict(rec["fingerprint"], hash="%s-%04d" % (rec["fingerprint"]["hash"], g))
        out.extend([json.dumps(rec)] * (1 + (g * 7) % 4))
    return out


def check_paged(browser, pages, jsonl, work, ngroups=1001):
    """group --output-dir over more groups than one index page lists:
    from index.html, by the links alone, every index page is reached;
    their rows, in page order, are group --format json's groups, each
    page as long as the first but the last; each row links its group's
    page, which holds that group's section and links back to the index
    page of its row; every page carries the totals; nothing else in the
    directory.  Each index page's load in Chromium is measured (reported,
    not a pass condition) and the first pages are read with script off."""
    path = os.path.join(work, "paged.jsonl")
    with open(path, "w") as f:
        f.write("\n".join(paged_records(jsonl, ngroups)) + "\n")
    rc, out, err = cs.run_pycore(["group", "--format", "json", path])
    if rc != 0:
        raise Failure("group --format json: exit %d: %s" % (rc, err))
    want = [(g["fingerprint"]["hash"], g["count"]) for g in map(json.loads, out.splitlines())]
    if len(want) != ngroups:
        raise Failure("group --format json: %d groups, %d made" % (len(want), ngroups))
    d = os.path.join(work, "paged")
    p = subprocess.run([os.environ["PYCORE"], "group", "--format", "html", "--html-dir", pages, "--output-dir", d,
                        path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0 or p.stdout:
        raise Failure("group --output-dir: exit %d, %d bytes on standard output: %s"
                      % (p.returncode, len(p.stdout), p.stderr.decode()))
    # the index's pages, reached from index.html by their links
    seen, todo, index_pages = set(), ["index.html"], {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if not os.path.exists(os.path.join(d, name)):
            raise Failure("a link to %s, not written" % name)
        page = Page(open(os.path.join(d, name), encoding="utf-8").read())
        check_markup(page, name)
        index_pages[name] = page
        todo.extend(a.attrs["href"] for a in page.root.find("a") if INDEX_LINK.match(a.attrs["href"]))
    names = sorted(index_pages, key=index_number)
    if len(names) < 2:
        raise Failure("%d groups on %d index page" % (ngroups, len(names)))
    if [index_number(n) for n in names] != list(range(1, len(names) + 1)):
        raise Failure("index pages %s" % names)
    rows, where, loads = [], {}, []
    per_page = len(index_pages[names[0]].root.find("tr", "group-row"))
    for k, name in enumerate(names, 1):
        page = index_pages[name]
        got = page.root.find("tr", "group-row")
        if not got or len(got) > per_page or (k < len(names) and len(got) != per_page):
            raise Failure("%s: %d rows, the first page %d" % (name, len(got), per_page))
        if [s.text() for s in page.root.find("span") if s.attrs.get("id") == "groups"] != [str(ngroups)]:
            raise Failure("%s: no total of %d groups" % (name, ngroups))
        ranges = [s.text() for s in page.root.find("span", "range")]
        first, last = len(rows) + 1, len(rows) + len(got)
        if not ranges or any(r != "%d\u2013%d" % (first, last) for r in ranges):
            raise Failure("%s: says groups %s, holds %d to %d" % (name, ranges, first, last))
        for r in got:
            rows.append((r.attrs["data-hash"], int(r.attrs["data-count"])))
            rank = len(rows)
            links = [a.attrs["href"] for a in r.find("a")]
            if [h for h in links if re.match(r"^group-[0-9]+\.html$", h)] != ["group-%d.html" % rank]:
                raise Failure("%s: row %d links %s" % (name, rank, links))
            missing = [h for h in links if not h.startswith("group-") and not os.path.exists(os.path.join(pages, h))]
            if missing:
                raise Failure("%s: row %d links missing pages %s" % (name, rank, missing))
            where[rank] = name
        dom, problems, secs = browser.load(os.path.join(d, name))
        if problems:
            raise Failure("%s in Chromium: %s" % (name, problems[:5]))
        loads.append(secs)
        if [(r.attrs["data-hash"], int(r.attrs["data-count"])) for r in Page(dom).root.find("tr", "group-row")] \
                != rows[first - 1:]:
            raise Failure("%s: Chromium's DOM holds other rows" % name)
        if k <= 2:
            quiet = Page(no_script_dom(browser, os.path.join(d, name)))
            qlinks = set(a.attrs["href"] for a in quiet.root.find("a"))
            if len(quiet.root.find("tr", "group-row")) != len(got) or \
                    not set(a.attrs["href"] for a in page.root.find("a")) <= qlinks:
                raise Failure("%s with script off: rows or links missing" % name)
    if rows != want:
        diff = [i for i, (a, b) in enumerate(zip(rows, want)) if a != b][:3]
        raise Failure("index pages' rows: %d groups, group --format json's %d; first differences at %s"
                      % (len(rows), len(want), diff))
    for rank, (h, _) in enumerate(rows, 1):
        gp = Page(open(os.path.join(d, "group-%d.html" % rank), encoding="utf-8").read())
        check_markup(gp, "group-%d.html" % rank)
        sec = gp.root.find("section", "group")
        if len(sec) != 1 or sec[0].attrs["data-hash"] != h:
            raise Failure("group-%d.html: not the section of group %s" % (rank, h))
        back = [a.attrs["href"] for a in gp.root.find("a", "index")]
        if back != [where[rank]]:
            raise Failure("group-%d.html links back to %s, its row is on %s" % (rank, back, where[rank]))
        missing = [a.attrs["href"] for a in gp.root.find("a") if "index" not in a.cls()
                   and not os.path.exists(os.path.join(pages, a.attrs["href"]))]
        if missing:
            raise Failure("group-%d.html links missing pages %s" % (rank, missing[:3]))
    extra = set(os.listdir(d)) - set(names) - set("group-%d.html" % r for r in range(1, len(rows) + 1))
    if extra:
        raise Failure("--output-dir holds %s besides the pages" % sorted(extra)[:5])
    return ("%d groups on %d index pages of %d rows, every group reached from index.html by links; "
            "the index pages' load events at %.2f to %.2f s (median %.2f; not a pass condition)"
            % (len(rows), len(names), per_page, min(loads), max(loads), sorted(loads)[len(loads) // 2]))


def pick_target():
    for name in PREFERRED:
        path = os.path.join(HERE, "interpreters", name + ".interp")
        target, why = cs.interpreter(path)
        if not why and not target.root:
            return name, target, None
    return None, None, "none of %s is installed" % ", ".join(PREFERRED)


def snapshot(target, scenario, work, extra=()):
    core, truth, _ = cs.take_snapshot(target, scenario, work)
    return core, truth


# an argument of bytes that are not UTF-8: the report's argv holds them as
# they are, and only the page's escaping stands between them and the page
HOSTILE_ARG = b"\xff\xfe</script><img src=x onerror=alert(1)>\xe2\x80"


def hostile_core(target, work, many=False):
    truth = os.path.join(work, "truth.json")
    proc = target.popen([os.path.join(cs.SCENARIOS, "html_hostile.py"), truth] + (["many"] if many else [])
                        + [HOSTILE_ARG], work, stdout=subprocess.PIPE)
    try:
        if not cs.wait_ready(proc, timeout=60):
            raise Failure("the scenario did not get ready (exit %s)" % proc.poll())
        g = subprocess.run(["gcore", "-o", os.path.join(work, "core"), str(proc.pid)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=scaled(300))
        core = os.path.join(work, "core.%d" % proc.pid)
        if g.returncode != 0 or not os.path.exists(core):
            raise Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-300:])
    finally:
        proc.kill()
        proc.wait()
    hostile = [bytes.fromhex(h).decode("utf-8", "surrogateescape") for h in json.load(open(truth))["hostile"]]
    return core, hostile + [HOSTILE_ARG.decode("utf-8", "surrogateescape")]


def forked_child(target, work):
    """The kernel's core of forked.py's child: fork() from C while another
    thread holds an RLock leaves the parent's thread states in the child's
    interpreter (the report's stale_threads); the child then crashes."""
    pattern, why = cs.kernel_core_usable()
    if why:
        raise Skip(why)
    truth_path = os.path.join(work, "truth.json")

    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    proc = target.popen([target.scenario(work, "forked.py"), target.inside(truth_path)], work, preexec=unlimited,
                        stdout=subprocess.PIPE)
    proc.communicate(timeout=scaled(60))
    if proc.returncode != 0:
        raise Failure("forked.py: the child did not end in SIGSEGV (exit %s)" % proc.returncode)
    core = cs.kernel_core_path(pattern, json.load(open(truth_path))["pid"], work)
    if wait_until(lambda: os.path.exists(core), 10, step=0.1):
        time.sleep(0.2)   # the kernel may still be writing it
        return core
    raise Skip("the kernel wrote no core of the child (%s)" % core)


def stack_minidump(target, work):
    need_lldb()
    dmp = os.path.join(work, "stack.dmp")
    proc = target.popen([os.path.join(cs.SCENARIOS, "threads.py"), os.path.join(work, "truth.json")], work,
                        stdout=subprocess.PIPE)
    try:
        if not cs.wait_ready(proc):
            raise Failure("the scenario did not get ready")
        save_minidump(proc.pid, "stack", dmp)
    finally:
        proc.kill()
        proc.wait()
    if not os.path.exists(dmp):
        raise Failure("%s wrote no minidump" % LLDB_NAME)
    return dmp


def main():
    tap = cs.TAP()
    name, target, why = pick_target()
    if not why and not shutil.which("gcore"):
        why = "gcore not installed (Debian package gdb)"
    if not why and not CHROMIUM:
        why = "chromium not installed (Debian package chromium)"
    work = tempfile.mkdtemp(prefix="pycore-html-", dir=target.workdir("pycore-html-") if target else None)
    pages = os.path.join(work, "pages")
    os.mkdir(pages)
    dumps = []            # (core, args) for the batch
    browser = [None]

    def get_browser():
        if browser[0] is None:
            browser[0] = Browser(work)
        return browser[0]

    def scenario(label, make, args=(), ok=(0,), hostile=False, shot=None, stale=False, many=None):
        def run():
            if why:
                raise Skip(why)
            sub = tempfile.mkdtemp(dir=work)
            made = make(sub)
            core, strings = made if isinstance(made, tuple) else (made, None)
            report, page = render(core, list(args), sub, "page", ok)
            detail, secs = check_page(get_browser(), report, page, sub, label)
            if stale and not any(i["stale_threads"] for i in report["interpreters"]):
                raise Failure("the forked child's report holds no stale thread state")
            if many:
                detail += "; " + check_many(report, page, strings, many, get_browser())
            if hostile:
                detail += "; %d hostile strings shown as text" % check_hostile(page, strings)
            if shot:
                detail += "; screenshot %d bytes" % screenshot(page, os.path.join(os.getcwd(), shot), sub)
            dumps.append((core, list(args)))
            paint = get_browser().paint
            return "%s; loaded and laid out in %.2f s, first paint %s" % (
                detail, secs, "%.2f s" % paint if paint is not None else "not reported")
        tap.run("%s %s" % (name or "html", label), run)

    def crash(sub):
        return cs.take_crash(target, sub, ["crash.py"], signal.SIGSEGV)[0]

    def truncated(sub):
        core = crash(sub)
        size = os.path.getsize(core)
        with open(core, "r+b") as f:
            f.truncate(size // 2)
        return core

    try:
        scenario("crash", crash, ["--native"], shot="html-report.png")
        scenario("hang", lambda sub: snapshot(target, "threads", sub)[0])
        scenario("locals", lambda sub: snapshot(target, "locals", sub)[0], ["--locals=deep"])
        scenario("exceptions", lambda sub: snapshot(target, "exceptions", sub)[0])
        scenario("recursion", lambda sub: snapshot(target, "recursion", sub)[0])
        scenario("asyncio", lambda sub: snapshot(target, "aio_tasks", sub)[0])
        scenario("locks and a deadlock", lambda sub: snapshot(target, "lock_waits", sub)[0])
        scenario("stack-only minidump", lambda sub: stack_minidump(target, sub), ["--native"], ok=(1,))
        scenario("truncated core", truncated, ok=(0, 1))
        scenario("forked child with stale thread states", lambda sub: forked_child(target, sub), ok=(0, 1),
                 stale=True)
        scenario("hostile strings", lambda sub: hostile_core(target, sub), ["--locals"], hostile=True)
        scenario("200 threads of hostile strings, --locals", lambda sub: hostile_core(target, sub, True),
                 ["--locals"], hostile=True)

        scenario("1,000 threads", lambda sub: many_threads(target, sub, 1000), many=1000)

        def dashboard():
            if why:
                raise Skip(why)
            if len(dumps) < 2:
                raise Failure("fewer than two dumps were made")
            jsonl = os.path.join(work, "batch.jsonl")
            with open(jsonl, "wb") as f:
                p = subprocess.run([os.environ["PYCORE"], "batch", "--html-dir", pages, "-j", "2"]
                                   + [c for c, _ in dumps], stdout=f, stderr=subprocess.PIPE, timeout=scaled(900))
            if p.returncode != 0:
                raise Failure("batch: exit %d: %s" % (p.returncode, p.stderr.decode()[-300:]))
            half = os.path.join(work, "part1.jsonl"), os.path.join(work, "part2.jsonl")
            lines = open(jsonl, "rb").read().splitlines(True)
            for k, path in enumerate(half):
                with open(path, "wb") as f:
                    f.writelines(lines[k::2])
            rc, out, err = cs.run_pycore(["group", "--format", "json"] + list(half))
            if rc != 0:
                raise Failure("group --format json: exit %d: %s" % (rc, err))
            groups = [json.loads(l) for l in out.splitlines()]
            index = os.path.join(pages, "index.html")
            with open(index, "wb") as f:
                p = subprocess.run([os.environ["PYCORE"], "group", "--format", "html", "--html-dir", pages]
                                   + list(half), stdout=f, stderr=subprocess.PIPE)
            if p.returncode != 0:
                raise Failure("group --format html: exit %d: %s" % (p.returncode, p.stderr.decode()))
            written = Page(open(index, encoding="utf-8").read())
            check_markup(written, "dashboard")
            dom, problems, secs = get_browser().load(index)
            if problems:
                raise Failure("dashboard in Chromium: %s" % problems[:5])
            for label, page in (("as written", written), ("Chromium's DOM", Page(dom)),
                                ("script off", Page(no_script_dom(get_browser(), index)))):
                check_markup(page, "dashboard (%s)" % label)
                rows = [(r.attrs["data-hash"], int(r.attrs["data-count"])) for r in page.root.find("tr", "group-row")]
                want = [(g["fingerprint"]["hash"], g["count"]) for g in groups]
                if rows != want:
                    raise Failure("dashboard (%s): groups %s, group --format json's %s" % (label, rows, want))
                if page.root.find("span")[0] is None or one(page.root, "p", "answer") is None:
                    raise Failure("dashboard (%s): no totals" % label)
                sections = page.root.find("section", "group")
                if len(sections) != min(len(groups), 20):
                    raise Failure("dashboard (%s): %d group sections" % (label, len(sections)))
                links = [a.attrs["href"] for a in page.root.find("a") if not a.attrs["href"].startswith("#")]
                missing = [h for h in links if not os.path.exists(os.path.join(pages, h))]
                if not links or missing:
                    raise Failure("dashboard (%s): links %s, missing %s" % (label, links[:3], missing[:3]))
            # at a 1300-pixel window no header nor count of the groups' table
            # wraps (break-all once cut "dumps" into "dump" and "s")
            wraps, cells = get_browser().wrapped(index, "table.groups th, table.groups td.n", 1300)
            if wraps:
                raise Failure("dashboard at 1300 px: %d of %d headers and numbers wrap: %s"
                              % (len(wraps), cells, wraps[:4]))
            reports = sum(1 for l in lines if b'"error":' not in l[:200])
            total = int(re.search(r'<span id="reports">(\d+)</span>', open(index).read()).group(1))
            if total != len(lines) - sum(1 for l in lines if json.loads(l).get("error")):
                raise Failure("dashboard: %d reports, the JSON Lines hold %d" % (total, reports))
            split = check_split(get_browser(), pages, half, groups, written)
            pages_made = len([p for p in os.listdir(pages) if p != "index.html"])
            size = screenshot(index, os.path.join(os.getcwd(), "html-dashboard.png"), work, "1100,1000")
            return ("%d groups of %d records, %d pages linked, loaded in %.2f s; %d headers and numbers "
                    "on one line at 1300 px; screenshot %d bytes; %s" % (len(groups), len(lines), pages_made, secs,
                                                                         cells, size, split))
        tap.run("%s dashboard of batch --html-dir over two shards" % (name or "html"), dashboard)

        def paged():
            if why:
                raise Skip(why)
            jsonl = os.path.join(work, "batch.jsonl")
            if not os.path.exists(jsonl):
                raise Failure("the dashboard's batch wrote no records")
            return check_paged(get_browser(), pages, jsonl, work)
        tap.run("%s dashboard whose index takes more than one page" % (name or "html"), paged)
    finally:
        if browser[0]:
            browser[0].close()
        if os.environ.get("KEEP_CORES") == "1":
            tap.diag("kept in %s" % work)
        else:
            shutil.rmtree(os.path.dirname(work) if target else work, ignore_errors=True)
    cs.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
