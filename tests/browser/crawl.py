"""Walk every admin page a signed-in user can reach by the admin's own links, from the home page,
and check on each what a person would trip over:

- every submit button belongs to a form (`button.form !== null`): a form nested in another is
  dropped by the browser, and its buttons then submit nothing (a dead Review button);
- every submit button, clicked (its form's required fields filled first), sends a request. The
  request is answered here with "204 No Content" and never reaches the server, so nothing
  changes and the page stays as it was for the next button;
- a list fits a 1366-px-wide screen (no horizontal scrolling);
- an amount reads with its unit: a bare `-731.25` on a page is a missing `₹`.

Pages are found, not listed: links are followed breadth-first, one page per URL shape (ids and
query strings aside; one History page for all), so a new model, report or custom view is
crawled once it is linked. A form is clicked once per crawl (the header's Log out, the same
search box): what differs from page to page is caught by the checks of each page. The
home page's links come first, and they are the filtered lists of what waits: the object of each
kind the crawl opens is one that waits (a withdrawal to review, a proposal to approve), with its
buttons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import SAVE_SCREENSHOTS, SCREENSHOTS

WIDTH = 1366
QUICK_MS = 2_000  # a button that works sends its request at once
# Django's own script-driven buttons (no form of theirs: nav_sidebar.js and theme.js act on them)
SCRIPTED = "#toggle-nav-sidebar, .theme-toggle"
SUBMITS = "button:not([type=button]):not([type=reset]), input[type=submit], input[type=image]"
SKIPPED_PATHS = ("/admin/logout/", "/admin/r/", "/admin/jsi18n/", "/admin/autocomplete/")
# a decimal amount with no unit beside it: a word of its own (not in a reference such as
# `fund-a-500.00`), not after ₹, not before %, chips, points (a leaderboard's) or seconds
BARE_AMOUNT = re.compile(
    r"(?<![\w₹.,:/-])-?\d+(?:,\d{2,3})*\.\d\d(?![\w%-]| ?%| chips?\b| points?\b| s\b)"
)

FILL_REQUIRED = """(button) => {
    // what a person would type into the form's required fields before pressing the button
    for (const el of button.form.elements) {
        if (!el.willValidate || el.checkValidity() || el.type === "file") continue;
        if (el.tagName === "SELECT") {
            const option = [...el.options].find((o) => o.value);
            if (!option) el.add(new Option("first", "1"));
            el.value = option ? option.value : "1";
        } else if (el.type === "checkbox" || el.type === "radio") {
            el.checked = true;
        } else if (el.type === "number") {
            el.value = el.min || "1";
        } else if (el.type === "date") {
            el.value = "2026-04-01";
        } else if (el.type === "month") {
            el.value = "2026-04";
        } else {
            el.value = el.type === "email" ? "a@example.com" : "1";
        }
    }
    return [...button.form.elements]  // what a script cannot fill: a file to choose
        .filter((el) => el.type === "file" && el.required && !el.files.length)
        .map((el) => el.name);
}"""

PAGE_FACTS = """(args) => {
    const [submits, scripted] = args;
    const buttons = [...document.querySelectorAll(submits)].filter((b) => !b.matches(scripted));
    const label = (b) =>
        ((b.tagName === "BUTTON" ? b.textContent : b.value) || b.name || b.outerHTML)
            .trim().slice(0, 60);
    const cells = [...document.querySelectorAll(
        "#content td, #content th, #content .readonly, #content p, #content li, #content dd"
    )].filter((el) => el.children.length === 0 || el.matches(".readonly"));
    return {
        orphans: buttons.filter((b) => b.form === null).map(label),
        forms: document.forms.length,
        changelist: document.querySelector("#changelist") !== null,
        // Django lets a wide table scroll inside `.results`: the columns past its edge are cut
        width: Math.max(document.documentElement.scrollWidth,
                        ...[...document.querySelectorAll("#changelist .results")].map(
                            (r) => window.innerWidth + r.scrollWidth - r.clientWidth)),
        texts: cells.map((el) => el.innerText),
        buttons: [...document.querySelectorAll(submits)]
            .map((b, index) => ({b, index}))
            .filter(({b}) => b.form !== null && !b.matches(scripted))
            .map(({b, index}) => ({index, label: label(b), action: b.formAction,
                                   method: b.formMethod || b.form.method})),
    };
}"""


def shape(path: str) -> str:
    """A URL's shape: `/admin/wallets/withdrawal/12/change/` -> `.../<id>/change/`. Every
    model's History is Django's one page (none of ours overrides it): one shape for them all."""
    path = re.sub(r"/\d+/", "/<id>/", path)
    return re.sub(r"^/admin/[^/]+/[^/]+/<id>/history/$", "/admin/<history>/", path)


@dataclass
class Crawl:
    tab: object  # a conftest.Tab, logged in
    pages: list[str] = field(default_factory=list)  # the URLs visited
    clicked: list[tuple[str, str]] = field(default_factory=list)  # (page, button)
    problems: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)  # buttons not shown (not clicked)
    # (the action's shape, method, button) clicked: shared by the crawls of several roles
    forms_clicked: set = field(default_factory=set)

    def run(self, start: str = "/admin/") -> Crawl:
        base = self.tab.base_url
        page = self.tab.page
        page.on("dialog", lambda dialog: dialog.accept())
        queue, seen = [(base + start, "")], {shape(start)}
        while queue:
            url, linked_from = queue.pop(0)
            response = page.goto(url)
            # console errors, 4xx/5xx of the page or of its own requests
            reported, self.tab.problems = self.tab.problems, []
            self.problems += [f"{url} (linked from {linked_from}): {p}" for p in reported]
            if response is None or not response.ok:
                continue
            self.pages.append(url)
            self._check_page(url, response.text().count("<form"))
            links = page.eval_on_selector_all("a[href]:not([download])", "a => a.map(x => x.href)")
            for href in links:
                parts = urlsplit(href)
                if not href.startswith(base) or not parts.path.startswith("/admin/"):
                    continue
                if parts.path.startswith(SKIPPED_PATHS) or shape(parts.path) in seen:
                    continue
                seen.add(shape(parts.path))
                queue.append((href.split("#")[0], url.removeprefix(base)))
        return self

    def _check_page(self, url: str, forms_sent: int) -> None:
        page = self.tab.page
        facts = page.evaluate(PAGE_FACTS, [SUBMITS, SCRIPTED])
        where = url.removeprefix(self.tab.base_url)
        if facts["forms"] != forms_sent:  # the browser dropped a form nested in another
            self.problems.append(f"{where}: {forms_sent} forms sent, {facts['forms']} in the page")
        for label in facts["orphans"]:
            self.problems.append(f"{where}: button {label!r} belongs to no form")
        if facts["changelist"]:
            if SAVE_SCREENSHOTS:
                name = re.sub(r"\W+", "-", urlsplit(where).path.removeprefix("/admin/"))
                page.screenshot(path=SCREENSHOTS / f"list-{name.strip('-')}--{self.tab.role}.png")
            if facts["width"] > WIDTH:
                self.problems.append(f"{where}: the list is {facts['width']} px wide (> {WIDTH})")
        for text in facts["texts"]:
            for bare in BARE_AMOUNT.findall(text):
                self.problems.append(f"{where}: amount {bare!r} without its unit in {text!r}")
        for button in facts["buttons"]:
            form = (shape(urlsplit(button["action"]).path), button["method"], button["label"])
            if form not in self.forms_clicked:  # once per form (the header's Log out: once)
                self.forms_clicked.add(form)
                self._click(where, button["index"], button["label"])

    def _click(self, where: str, index: int, label: str) -> None:
        page = self.tab.page
        button = page.locator(SUBMITS).nth(index)
        if not button.is_visible():
            self.hidden.append(f"{where}: {label!r}")
            return
        for name in button.evaluate(FILL_REQUIRED):  # a file input: a small CSV
            page.locator(f"[name={name!r}]").set_input_files(
                {"name": "x.csv", "mimeType": "text/csv", "buffer": b"reference,amount\n"}
            )
        page.route("**/*", self._answer_204)
        try:
            with page.expect_request(lambda request: True, timeout=QUICK_MS):
                button.click()
        except PlaywrightTimeout:
            self.problems.append(f"{where}: button {label!r} sent no request")
        finally:
            page.unroute("**/*", self._answer_204)
        self.clicked.append((where, label))

    @staticmethod
    def _answer_204(route, request) -> None:
        route.fulfill(status=204)
