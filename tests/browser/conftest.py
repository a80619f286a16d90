"""Finance admin in a real headless Chromium (Debian's `chromium` package, driven by Playwright),
against pytest-django's live server on the test database.

- Each role works in its own browser context (its own cookies), signed in past the second factor
  as `tests.builders.staff_client` signs a test client in: its session cookie handed to the
  browser. `login(role, through_form=True)` signs in through the real login form and the second
  factor's page instead (a code of its authenticator, `second_factor_pass`): each role's own test
  of it, and the sign-in's tests (`test_staff_sign_in.py`), do (three page loads fewer for every
  other test).
- With `SCREENSHOTS=1` (`make screenshots` sets it), every page a test visits is saved as
  `test-output/screenshots/<page>--<role>.png`; without it the page is checked the same way and
  not saved (the full-page PNGs were a fifth of the browser tests' time in `make test`, where
  nobody looks at them).
- A test fails on any console error, uncaught page error or 4xx/5xx response of the page's
  requests, except a refusal the test went to see (`Tab.refused`).
- Nothing downloads a browser: `make test` installs Debian's package when it may (root with
  apt-get); without /usr/bin/chromium these tests are skipped with one line saying why.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from rummy_ledger.api.keys import api_client_create
from tests.builders import authenticator, points_game, staff, staff_client, totp_code

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "test-output" / "screenshots"
SAVED: set[Path] = set()  # the screenshots this process has saved (`Tab.shot`)
SAVE_SCREENSHOTS = os.environ.get("SCREENSHOTS") == "1"
SKIP_REASON = (
    f"browser tests skipped: {CHROMIUM} is missing "
    "(install Debian's chromium and chromium-driver: `make test` does it as root with apt-get)"
)
# What works in this container: no sandbox (root, no user namespaces), no GPU, and nothing that
# talks to the network behind the test's back. Playwright adds --headless and a fresh profile.
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery staple"
ROLES = {
    "viewer": ("finance viewer",),
    "operator": ("finance operator",),
    "approver": ("finance approver",),
    "operator-approver": ("finance operator", "finance approver"),
    "superuser": (),
}
TIMEOUT_MS = 15_000
GAME_ID = "sim-597bcd-5"  # an external game id, as the simulator and game servers name games


def pytest_collection_modifyitems(config, items):
    if CHROMIUM.exists():
        return
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.skip(reason=SKIP_REASON))


def pytest_terminal_summary(terminalreporter):
    # from the skipped reports, which pytest-xdist's workers send to the process that prints
    if any(
        SKIP_REASON in str(report.longrepr) for report in terminalreporter.stats.get("skipped", [])
    ):
        terminalreporter.write_line(SKIP_REASON)


@pytest.fixture(scope="module")
def chromium():
    """One browser per module. Playwright's sync API keeps an asyncio loop running on this thread,
    which trips Django's async-safety check on every ORM call the test itself makes; the check is
    off only while the browser runs (the live server's own thread never sees that loop)."""
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True
            )
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@dataclass
class Tab:
    """One role's browser tab that records every problem the page reports."""

    page: object
    role: str
    base_url: str
    user: User
    problems: list[str] = field(default_factory=list)
    allowed: set[int] = field(default_factory=set)

    def __post_init__(self):
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        self.page.on("response", self._response)

    def _console(self, message) -> None:
        if message.type != "error":
            return
        refused = re.search(r"status of (\d{3})", message.text)
        if refused and int(refused.group(1)) in self.allowed:
            return
        self.problems.append(f"console error: {message.text} ({message.location.get('url')})")

    def _response(self, response) -> None:
        if response.status >= 400 and response.status not in self.allowed:
            self.problems.append(f"HTTP {response.status} {response.request.method} {response.url}")

    def check(self) -> None:
        problems, self.problems = self.problems, []
        assert not problems, f"{self.role} at {self.page.url}:\n" + "\n".join(problems)

    def shot(self, name: str) -> Path:
        """Save the whole page as `<name>--<role>.png` (with `SCREENSHOTS=1`) and fail on
        anything it reported.

        A name this process has saved already is not saved again: the file would only be
        overwritten by the same page (every test signs in, and shoots the login page and the
        index, again), and a full-page screenshot costs a fifth of a browser test's time."""
        self.page.wait_for_load_state("load")
        path = SCREENSHOTS / f"{name}--{self.role}.png"
        if SAVE_SCREENSHOTS and path not in SAVED:
            self.page.screenshot(path=path, full_page=True)
            SAVED.add(path)
        self.check()
        return path

    def visit(self, path: str, name: str) -> None:
        response = self.page.goto(self.base_url + path)
        assert response is not None and response.ok, (path, response and response.status)
        self.shot(name)

    @contextmanager
    def refused(self, status: int = 403):
        """Allow one refusal the test deliberately asks for, and only while it asks."""
        self.allowed.add(status)
        try:
            yield
        finally:
            self.allowed.discard(status)

    def text(self, selector: str = "#content") -> str:
        return self.page.locator(selector).inner_text()

    def messages(self) -> str:
        messages = self.page.locator("ul.messagelist")
        return messages.inner_text() if messages.count() else ""


