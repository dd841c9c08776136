"""Check the built docs site like code (``make docs-check``): internal links, nothing fetched from the network, and a
real browser that typesets the maths and loads the plots.

1. **Links, offline.** Every ``href``/``src`` of every built page that is not an external URL must name a file of
   the build, and its ``#anchor`` an ``id`` in that file. No ``<script>``, stylesheet or image may come from the
   network (a CDN would break the offline promise); external ``<a href>`` links are counted, not followed.
2. **Browser.** Headless Chromium (Debian's ``chromium``) opens the page of one program, one tutorial and any
   further HTML files given (``--page``: e.g. the page of ``mmprog report``) with every host name unresolvable, waits
   for MathJax, and requires: MathJax's elements (``mjx-container``) on the page, no MathJax error element, no raw
   ``\\begin{`` left in the visible text, and every ``<img>`` loaded (``naturalWidth > 0``), with at least the
   number of images asked (the tutorial's plots). It talks to Chromium over its DevTools protocol on 127.0.0.1.

Exit 0 when everything holds; otherwise one line per failure and exit 1.
"""
from __future__ import annotations

import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

EXTERNAL = ("http://", "https://", "mailto:", "data:", "javascript:", "ftp://")


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.refs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.refs.append((tag, key, a[key], a.get("rel", "")))


def check_links(site):
    """Failures (one string each) among the internal links of every page under ``site``."""
    site = Path(site)
    pages, failures, n_internal, n_external = {}, [], 0, 0
    for f in site.rglob("*.html"):
        p = _Page()
        p.feed(f.read_text(encoding="utf-8", errors="replace"))
        pages[f.resolve()] = p
    for f, p in pages.items():
        for tag, key, url, rel in p.refs:
            if url.startswith(EXTERNAL) or url.startswith("//"):
                if tag in ("script", "img", "iframe") or (tag == "link" and "stylesheet" in rel) or url.startswith("//"):
                    if not url.startswith("data:"):
                        failures.append(f"{f.relative_to(site.resolve())}: <{tag} {key}> fetches {url} from the network")
                n_external += not url.startswith("data:")
                continue
            n_internal += 1
            parsed = urllib.parse.urlsplit(url)
            path = urllib.parse.unquote(parsed.path)
            target = (f.parent / path).resolve() if path else f
            if path and not target.exists():
                failures.append(f"{f.relative_to(site.resolve())}: {key}={url!r}: no such file")
                continue
            if parsed.fragment and target.suffix == ".html":
                tp = pages.get(target)
                if tp is not None and parsed.fragment not in tp.ids:
                    failures.append(f"{f.relative_to(site.resolve())}: {key}={url!r}: no id {parsed.fragment!r} there")
    print(f"links: {len(pages)} pages, {n_internal} internal links checked, {n_external} external links not followed, "
          f"{len(failures)} broken")
    return failures


# ------------------------------------------------------------------------------------------------------- browser
PROBE = r"""
(async () => {
  const t0 = Date.now();
  const wait = ms => new Promise(r => setTimeout(r, ms));
  while (!(window.MathJax && MathJax.startup && MathJax.startup.promise) && Date.now() - t0 < 30000) await wait(100);
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  const imgs = [...document.querySelectorAll('img')];
  await Promise.all(imgs.map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  return {
    mathjax: (window.MathJax && MathJax.version) || null,
    typeset: document.querySelectorAll('mjx-container').length,
    errors: document.querySelectorAll('mjx-merror').length,
    messages: [...document.querySelectorAll('mjx-merror')].slice(0, 3).map(e => e.getAttribute('data-mjx-error') || e.textContent),
    raw: (document.body.innerText.match(/\\begin\{/g) || []).length,
    images: imgs.map(i => ({src: (i.getAttribute('src') || '').slice(0, 60), width: i.naturalWidth})),
  };
})()
"""


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("docs check: no chromium on PATH (Debian: apt-get install chromium; `make docs-check` does it)")


