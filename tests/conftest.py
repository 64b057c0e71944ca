import time

import pytest
import redis

from tests.browser import SCREENSHOTS
from tests.redis_cluster import RedisCluster
from tests.redis_server import RedisServer

STARTED = pytest.StashKey[float]()


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


def pytest_sessionstart(session):
    session.config.stash[STARTED] = time.time()


def pytest_terminal_summary(terminalreporter, config):
    """Where the browser tests left their screenshots (taken by this run)."""
    started = config.stash.get(STARTED, time.time())
    taken = [shot for shot in SCREENSHOTS.glob("*.png") if shot.stat().st_mtime >= started]
    if taken:
        terminalreporter.write_line(f"play page screenshots ({len(taken)}): {SCREENSHOTS}")
