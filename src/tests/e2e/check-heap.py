"""pycore heap: the census of a dump's or a live process's heap (issue 46).

scenarios/heap.py builds a heap of known shapes on each build the suite
runs (pycoretest.interpreters.names(): 3.6 to 3.13, Debian's 3.11 and its
-dbg build, the Debian unstable root's 3.13 to 3.15; and musl's 3.13, with
and without build-ids, and a standalone 3.13, where built; the free-threaded
3.13's, whose objects pycore finds in mimalloc's heaps, has three more
threads with objects of their own, one of which has ended), stops the GC, and
writes its own census (the truth): gc.get_objects() by type with
sys.getsizeof, the class that defines each type's __sizeof__, and
gc.get_freeze_count(); and the objects the GC does not track reached from
those through the references pycore follows (the scenario follows the
same ones: gc.get_referents of a Python class's instance, the items of the
exact built-in containers, a dict's keys), by type.  Then, each a case:

  NAME core  `pycore heap --format json` of a snapshot of it (gcore; a
             process in a root: the kernel's core of SIGQUIT); the
             process also computes the retained size of six of its
             module-level containers (LEAK: functions whose defaults
             hold lists; and ARRAYS, numpy's arrays, where the
             interpreter has numpy: Debian's 3.11), of a class-level one
             (Registry.items: through the class's namespace) and of a
             local of its main()
             (what no path from sys.modules, sys.__dict__,
             builtins.__dict__ or a frame's locals reaches but through
             it, over the same references), which the report's largest
             retainers must give, with the number of objects and the path
             sys.modules['__main__'].NAME or <thread PID, main()>.held,
             and heap.retained.tree must hold them with the same sizes,
             each node after its parent and retaining at least itself and
             its children;
             and the garbage (cycles it made with the GC off) a forked
             copy's collection finds (gc.garbage, DEBUG_SAVEALL), whose
             count and types the report's garbage must give
  NAME live  `pycore heap --format json --pid` of it running

  NAME diff  `pycore heap --diff` of two gcores of it, the second after it
             leaked 20000 LeakItem objects into a module-level list (on
             SIGUSR1) and took its census again
  NAME diff live  (py3.12, debian3.11, sid3.15, ft3.13) `pycore heap --diff --pid`
             of the first gcore and the process itself, read after the leak
  NAME allocators  (every build; py3.12 live too)
             scenarios/allocators.py's heaps: pymalloc's arenas (heap.
             memory.pymalloc) as the process's sys._debugmallocstats()
             counts them (arenas, bytes in blocks in use, unused pools);
             on a free-threaded build mimalloc's arenas (heap.memory.
             mimalloc) as mimalloc's own statistics, read by the process,
             count the memory it reserved, with its segments, pages and
             blocks in use inside each other and the objects inside those;
             glibc's malloc (heap.memory.malloc: four arenas, free chunks
             in bins and fastbins, blocks mapped apart) as its mallinfo2()
             and malloc_info() count it, and what neither they nor the
             modules' .bss hold 5 % of the anonymous memory at most; in
             the Debian unstable root, without libc6-dbg, the report must
             say why the C heap is not read
  NAME html  (py3.12, sid3.15) `pycore heap --format html` of the core
             case's snapshot, as written and in Chromium: a treemap panel
             for the roots and for each node of heap.retained.tree with
             nodes under it, every link to one; the retainers' table's
             retained bytes of the named containers the process's; no
             console message or request in Chromium; a fragment shows its
             panel alone; a click on a header sorts; loaded within 1 s of
             a blank page (medians of 3); py3.12's picture in the build
             directory (heap-page.png, the README's)
  py3.12 allocators corrupt  its gcore patched in the allocators' state
             (addresses from gdb): a free list that never ends, a top chunk
             at 0x10, a broken arena ring, a pool naming another arena;
             each report says what it could not read ("read in part")
  ft3.13 corrupt mimalloc  its gcore patched in a GC heap's first page
             (its address and fields from gdb): a free list that leads
             out of the page (fewer objects), a next page at 0x10, the
             lists of the segments of threads that ended leading to no
             memory; each report says what is not read, with no more
             objects; and in mimalloc's arenas: an arena claiming 2**40
             blocks, a segment counting a page more than its table holds
             (the split says so, its arenas no bigger)

must give, for every type, the count of the truth (pycore's count less
those in the permanent generation, which gc.get_objects() leaves out),
and for every type whose __sizeof__ pycore computes (exact) the bytes of
the truth; for every type the class that defines __sizeof__ the truth
names; the permanent generation's size gc.get_freeze_count(); nothing
unread; and for the untracked objects reached, every type's count, and
bytes where pycore computes them, as the truth's; and the buffers the
bytearrays, array.arrays and (numpy 1's) arrays hold outside themselves
(heap.memory.buffers) the sum the process makes of their __sizeof__ past
their basic size.  The live read's split of
the memory (files, reserved, stacks and anonymous) must be the kernel's
/proc/PID/maps read right after it.  A type pycore marks inexact is one whose __sizeof__ it does not
compute (the truth's owner is then no class pycore knows), and the report
is not exact.  The text census of the live read names the biggest type
and the scenario's own classes.  The diff must give every type's change
as the two censuses give it, LeakItem first, and the list among the
objects that grew in place; dumps of two processes are refused (exit 4).
A gcore on 3.12 patched five ways (a next link into nowhere, a back link
that lies, an object whose type is no type, a dict whose keys claim 2**60
slots, a list of 2**40 items) gives a partial census, exit 1, that says
what it could not read; a list broken by one link is read whole, forward
and then back from its end.

The sanitizer pass runs the builds among pycoretest.interpreters'
SANITIZER_PASS_NAMES only.  Output is TAP (pycoretest.tap)."""
import glob
import json
import os
import signal
import subprocess
import sys

