"""The play page in headless Chromium (Debian's package, driven by Playwright for Python)
against real gunicorn and real Redis: whole games played by clicking, each round or deal
end's breakdown checked against the server's events, the running score against the
server's, the bots' pace, a phone's screen, the generic renderer, a spectator's watch link
and a turn timer, a reload, a match the server ends, a stale move, the keyboard, cards'
names and text contrast, no console error."""

import itertools
import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from playwright.sync_api import Browser, Page, Route, expect, sync_playwright

from tests.browser import SCREENSHOTS
from tests.gunicorn_server import gunicorn
from tests.redis_server import RedisServer

# A click answers within a request or two; the cap only stops a page that never ends a game.
MOST_CLICKS = 3000
MID_MATCH = 4
DESKTOP = {"width": 1200, "height": 800}
PHONE = {"width": 390, "height": 844}
# The breakdown lines each game's renderer shows, by the server's field names.
ENDINGS = {"basra": "round_end", "bank": "deal_end"}


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
    """One page of the play page, the console errors it logged, the session it created and
    the screenshots taken."""

    def __init__(self, page: Page, name: str) -> None:
        self.page = page
        self.name = name
        self.errors: list[str] = []
        self.streams: list[str] = []
        self.event_polls: list[str] = []
        self.requested: list[str] = []
        self.created: dict[str, Any] = {}
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

    def open(self, served: str, query: str = "pace=off") -> None:
        self.page.goto(f"{served}/play?{query}")
        self.page.wait_for_selector("#intro-games li")

    def start(self, game: str, options: dict[str, str] | None = None, **choices: str) -> None:
        """Start a match of `game` from the form (`choices` by field id, `options` by rule
        option name), and wait for the first move to click."""
        page = self.page
        page.select_option("#game", game)
        for field, value in choices.items():
            page.select_option(f"#{field}", value)
        if options:
            page.click("#options > summary")
            for name, value in options.items():
                page.fill(f"#option-{name}", value)
        with page.expect_response(lambda response: response.url.endswith("/v1/sessions")) as made:
            page.click("#start")
        self.created = made.value.json()
        page.wait_for_selector("#hand .playable, .choice")

    @property
    def token(self) -> str:
        return next(seat["token"] for seat in self.created["seats"] if seat["type"] == "human")

    def server(self, served: str, path: str = "") -> Any:
        """The session's answer at `path` as the human seat reads it."""
        answer = requests.get(
            f"{served}/v1/sessions/{self.created['id']}{path}",
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=10,
        )
        answer.raise_for_status()
        return answer.json()

    def delete_session(self, served: str) -> None:
        """The session deleted on the server, by the human seat, behind the page's back."""
        requests.delete(
            f"{served}/v1/sessions/{self.created['id']}",
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=10,
        ).raise_for_status()

    def followed_the_stream(self) -> None:
        """The page kept up through the event stream, not the long poll fallback."""
        assert self.streams, "the page never opened the event stream"
        assert self.page.get_attribute("body", "data-follow") == "stream"

    def only_from(self, served: str) -> None:
        """Everything the page fetched came from the service (it works offline)."""
        assert self.requested
        assert all(url.startswith(f"{served}/") for url in self.requested), self.requested

    def play_until(self, done_selector: str, on_ending=None, shot_mid: str = "") -> int:
        """Click legal moves (the first card, or the first listed choice) until the selector
        appears, going on after each round or deal end's breakdown (`on_ending` sees it
        first); the number of clicks."""
        page = self.page
        for clicks in range(MOST_CLICKS):
            page.wait_for_selector(f"#hand .playable, .choice, #ending[open], {done_selector}")
            if page.locator("#ending[open]").count():
                if on_ending:
                    on_ending()
                page.click("#go-on")
                continue
            if page.locator(done_selector).count():
                return clicks
            if clicks == MID_MATCH and shot_mid:
                self.shot(shot_mid)
            self.click_a_move()
        raise AssertionError(f"no end after {MOST_CLICKS} clicks")

    def click_a_move(self) -> None:
        """Click the first playable card, or with none the first listed move; a card that
        several moves play is picked and lists them, and the first is clicked. Each locator
        is resolved as its click lands: the page may draw the board again between a look
        and a click (a CI run once waited on a listed move that such a redraw took away)."""
        page = self.page
        if not page.locator("#hand .picked").count():
            page.locator("#hand .playable, .choice").first.click()
        if page.locator("#hand .picked").count():
            page.locator(".choice").first.click()

    def play_match(self, served: str, game: str) -> tuple[int, list[dict[str, Any]]]:
        """Play to the end of the match, checking every breakdown against the server's;
        the clicks and the server's ending events."""
        ends: list[dict[str, Any]] = []
        clicks = self.play_until(
            "body[data-status=match_over]", checks_endings(self, served, game, ends), "mid"
        )
        self.shot("end")
        return clicks, ends

    def shot(self, moment: str, full_page: bool = True) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=SCREENSHOTS / f"{self.name}-{moment}.png", full_page=full_page)


