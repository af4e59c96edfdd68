"""pycore's HTML pages (analyze --format html, group --format html's
dashboard) as the checkers read them (check-html.py, check-slurm.py):
parsed, every tag and attribute checked against what the renderer writes,
and loaded by headless Chromium with the network off.

  Page(text)          the page as a tree of Node (find, text, inside);
                      .bad lists markup the renderer does not write
  check_markup(page, label)  no such markup, one <style> and one <script>,
                      the CSP allowing exactly their hashes
  esc(s)              how the page shows S, a string of the JSON report
  Browser(work)       headless Chromium over a DevTools pipe: load(path),
                      evaluate(path, expressions, fragment)
  no_script_dom(browser, path), screenshot(path, png, work)
  CHROMIUM, need_chromium()
"""
import base64
import fcntl
import hashlib
import html.parser
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time

from .tap import Failure, Skip
from .env import scaled

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# What the page may contain: the renderer's tags and attributes, nothing else
TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "div", "span",
        "input", "label", "main", "section", "p", "dl", "dt", "dd", "a", "code", "ol", "ul", "li",
        "pre", "details", "summary", "table", "thead", "tbody", "tr", "th", "td", "svg", "defs",
        "marker", "path", "line", "g", "rect", "text", "script", "button"}
ATTRS = {"lang", "charset", "http-equiv", "content", "name", "class", "id", "href", "type",
         "checked", "for", "open", "data-tids", "data-tid", "data-from", "data-to", "data-address",
         "data-tasks", "data-hash", "data-count", "data-ident", "width", "height", "viewbox", "role", "x",
         "y", "x1", "y1", "x2", "y2", "rx", "refx", "refy", "markerwidth", "markerheight", "orient", "d",
         "text-anchor", "marker-end", "title", "data-v"}
SAFE_VALUE = re.compile(r"^[A-Za-z0-9 #._:;,()'=/+\-%]*$")
HREF = re.compile(r"^(#[A-Za-z0-9-]+|[A-Za-z0-9._-]+\.html)$")
VOID = {"meta", "input", "br", "img", "link", "hr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def cls(self):
        return (self.attrs.get("class") or "").split()

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self):
        for c in self.children:
            if not isinstance(c, str):
                yield c
                yield from c.walk()

    def find(self, tag=None, cls=None):
        return [n for n in self.walk() if (tag is None or n.tag == tag) and (cls is None or cls in n.cls())]

    def inside(self, tag, cls):
        p = self.parent
        while p is not None:
            if p.tag == tag and cls in p.cls():
                return True
            p = p.parent
        return False


