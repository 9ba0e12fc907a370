"""Screenshots of a rendered site's profiled submission pages in headless Chromium.

    python scripts/screenshot_profiles.py SITE_DIR OUT_DIR

SITE_DIR is a folder `grader render --out` wrote on a GPU host after `grader submit --profile` gradings; every
submission page with a profile section is opened in light and dark mode, checked (one roofline chart, a profile
table with rows, advice, no horizontal overflow) and saved as OUT_DIR/<id>-<mode>.png. Needs Chromium at
/usr/bin/chromium (.ci/browser-setup.sh), no GPU. Exits 1 if a page fails a check or none has a profile.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from cdp import Browser  # the site tests' own CDP client and static server
from static_site import served

CHECKS = {
    "one roofline chart": "document.querySelectorAll('#roofline svg').length === 1",
    "a profile table with rows": "document.querySelector('#profile table').rows.length >= 2",
    "advice": "document.querySelectorAll('#profile ul.advice li').length >= 1",
    "no horizontal overflow": "document.documentElement.scrollWidth <= window.innerWidth",
}


def main(site: Path, out: Path) -> int:
    pages = sorted(p for p in (site / "submissions").glob("*.html") if 'id="profile"' in p.read_text())
    if not pages:
        sys.stderr.write(f"no submission page under {site} has a profile (grader submit --profile stores one)\n")
        return 1
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory() as scratch, served(site) as base:
        browser = Browser("/usr/bin/chromium", Path(scratch))
        try:
            for page in pages:
                for mode, dark in (("light", False), ("dark", True)):
                    browser.emulate(1280, dark)
                    browser.open(base + f"submissions/{page.name}")
                    bad = [name for name, check in CHECKS.items() if not browser.evaluate(check)]
                    failed += bool(bad)
                    shot = out / f"{page.stem}-{mode}.png"
                    browser.screenshot(shot)
                    sys.stdout.write(f"{shot}: {'FAILED ' + ', '.join(bad) if bad else 'ok'}\n")
        finally:
            browser.close()
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