@pytest.fixture
def player(browser: Browser, request) -> Iterator[Player]:
    name, viewport = getattr(request, "param", ("page", DESKTOP))
    page = browser.new_page(viewport=viewport)
    yield Player(page, name)
    page.close()


def shown_breakdown(page: Page) -> dict[str, list[str]]:
    """The breakdown dialog's table: each line's server key → its cells, side by side."""
    rows = page.locator("#ending-table tbody tr")
    return {
        rows.nth(i).get_attribute("data-key") or "": rows.nth(i).locator("td").all_inner_texts()
        for i in range(rows.count())
    }


def checks_endings(player: Player, served: str, game: str, seen: list[dict[str, Any]]):
    """An `on_ending` that checks the breakdown on screen against the server's own event
    of that round or deal end (every number the page shows is the server's)."""

    def check() -> None:
        ended = [e for e in player.server(served, "/events?after=0") if e["type"] == ENDINGS[game]]
        event = ended[len(seen)]
        shown = shown_breakdown(player.page)
        assert shown, "the breakdown shows no line"
        for key, cells in shown.items():
            expected = [side[key] for side in event["sides"]]
            if all(isinstance(value, int) for value in expected):
                assert [int(cell.replace("−", "-")) for cell in cells] == expected, key
        assert len(next(iter(shown.values()))) == len(event["sides"])
        if not seen:
            player.shot("round-end" if game == "basra" else "deal-end")
        seen.append(event)

    return check


def running_score_is_the_servers(player: Player, served: str) -> None:
    """At the player's turn, each side's score on screen is what it has banked plus what
    the server scores its round or deal so far."""
    answer = player.server(served)
    cells = player.page.locator("#scoreboard td.total").all_inner_texts()
    banked = answer["view"]["scores"]
    expected = [b + side["total"] for b, side in zip(banked, answer["score"], strict=True)]
    assert [int(cell.replace("−", "-")) for cell in cells] == expected


@pytest.mark.parametrize("player", [("basra", DESKTOP)], indirect=True)
def test_a_whole_basra_match_by_clicking(served, player):
    player.open(served)
    assert player.page.locator("#intro").is_visible()  # no empty felt before a match
    player.start("basra", {"target_score": "1"}, preset="egyptian", seats="2", level="greedy")
    assert player.page.locator("#seats-row .seat").count() == 2
    assert player.page.locator("#centre h3", has_text="Table").count() == 1
    assert player.page.locator("#status .hint").is_visible()
    assert "version" not in player.page.locator("#status").inner_text()
    # Your own panel says where your hand is; it does not show it face down.
    assert player.page.locator(".seat[data-seat='0'] .back").count() == 0
    player.shot("desktop")
    running_score_is_the_servers(player, served)

    clicks, ends = player.play_match(served, "basra")

    assert clicks > 0
    # Target 1: the first round ends the match, unless it leaves the sides level, which
    # plays on (a CI run tied 30-30: three basras against the most cards).
    assert ends
    for ended in ends[:-1]:
        assert len(set(ended["scores"])) == 1, ended["scores"]
    assert len(set(ends[-1]["scores"])) > 1, ends[-1]["scores"]
    headline = player.page.locator("#status .headline").inner_text()
    assert headline.startswith("Match over")
    logged = player.page.locator("#events li")
    assert logged.first.get_attribute("data-type") == "match_end"
    logged_ends = player.page.locator("#events li[data-type=round_end]")  # 60 lines kept
    assert logged_ends.first.get_attribute("data-version") == str(ends[-1]["version"])
    player.followed_the_stream()
    assert player.errors == []
    player.only_from(served)


