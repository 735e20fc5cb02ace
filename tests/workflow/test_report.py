"""The HTML report of the smoke run, opened in headless Chromium: it loads, it lists every
figure and table, and a screenshot of it is saved to results/report-screenshot.png.

Run: .venv/bin/python -m pytest tests/workflow/test_report.py -v
Needs the Debian package chromium (bash ci/setup-system.sh); without it the test is skipped.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image as mpimg
import pytest

from tests.helpers.smoke_run import SMOKE, local_smoke_run
from tests.helpers.workflow_utils import ROOT, snakemake

SCREENSHOT = ROOT / "results" / "report-screenshot.png"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1600,1000",
    # The report is a single-page app that draws itself from embedded data: give its
    # scripts (and the timers below) 10 s of virtual time before the DOM or screenshot is taken.
    "--virtual-time-budget=10000",
]
# Added to a copy of the report: open every result category in turn, as a reader clicking
# through the menu would, write what the menu listed into <pre id="listing">, and end on
# the first figure so that the screenshot shows one.
WALK_THE_MENU = """
<script>
window.addEventListener("load", () => {
  const pages = Object.keys(categories).flatMap((c) => Object.keys(categories[c]).map((s) => [c, s]));
  const listed = [];
  const open = ([category, subcategory]) => app.setView({navbarMode: "subcategory", category, subcategory});
  const later = (f) => setTimeout(f, 300);
  const step = (i) => {
    if (i < pages.length) {
      open(pages[i]);
      later(() => {
        listed.push(document.querySelector("nav").innerText);
        app.setView({navbarMode: "menu"});  // back to the menu, as a reader would
        later(() => step(i + 1));
      });
      return;
    }
    const pre = document.createElement("pre");
    pre.id = "listing";
    pre.textContent = listed.join("\\n");
    document.body.appendChild(pre);
    const [category, subcategory] = pages[0];
    const figure = categories[category][subcategory].find((path) => path.endsWith(".png"));
    const shown = figure ? {content: "img", contentPath: results[figure].data_uri, resultPath: figure} : {};
    app.setView({navbarMode: "subcategory", category, subcategory, ...shown});
  };
  later(() => step(0));
});
</script>
"""


def chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )


def rendered_app(dom: str) -> str:
    """The text of what the report's scripts drew into <div id="app">."""
    app = dom[dom.index('<div id="app">') :]
    app = re.sub(r"<(script|style)\b.*?</\1>", "", app, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "\n", app))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if shutil.which("chromium") is None:
        pytest.skip("chromium not found: install it with `bash ci/setup-system.sh`")
    done, _ = local_smoke_run(tmp_path_factory)
    repo = tmp_path_factory.mktemp("report") / "repo"
    shutil.copytree(done, repo, symlinks=True)
    out = snakemake(repo, *SMOKE, "--report", "results/report.html", timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    page = repo / "results" / "report-walk.html"
    head, tail = (repo / "results/report.html").read_text().rsplit("</body>", 1)  # the last one: scripts hold others
    page.write_text(head + WALK_THE_MENU + "</body>" + tail)
    return repo, page


@pytest.mark.slow
def test_report_lists_every_artifact(report, tmp_path):
    repo, page = report
    out = chromium(page, tmp_path / "profile", "--dump-dom")
    assert out.returncode == 0, out.stderr[-3000:]
    app = rendered_app(out.stdout)
    assert "Snakemake" in app and "Results" in app, "the report's app did not render"
    listing = re.search(r'<pre id="listing">(.*?)</pre>', out.stdout, flags=re.S)
    assert listing, "the menu walk did not finish: the page did not load"
    listed = html.unescape(listing.group(1))
    artifacts = sorted(
        str(p.relative_to(repo))
        for pattern in ("figures/*.png", "tables/*.csv")
        for p in (repo / "results").glob(pattern)
    )
    assert artifacts
    missing = [name for name in artifacts if name not in listed]
    assert not missing, f"not listed in the report: {missing}\nlisted:\n{listed}"


@pytest.mark.slow
def test_report_screenshot(report, tmp_path, capsys):
    _, page = report
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    SCREENSHOT.unlink(missing_ok=True)
    out = chromium(page, tmp_path / "profile", f"--screenshot={SCREENSHOT}")
    assert out.returncode == 0, out.stderr[-3000:]
    image = mpimg.imread(SCREENSHOT)
    assert image.shape[:2] == (1000, 1600)
    assert image.std() > 0.05, "the screenshot is blank"
    with capsys.disabled():
        print(f"\n[report] screenshot of the HTML report: {SCREENSHOT}")


@pytest.mark.slow
def test_report_about_page_describes_the_workflow_and_its_config(report):
    repo, _ = report
    page = (repo / "results" / "report.html").read_text()
    literal = re.search(r'var workflow_desc = ("(?:[^"\\]|\\.)*")', page)
    assert literal, "the report has no workflow description"
    text = " ".join(re.sub(r"<[^>]+>", " ", json.loads(literal.group(1))).split())
    assert "Benign Overfitting in Token Selection of Attention Mechanism" in text
    assert "Synthetic runs of this report: n = 10," in text  # the smoke config's n, filled in
