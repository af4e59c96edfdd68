"""Folded stacks (analyze --format collapsed) loaded into a flame-graph
tool: npm's speedscope (scripts/speedscope installs it once), its own page
in headless Chromium (htmlpage.Browser), and what speedscope made of them.

  speedscope_dir()    the installed package's page directory, or Skip
  folded_stacks(text) the folded lines as {(frame, ...): count}
  speedscope_load(folded_text, work_dir)  what speedscope parsed, or Failure
"""
import collections
import functools
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse

from .env import SRCDIR, scaled
from .htmlpage import BASE_FLAGS, Browser, need_chromium
from .tap import Failure, Skip

# Installed by the page before speedscope's own script runs: alert() (a
# blocking dialog that would stop the page) recorded instead of shown, and
# the Blob speedscope's Export makes (its own file format) kept, the
# download itself not started.
HOOKS = r"""
(function () {
  var p = window.__pycore = {alerts: [], blob: null, saved: null};
  window.alert = function (m) { p.alerts.push(String(m)); };
  var make = URL.createObjectURL.bind(URL);
  URL.createObjectURL = function (b) { if (b instanceof Blob) p.blob = b; return make(b); };
  var click = HTMLAnchorElement.prototype.click;
  HTMLAnchorElement.prototype.click = function () {
    if (this.hasAttribute('download')) { p.saved = this.download; return; }
    return click.call(this);
  };
})();
"""

# The page's state as speedscope shows it, polled: its alerts, its error
# screen, the name it gave the document, and its toolbar's Export tab (there
# once a profile is shown)
STATE = r"""
(function () {
  var p = window.__pycore || {alerts: []}, body = document.body ? document.body.innerText : '';
  var tabs = Array.prototype.filter.call(document.querySelectorAll('div'), function (d) {
    return d.children.length <= 2 && /Export$/.test(d.textContent || '') && d.textContent.length < 16; });
  return JSON.stringify({alerts: p.alerts, error: body.indexOf('Something went wrong') >= 0,
                         title: document.title, exportTab: tabs.length, body: body.slice(0, 2000),
                         saved: p.saved, blob: !!p.blob});
})()
"""

CLICK_EXPORT = r"""
(function () {
  var tabs = Array.prototype.filter.call(document.querySelectorAll('div'), function (d) {
    return d.children.length <= 2 && /Export$/.test(d.textContent || '') && d.textContent.length < 16; });
  if (!tabs.length) return 'no Export tab';
  tabs[tabs.length - 1].click();
  return 'clicked';
})()
"""