@pytest.mark.parametrize("player", [("basra-4", DESKTOP)], indirect=True)
def test_four_seat_basra_shows_your_partner_and_the_sides(served, player):
    player.open(served)
    player.start("basra", seats="4", level="random")
    page = player.page
    assert page.locator(".seat").count() == 4
    assert page.locator(".seat .partner").count() == 1
    assert page.locator(".seat[data-seat='2'] .partner").inner_text() == "your partner"
    names = page.locator("#scoreboard tr td:first-child").all_inner_texts()
    assert names == ["Your side", "Seats 1 & 3"]
    for _ in range(3):
        page.wait_for_selector("body[data-landing=false] #hand .playable, #ending[open]")
        if page.locator("#ending[open]").count():
            break
        running_score_is_the_servers(player, served)
        player.click_a_move()
    assert player.errors == []


@pytest.mark.parametrize("player", [("basra-4-match", DESKTOP)], indirect=True)
def test_a_whole_four_seat_basra_match_names_the_winning_side(served, player):
    player.open(served)
    player.start("basra", {"target_score": "1"}, seats="4", level="random")
    _, ends = player.play_match(served, "basra")
    assert ends
    winner = player.server(served)["view"]["winner"]
    headline = player.page.locator("#status .headline").inner_text()
    assert headline == (
        "Match over: Your side wins" if winner == 0 else "Match over: Seats 1 & 3 win"
    )
    assert player.errors == []


@pytest.mark.parametrize("player", [("bank", DESKTOP)], indirect=True)
def test_a_bank_deal_by_clicking(served, player):
    player.open(served)
    player.start("bank", {"target_score": "1"}, seats="3", level="greedy")
    page = player.page
    assert page.locator("#seats-row .seat").count() == 3
    for title in ("Bank", "Target", "Trumps"):
        assert page.locator("#centre h3", has_text=title).count() == 1
    assert "nobody" not in page.locator("#centre").inner_text()
    player.shot("desktop")
    running_score_is_the_servers(player, served)

    clicks, ends = player.play_match(served, "bank")

    # Even to 1 point a match may take several deals: a blocked deal (E2) can leave every
    # seat at or below zero after penalties. Every deal end was checked on screen.
    assert clicks > 0 and ends
    assert page.locator("#status .headline").inner_text().startswith("Match over")
    log = page.locator("#events").inner_text()
    for wrong in ("You misses", "You pays", "You passes", "You draws", "(pass)", "by nobody"):
        assert wrong not in log
    player.followed_the_stream()
    assert player.errors == []
    player.only_from(served)