class Browser:
    """Headless Chromium driven over the DevTools protocol (tornado's websocket client)."""

    def __init__(self, timeout=60.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="mmprog-chromium-")
        self.proc = subprocess.Popen(
            [_chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--allow-file-access-from-files", "--host-resolver-rules=MAP * ~NOTFOUND",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"
        t0 = time.time()
        while not port_file.exists() or not port_file.read_text().strip():
            if self.proc.poll() is not None or time.time() - t0 > self.timeout:
                self.close()
                raise SystemExit("docs check: chromium did not start its DevTools endpoint")
            time.sleep(0.1)
        self.port = int(port_file.read_text().split()[0])

    def probe(self, url):
        """Open ``url`` in a new tab, run :data:`PROBE` there and return its result."""
        import asyncio

        from tornado.websocket import websocket_connect
        new = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(new, timeout=self.timeout) as r:
            tab = json.load(r)

        async def run():
            ws = await websocket_connect(tab["webSocketDebuggerUrl"], max_message_size=1 << 26)
            ids = iter(range(1, 1 << 30))

            async def call(method, **params):
                i = next(ids)
                ws.write_message(json.dumps({"id": i, "method": method, "params": params}))
                while True:
                    msg = await ws.read_message()
                    if msg is None:
                        raise RuntimeError("chromium closed the connection")
                    m = json.loads(msg)
                    if m.get("id") == i:
                        if "error" in m:
                            raise RuntimeError(f"{method}: {m['error']}")
                        return m["result"]

            await call("Page.enable")
            await call("Page.navigate", url=url)
            t0 = time.time()
            while True:          # until the document has loaded
                r = await call("Runtime.evaluate", expression="document.readyState", returnByValue=True)
                if r["result"].get("value") == "complete" or time.time() - t0 > self.timeout:
                    break
                await asyncio.sleep(0.1)
            r = await call("Runtime.evaluate", expression=PROBE, awaitPromise=True, returnByValue=True,
                           timeout=int(self.timeout * 1000))
            ws.close()
            if "exceptionDetails" in r:
                raise RuntimeError(f"probe failed on {url}: {r['exceptionDetails'].get('text')}")
            return r["result"]["value"]

        try:
            return asyncio.run(asyncio.wait_for(run(), self.timeout * 2))
        finally:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/close/{tab['id']}", timeout=10).close()
            except OSError:
                pass

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def check_page(browser, path, min_images=0):
    """Failures of one page: maths typeset by MathJax, no raw environment left, every image loaded."""
    res = browser.probe(Path(path).resolve().as_uri())
    widths = [im["width"] for im in res["images"]]
    print(f"browser: {path}: MathJax {res['mathjax']}, {res['typeset']} typeset expressions, {res['errors']} "
          f"MathJax errors, {res['raw']} raw \\begin{{ in the text, {len(widths)} images "
          f"({sum(w > 0 for w in widths)} loaded)")
    fails = []
    if not res["mathjax"]:
        fails.append(f"{path}: MathJax did not load")
    if res["typeset"] == 0:
        fails.append(f"{path}: no typeset mathematics (no mjx-container)")
    if res["errors"]:
        fails.append(f"{path}: {res['errors']} MathJax errors (mjx-merror): {res['messages']}")
    if res["raw"]:
        fails.append(f"{path}: {res['raw']} raw \\begin{{ left in the visible text")
    bad = [im["src"] for im in res["images"] if im["width"] <= 0]
    if bad:
        fails.append(f"{path}: images that did not load: {bad}")
    if sum(w > 0 for w in widths) < min_images:
        fails.append(f"{path}: {sum(w > 0 for w in widths)} images loaded, expected at least {min_images}")
    return fails


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", default=str(Path(__file__).resolve().parent / "_build" / "html"))
    ap.add_argument("--program", default="m3n", help="the program page opened in the browser")
    ap.add_argument("--tutorial", default="laplace", help="the tutorial page opened in the browser")
    ap.add_argument("--page", action="append", default=[], help="another HTML file to open (e.g. a report)")
    ap.add_argument("--all", action="store_true", help="open every program page and every tutorial")
    ap.add_argument("--no-browser", action="store_true", help="links only")
    args = ap.parse_args(argv)
    site = Path(args.site)
    if not (site / "index.html").exists():
        print(f"docs check: {site}/index.html is absent: run `make docs` first", file=sys.stderr)
        return 2
    failures = check_links(site)
    if not args.no_browser:
        b = Browser()
        try:
            programs = [site / "user_guide" / "programs" / f"{args.program}.html"]
            tutorials = [site / "tutorials" / f"{args.tutorial}.html"]
            if args.all:
                programs = sorted(p for p in (site / "user_guide" / "programs").glob("*.html") if p.stem != "index")
                tutorials = sorted(p for p in (site / "tutorials").glob("*.html") if p.stem != "index")
            for p in programs:
                failures += check_page(b, p)
            for p in tutorials:
                failures += check_page(b, p, min_images=2)
            for p in args.page:
                failures += check_page(b, p, min_images=1)
        finally:
            b.close()
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    print(f"docs check: {'passed' if not failures else f'{len(failures)} failures'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
