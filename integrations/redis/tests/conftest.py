"""Real redis-server processes with bloomery-redis.so loaded, for the module's tests.

Every server listens on a free 127.0.0.1 port with its own temporary directory; fixtures stop
their servers when the test ends, pass or fail, and an atexit hook kills any still running (a
test interrupted by a timeout or ^C)."""

import atexit
import ctypes
import os
import resource
import signal
import shutil
import socket
import subprocess
import tempfile
import time

import pytest
import redis
from redis.connection import PythonParser

# The shared helpers' asserts report their values as the tests' own do (before their import).
pytest.register_assert_rewrite("filter_data", "redis_helpers")
from filter_data import KINDS

MODULE = os.environ["BLOOMERY_REDIS_MODULE"]
SERVER = os.environ.get("BLOOMERY_REDIS_SERVER", "redis-server")
CLI = os.environ.get("BLOOMERY_REDIS_CLI", "redis-cli")

_running = set()  # Popen objects of servers started and not yet stopped


@atexit.register
def _kill_leftovers():
    for proc in list(_running):
        proc.kill()
        proc.wait()
    _running.clear()


# A SIGTERM (ctest's or a user's) unwinds like ^C, so fixtures' finally blocks and atexit run.
signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


SANITIZED = bool(os.environ.get("BLOOMERY_REDIS_SANITIZED"))


def _server_limits(address_space=None):
    # Even a SIGKILLed test run leaves no server behind: the kernel kills it with its parent.
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    # A safety belt for the machine running the tests: were the module's memory check ever to
    # let a huge filter through, allocation fails here instead of the OOM killer picking a
    # process. (The largest filter the tests build is under 1 GiB.) The memory tests set a
    # smaller limit of their own.
    # AddressSanitizer reserves terabytes of address space for its shadow: a sanitized module
    # (scripts/test.sh runs one) goes without the belt.
    if not SANITIZED:
        limit = address_space or (16 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class ExactErrors(PythonParser):
    """redis-py strips a leading "ERR " from error replies; the tests compare the whole text."""

    EXCEPTION_CLASSES = {}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One redis-server; `extra` are further command-line options (e.g. "--appendonly", "yes"),
    `module_args` the module's load arguments (e.g. ["CF_FINGERPRINT_BITS", "12"]; a restart
    uses them as they are then). `address_space` limits the server's address space (bytes, as
    `ulimit -v`); `fake_memory` makes it see a machine of that many bytes of which it is the only
    user (fake_meminfo.cpp)."""

    def __init__(self, directory, *extra, module_args=(), address_space=None, fake_memory=None):
        self.dir = directory
        self.extra = list(extra)
        self.module_args = list(module_args)
        self.address_space = address_space
        self.env = None
        if fake_memory is not None:
            self.env = dict(os.environ, LD_PRELOAD=os.environ["BLOOMERY_FAKE_MEMINFO"],
                            BLOOMERY_FAKE_MEMORY_BYTES=str(fake_memory))
        self.port = self.bus_port = None
        self.proc = None
        self.start()

    def start(self):
        # The port may be taken between free_port() and the server's bind: try a few.
        for _ in range(5):
            self.port = self.port or free_port()
            # A cluster node's bus port defaults to its port + 10000, which does not exist for
            # a free port above 55535 (about a fifth of Linux's ephemeral range: the server
            # exits) and may be taken: a node gets a free bus port of its own.
            bus = []
            if "--cluster-enabled" in self.extra:
                self.bus_port = self.bus_port or free_port()
                bus = ["--cluster-port", str(self.bus_port)]
            log = open(os.path.join(self.dir, "redis.log"), "ab")
            self.proc = subprocess.Popen(
                [SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                 "--loadmodule", MODULE, *self.module_args, "--save", "", "--daemonize", "no",
                 "--protected-mode", "no", *bus] + self.extra,
                stdout=log, stderr=subprocess.STDOUT, env=self.env,
                preexec_fn=lambda: _server_limits(self.address_space))
            log.close()
            _running.add(self.proc)
            if self._wait_ready():
                return
            self.stop()
            self.port = self.bus_port = None
        with open(os.path.join(self.dir, "redis.log"), errors="replace") as log:
            tail = log.read()[-4000:]  # the directory may be gone by the time anyone looks
        raise RuntimeError(f"redis-server did not start in 5 tries; its log ends:\n{tail}")

    def _wait_ready(self):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                c = self.client()
                if c.ping():
                    # Loading an RDB or AOF answers LOADING until done.
                    if c.info("persistence").get("loading", 0) == 0:
                        return True
            except (redis.ConnectionError, redis.ResponseError):
                pass
            time.sleep(0.02)
        return False

    def client(self):
        pool = redis.ConnectionPool(host="127.0.0.1", port=self.port, parser_class=ExactErrors,
                                    socket_timeout=60)
        return redis.Redis(connection_pool=pool)

    def cli(self, *args):
        """Runs redis-cli with `args` against this server; returns its standard output."""
        out = subprocess.run([CLI, "-h", "127.0.0.1", "-p", str(self.port)] + list(args),
                             check=True, capture_output=True, timeout=60)
        return out.stdout.decode()

    def restart(self):
        """Stops the server (saving nothing beyond what its config persists) and starts it again
        on the same port and directory."""
        try:
            self.client().shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        self.proc.wait(timeout=30)
        _running.discard(self.proc)
        self.start()

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        _running.discard(self.proc)
        self.proc = None


@pytest.fixture
def make_server():
    """Starts servers on demand (make_server("--appendonly", "yes")); all stop at the test's end."""
    servers, dirs = [], []

    def make(*extra, directory=None, module_args=(), **limits):
        if directory is None:
            directory = tempfile.mkdtemp(prefix="bloomery-redis-")
            dirs.append(directory)
        s = Server(directory, *extra, module_args=module_args, **limits)
        servers.append(s)
        return s

    try:
        yield make
    finally:
        for s in servers:
            s.stop()
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def shared_server():
    directory = tempfile.mkdtemp(prefix="bloomery-redis-")
    s = None
    try:
        s = Server(directory)
        yield s
    finally:
        if s is not None:
            s.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def r(shared_server):
    """A client of the module's shared server, emptied before each test."""
    c = shared_server.client()
    c.flushall()
    return c