@pytest.mark.parametrize("player", [("picked", DESKTOP)], indirect=True)
def test_a_picked_cards_moves_stay_listed_when_the_board_is_drawn_again(served, player):
    """A card that several moves play is picked by a click and lists them; the stream
    catching up (a read of the same version) draws the board again, and the card stays
    picked with its moves listed until one is clicked."""
    page = player.page
    # This seed deals seat 0, first to move, a 9♠ that either of two captures may play.
    page.route("**/v1/sessions", lambda route: route.continue_(post_data=json.dumps(
        {**json.loads(route.request.post_data or "{}"), "seed": "picked-9"})))  # fmt: skip
    held: list[Route] = []
    page.route("**/stream", lambda route: held.append(route))  # answered when the test says
    player.open(served)
    player.start("basra", preset="egyptian", seats="2", level="greedy")
    nines = [move for move in player.server(served)["moves"] if move.get("card") == "9S"]
    assert len(nines) == 2, "the seed no longer deals this position: pick another"
    card = page.locator('#hand .playable[data-card="9S"]')
    assert card.get_attribute("data-moves") == "2"
    assert page.locator(".choice").count() == 0

    card.click()
    expect(page.locator(".choice")).to_have_count(2)
    assert page.locator("#hand .picked").get_attribute("data-card") == "9S"
    assert card.get_attribute("aria-pressed") == "true"
    expect(page.locator(".choice").first).to_be_focused()

    page.locator("#hand .card").first.evaluate("(card) => { card.dataset.before = 'yes'; }")
    # The page opens its stream after its first read, and Playwright hands the route to
    # `held` only while the test waits on Playwright.
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the page never opened its event stream"
    held[0].fulfill(
        status=200, content_type="text/event-stream",
        body=f"id: {player.created['version']}\nevent: events\ndata: []\n\n",
    )  # fmt: skip
    page.wait_for_selector("#hand [data-before]", state="detached")  # drawn again
    assert page.locator(".choice").count() == 2
    assert page.locator("#hand .picked").get_attribute("data-card") == "9S"

    version = int(page.get_attribute("body", "data-version") or 0)
    page.locator(".choice").first.click()
    page.wait_for_function(f"() => Number(document.body.dataset.version) > {version}")
    assert page.locator("#hand .picked").count() == 0
    assert player.errors == []


@pytest.mark.parametrize("game", ["basra", "bank"])
@pytest.mark.parametrize("player", [("generic", DESKTOP)], indirect=True)
def test_the_generic_renderer_plays_a_whole_match(served, player, game):
    """The renderer any game without one of its own gets, forced on both games: drawn from
    the view alone, played to the end by clicking, breakdowns as the server sent them."""
    player.name = f"generic-{game}"
    player.open(served, "pace=off&renderer=generic")
    player.start(game, {"target_score": "1"}, seats="2", level="greedy")
    assert player.page.get_attribute("body", "data-renderer") == "generic"
    assert player.page.locator("#centre .block").count() > 0
    player.shot("start")
    _, ends = player.play_match(served, game)
    assert ends  # a tied round may be replayed: every breakdown was checked
    assert player.page.locator("#status .headline").inner_text().startswith("Match over")
    assert player.errors == []


@pytest.mark.parametrize("player", [("paced", DESKTOP)], indirect=True)
def test_bot_moves_land_one_at_a_time_and_can_be_skipped(served, player):
    pace_ms = 400
    player.open(served, f"pace={pace_ms}")
    player.start("basra", seats="4", level="random")
    page = player.page

    def landed_after(version: int) -> list[tuple[int, int]]:
        items = page.locator("#events li[data-type=move]")
        found = [(int(items.nth(i).get_attribute("data-version") or 0),
                  int(items.nth(i).get_attribute("data-landed") or 0))
                 for i in range(items.count())]  # fmt: skip
        return sorted(entry for entry in found if entry[0] > version)

    version = int(page.get_attribute("body", "data-version") or 0)
    player.click_a_move()
    page.wait_for_selector("body[data-landing=true]", state="attached")
    assert page.locator("#hand .playable").count() == 0  # nothing to click while they land
    page.wait_for_selector("body[data-landing=false] #hand .playable, #ending[open]")
    moves = landed_after(version)
    assert len(moves) == 4  # yours, then the three bots'
    gaps = [later[1] - earlier[1] for earlier, later in itertools.pairwise(moves)]
    assert all(gap >= pace_ms * 0.9 for gap in gaps), gaps

    if page.locator("#ending[open]").count():
        pytest.skip("the round ended on the first move")  # not with four cards each
    version = int(page.get_attribute("body", "data-version") or 0)
    player.click_a_move()
    page.click("#skip")
    page.wait_for_selector("body[data-landing=false] #hand .playable, #ending[open]")
    skipped = landed_after(version)
    assert len(skipped) == 4
    assert skipped[-1][1] - skipped[0][1] < 2 * pace_ms  # the rest landed at once
    assert player.errors == []


