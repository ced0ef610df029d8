"""The pages of the committed runs' leaderboard at laptop width in a headless Chromium (#39 item 6): task tables
that do not scroll sideways, and model names broken only between their parts (never 'hf:minil|m-l6'). The site is
built from leaderboard/runs into a temporary folder (`committed_site`): the HTML is not committed."""

from __future__ import annotations

import pytest

from headless import LAPTOP, browser  # noqa: F401 - the shared headless Chromium fixture

pytestmark = pytest.mark.slow  # a headless Chromium

#: An overview, a k-fold member with its caveats, a decoder task (long model names, a format failure), the gaps
#: page (pair tables, the paired effects, the hardness tables) and the paper tables.
PAGES = ("index.html", "tasks/moh_x_cv_fold0.html", "tasks/flute_gap_dec_idiom.html", "tasks/vua_verb.html", "gaps.html",
         "papers.html")


@pytest.mark.parametrize("name", PAGES)
def test_committed_pages_fit_a_laptop_and_names_break_only_between_parts(browser, committed_site, name):
    page = committed_site / name
    assert page.is_file(), f"the committed runs built no {name}"
    browser.set_window_size(*LAPTOP)
    browser.get(page.as_uri())
    browser.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; })")  # all sections
    scroll, client = browser.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert scroll <= client, f"{name}: {scroll}px wide in a {client}px window"
    boxes = browser.execute_script(
        "return Array.from(document.querySelectorAll('main *')).filter(e => getComputedStyle(e).overflowX !== 'visible'"
        " && e.scrollWidth > e.clientWidth + 1).map(e => e.tagName + '.' + e.className + ' ' + e.scrollWidth)")
    assert not boxes, f"{name}: sideways scrolling boxes {boxes}"
    parts = browser.execute_script("return Array.from(document.querySelectorAll('.name .nw'))"
                                   ".map(e => [e.textContent, e.getClientRects().length])")
    assert parts and all(lines == 1 for _, lines in parts), [text for text, lines in parts if lines != 1]