@pytest.fixture(scope="session")
def live_server(request):
    """pytest-django's live server, but static files come through the WhiteNoise middleware as in
    production, not through the test server's own static handler (which would hide a static file
    WhiteNoise cannot find)."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer(request.config.getvalue("liveserver") or "localhost", start=False)
    server.thread.static_handler = lambda handler: handler
    server.start()
    yield server
    server.stop()


@pytest.fixture
def login(chromium, live_server, transactional_db):
    """`login(role)` -> a Tab of a new staff user in that role, signed in (through the login form
    and the second factor's page with `through_form=True`)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    contexts, tabs = [], []

    def open_as(role: str, username: str | None = None, *, through_form: bool = False) -> Tab:
        user = staff(username or role, *ROLES[role], superuser=role == "superuser")
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
        # as a finance user in India browses (the native date pickers follow the browser's own
        # build locale, though: this headless Chromium shows mm/dd/yyyy whatever it is told)
        context = chromium.new_context(
            viewport={"width": 1366, "height": 900}, locale="en-IN", timezone_id="Asia/Kolkata"
        )
        contexts.append(context)
        tab = Tab(context.new_page(), role, live_server.url, user)
        tabs.append(tab)
        if through_form:
            tab.page.goto(f"{live_server.url}/admin/login/?next=/admin/")
            tab.shot("login")
            device = authenticator(user)  # enrolled before: the sign-in asks for its code
            password_sign_in(tab)
            second_factor_pass(tab, device)
        else:
            session = staff_client(user).cookies[settings.SESSION_COOKIE_NAME].value
            context.add_cookies(
                [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
            )
            tab.page.goto(f"{live_server.url}/admin/")
        assert tab.page.url == f"{live_server.url}/admin/", tab.page.url
        tab.shot("index")
        return tab

    yield open_as
    try:
        for tab in tabs:
            tab.check()
    finally:
        for context in contexts:
            context.close()


def password_sign_in(tab: Tab, password: str = PASSWORD) -> None:
    """The login form, filled and sent: where it leads is the caller's to check."""
    tab.page.fill("#id_username", tab.user.username)
    tab.page.fill("#id_password", password)
    with tab.page.expect_navigation():
        tab.page.click("input[type=submit]")


def second_factor_pass(tab: Tab, device, code: str | None = None) -> None:
    """The second factor's page, when the sign-in leads there (a viewer's may not): the code
    the authenticator shows now, or `code`."""
    if "/admin/second-factor/" not in tab.page.url:
        return
    tab.page.fill("#id_code", code or totp_code(device))
    with tab.page.expect_navigation():
        tab.page.click("#second-factor-form input[type=submit]")


@pytest.fixture
def game(transactional_db):
    """A settled 4-player points game of players a, b, c, d (₹500.00 deposited each)."""
    client, _ = api_client_create(name="game-server-1", scopes=["games"])
    return points_game(client, GAME_ID)