@pytest.mark.parametrize("game", ["basra", "bank"])
@pytest.mark.parametrize("player", [("phone", PHONE)], indirect=True)
def test_on_a_phone_the_hand_is_in_view_without_scrolling(served, player, game):
    player.name = f"{game}-phone"
    player.open(served)
    player.start(game, seats="2", level="greedy")
    page = player.page
    # Measured once it is the seat's turn (the page offers moves only when every bot move has
    # landed): until then a bot's opening moves redraw the hand. Bank's turn may offer no
    # card at all, only a draw or a pass (a choice).
    page.wait_for_selector("#hand .playable, .choice")
    assert page.evaluate("window.scrollY") == 0
    # Read in one script, so every box is of one drawing: the page may redraw the hand between
    # two calls (a stream event or a read landing), and a card measured after its hand was
    # replaced has no box.
    boxes = page.evaluate(
        "[...document.querySelectorAll('#hand .card')].map((card) => card.getBoundingClientRect())"
        ".map(({x, y, width, height}) => ({x, y, width, height}))"
    )
    assert boxes
    for box in boxes:
        assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], box
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    player.shot("start", full_page=False)
    player.play_until("#hand .playable")
    assert player.errors == []


@pytest.mark.parametrize("player", [("help", DESKTOP)], indirect=True)
def test_help_and_the_rules_are_one_click_away(served, player):
    player.open(served)
    for game in ("basra", "bank"):
        player.page.select_option("#game", game)
        player.page.click("#help-open")
        assert player.page.locator("#help").is_visible()
        assert player.page.locator("#help-text p").count() >= 2
        href = player.page.get_attribute("#rules-link", "href") or ""
        assert href == f"/play/rules/{game}"
        rules = requests.get(f"{served}{href}", timeout=10)
        assert rules.status_code == 200 and rules.text.startswith(f"# {game.title()}")
        player.page.click("#help-close")
    assert requests.get(f"{served}/play/rules/nothing", timeout=10).status_code == 404
    assert player.errors == []


@pytest.mark.parametrize("player", [("basra", DESKTOP)], indirect=True)
def test_without_the_stream_the_page_falls_back_to_the_long_poll(served, player):
    refused = '{"title": "no streams"}'
    player.page.route("**/stream", lambda route: route.fulfill(
        status=503, content_type="application/problem+json", body=refused))  # fmt: skip
    player.open(served)
    player.start("basra", {"target_score": "1"}, preset="egyptian", seats="2", level="greedy")

    player.play_until("body[data-status=match_over]")

    assert player.page.get_attribute("body", "data-follow") == "poll"
    assert player.event_polls, "the page never asked for events"
    assert player.page.locator("#events li[data-type=match_end]").count() == 1
    # The refused stream is the one console error the browser itself logs.
    assert all("503" in error for error in player.errors), player.errors