import pycoretest as pt
from pycoretest import interpreters
from pycoretest import native as gdb_native
from pycoretest.corefile import Core, table
from pycoretest.cores import take_snapshot, wait_ready
from pycoretest.env import scaled
from pycoretest.heap import compare, compare_retained, compare_tree
from pycoretest.schema import load_report

def heap_json(args):
    rc, out, err = pt.run_pycore(["heap", "--format", "json"] + args)
    if rc not in (0, 1) or not out.strip():
        raise pt.Failure("pycore heap: exit %d: %s" % (rc, err.strip()[-300:]))
    return load_report(out)


def check_core(target, work):
    core, truth_path, _ = take_snapshot(target, "heap", work, args=("retained",))
    with open(truth_path) as f:
        truth = json.load(f)
    report = heap_json(target.pycore_args() + gdb_native.debug_args(target) + [core])
    return compare(report, truth) + "; " + compare_retained(report, truth) + "; " + compare_tree(report, truth)


def heap_page(args, work, name):
    page = os.path.join(work, name + ".html")
    with open(page, "wb") as f:
        p = subprocess.run([os.environ["PYCORE"], "heap", "--format", "html"] + args, stdout=f,
                           stderr=subprocess.PIPE)
    if p.returncode not in (0, 1):
        raise pt.Failure("--format html: exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-300:]))
    return page


def compare_page(page, report, truth):
    """The page's treemap: a panel for the roots and for each node of the
    tree with nodes under it, each link to one of them; the retainers'
    table: each named container's path and retained bytes the process's."""
    tree = report["heap"]["retained"]["tree"]
    panels = {n.attrs.get("id") for n in page.root.find("div", "tm")}
    want = {"tm-root"} | {"tm-%d" % n["parent"] for n in tree if n["parent"] >= 0}
    if panels != want:
        raise pt.Failure("treemap panels %s, the tree's nodes with children %s" % (
            sorted(panels - want)[:5], sorted(want - panels)[:5]))
    links = {n.attrs["href"][1:] for n in page.root.find("a") if n.attrs.get("href", "").startswith("#tm-")}
    if not links or links - panels:
        raise pt.Failure("treemap links to no panel: %s" % sorted(links - panels)[:5])
    rows = {}
    for tr in page.root.find("tr"):
        tds = [c for c in tr.children if not isinstance(c, str) and c.tag == "td"]
        if len(tds) == 6 and tr.inside("section", "card"):
            rows[tds[0].text()] = int(tds[2].attrs["data-v"])
    errors = []
    for name, (addr, size, count) in sorted(truth["retained"].items()):
        path = "<thread %d, main()>.%s" % (truth["pid"], name) if name == "held" else \
            "sys.modules['__main__'].%s" % name
        if rows.get(path) != size:
            errors.append("%s: %s bytes retained in the table; the process: %d" % (path, rows.get(path), size))
    if errors:
        raise pt.Failure("; ".join(errors))
    return len(panels), len(links)


def check_html(target, work, shot=False):
    """`pycore heap --format html` of the core case's snapshot: checked as
    written and in Chromium (no console message, no request, the CSP
    kept; loaded within a second of a blank page; a click on a
    rectangle's link shows that node's panel alone; a click on the
    retained column's header sorts the retainers by it).  SHOT: its
    picture into the current directory (the build's), heap-page.png."""
    from pycoretest import htmlpage as hp
    hp.need_chromium()
    core, truth_path, _ = take_snapshot(target, "heap", work, args=("retained",))
    with open(truth_path) as f:
        truth = json.load(f)
    args = target.pycore_args() + gdb_native.debug_args(target) + [core]
    report = heap_json(args)
    detail = compare_tree(report, truth)
    page = heap_page(args, work, "heap")
    with open(page, encoding="utf-8") as f:
        parsed = hp.Page(f.read())
    hp.check_markup(parsed, "the page")
    npanels, nlinks = compare_page(parsed, report, truth)
    blank = os.path.join(work, "blank.html")
    with open(blank, "w") as f:
        f.write("<!DOCTYPE html><html><body></body></html>\n")
    browser = hp.Browser(work)
    try:
        loads, blanks = [], []
        for _ in range(3):
            dom, problems, secs = browser.load(page)
            if problems:
                raise pt.Failure("in Chromium: %s" % problems[:5])
            loads.append(secs)
            blanks.append(browser.load(blank)[2])
        live = hp.Page(dom)
        hp.check_markup(live, "Chromium's DOM")
        compare_page(live, report, truth)
        # the panels displayed: the one the fragment names, else the roots'
        inner = [n["parent"] for n in report["heap"]["retained"]["tree"] if n["parent"] >= 0]
        if not inner:
            raise pt.Failure("the tree has no node under another: no panel to zoom into")
        displayed = ("return Array.prototype.map.call(document.querySelectorAll('div.tm'),function(d){"
                     "return getComputedStyle(d).display=='none'?'':d.id}).filter(function(x){return x})")
        for fragment, want in (("tm-%d" % min(inner), ["tm-%d" % min(inner)]), ("", ["tm-root"])):
            shown, = browser.evaluate(page, [displayed], fragment=fragment)
            if shown != want:
                raise pt.Failure("at #%s the panels shown are %s, not %s" % (fragment, shown, want))
        js = ("var t=document.querySelector('#retainers table'),h=t.tHead.rows[0].cells[2];%s;"
              "return Array.prototype.map.call(t.tBodies[0].rows,function(r){return +r.cells[2].getAttribute("
              "'data-v')})")
        once, twice = browser.evaluate(page, [js % "h.click()", js % "h.click()"])
        if once != sorted(once, reverse=True) or twice != sorted(twice) or len(once) < 2:
            raise pt.Failure("the retainers sorted by a click on 'retained': %s, then %s" % (once[:5], twice[:5]))
    finally:
        browser.close()
    if shot:
        hp.screenshot(page, os.path.join(os.getcwd(), "heap-page.png"), work, size="1300,1100")
    over = sorted(loads)[1] - sorted(blanks)[1]
    if over > scaled(1):
        raise pt.Failure("the page loads in %.2f s, a blank page in %.2f s (medians of 3): more than 1 s over" % (
            sorted(loads)[1], sorted(blanks)[1]))
    return "%s; %d panels, %d links; loads %.0f ms over a blank page; zoom and sort work in Chromium" % (
        detail, npanels, nlinks, 1000 * over)




def debugmallocstats(path):
    """What the process's sys._debugmallocstats() wrote to PATH: pymalloc's
    arenas, the bytes in its blocks in use and its unused pools."""
    out = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.partition("=")
            value = value.strip().replace(",", "")
            if key.startswith("# arenas allocated current"):
                out["arenas"] = int(value)
            elif key.startswith("# bytes in allocated blocks"):
                out["allocated"] = int(value)
            elif "unused pools *" in key:
                out["free_pools"] = int(key.split()[0])
    if len(out) != 3:
        raise pt.Failure("sys._debugmallocstats() wrote no account of pymalloc (%s)" % out)
    return out


def compare_pymalloc(m, stats):
    """pymalloc's arenas as pycore reads them, against the account
    sys._debugmallocstats() gave in the process."""
    p = m["pymalloc"]
    if p is None:
        raise pt.Failure("pymalloc is not read: %s" % m["pymalloc_unread"])
    got = {"arenas": p["arenas"], "allocated": p["allocated"], "free_pools": p["free_pools"]}
    if got != stats or m["pymalloc_unread"] or p["arena_bytes"] != p["arenas"] * p["arena_size"]:
        raise pt.Failure("pymalloc %s, unread %s; sys._debugmallocstats() %s" % (p, m["pymalloc_unread"], stats))
    return "pymalloc as sys._debugmallocstats() counts it: %d arenas of %d KiB, %d bytes in %d blocks in use, " \
        "%d pools unused" % (p["arenas"], p["arena_size"] >> 10, p["allocated"], p["blocks"], p["free_pools"])


def compare_malloc(m, truth):
    """glibc's malloc as pycore reads it from the dump, against glibc's
    own account that the process took (scenarios/allocators.py): the
    arenas malloc_info() lists; their memory, in use and free, and the
    blocks mapped apart as mallinfo2() counts them; its free blocks
    (ordblks: the bins' chunks and one top an arena; smblks: the
    fastbins')."""
    t = truth["mallinfo"]
    if m["malloc"] is None:
        raise pt.Failure("the C heap is not read: %s" % m["malloc_unread"])
    c = m["malloc"]
    if t["smblks"] == 0:
        raise pt.Failure("the scenario left no chunk in a fastbin: %s" % t)
    got = {"arenas": c["arenas"], "arena": c["arena_bytes"], "uordblks": c["in_use"], "fordblks": c["free"],
           "hblks": c["mmapped_blocks"], "hblkhd": c["mmapped"], "blocks": c["free_chunks"] + c["arenas"]}
    want = {"arenas": truth["arenas"], "arena": t["arena"], "uordblks": t["uordblks"], "fordblks": t["fordblks"],
            "hblks": t["hblks"], "hblkhd": t["hblkhd"], "blocks": t["ordblks"] + t["smblks"]}
    if got != want or m["malloc_unread"] or c["arena_bytes"] + c["mmapped"] > m["anonymous"]:
        raise pt.Failure("the C heap %s, unread %s, anonymous %d; glibc's own account (mallinfo2, malloc_info) %s" % (
            got, m["malloc_unread"], m["anonymous"], want))
    return "glibc's malloc as its own mallinfo2() counts it: %d arenas, %d bytes (%d in use, %d free in %d " \
        "chunks, %d of them in fastbins), %d blocks mapped apart (%d bytes)" % (
            c["arenas"], c["arena_bytes"], c["in_use"], c["free"], c["free_chunks"], t["smblks"],
            c["mmapped_blocks"], c["mmapped"])


def compare_mimalloc(m, truth):
    """A free-threaded build's mimalloc as pycore reads it, against the
    memory mimalloc's own statistics say it reserved from the system: its
    arenas, and a page for each arena's own header (_mi_arena_meta_zalloc
    takes a few hundred bytes from the system, a page); its segments,
    their pages and their blocks in use within each other, and the
    objects counted within those blocks and the modules' .bss."""
    mi, reserved = m["mimalloc"], truth.get("mimalloc_reserved")
    if mi is None or m["mimalloc_unread"]:
        raise pt.Failure("mimalloc %s: %s" % (mi, m["mimalloc_unread"]))
    if reserved is None:
        raise pt.Failure("the process found no _mi_stats_main in its files")
    page = os.sysconf("SC_PAGE_SIZE")
    if mi["arena_bytes"] + mi["arenas"] * page != reserved or m["pymalloc"] is not None or not \
            m["python"] <= mi["allocated"] + m["modules_bss"] or not \
            0 < mi["allocated"] <= mi["page_bytes"] <= mi["segment_bytes"] <= mi["arena_bytes"]:
        raise pt.Failure("mimalloc %s, pymalloc %s, python %d; mimalloc's own statistics: %d bytes reserved" % (
            mi, m["pymalloc"], m["python"], reserved))
    return "mimalloc as its statistics count it: %d arena%s, %d MiB reserved; %d segments, %d pages, %d bytes in " \
        "%d blocks in use" % (mi["arenas"], "" if mi["arenas"] == 1 else "s", reserved >> 20, mi["segments"],
                               mi["pages"], mi["allocated"], mi["blocks"])


def libc_debug_file(target):
    """The separate debug file of the target's libc.so.6 (by its build-id)
    where pycore is told to look (the build-id trees of the host, or of a
    root and the debug tree beside it), or None: only that file names
    glibc's main_arena."""
    root = target.root or ""
    libc = (glob.glob(root + "/usr/lib/*-linux-gnu/libc.so.6") or [root + "/lib/libc.so.6"])[0]
    out = subprocess.run(["readelf", "-n", libc], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    ids = [line.split()[-1] for line in out.splitlines() if "Build ID" in line]
    if not ids:
        raise pt.Failure("no build-id in %s (readelf -n)" % libc)
    tail = "/usr/lib/debug/.build-id/%s/%s.debug" % (ids[0][:2], ids[0][2:])
    for path in ([root + tail, root + ".debug" + tail] if root else [tail]):
        if os.path.exists(path):
            return path
    return None


def compare_allocators(target, report, truth_path):
    """Both allocators against the process's own accounts; where the
    target's libc has no debug file (the Debian unstable root has no
    libc6-dbg), main_arena is no symbol: the report must say the C heap
    is not read, and why, with no number of it."""
    with open(truth_path) as f:
        truth = json.load(f)
    m = report["heap"]["memory"]
    if m is None:
        raise pt.Failure("no memory in the report")
    said = compare_mimalloc(m, truth) if "mimalloc_reserved" in truth else \
        compare_pymalloc(m, debugmallocstats(truth_path + ".stats"))
    if not libc_debug_file(target):
        if m["malloc"] is not None or "main_arena" not in (m["malloc_unread"] or ""):
            raise pt.Failure("no debug file of %s's libc: malloc %s, unread %s" % (
                target.root or "this machine", m["malloc"], m["malloc_unread"]))
        return said + "; no debug file of its libc, and it says: " + m["malloc_unread"]
    said += "; " + compare_malloc(m, truth)
    # the split adds up: what neither allocator nor the modules' .bss
    # holds is 5 % of the anonymous memory at most (the bar)
    c, p = m["malloc"], m["pymalloc"] or m["mimalloc"]
    held = c["arena_bytes"] + c["mmapped"] + p["arena_bytes"] + m["modules_bss"]
    if m["files"] + m["stacks"] + m["reserved"] + m["anonymous"] != m["mapped"] or held > m["anonymous"] or \
            m["anonymous"] - held > m["anonymous"] * 0.05:
        raise pt.Failure("the memory split %s: the allocators and the modules' .bss hold %d bytes of the anonymous "
                         "%d" % ({k: v for k, v in m.items() if not isinstance(v, dict)}, held, m["anonymous"]))
    return said + "; %.1f %% of the %d MiB anonymous unattributed" % (
        100.0 * (m["anonymous"] - held) / m["anonymous"], m["anonymous"] >> 20)


def check_allocators(target, work):
    core, truth_path, _ = take_snapshot(target, "allocators", work)
    return compare_allocators(target, heap_json(target.pycore_args() + gdb_native.debug_args(target) + [core]),
                              truth_path)


def while_running(target, work, scenario, during):
    """SCENARIO started and READY: (its truth, DURING(its pid)), the
    process killed after."""
    truth_path = os.path.join(work, "truth.json")
    proc = target.popen([target.scenario(work, scenario), target.inside(truth_path)], work, stdout=subprocess.PIPE)
    try:
        if not wait_ready(proc):
            raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
        with open(truth_path) as f:
            truth = json.load(f)
        return truth, during(proc.pid)
    finally:
        proc.kill()
        proc.wait(timeout=scaled(30))


def live_json(target, pid):
    return heap_json(gdb_native.debug_args(target) + target.pycore_args() + ["--pid", str(pid)])


def check_allocators_live(target, work):
    _, report = while_running(target, work, "allocators.py", lambda pid: live_json(target, pid))
    return compare_allocators(target, report, os.path.join(work, "truth.json"))


def maps_summary(text):
    """/proc/PID/maps summed: files, the kernel's pseudo-files ([vdso],
    [vvar], [vvar_vclock], [vsyscall]), reserved (no access) and anonymous
    (the main thread's [stack] and the other threads' stacks too)."""
    out = {}
    for line in text.splitlines():
        fields = line.split()
        start, end = (int(x, 16) for x in fields[0].split("-"))
        name = fields[5] if len(fields) > 5 else ""
        kind = ("kernel" if name.startswith("[") and name not in ("[stack]", "[heap]") else "files"
                if name.startswith("/")
                else "reserved" if fields[1].startswith("---") else "anonymous")
        out[kind] = out.get(kind, 0) + end - start
    return out


def check_live(target, work):
    def during(pid):
        report = live_json(target, pid)
        with open("/proc/%d/maps" % pid) as f:
            maps_text = f.read()
        return (report, maps_text) + pt.run_pycore(["heap", "--top", "100"] + gdb_native.debug_args(target) +
                                                   target.pycore_args() + ["--pid", str(pid)])
    truth, (report, maps_text, rc, text, err) = while_running(target, work, "heap.py", during)
    summary = compare(report, truth)
    # where the memory is, against the kernel's list of the process's
    # mappings, read right after pycore's (it sleeps: nothing moves); the
    # kernel's pseudo-files ([vdso], [vvar], ...) may or may not be
    # among a dump's mappings, and thread stacks are anonymous memory to it
    m, maps = report["heap"]["memory"], maps_summary(maps_text)
    kernel = maps.get("kernel", 0)
    if m is None or abs(m["files"] - maps.get("files", 0)) > kernel or \
            m["reserved"] != maps.get("reserved", 0) or m["stacks"] + m["anonymous"] != maps.get("anonymous", 0) or \
            not 0 < m["python"] <= m["anonymous"]:
        raise pt.Failure("memory %s; /proc/PID/maps %s" % (m, maps))
    # the text census of the same process: its biggest type and the
    # scenario's own classes among the 100 types most bytes, each a line,
    # and the C heap's line (or why it is not read)
    names = ["%s.%s" % (t["module"], t["qualname"]) if t["module"] != "builtins" else t["qualname"]
             for t in report["heap"]["types"][:100]]
    want = [names[0]] + [n for n in names if n in ("__main__.Slotted", "__main__.Node", "__main__.MyDict")]
    lines = text.splitlines()
    said = "C heap (%s's malloc)" % m["malloc"]["allocator"] if m["malloc"] else m["malloc_unread"]
    missing = [n for n in want if not any(line.split()[-1:] == [n] for line in lines)]
    if rc not in (0, 1) or len(want) < 4 or missing or not any(said in line for line in lines):
        raise pt.Failure("the text census (exit %d) lacks %s (of %s) or %r: %s" % (
            rc, missing, want, said, err.strip()[-200:]))
    return summary + "; memory as /proc/self/maps has it: %d MB anonymous, %d MB of it objects; the text names " \
        "%s and the C heap" % (m["stacks"] + m["anonymous"] >> 20, m["python"] >> 20, ", ".join(want))


def gcore(proc, work, name):
    """gcore's core of the running PROC (also of a process in a root: the
    census reads its heap, not its threads' stacks, which gcore from outside
    a root leaves out)."""
    g = subprocess.run(["gcore", "-o", os.path.join(work, name), str(proc.pid)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=scaled(120))
    core = os.path.join(work, "%s.%d" % (name, proc.pid))
    if g.returncode != 0 or not os.path.exists(core):
        raise pt.Failure("gcore failed: %s" % g.stdout.decode("utf-8", "replace")[-300:])
    return core


def check_diff(target, work, live=False):
    """`heap --diff` of two gcores of a process that leaked between them
    (LIVE: of a gcore and of the process itself, read after the leak,
    `--diff --pid`): every type's change (on the GC's lists and untracked)
    as the process's two censuses say, LeakItem first, the 5000 strings
    counted, the list that holds the LeakItems and the dict that holds the
    strings grown in place; and by root, LEAKED first, then LEAKED_TEXT,
    each with what it retained before and after (bytes and objects) as the
    process computed it in each census."""
    truth_path = os.path.join(work, "truth.json")
    proc = target.popen([target.scenario(work, "heap.py"), target.inside(truth_path), "leak", "retained"], work,
                        stdout=subprocess.PIPE)
    try:
        if not wait_ready(proc):
            raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
        old = gcore(proc, work, "old")
        proc.send_signal(signal.SIGUSR1)
        if not wait_ready(proc):
            raise pt.Failure("the scenario did not leak (exit %s)" % proc.poll())
        operands = ["--pid", old, str(proc.pid)] if live else [old, gcore(proc, work, "new")]
        args = target.pycore_args() + gdb_native.debug_args(target) + ["--diff"] + operands
        report = heap_json(args)
        rc, text, err = pt.run_pycore(["heap"] + args)
    finally:
        proc.kill()
        proc.wait(timeout=scaled(30))
    with open(truth_path) as f:
        t1 = json.load(f)
    with open(truth_path + ".2") as f:
        t2 = json.load(f)
    d = report["heap"]["diff"]
    if d is None:
        raise pt.Failure("no diff in the report")
    def totals(truth):
        out = {}
        for m, q, n, b, _ in truth["types"] + truth["untracked"]:
            was = out.get((m, q), (0, 0))
            out[(m, q)] = (was[0] + n, was[1] + b)
        return out
    before, after = totals(t1), totals(t2)
    h = report["heap"]
    exact = {(t["module"], t["qualname"]) for t in h["types"] + h["untracked"]["types"] if t["exact"]}
    got = {(t["module"], t["qualname"]): t for t in d["types"]}
    errors = []
    for k in set(before) | set(after):
        n0, b0 = before.get(k, (0, 0))
        n1, b1 = after.get(k, (0, 0))
        t = got.get(k)
        dn, db = (t["count_new"] - t["count_old"], t["bytes_new"] - t["bytes_old"]) if t else (0, 0)
        if dn != n1 - n0 or (k in exact and db != b1 - b0):
            errors.append("%s.%s: %+d objects, %+d bytes; the process %+d, %+d" % (k[0], k[1], dn, db, n1 - n0,
                                                                                 b1 - b0))
    for k, t in got.items():
        if k not in before and k not in after:
            errors.append("%s.%s: %+d objects, the process knows no such type" % (
                k[0], k[1], t["count_new"] - t["count_old"]))
    first = d["types"][0] if d["types"] else None
    if not first or (first["module"], first["qualname"]) != ("__main__", "LeakItem"):
        errors.append("the first type is %s, not __main__.LeakItem" % (first and first["qualname"]))
    leaked = "0x%x" % t1["leaked"]
    grown = [g for g in d["grown"] if g["address"] == leaked]
    strs = got.get(("builtins", "str"))
    if not strs or strs["count_new"] - strs["count_old"] < 5000:
        errors.append("the 5000 strings leaked are not among what grew: %s" % strs)
    if not grown or grown[0]["qualname"] != "list" or not grown[0]["bytes"] > grown[0]["bytes_old"]:
        errors.append("LEAKED (%s) is not among the objects that grew in place: %s" % (leaked, d["grown"][:3]))
    text_dict = "0x%x" % t1["leaked_text"]
    if not [g for g in d["grown"] if g["address"] == text_dict and g["qualname"] == "dict"]:
        errors.append("LEAKED_TEXT (%s, a dict the GC does not track) did not grow in place: %s" % (
            text_dict, d["grown"][:3]))
    if "__main__.LeakItem (1000 to 21000)" not in text or ("%s list:" % leaked) not in text:
        errors.append("the text (exit %d) has no LeakItem line or no grown LEAKED: %s" % (rc, text[:500]))
    roots = d.get("roots") or []
    for i, name in enumerate(("LEAKED", "LEAKED_TEXT")):
        path = "sys.modules['__main__'].%s" % name
        want = (path, t1["retained"][name][1], t2["retained"][name][1], t1["retained"][name][2],
                t2["retained"][name][2])
        r = roots[i] if i < len(roots) else None
        have = r and (r["path"], r["retained_old"], r["retained_new"], r["objects_old"], r["objects_new"])
        if have != want:
            errors.append("root %d is %s, not %s (path, bytes before and after, objects before and after)" % (
                i + 1, have, want))
        if ("%s (" % path) not in text:
            errors.append("the text has no line for the root %s" % path)
    if errors:
        raise pt.Failure("; ".join(errors[:10]))
    return ("%sLeakItem first: %+d objects, %+d bytes; %d types changed as the process says; LEAKED grew %d to %d; "
            "roots LEAKED then LEAKED_TEXT, retaining %+d and %+d bytes as the process says") % (
        "a gcore against the process read live: " if live else "", first["count_new"] - first["count_old"],
        first["bytes_new"] - first["bytes_old"], len(d["types"]), grown[0]["bytes_old"], grown[0]["bytes"],
        roots[0]["retained_new"] - roots[0]["retained_old"], roots[1]["retained_new"] - roots[1]["retained_old"])


def check_diff_refused(target, work):
    """Dumps of two processes: refused in one line, exit 4."""
    cores = []
    for name in ("one", "two"):
        truth_path = os.path.join(work, "truth-%s.json" % name)
        proc = target.popen([target.scenario(work, "heap.py"), target.inside(truth_path)], work,
                            stdout=subprocess.PIPE)
        try:
            if not wait_ready(proc):
                raise pt.Failure("the scenario did not get ready (exit %s)" % proc.poll())
            cores.append(gcore(proc, work, name))
        finally:
            proc.kill()
            proc.wait(timeout=scaled(30))
    rc, out, err = pt.run_pycore(["heap", "--diff"] + cores)
    if rc != 4 or len(err.strip().splitlines()) != 1 or "one process" not in err or out:
        raise pt.Failure("exit %d, stderr %r, stdout %d bytes" % (rc, err, len(out)))
    return err.strip()


# Corrupted heaps: a gcore of the scenario on 3.12, patched (offsets from
# versions/3.12.h), must give a partial census that says what it could not
# read (exit 1), never a crash, a hang or a total stated as exact.


def census_patched(core, work, intact, patch, want, whole=False, fewer=False):
    """pycore heap of CORE patched by PATCH: exit 1, WANT among its unread
    lines, not exact, no more objects than INTACT's census (WHOLE: as
    many; FEWER: fewer); what it says."""
    c2 = Core(core)
    patch(c2)
    path = os.path.join(work, "patched")
    c2.save(path)
    rc, out, err = pt.run_pycore(["heap", "--format", "json", path])
    if rc != 1 or not out.strip():
        raise pt.Failure("%s: exit %d (want 1): %s" % (want, rc, err.strip()[-300:]))
    h = load_report(out)["heap"]
    said = [u for u in h["unread"] if want in u]
    if not said or h["exact"] or h["objects"] > intact["heap"]["objects"] or \
            (whole and h["objects"] != intact["heap"]["objects"]) or \
            (fewer and h["objects"] >= intact["heap"]["objects"]):
        raise pt.Failure("%s: unread %s, exact %s, %d objects (intact %d)" % (
            want, h["unread"], h["exact"], h["objects"], intact["heap"]["objects"]))
    return "%s: %d of %d objects; %s" % (want, h["objects"], intact["heap"]["objects"], said[0])


def check_corrupt_mimalloc(target, work):
    """A free-threaded build's mimalloc heaps corrupt: a page whose free
    list leads out of its blocks, and a queue whose next page is not in
    the dump (the page's address and fields' offsets from gdb, the debug
    information's): the rest of that queue is not read, and said.  The
    page is the first of the newest thread's heap of objects with a
    pre-header (its 500 Nodes are among them): fewer objects are counted.
    Then mimalloc's arenas: an arena that claims more blocks than its
    bitmap, a segment whose count of pages is not its table's: the split
    says what it could not read, its arenas no bigger."""
    core, _, _ = take_snapshot(target, "heap", work)
    intact = heap_json(target.pycore_args() + [core])
    tstate = "((_PyThreadStateImpl *)_PyRuntime.interpreters.head->threads.head)"
    firsts = gdb_values(target, core, ["%s->mimalloc.heaps[3].pages[%d].first" % (tstate, q) for q in range(75)])
    pool = "_PyRuntime.interpreters.head->mimalloc.abandoned_pool"
    free_at, next_at, abandoned, visited = gdb_values(target, core, [
        "&((mi_page_t *)0)->free", "&((mi_page_t *)0)->next", "&%s.abandoned" % pool, "&%s.abandoned_visited" % pool])
    page = next((p for p in firsts if p), None)
    if page is None:
        raise pt.Failure("gdb finds no page in the newest thread state's GC heap of objects with a pre-header")
    cases = [
        (lambda c2: c2.put64(page + free_at, 0x10), "its free lists lead out of it"),
        (lambda c2: c2.put64(page + next_at, 0x10), "the page at 0x10 of queue"),
        # (a segment-aligned address of no mapping: the lists of segments
        # of threads that ended lead there)
        (lambda c2: (c2.put64(abandoned, 0x7e0000000000), c2.put64(visited, 0x7e0000000000)),
         "its number of slices is not in the dump"),
    ]
    said = [census_patched(core, work, intact, patch, want, fewer=(want == cases[0][1])) for patch, want in cases]
    # mimalloc's arenas (heap.memory.mimalloc): the first arena's block
    # count past its bitmap, its first segment's count of pages in use one
    # more than its table's
    arena, start, blocks_at, used_at = gdb_values(target, core, [
        "mi_arenas[0]", "mi_arenas[0]->start", "&((struct mi_arena_s *)0)->block_count", "&((mi_segment_t *)0)->used"])
    mem = intact["heap"]["memory"]
    said += [memory_patched(core, work, mem, lambda c2: c2.put64(arena + blocks_at, 1 << 40), "mimalloc", "no arena's"),
             memory_patched(core, work, mem, lambda c2: c2.put64(start + used_at, Core(core).u64(start + used_at) + 1),
                            "mimalloc", "pages in use, its table of pages")]
    return "the page at 0x%x: %s" % (page, "; ".join(said))


def check_corrupt(target, work):
    core, truth_path, _ = take_snapshot(target, "heap", work)
    intact = heap_json([core])
    L = table(12)
    c = Core(core)
    runtime = int(intact["python"]["runtime_address"], 16)
    interp = c.u64(runtime + L["runtime_interpreters_head"])
    head = interp + L["interp_gc_generations"] + 2 * L["sizeof_gc_generation"]   # generation 2
    nodes = [c.u64(head) & ~3]
    while len(nodes) < 5000:
        nodes.append(c.u64(nodes[-1]) & ~3)
    obj = [n + L["sizeof_gc_head"] for n in nodes]
    # (the types' addresses from the intact census: their names are in the
    # interpreter's read-only data, which gcore leaves out)
    addr = {t["qualname"]: int(t["address"], 16) for t in intact["heap"]["types"] if t["module"] == "builtins"}

    def first(name):
        for o in obj:
            if c.u64(o + L["object_type"]) == addr[name] and c.u64(o + L["var_size"]):
                return o
        raise pt.Failure("no %s of items among the first objects of generation 2" % name)
    dict_obj, list_obj = first("dict"), first("list")

    def patched(patch, want, whole=False):
        return census_patched(core, work, intact, patch, want, whole)

    cases = [
        # (one broken link: every object read, forward and back from the end)
        (lambda c2: c2.put64(nodes[50], 0x10), "0x10, is not in the dump", True),
        (lambda c2: c2.put64(nodes[60] + 8, nodes[10]), "its back link is not the object before it", True),
        (lambda c2: c2.put64(obj[70] + L["object_type"], obj[71]), "has no readable type"),
        (lambda c2: c2.put8(c2.u64(dict_obj + L["dict_keys"]) + L["dictkeys_log2_size"], 60),
         "could not be read"),
        (lambda c2: c2.put64(list_obj + L["var_size"], 1 << 40), "led to no readable object"),
    ]
    return "; ".join(patched(*case) for case in cases)


def gdb_values(target, core, exprs):
    """gdb's values of EXPRS (hexadecimal) in CORE: the addresses the
    corrupt cases patch, from the debug files, not from pycore."""
    args = []
    for e in exprs:
        args += ["-ex", "printf \"VALUE %%lx\\n\", (unsigned long)(%s)" % e]
    g = subprocess.run(["gdb", "-nx", "-batch", "-ex", "set debuginfod enabled off"] + target.gdb_args() + args +
                       [target.host_exe(), core], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=scaled(120))
    values = [int(line.split()[1], 16) for line in g.stdout.decode().splitlines() if line.startswith("VALUE ")]
    if len(values) != len(exprs):
        raise pt.Failure("gdb gave %d of the values of %s" % (len(values), exprs))
    return values


def memory_patched(core, work, intact, patch, which, want):
    """pycore heap of CORE patched by PATCH: WHICH allocator's unread line
    (heap.memory.WHICH_unread) says WANT, its arenas and their bytes no
    more than INTACT's (the intact report's heap.memory), exit 0 or 1;
    what it says."""
    c2 = Core(core)
    patch(c2)
    path = os.path.join(work, "patched")
    c2.save(path)
    rc, out, err = pt.run_pycore(["heap", "--format", "json", path])
    m = load_report(out)["heap"]["memory"] if out.strip() else None
    said = m and m[which + "_unread"] or ""
    got = m and m[which]
    if rc not in (0, 1) or want not in said or (got and intact[which] and any(
            got[k] > intact[which][k] for k in ("arenas", "arena_bytes"))):
        raise pt.Failure("%s: exit %d, %s %s, unread %r (want %r): %s" % (
            which, rc, which, got, said, want, err.strip()[-200:]))
    return said


def check_allocators_corrupt(target, work):
    """A gcore of scenarios/allocators.py patched in the allocators' own
    state, at addresses gdb gives from the debug files: a bin's chunk whose
    back link is itself (a list that never ends), a top chunk at 0x10, an
    arena ring broken by a next of 0x10, a pymalloc pool that names
    another arena: the report says which part of which allocator it could
    not read ("read in part: ..."), its numbers never above the intact
    ones', and ends."""
    core, _, _ = take_snapshot(target, "allocators", work)
    intact = heap_json([core])["heap"]["memory"]
    arena, top, bins, nxt, pm = gdb_values(target, core, [
        "&main_arena", "&main_arena.top", "&main_arena.bins", "&main_arena.next",
        "_PyRuntime._main_interpreter.obmalloc.mgmt.arenas[0].address"])
    c = Core(core)
    # a bin holding a chunk (its bk is not the bin itself)
    chunk = next((c.u64(bins + 16 * i + 8) for i in range(127) if c.u64(bins + 16 * i + 8) != bins + 16 * i - 16),
                 None)
    if chunk is None:
        raise pt.Failure("main_arena's bins hold no chunk")
    first_pool = (pm + 16383) & ~16383

    def patched(patch, which, want):
        return memory_patched(core, work, intact, patch, which, want)

    cases = [
        (lambda c2: c2.put64(chunk + 24, chunk), "malloc", "does not end"),
        (lambda c2: c2.put64(top, 0x10), "malloc", "is no chunk"),
        (lambda c2: c2.put64(nxt, 0x10), "malloc", "the arena at 0x10 is not in the dump"),
        (lambda c2: c2.put64(first_pool + 32, 7 << 32 | 99), "pymalloc", "is none of arena 0's"),
    ]
    return "main_arena at 0x%x: %s" % (arena, "; ".join(patched(*case) for case in cases))


def main():
    tap = pt.TAP()
    for name in interpreters.names():
        for case, fn in (("core", check_core), ("live", check_live), ("diff", check_diff)):
            pt.run_on(tap, name, case, fn)
    for name in ("py3.12", "debian3.11", "sid3.15", "ft3.13"):
        pt.run_on(tap, name, "diff live", check_diff, True)
    for name in interpreters.names():
        pt.run_on(tap, name, "allocators", check_allocators)
    pt.run_on(tap, "py3.12", "allocators live", check_allocators_live)
    pt.run_on(tap, "py3.12", "allocators corrupt", check_allocators_corrupt)
    # the builds made here (cached; skips by name until built): musl's
    # (its C heap is no glibc's: allocators needs mallinfo2) and a
    # standalone one; not in the sanitizer pass (its own builds only)
    for name, cases in () if interpreters.sanitizer_pass() else (
            ("musl3.13", ("core", "live")), ("musl3.13-nobuildid", ("core",)),
            ("standalone3.13", ("core", "allocators"))):
        for case in cases:
            pt.run_on(tap, name, case, {"core": check_core, "live": check_live, "allocators": check_allocators}[case])
    for name in ("py3.12", "sid3.15"):
        pt.run_on(tap, name, "html", check_html, name == "py3.12")
    pt.run_on(tap, "py3.12", "diff refused", check_diff_refused)
    pt.run_on(tap, "py3.12", "corrupt", check_corrupt)
    pt.run_on(tap, "ft3.13", "corrupt mimalloc", check_corrupt_mimalloc)
    pt.schema_summary(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
