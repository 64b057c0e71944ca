"""openapi.yaml is a contract every generator reads: the Python clients that
openapi-python-client and OpenAPI Generator (`python`) generate from it play a whole
stateless match and a whole hosted match of every registered game against a real server of
this service, every answer read into the generated models and written back by them to
exactly the JSON the server sent (tests/service/generated_plays.py). No workaround: the
document validates (`openapi-generator-cli validate`), no generator option skips a check.

Select these with `-m generators`. They need Java (OpenAPI Generator is a jar): `make test`
installs Debian's JRE where it is missing."""

from pathlib import Path

import pytest

from engine.game import games
from tests.service import generated_plays as plays
from tests.service.generated_clients import DRIVERS, Driver, drivers, generated, load
from tests.service.sessions_client import serve

pytestmark = pytest.mark.generators

SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"
PACKAGE = "card_games"


@pytest.fixture(scope="module")
def clients(tmp_path_factory) -> Path:
    """Both clients of openapi.yaml, generated once for every worker of the run."""
    return generated(SPEC.read_text(), tmp_path_factory.getbasetemp().parent, PACKAGE)


@pytest.fixture(scope="module")
def base():
    """A real server of this service on loopback (the in-process store, long polls that
    answer at once)."""
    with serve({"REDIS_URL": None, "LONG_POLL_SECONDS": 0.0}) as url:
        yield url


@pytest.fixture(scope="module", params=DRIVERS)
def driver(request, clients, base) -> Driver:
    return drivers(clients, PACKAGE, load(SPEC.read_text()), base)[request.param]


def test_openapi_generator_validates_the_document(clients):
    report = (clients / "validate.log").read_text()  # a failing `validate` fails generating
    assert "Errors:" not in report, report


@pytest.mark.parametrize("game", sorted(games()))
def test_a_whole_stateless_match(driver, game):
    plays.stateless_match(driver, game)


@pytest.mark.parametrize("game", sorted(games()))
def test_a_whole_hosted_match(driver, base, game):
    plays.hosted_match(driver, base, game)


@pytest.mark.parametrize("game", sorted(games()))
def test_a_session_is_created_without_rules_or_with_the_default_preset(driver, game):
    plays.created_without_rules(driver, game)