@pytest.mark.parametrize("player", [("basra", DESKTOP)], indirect=True)
def test_a_spectator_follows_from_the_watch_link_and_sees_a_timeout(served, browser, player):
    player.open(served)
    player.start("basra", preset="egyptian", seats="2", level="greedy", **{"turn-seconds": "10"})
    assert player.page.locator("#countdown").is_visible()
    assert int(player.page.get_attribute("#countdown", "data-seconds") or "-1") in range(11)
    link = player.page.get_attribute("#watch-link", "href") or ""
    assert link.startswith(f"{served}/play#watch=")

    spectator = Player(browser.new_page(viewport=DESKTOP), "spectator")
    try:
        spectator.page.goto(link)
        page = spectator.page
        page.wait_for_selector("#centre h3:has-text('Table')")
        assert page.get_attribute("body", "data-role") == "spectator"
        banner = page.locator("#spectating")
        assert banner.is_visible()
        assert banner.inner_text().startswith("Spectator view of a Basra match")
        assert page.locator("#scoreboard .scores tr").count() == 2
        assert page.locator("#seats-row .seat").count() == 2
        assert page.locator("#centre .card").count() > 0  # the table's cards
        assert not page.locator("#you").is_visible()
        assert page.locator("#hand .card, .playable, .choice").count() == 0
        assert not page.locator("#setup").is_visible()

        # Nobody plays seat 0: its time runs out and both pages hear of it through the stream.
        for watcher, said in (
            (spectator, "Time ran out for Seat 0: the computer played for them"),
            (player, "Time ran out: the computer played for you"),
        ):
            timeout = watcher.page.locator("#events li[data-type=timeout]").first
            timeout.wait_for(timeout=30_000)
            assert timeout.inner_text() == said
        page.wait_for_selector("body[data-landing=false]", state="attached")
        spectator.shot("view")
        assert page.locator(".playable, .choice").count() == 0
        spectator.followed_the_stream()
        assert spectator.errors == []
        assert player.errors == []
        spectator.only_from(served)
    finally:
        spectator.page.close()
    resumes_after_a_dropped_stream(browser, link)


def resumes_after_a_dropped_stream(browser: Browser, link: str) -> None:
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
        watcher.page.wait_for_selector("#events li[data-type=timeout]", state="attached")
        assert asked[0] == "0"
        assert watcher.page.locator("#events li[data-type=timeout]").count() == 1
        assert watcher.errors == []
    finally:
        watcher.page.close()


@pytest.mark.parametrize("player", [("reload", DESKTOP)], indirect=True)
def test_a_reload_goes_back_to_the_match_and_a_gone_one_to_the_form(served, player):
    player.open(served)
    player.start("basra", seats="2", level="greedy")
    page = player.page
    player.click_a_move()
    page.wait_for_selector("body[data-landing=false] #hand .playable, #ending[open]")
    version = page.get_attribute("body", "data-version")
    hand = page.locator("#hand").inner_text()
    # From here the page's streams hang: it does not hear of the session's end until it reads.
    page.route("**/stream", lambda route: None)

    page.reload()
    page.wait_for_selector(f"body[data-version='{version}'] #hand .playable, #ending[open]")
    assert page.locator("#hand").inner_text() == hand
    assert page.locator("#intro").is_hidden()
    assert (page.get_attribute("#watch-link", "href") or "").startswith(f"{served}/play#watch=")

    player.delete_session(served)
    page.reload()
    expect(page.locator("#problem")).to_contain_text("no such session")
    assert page.locator("#intro").is_visible() and page.locator("#board").is_hidden()
    assert page.locator("#new-match").get_attribute("open") is not None
    page.reload()  # the gone match is forgotten
    page.wait_for_selector("#intro-games li")
    assert page.locator("#problem").is_hidden()
    # Each reload cuts what the page had in flight (a read its stream's last events asked
    # for): those requests fail as aborted, by the test's hand, not the page's.
    failed = [error for error in player.errors if not error.endswith("net::ERR_ABORTED")]
    assert all("404" in error for error in failed), player.errors


@pytest.mark.parametrize("player", [("ended", DESKTOP)], indirect=True)
def test_a_match_the_server_ends_while_open_says_so_and_offers_no_move(served, player):
    player.open(served)
    player.start("bank", seats="2", level="greedy")
    page = player.page
    page.wait_for_selector("body[data-follow=stream]", state="attached")
    player.delete_session(served)

    expect(page.locator("#problem")).to_contain_text("no longer on the server")
    assert page.locator("#status .headline").inner_text() == "Match ended on the server"
    assert page.locator("#hand .playable, .choice").count() == 0
    assert page.locator("#new-match").get_attribute("open") is not None
    player.start("basra", seats="2", level="greedy")  # and another match starts
    assert page.locator("#problem").is_hidden()
    # The browser logs a 404 of its own when the page's next read finds the session gone.
    assert all("404" in error for error in player.errors), player.errors