@pytest.fixture(params=KINDS, ids=[k.NAME for k in KINDS])
def kind(request):
    """Each filter type in turn (filter_data.BLOOM, filter_data.CUCKOO): its name, its data set
    and what its replies say."""
    return request.param


def cluster_ok(server):
    info = server.client().execute_command("CLUSTER", "INFO").decode()
    return "cluster_state:ok" in info


@pytest.fixture
def cluster(make_server):
    """A 3-master Redis Cluster on loopback ports (test_cluster.py, test_redisbloom_server.py)."""
    nodes = [make_server("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                         "--cluster-node-timeout", "5000") for _ in range(3)]
    addresses = [f"127.0.0.1:{n.port}" for n in nodes]
    subprocess.run([CLI, "--cluster", "create", *addresses, "--cluster-replicas", "0",
                    "--cluster-yes"], check=True, capture_output=True, timeout=60)
    deadline = time.monotonic() + 30
    while not all(cluster_ok(n) for n in nodes):
        assert time.monotonic() < deadline, "the cluster did not reach cluster_state:ok"
        time.sleep(0.1)
    return nodes


def failed_load_output(directory, *module_args):
    """Starts a server whose module load must fail with `module_args`; returns what it printed,
    having asserted that it stopped and did not load the module."""
    proc = subprocess.run(
        [SERVER, "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", str(directory),
         "--loadmodule", MODULE, *module_args, "--save", "", "--daemonize", "no"],
        capture_output=True, timeout=30, preexec_fn=_server_limits)
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode != 0, out[-3000:]
    assert "Module not loaded" in out, out[-3000:]
    return out