def speedscope_dir():
    """The directory of speedscope's page (index.html and its script),
    installed once by scripts/speedscope; Skip saying why when it cannot
    be (npm missing, no registry)."""
    p = subprocess.run([os.path.join(SRCDIR, "scripts", "speedscope")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=scaled(600))
    if p.returncode != 0:
        raise Skip(p.stderr.decode("utf-8", "replace").strip() or "scripts/speedscope failed")
    page = os.path.join(p.stdout.decode().strip(), "node_modules", "speedscope", "dist", "release")
    if not os.path.isfile(os.path.join(page, "index.html")):
        raise Skip("speedscope has no page in %s" % page)
    return page


def speedscope_version(page):
    with open(os.path.join(page, os.pardir, os.pardir, "package.json")) as f:
        return json.load(f)["version"]


def folded_stacks(text):
    """The folded lines ("frame;frame;frame COUNT") of TEXT as {(frame,
    ...): total count}; a line of another shape raises Failure."""
    stacks = collections.Counter()
    for line in text.splitlines():
        stack, sep, count = line.rpartition(" ")
        if not sep or not stack or not count.isdigit():
            raise Failure("a folded line without a count: %r" % line)
        stacks[tuple(stack.split(";"))] += int(count)
    return dict(stacks)


# htmlpage's flags (headless, the network off: every name resolves to
# nothing, every request goes to a dead proxy) with one difference:
# 127.0.0.1 is reached directly (Chromium's implicit loopback bypass, which
# htmlpage's --proxy-bypass-list=<-loopback> takes away, and the address
# excluded from its resolver's MAP * ~NOTFOUND), for the local server of
# speedscope's page.
LOOPBACK_FLAGS = [f for f in BASE_FLAGS if not f.startswith(("--proxy-bypass-list=", "--host-resolver-rules="))] + \
    ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(directory):
    """A local HTTP server of DIRECTORY on 127.0.0.1, a free port (speedscope
    fetches a #profileURL= only from an http: page): (server, thread)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_Quiet, directory=directory))
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    return server, t


def _evaluate(browser, session, expression, await_promise=False):
    r = browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                          "awaitPromise": await_promise}, session=session)
    if "exceptionDetails" in r:
        raise Failure("in speedscope's page: %s" % r["exceptionDetails"].get("exception", {}).get(
            "description", r["exceptionDetails"].get("text")))
    return r.get("result", {}).get("value")


def _said(events):
    """What the page said: console messages and uncaught exceptions."""
    out = []
    for m in events:
        p, meth = m.get("params", {}), m.get("method")
        if meth == "Runtime.consoleAPICalled":
            out.append(("console." + p.get("type", ""),
                        " ".join(str(a.get("value", a.get("description", a.get("type"))))
                                 for a in p.get("args", []))))
        elif meth == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append(("exception", d.get("exception", {}).get("description") or d.get("text")))
    return out


def _replay(profile, frames):
    """The stacks of an evented profile of speedscope's file format, as
    {(frame name, ...): weight}: between two events, the frames open then
    hold the weight between their "at"s."""
    stacks, stack, at = collections.Counter(), [], profile.get("startValue", 0)
    for e in profile["events"]:
        if e["at"] > at and stack:
            stacks[tuple(frames[k]["name"] for k in stack)] += e["at"] - at
        at = e["at"]
        if e["type"] == "O":
            stack.append(e["frame"])
        elif e["type"] == "C":
            if not stack or stack[-1] != e["frame"]:
                raise Failure("speedscope's export closes frame %s, open: %s" % (e["frame"], stack[-1:]))
            stack.pop()
        else:
            raise Failure("speedscope's export has an event of type %r" % e["type"])
    if stack:
        raise Failure("speedscope's export leaves %d frames open" % len(stack))
    return dict(stacks)


def speedscope_load(folded_text, work_dir, name="pycore-samples.txt", timeout=60):
    """Load FOLDED_TEXT into speedscope's own page, as a user does, and
    return what speedscope parsed.

    How: the text is written to WORK_DIR/speedscope-*/NAME next to a link
    to speedscope's release directory, served by a local http.server on
    127.0.0.1 (a free port); headless Chromium (htmlpage.Browser, over its
    DevTools pipe, network off but loopback) opens the server's
    app/index.html#profileURL=<the file's URL on the server>, so
    speedscope fetches the file and picks its importer by the content (the
    name ends in .txt, naming no format).  Before speedscope's script runs
    the page gets two hooks: alert() recorded (speedscope alerts
    "Unrecognized format!" and "Successfully imported profile, but it's
    empty!"), and the Blob its Export makes kept (no download).

    The load is done when the toolbar's Export tab shows; it failed when
    speedscope alerted, showed its error screen ("Something went wrong.",
    after console.log("Failed to load format", error)), threw an uncaught
    exception, or showed nothing within TIMEOUT seconds (scaled): each
    raises Failure with what speedscope said (its alerts, its console,
    its exceptions).  It also fails when speedscope's console does not say
    "Importing as collapsed stack format" (another importer took it).

    Then the Export tab is clicked: speedscope serializes its own profile
    group in its file format (file-format-schema.json: an evented profile,
    frames shared), and that JSON is read back.  Returned:

      version       speedscope's package version (its package.json)
      importer      speedscope's console line naming the importer
      title         document.title speedscope set ("NAME - speedscope")
      name          the profile group's name in the export (the file's name)
      profile_name  the profile's name, unit its weight unit ("none")
      total_weight  the profile's endValue - startValue: its total weight
      frames        the set of the frame names speedscope holds
      stacks        {(frame name, ...): weight}, the profile's stacks
                    replayed from its open/close events (its weighted
                    samples, equal stacks added up)
      export        the whole exported JSON
    """
    page = speedscope_dir()
    version = speedscope_version(page)
    served = tempfile.mkdtemp(prefix="speedscope-", dir=work_dir)
    os.symlink(page, os.path.join(served, "app"))
    with open(os.path.join(served, name), "w", encoding="utf-8") as f:
        f.write(folded_text)
    server, thread = _serve(served)
    need_chromium()
    browser = Browser(work_dir, flags=LOOPBACK_FLAGS)
    try:
        # (the server's own address and port: no host named here)
        base = "http://%s:%d/" % server.server_address[:2]
        profile_url = base + urllib.parse.quote(name)
        url = base + "app/index.html#profileURL=" + urllib.parse.quote(profile_url, safe="")
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Page"):
            browser.send(domain + ".enable", session=session)
        browser.send("Browser.setDownloadBehavior", {"behavior": "deny"})
        browser.send("Page.addScriptToEvaluateOnNewDocument", {"source": HOOKS}, session=session)
        browser.events = []
        nav = browser.send("Page.navigate", {"url": url}, session=session)
        if nav.get("errorText"):
            raise Failure("Chromium cannot open speedscope's page %s: %s" % (url, nav["errorText"]))
        end = time.monotonic() + scaled(timeout)
        while True:
            state = json.loads(_evaluate(browser, session, STATE))
            said = _said(browser.events)
            thrown = [s for k, s in said if k == "exception"]
            if state["alerts"] or state["error"] or thrown:
                raise Failure("speedscope %s did not load %s: %s" % (
                    version, name, "; ".join(["alert: %s" % a for a in state["alerts"]] +
                                             (["it shows: %s" % " ".join(state["body"].split())]
                                              if state["error"] else []) +
                                             ["%s: %s" % (k, str(v).splitlines()[0] if v else v)
                                              for k, v in said])))
            if state["exportTab"] and state["title"].endswith(" - speedscope"):
                break
            if time.monotonic() > end:
                raise Failure("speedscope %s showed nothing of %s in %.0f s (it shows %r; %s)" % (
                    version, name, scaled(timeout), " ".join(state["body"].split())[:300],
                    "; ".join("%s: %s" % s for s in said) or "nothing on its console"))
            time.sleep(0.1)
        importer = [s for k, s in said if k.startswith("console.") and s.startswith("Importing ")]
        if importer != ["Importing as collapsed stack format"]:
            raise Failure("speedscope %s took %s as %s" % (version, name, importer or "no format it named"))
        clicked = _evaluate(browser, session, CLICK_EXPORT)
        if clicked != "clicked":
            raise Failure("speedscope's toolbar: %s" % clicked)
        text = None
        while time.monotonic() < end and text is None:
            text = _evaluate(browser, session, "window.__pycore.blob ? window.__pycore.blob.text() : null",
                             await_promise=True)
            if text is None:
                time.sleep(0.1)
        if text is None:
            raise Failure("speedscope's Export made no file")
        said = _said(browser.events)
        thrown = [s for k, s in said if k == "exception"]
        if thrown:
            raise Failure("speedscope %s threw: %s" % (version, "; ".join(thrown)))
        browser.send("Target.closeTarget", {"targetId": target})
    finally:
        browser.close()
        server.shutdown()
        server.server_close()
        thread.join()
        shutil.rmtree(served, ignore_errors=True)
    export = json.loads(text)
    profiles = export.get("profiles") or []
    if len(profiles) != 1 or profiles[0].get("type") != "evented":
        raise Failure("speedscope's export holds %d profiles (%s), not one evented" % (
            len(profiles), [p.get("type") for p in profiles]))
    prof, frames = profiles[0], export["shared"]["frames"]
    stacks = _replay(prof, frames)
    return {"version": version, "importer": importer[0], "title": state["title"], "name": export.get("name"),
            "profile_name": prof.get("name"), "unit": prof.get("unit"),
            "total_weight": prof["endValue"] - prof.get("startValue", 0),
            "frames": {f["name"] for f in frames}, "stacks": stacks,
            "export": export}