@pytest.mark.parametrize("player", [("keys", DESKTOP)], indirect=True)
def test_a_hand_card_plays_from_the_keyboard_with_enter_or_space(served, player):
    player.open(served)
    player.start("basra", seats="2", level="greedy")
    page = player.page
    for key in ("Space", "Enter"):
        page.wait_for_selector("body[data-landing=false] #hand .playable")
        version = int(page.get_attribute("body", "data-version") or 0)
        card = page.locator("#hand .playable").first
        card.focus()
        page.keyboard.press(key)
        if card.get_attribute("aria-pressed") == "true":  # a card of several captures
            expect(page.locator(".choice").first).to_be_focused()
            page.keyboard.press(key)
        page.wait_for_function(f"() => Number(document.body.dataset.version) > {version}")
    assert page.evaluate("window.scrollY") == 0
    assert player.errors == []


@pytest.mark.parametrize("player", [("names", DESKTOP)], indirect=True)
def test_cards_are_named_for_a_screen_reader(served, player):
    """Each face-up card is read out as its name (an image, or a button in the hand), not
    as its corner and pip."""
    player.open(served)
    player.start("basra", seats="2", level="greedy")
    page = player.page
    page.wait_for_selector("body[data-landing=false] #hand .playable")
    table = page.locator("#centre .table").aria_snapshot()
    cards = page.locator("#centre .table .card").all_inner_texts()
    assert cards
    assert table.count("- img ") == len(cards), table
    assert "- text:" not in table, table
    assert (
        page.locator("#hand").get_by_role("button").count()
        == page.locator("#hand .playable").count()
    )
    assert player.errors == []


@pytest.mark.parametrize("player", [("watch-click", DESKTOP)], indirect=True)
def test_the_watch_link_opens_the_spectator_view_in_a_tab_of_its_own(served, player):
    """Clicked on the page at /play itself (no query), the link only changed the hash:
    nothing happened, and a reload then watched the match instead of playing the seat."""
    page = player.page
    page.goto(f"{served}/play")
    page.wait_for_selector("#intro-games li")
    page.select_option("#pace", "off")
    player.start("basra", seats="2", level="greedy")
    with page.context.expect_page() as opened:
        page.click("#watch-link")
    spectator = opened.value
    try:
        spectator.wait_for_selector("#spectating:not([hidden])")
        assert spectator.get_attribute("body", "data-role") == "spectator"
        assert page.url == f"{served}/play"
        assert page.locator("#hand .card").count() > 0
    finally:
        spectator.close()
    assert player.errors == []


@pytest.mark.parametrize("player", [("stale", DESKTOP)], indirect=True)
def test_a_move_on_a_changed_table_says_so_in_words_and_shows_the_table_now(served, player):
    player.open(served)
    player.start("basra", seats="2", level="greedy")
    page = player.page
    page.wait_for_selector("body[data-landing=false] #hand .playable")

    def behind(route: Route) -> None:
        body = json.loads(route.request.post_data or "{}")
        route.continue_(post_data=json.dumps({**body, "version": body["version"] - 1}))

    if page.get_attribute("body", "data-version") == "0":  # a version before the first
        player.click_a_move()
        page.wait_for_selector("body[data-landing=false] #hand .playable, #ending[open]")
    page.route("**/moves", behind)
    version = page.get_attribute("body", "data-version")
    player.click_a_move()
    expect(page.locator("#problem")).to_contain_text("The table changed before your move")
    assert "read the session again" not in page.locator("#problem").inner_text()
    page.wait_for_selector(f"body[data-version='{version}'] #hand .playable")
    assert all("409" in error for error in player.errors), player.errors


