"""The play page in headless Chromium (Debian's package, driven by Playwright for Python)
against real gunicorn and real Redis: whole games played by clicking, followed through the
event stream, a spectator's watch link and a turn timer, no console error."""

import json
import shutil
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import Browser, Page, Route, sync_playwright

from tests.browser import SCREENSHOTS
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer

# A click answers within a request or two; the cap only stops a page that never ends a game.
MOST_CLICKS = 3000
MID_MATCH = 4


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("play")
    with (
        RedisServer(directory / "redis") as redis,
        gunicorn(
            directory / "gunicorn.log", REDIS_URL=redis.url, WEB_CONCURRENCY="2",
            LONG_POLL_SECONDS="5", LOG_LEVEL="warning",
        ) as server,
    ):  # fmt: skip
        yield server.url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    chromium = shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("chromium not found on PATH: run `make chromium`")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        yield browser
        browser.close()


class Player:
    """One page of the play page, the console errors it logged and the screenshots taken."""

    def __init__(self, page: Page, game: str) -> None:
        self.page = page
        self.game = game
        self.errors: list[str] = []
        self.streams: list[str] = []
        self.event_polls: list[str] = []
        self.requested: list[str] = []
        page.on("request", lambda request: self.requested.append(request.url))
        page.on("console", lambda message: message.type == "error" and self.errors.append(
            message.text))  # fmt: skip
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        # A stream or long poll is cut on purpose when its match ends or a new one starts.
        page.on("requestfailed", lambda request: "/events" not in request.url
                and "/stream" not in request.url
                and self.errors.append(f"{request.url}: {request.failure}"))  # fmt: skip
        page.on("response", lambda response: response.url.endswith("/stream")
                and self.streams.append(response.url))  # fmt: skip
        page.on("response", lambda response: "/events?after=" in response.url
                and self.event_polls.append(response.url))  # fmt: skip

    def start(self, served: str, **choices: str) -> None:
        page = self.page
        page.goto(f"{served}/play")
        page.wait_for_selector(f"#game option[value={self.game}]", state="attached")
        page.select_option("#game", self.game)
        for field, value in choices.items():
            if page.locator(f"select#{field}").count():
                page.select_option(f"#{field}", value)
            else:
                page.fill(f"#{field}", value)
        page.click("#start")
        page.wait_for_selector("#hand .playable")
        self.shot("start")

    def followed_the_stream(self) -> None:
        """The page kept up through the event stream, not the long poll fallback."""
        assert self.streams, "the page never opened the event stream"
        assert self.page.get_attribute("body", "data-follow") == "stream"

    def only_from(self, served: str) -> None:
        """Everything the page fetched came from the service (it works offline)."""
        assert self.requested
        assert all(url.startswith(f"{served}/") for url in self.requested), self.requested

    def status(self) -> str:
        return self.page.get_attribute("body", "data-status") or ""

    def play_until(self, done_selector: str) -> int:
        """Click legal moves (the first card, or the first listed choice) until the selector
        appears; the number of clicks."""
        page = self.page
        for clicks in range(MOST_CLICKS):
            page.wait_for_selector(f"#hand .playable, .choice, {done_selector}")
            if page.locator(done_selector).count():
                return clicks
            if clicks == MID_MATCH:
                self.shot("mid")
            card = page.locator("#hand .playable").first
            if card.count():
                several = card.get_attribute("data-moves") != "1"
                card.click()
                if several:  # the card's captures to choose from are listed
                    page.locator(".choice").first.click()
            else:
                page.locator(".choice").first.click()
        raise AssertionError(f"no end after {MOST_CLICKS} clicks")

    def shot(self, moment: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=SCREENSHOTS / f"{self.game}-{moment}.png", full_page=True)


@pytest.fixture
def player(browser: Browser, request) -> Iterator[Player]:
    page = browser.new_page(viewport={"width": 1200, "height": 760})
    yield Player(page, request.param)
    page.close()


def games(served: str) -> list[str]:
    return [game["name"] for game in requests.get(f"{served}/v1/games", timeout=10).json()["games"]]


@pytest.mark.parametrize("player", ["basra"], indirect=True)
def test_a_whole_basra_match_by_clicking(served, player):
    player.start(served, preset="egyptian", seats="2", level="greedy", target="1")
    assert player.page.locator("#seats-row .seat").count() == 2
    assert player.page.locator("#centre h3", has_text="Table").count() == 1

    clicks = player.play_until("body[data-status=match_over]")
    player.shot("end")

    assert clicks > 0
    assert player.page.locator("#status .headline").inner_text().startswith("Match over")
    logged = player.page.locator("#events li")
    assert logged.first.get_attribute("data-type") == "match_end"
    assert player.page.locator("#events li[data-type=round_end]").count() == 1
    player.followed_the_stream()
    assert player.errors == []
    player.only_from(served)