class Page(html.parser.HTMLParser):
    """The page as a tree; every tag and attribute checked against what
    the renderer writes."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.bad = []
        self.scripts, self.styles, self.csp = [], [], None
        self._raw = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag not in TAGS:
            self.bad.append("element <%s>" % tag)
        for k, v in attrs:
            if k not in ATTRS:
                self.bad.append("attribute %s=%r on <%s>" % (k, v, tag))
            elif k == "href" and not HREF.match(v or ""):
                self.bad.append("link %r" % v)
            elif k not in ("content", "d") and v is not None and not SAFE_VALUE.match(v):
                self.bad.append("attribute value %s=%r on <%s>" % (k, v, tag))
        d = dict(attrs)
        if tag == "meta" and d.get("http-equiv") == "Content-Security-Policy":
            self.csp = d.get("content")
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        if tag in ("script", "style"):
            self._raw = []
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.cur = self.cur.parent

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._raw is not None:
            (self.scripts if tag == "script" else self.styles).append("".join(self._raw))
            self._raw = None
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is self.root:
            self.bad.append("end tag </%s> without its start" % tag)
        else:
            self.cur = n.parent

    def handle_data(self, data):
        if self._raw is not None:
            self._raw.append(data)
        self.cur.children.append(data)

    def handle_comment(self, data):
        self.bad.append("a comment <!--%s-->" % data[:40])


def csp_hash(s):
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()


def check_markup(page, label):
    if page.bad:
        raise Failure("%s: markup the renderer does not write: %s" % (label, page.bad[:5]))
    if len(page.styles) != 1 or len(page.scripts) != 1:
        raise Failure("%s: %d styles and %d scripts, want one each" % (label, len(page.styles), len(page.scripts)))
    want = ("default-src 'none'; style-src %s; script-src %s; img-src 'none'; base-uri 'none'; "
            "form-action 'none'" % (csp_hash(page.styles[0]), csp_hash(page.scripts[0])))
    if page.csp != want:
        raise Failure("%s: CSP %r, want %r" % (label, page.csp, want))


# How the page shows a string of the report

def esc(s):
    """report_html_escape's text for S, a string of the JSON report
    (a byte that is not UTF-8 is "\\udcNN" there)."""
    if s is None:
        return "?"
    out = []
    for ch in s:
        o = ord(ch)
        if 0xdc80 <= o <= 0xdcff:
            out.append("\\x%02x" % (o - 0xdc00))
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch.isprintable():
            out.append(ch)
        elif o <= 0xff:
            out.append("\\x%02x" % o)
        elif o <= 0xffff:
            out.append("\\u%04x" % o)
        else:
            out.append("\\U%08x" % o)
    return "".join(out)


# Chromium, headless, the network off

BASE_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-default-apps", "--mute-audio", "--host-resolver-rules=MAP * ~NOTFOUND",
              "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]


def need_chromium():
    if not CHROMIUM:
        raise Skip("chromium not installed (Debian package chromium)")


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (DevTools
    protocol messages, NUL-terminated JSON, on fds 3 and 4), started with
    FLAGS (default BASE_FLAGS: the network off)."""

    def __init__(self, work, flags=None):
        need_chromium()
        self.profile = tempfile.mkdtemp(prefix="chromium-", dir=work)
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():
            # through fds above 4 first: a pipe may be fd 3 or 4 already
            a, b = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen([CHROMIUM] + (BASE_FLAGS if flags is None else flags) +
                                     ["--remote-debugging-pipe", "--user-data-dir=" + self.profile, "about:blank"],
                                     preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.buf, self.next_id, self.events = b"", 0, []

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        while True:
            m = self.receive(end)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise Failure("DevTools %s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def receive(self, end):
        while b"\0" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                raise Failure("Chromium did not answer in time")
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                raise Failure("Chromium closed its DevTools pipe (exit %s)" % self.proc.poll())
            self.buf += chunk
        line, self.buf = self.buf.split(b"\0", 1)
        return json.loads(line)

    def wait_event(self, method, session, timeout=60):
        end = time.monotonic() + timeout
        for m in self.events:
            if m.get("method") == method and m.get("sessionId") == session:
                return m
        while True:
            m = self.receive(end)
            self.events.append(m)
            if m.get("method") == method and m.get("sessionId") == session:
                return m

    def load(self, path, script=True):
        """(the DOM after load as HTML, problems seen, seconds from
        navigation to the load event and a layout); with SCRIPT false,
        the page's script disabled.  After it, .paint: the seconds from
        navigation to the first contentful paint (None: not reported)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page", "DOM"):
            self.send(domain + ".enable", session=session)
        if not script:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=session)
        self.events = []
        url = "file://" + os.path.abspath(path)
        t0 = time.monotonic()
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        self.send("Page.getLayoutMetrics", session=session)
        secs = time.monotonic() - t0
        # first paint and first contentful paint, ms from navigation (the
        # page's own Paint Timing entries, read over DevTools: the page's
        # CSP does not apply); None when the browser gave none
        # (a small page may paint after its load event: asked again a while)
        self.paint = None
        until = time.monotonic() + scaled(2)
        while self.paint is None and time.monotonic() < until:
            try:
                got = self.send("Runtime.evaluate", {"expression": "JSON.stringify(performance.getEntriesByType("
                                                     "'paint').map(function(e){return [e.name,e.startTime]}))",
                                                     "returnByValue": True}, session=session)
                entries = dict(json.loads(got["result"]["value"]))
            except (Failure, KeyError, TypeError, ValueError):
                break
            if entries:
                self.paint = entries.get("first-contentful-paint", entries.get("first-paint")) / 1000.0
            else:
                time.sleep(0.05)
        root = self.send("DOM.getDocument", {"depth": 1}, session=session)["root"]
        html_node = [c for c in root.get("children", []) if c.get("nodeName") == "HTML"][0]
        dom = self.send("DOM.getOuterHTML", {"nodeId": html_node["nodeId"]}, session=session)["outerHTML"]
        problems = []
        for m in self.events:
            p, meth = m.get("params", {}), m.get("method")
            if meth == "Runtime.consoleAPICalled":
                problems.append("console.%s: %s" % (p.get("type"), [a.get("value") for a in p.get("args", [])]))
            elif meth == "Runtime.exceptionThrown":
                problems.append("exception: %s" % p.get("exceptionDetails", {}).get("text"))
            elif meth == "Log.entryAdded":
                e = p.get("entry", {})
                problems.append("log %s: %s" % (e.get("level"), e.get("text")))
            elif meth == "Network.requestWillBeSent" and p.get("request", {}).get("url") != url:
                problems.append("request: %s" % p.get("request", {}).get("url"))
        self.send("Target.closeTarget", {"targetId": target})
        return "<!DOCTYPE html>\n" + dom, problems, secs

    def wrapped(self, path, selector, width=1300, height=900):
        """The texts of the elements SELECTOR picks in PATH, laid out in a
        window WIDTH pixels wide, that take more than one line: [(text,
        lines)].  A line is a distinct top of the text's client rectangles
        (a Range over the element's contents)."""
        js = ("var out=[],els=document.querySelectorAll(%s);"
              "for(var i=0;i<els.length;i++){var r=document.createRange();r.selectNodeContents(els[i]);"
              "var rs=r.getClientRects(),tops={},n=0;for(var k=0;k<rs.length;k++){"
              "if(rs[k].width<1)continue;var t=Math.round(rs[k].top);if(!(t in tops)){tops[t]=1;n++;}}"
              "out.push([els[i].textContent,n]);}return out;") % json.dumps(selector)
        cells, = self.evaluate(path, [js], size=(width, height))
        if not cells:
            raise Failure("no element %s in %s" % (selector, os.path.basename(path)))
        return [(t, n) for t, n in cells if n > 1], len(cells)

    def evaluate(self, path, expressions, fragment="", size=None):
        """The values of EXPRESSIONS (JavaScript function bodies, each
        value JSON.stringify'd in the page) evaluated in turn in
        PATH#FRAGMENT after its load, in a window of SIZE (width, height)
        pixels when given."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.send("Page.enable", session=session)
            if size:
                self.send("Emulation.setDeviceMetricsOverride", {"width": size[0], "height": size[1],
                                                                 "deviceScaleFactor": 1, "mobile": False},
                          session=session)
            self.events = []
            url = "file://" + os.path.abspath(path) + ("#" + fragment if fragment else "")
            self.send("Page.navigate", {"url": url}, session=session)
            self.wait_event("Page.loadEventFired", session)
            out = []
            for js in expressions:
                res = self.send("Runtime.evaluate", {"expression": "JSON.stringify((function(){%s})())" % js,
                                                     "returnByValue": True}, session=session)
                if "exceptionDetails" in res:
                    raise Failure("in %s: %s: %s" % (os.path.basename(path), js[:80],
                                                     res["exceptionDetails"].get("text")))
                out.append(json.loads(res["result"]["value"]))
        finally:
            self.send("Target.closeTarget", {"targetId": target})
        return out

    def close(self):
        try:
            self.send("Browser.close", timeout=scaled(10))
        except (Failure, OSError):
            pass
        try:
            self.proc.wait(timeout=scaled(10))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)
        shutil.rmtree(self.profile, ignore_errors=True)


def no_script_dom(browser, path):
    """The DOM of PATH loaded with script disabled (chromium --dump-dom
    with scriptEnabled=false writes nothing: it reads the DOM with script)."""
    dom, problems, _ = browser.load(path, script=False)
    if problems:
        raise Failure("with script off: %s" % problems[:5])
    return dom


def screenshot(path, png, work, size="1100,1000"):
    profile = tempfile.mkdtemp(prefix="chromium-", dir=work)
    try:
        subprocess.run([CHROMIUM] + BASE_FLAGS + ["--user-data-dir=" + profile, "--hide-scrollbars",
                                                  "--window-size=" + size, "--screenshot=" + png,
                                                  "file://" + os.path.abspath(path)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=scaled(120))
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if not os.path.exists(png) or os.path.getsize(png) < 1000:
        raise Failure("chromium --screenshot wrote no picture")
    dest = os.environ.get("PYCORE_SCREENSHOTS")
    if dest:
        # for the README: 64 colours keep the page readable at a third of the size
        out = os.path.join(dest, os.path.basename(png))
        if not shutil.which("convert") or subprocess.run(["convert", png, "-colors", "64", "PNG8:" + out]).returncode:
            shutil.copy(png, out)
    return os.path.getsize(png)