# The contrast of each element's text with what is behind it, its own background or the first
# one under it, both seen through the opacity on the way (WCAG's relative luminance).
CONTRASTS = """(elements) => {
  const rgb = (text) => text.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const opaque = (colour) => !colour.endsWith(", 0)") && colour !== "transparent";
  const seen = (colour, alpha, back) => colour.map((c, i) => alpha * c + (1 - alpha) * back[i]);
  const luminance = (colour) => {
    const [r, g, b] = colour.map((c) => c / 255)
      .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  return elements.map((element) => {
    const style = getComputedStyle(element);
    let alpha = Number(style.opacity);
    let under = element.parentElement;
    while (under && !opaque(getComputedStyle(under).backgroundColor)) {
      alpha *= Number(getComputedStyle(under).opacity);
      under = under.parentElement;
    }
    const back = under ? rgb(getComputedStyle(under).backgroundColor) : [255, 255, 255];
    const face = opaque(style.backgroundColor) ? seen(rgb(style.backgroundColor), alpha, back)
      : back;
    const [a, b] = [seen(rgb(style.color), alpha, back), face].map(luminance)
      .sort((x, y) => y - x);
    return [element.dataset.card || element.id, (a + 0.05) / (b + 0.05)];
  });
}"""


@pytest.mark.parametrize("player", [("contrast", DESKTOP)], indirect=True)
def test_the_hand_playable_or_not_and_the_watch_link_read_at_aa_contrast(served, player):
    """Cards that may not be played now are dimmed, yet the player reads them: a red card
    at opacity 0.55 was 3.7:1, under WCAG AA's 4.5:1 for text of its size."""
    page = player.page
    # Red cards in the hand for certain: this seed deals seat 0 the 7♥ and the Q♥.
    page.route("**/v1/sessions", lambda route: route.continue_(post_data=json.dumps(
        {**json.loads(route.request.post_data or "{}"), "seed": "picked-9"})))  # fmt: skip
    player.open(served, "pace=10000")
    player.start("basra", preset="egyptian", seats="2", level="greedy")
    page.locator("#hand .playable").first.click()
    # The bot's move waits to land: every card of the hand is dimmed, and stays so.
    page.wait_for_selector("#skip:not([hidden])")
    contrasts = page.locator("#hand .card").evaluate_all(CONTRASTS)
    assert any(card[1] in "DH" for card, _ in contrasts), contrasts
    assert all(ratio >= 4.5 for _, ratio in contrasts), contrasts
    # And the small print under the board: the watch link was 3.8:1 at opacity 0.85.
    [(_, ratio)] = page.locator("#watch-link").evaluate_all(CONTRASTS)
    assert ratio >= 4.5


@pytest.mark.parametrize("player", [("replayed", DESKTOP)], indirect=True)
def test_a_stream_resumed_mid_match_reads_the_session_once_not_once_a_version(served, player):
    """A reload (or a watch link) mid-match: the stream replays every version at once, and
    a read of the session for each went over the token's rate limit (429s)."""
    player.open(served)
    player.start("bank", seats="4", level="greedy")
    page = player.page
    ready = "body[data-landing=false] :is(#hand .playable, .choice), #ending[open]"
    while True:  # to version 30, then to the player's turn: nothing is on its way to reload
        page.wait_for_selector(ready)
        if page.locator("#ending[open]").count():
            page.click("#go-on")
        elif int(page.get_attribute("body", "data-version") or 0) >= 30:
            break
        else:
            player.click_a_move()
    reads: list[str] = []
    session = f"{served}/v1/sessions/{player.created['id']}"
    page.on("request", lambda request: request.url == session and reads.append(request.url))
    page.reload()
    page.wait_for_selector("body[data-follow=stream]", state="attached")
    version = page.get_attribute("body", "data-version")
    page.wait_for_selector(f"#events li[data-version='{version}']", state="attached")
    assert len(reads) <= 4, len(reads)
    assert player.errors == []
