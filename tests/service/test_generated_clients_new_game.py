"""A new game gets a contract every generator reads with nothing else changed: Tricks
(tests/games/tricks), mounted as `engine.tricks`, is played through the Python clients both
generators make from the document its service serves, as tests/service/
test_generated_clients.py plays the registered games."""

import pytest
import requests

from tests.service import generated_plays as plays
from tests.service.generated_clients import DRIVERS, Driver, drivers, generated, load
from tests.service.new_game import tricks_registered
from tests.service.sessions_client import serve

pytestmark = pytest.mark.generators

GAME = "tricks"
PACKAGE = "tricks_games"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A real server with Tricks registered, its document and both clients generated from
    it (once for every worker of the run)."""
    with tricks_registered(), serve({"REDIS_URL": None, "LONG_POLL_SECONDS": 0.0}) as base:
        text = requests.get(f"{base}/openapi.yaml", timeout=30).text
        into = generated(text, tmp_path_factory.getbasetemp().parent, PACKAGE)
        yield base, drivers(into, PACKAGE, load(text), base)


@pytest.fixture(params=DRIVERS)
def driver(request, served) -> Driver:
    return served[1][request.param]


def test_a_whole_stateless_match(driver):
    plays.stateless_match(driver, GAME)


def test_a_whole_hosted_match(driver, served):
    plays.hosted_match(driver, served[0], GAME)


def test_a_session_is_created_without_rules_or_with_the_default_preset(driver):
    plays.created_without_rules(driver, GAME)