@pytest.mark.parametrize("player", ["basra"], indirect=True)
def test_without_the_stream_the_page_falls_back_to_the_long_poll(served, player):
    refused = '{"title": "no streams"}'
    player.page.route("**/stream", lambda route: route.fulfill(
        status=503, content_type="application/problem+json", body=refused))  # fmt: skip
    player.start(served, preset="egyptian", seats="2", level="greedy", target="1")

    player.play_until("body[data-status=match_over]")

    assert player.page.get_attribute("body", "data-follow") == "poll"
    assert player.event_polls, "the page never asked for events"
    assert player.page.locator("#events li[data-type=match_end]").count() == 1
    # The refused stream is the one console error the browser itself logs.
    assert all("503" in error for error in player.errors), player.errors


@pytest.mark.parametrize("player", ["bank"], indirect=True)
def test_a_bank_deal_by_clicking(served, player):
    if "bank" not in games(served):
        pytest.skip("this service has no Bank game yet")
    player.start(served, seats="3", level="greedy", target="1")
    assert player.page.locator("#seats-row .seat").count() == 3
    for title in ("Bank", "Target", "Trumps"):
        assert player.page.locator("#centre h3", has_text=title).count() == 1

    end = "#events li[data-type=deal_end], body[data-status=match_over]"
    clicks = player.play_until(end)
    player.page.wait_for_selector("#events li[data-type=deal_end]", state="attached")
    player.shot("end")

    assert clicks > 0
    player.followed_the_stream()
    assert player.errors == []
    player.only_from(served)


@pytest.mark.parametrize("player", ["basra"], indirect=True)
def test_a_spectator_follows_from_the_watch_link_and_sees_a_timeout(served, browser, player):
    player.start(served, preset="egyptian", seats="2", level="greedy", **{"turn-seconds": "10"})
    assert player.page.locator("#countdown").is_visible()
    assert int(player.page.get_attribute("#countdown", "data-seconds") or "-1") in range(11)
    link = player.page.get_attribute("#watch-link", "href") or ""
    assert link.startswith(f"{served}/play#watch=")

    spectator = Player(browser.new_page(viewport={"width": 1200, "height": 760}), "spectator")
    try:
        spectator.page.goto(link)
        page = spectator.page
        page.wait_for_selector("#centre h3:has-text('Table')")
        assert page.get_attribute("body", "data-role") == "spectator"
        assert page.locator("#status .scores tr").count() == 2
        assert page.locator("#seats-row .seat").count() == 2
        assert page.locator("#centre .card").count() > 0  # the table's cards
        assert not page.locator("#you").is_visible()
        assert page.locator("#hand .card, .playable, .choice").count() == 0
        assert not page.locator("#setup").is_visible()

        # Nobody plays seat 0: its time runs out and both pages hear of it through the stream.
        for watcher in (spectator, player):
            timeout = watcher.page.locator("#events li[data-type=timeout]").first
            timeout.wait_for(timeout=30_000)
            assert timeout.inner_text() == "time ran out: the computer played for seat 0"
        spectator.shot("view")
        assert page.locator(".playable, .choice").count() == 0
        spectator.followed_the_stream()
        assert spectator.errors == []
        assert player.errors == []
        spectator.only_from(served)
    finally:
        spectator.page.close()
    resumes_after_a_dropped_stream(served, browser, link)


def resumes_after_a_dropped_stream(served: str, browser: Browser, link: str) -> None:
    """A watcher whose first stream ends after one message reconnects with Last-Event-ID
    set to that message's version."""
    asked: list[str | None] = []
    sent: list[int] = []

    def first_stream_ends(route: Route) -> None:
        asked.append(route.request.header_value("last-event-id"))
        if len(asked) > 1:
            route.continue_()
            return
        events = requests.get(
            route.request.url.removesuffix("/stream") + "/events?after=0",
            headers={"Authorization": route.request.header_value("authorization") or ""},
            timeout=10,
        ).json()
        sent.append(events[-1]["version"])
        message = f"id: {sent[0]}\nevent: events\ndata: {json.dumps(events)}\n\n"
        route.fulfill(status=200, content_type="text/event-stream", body=": ping\n\n" + message)

    watcher = Player(browser.new_page(), "resumer")
    try:
        watcher.page.route("**/stream", first_stream_ends)
        with watcher.page.expect_request(
            lambda request: (
                request.url.endswith("/stream") and request.headers.get("last-event-id", "0") != "0"
            )
        ) as second:
            watcher.page.goto(link)
        assert second.value.header_value("last-event-id") == str(sent[0])
        watcher.page.wait_for_selector("#events li[data-type=timeout]")
        assert asked[0] == "0"
        assert watcher.page.locator("#events li[data-type=timeout]").count() == 1
        assert watcher.errors == []
    finally:
        watcher.page.close()
