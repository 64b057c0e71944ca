"""The fixtures every test module shares: real throwaway Redis servers and clusters, the
app and its test client, and hosted sessions over both stores (real HTTP or the core)."""

import os
import time

import pytest
import redis

from service import create_app
from service.config import load_config
from service.hosted.sessions import Sessions, open_sessions
from tests.browser import SCREENSHOTS
from tests.redis_cluster import RedisCluster
from tests.redis_server import RedisServer
from tests.service.sessions_client import serve

STARTED = pytest.StashKey[float]()

# The suite plays whole games from one loopback address as fast as it can, a flood by design:
# rate limits (on by default) are off for every app and gunicorn it starts, through the
# environment that both read. tests/service/test_rate_limits.py turns them on and shows the
# defaults bite.
os.environ["RATE_LIMITS"] = "false"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A real redis-server of this session (per xdist worker), on its own port."""
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_url(redis_server):
    """The server's URL, running and empty at the start of each test."""
    redis_server.start()  # a no-op unless an earlier test left it stopped
    with redis.Redis.from_url(redis_server.url) as client:
        client.flushall()
    yield redis_server.url


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory):
    """A real three-master Redis Cluster of this session (per xdist worker)."""
    with RedisCluster(tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster


@pytest.fixture
def redis_cluster_url(redis_cluster):
    """Any node's URL, the cluster empty at the start of each test."""
    redis_cluster.flush()
    yield redis_cluster.url


# -- the app -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def app(request):
    """The app of the module's APP_CONFIG (a dict, optional) over the in-process store, with
    long polls that answer at once; one per module (building one takes a while)."""
    config = {
        "REDIS_URL": None,
        "LONG_POLL_SECONDS": 0.0,
        **getattr(request.module, "APP_CONFIG", {}),
    }
    app = create_app(config)
    yield app
    app.extensions["sessions"].close()


@pytest.fixture(scope="module")
def client(app):
    return app.test_client()


# -- hosted sessions over both stores --------------------------------------------------------


@pytest.fixture(params=["memory", "redis"])
def store_kind(request) -> str:
    """Each store in turn: a module may override this fixture to add "cluster"."""
    return request.param


@pytest.fixture
def store_url(store_kind, request) -> str | None:
    """The store's Redis (a fresh empty server or cluster), None for the in-process store."""
    if store_kind == "memory":
        return None
    return request.getfixturevalue("redis_url" if store_kind == "redis" else "redis_cluster_url")


@pytest.fixture
def hosted_config(store_kind, store_url, request) -> dict:
    """Settings for hosted sessions on the store, with the module's HOSTED_CONFIG (a dict,
    optional) over them."""
    config = {"LONG_POLL_SECONDS": 2.0, "REDIS_CLUSTER": store_kind == "cluster"}
    if store_url is not None:
        config["REDIS_URL"] = store_url
    return {**config, **getattr(request.module, "HOSTED_CONFIG", {})}


@pytest.fixture
def base(hosted_config):
    """The app on a real socket over the store: its URL."""
    with serve(hosted_config) as url:
        yield url


class Clock:
    """The time a test says it is (turn timers run on it)."""

    START = 1_800_000_000.0

    def __init__(self) -> None:
        self.now = self.START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def open_hosted(hosted_config, clock):
    """Opens the hosted core over the store as a process does, on `clock` (client seeds
    allowed; settings over the store's); each is closed after the test."""
    opened: list[Sessions] = []

    def open_(**settings) -> Sessions:
        config = load_config({"CLIENT_SEEDS": True, **hosted_config, **settings}, environ={})
        opened.append(open_sessions(config, clock))
        return opened[-1]

    yield open_
    for hosted in opened:
        hosted.close()


@pytest.fixture
def sessions(open_hosted) -> Sessions:
    """The hosted core over the store, without HTTP."""
    return open_hosted()


def pytest_sessionstart(session):
    session.config.stash[STARTED] = time.time()


def pytest_terminal_summary(terminalreporter, config):
    """Where the browser tests left their screenshots (taken by this run)."""
    started = config.stash.get(STARTED, time.time())
    taken = [shot for shot in SCREENSHOTS.glob("*.png") if shot.stat().st_mtime >= started]
    if taken:
        terminalreporter.write_line(f"play page screenshots ({len(taken)}): {SCREENSHOTS}")
