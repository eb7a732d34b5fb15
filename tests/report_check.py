"""Check `snakemake --report` of a finished run in headless Chromium (used by the e2e tests).

The report page is loaded in headless Chromium; a
script appended to a copy of it opens each plot exactly as the report's eye button does
(``app.setView({content: "img", ...})``) and records whether the image decoded
(``naturalWidth > 0``). A screenshot of one opened plot must not be blank.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image as mpimg
import pytest

from tests.workflow_runs import snakemake

# Appended to a copy of the report: drive the report's own React app (global ``app``).
CHECK_SCRIPT = """
<script>
(async () => {
  const out = document.createElement("pre");
  out.id = "img-check";
  const plots = Object.values(categories["Plots"] || {}).flat();
  const seen = {};
  for (let i = 0; i < 200 && typeof app === "undefined"; i++) {  // React mounts the app asynchronously
    await new Promise(r => setTimeout(r, 50));
  }
  app.showCategory("Plots");
  for (const path of plots) {
    app.setView({content: "img", contentPath: results[path].data_uri, resultPath: path});
    let img = null;
    for (let i = 0; i < 100 && !(img && img.complete); i++) {
      await new Promise(r => setTimeout(r, 50));
      img = [...document.querySelectorAll("#app img")].find(el => el.src === results[path].data_uri);
    }
    seen[path] = img ? {complete: img.complete, width: img.naturalWidth, height: img.naturalHeight} : null;
  }
  const menu = document.querySelector("#app").innerText;
  out.textContent = JSON.stringify({plots: seen, menu: menu});
  document.body.appendChild(out);
  if (plots.length) {
    app.setView({content: "img", contentPath: results[plots[0]].data_uri, resultPath: plots[0]});
  }
})();
</script>
"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    pytest.fail("no Chromium on PATH: install it (Debian: apt-get install -y chromium)")


def headless(*args: str) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=20000"]
    return subprocess.run([chromium(), *flags, *args], capture_output=True, text=True, timeout=180)


def check_report_in_chromium(report_html: Path, workdir: Path) -> dict:
    """Open the report with the check script appended; return what the page recorded."""
    page = workdir / "report_check.html"
    head, tail = report_html.read_text().rsplit("</body>", 1)  # the last one: the bundle quotes the tag too
    page.write_text(head + CHECK_SCRIPT + "</body>" + tail)
    proc = headless("--dump-dom", page.as_uri())
    found = re.search(r'<pre id="img-check">(.*?)</pre>', proc.stdout, re.DOTALL)
    assert found, "the check script left no result:\n" + proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(
        found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    )


def assert_report_shows_plots(workdir: Path, *args: str) -> None:
    """Run ``snakemake --report`` in a finished ``workdir`` and check every plot loads in Chromium.

    Also usable on a finished run of the whole workflow (``args``: extra Snakemake options).
    """
    made = snakemake(workdir, *args, "--report", "report.html", timeout=600)
    assert made.returncode == 0, made.stdout[-4000:] + made.stderr[-4000:]
    pngs = {f"results/plots/{p.name}": p for p in (workdir / "results/plots").glob("*.png")}
    assert pngs, "the run made no plots"
    seen = check_report_in_chromium(workdir / "report.html", workdir)
    assert set(seen["plots"]) == set(pngs)
    for path, image in seen["plots"].items():
        height, width = mpimg.imread(pngs[path]).shape[:2]
        assert image == {"complete": True, "width": width, "height": height}, path
    assert "Plots" in seen["menu"] and "Tables" in seen["menu"]

    shot = workdir / "shot.png"
    headless(f"--screenshot={shot}", "--window-size=1400,1000", (workdir / "report_check.html").as_uri())
    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (1000, 1400)
    assert pixels.std() > 0.02, "the screenshot of the report is blank"
