"""A real PostgreSQL server for the tests: initdb in a temporary directory, a loopback port,
stopped at the end (Debian's ``postgresql`` package, installed by .ci/run).

As root (CI's containers), the server runs as the ``postgres`` user the package creates:
PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def pg_bin() -> Path | None:
    """The directory of Debian's PostgreSQL server programs (initdb, pg_ctl), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """``with PostgresServer() as pg: pg.url`` — a fresh cluster with database ``gfg``."""

    def __init__(self) -> None:
        bindir = pg_bin()
        if bindir is None:
            raise RuntimeError("PostgreSQL's server programs are not installed (apt-get install postgresql)")
        self.bindir = bindir
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="gfg-pg-"))
        self.data = self.root / "data"
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.url = f"postgresql+psycopg://gfg@127.0.0.1:{self.port}/gfg"

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_user, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> PostgresServer:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "gfg", "-A", "trust", "--no-sync")
        self._pg_ctl_start()
        self._run(str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "gfg", "gfg")
        return self

    def _pg_ctl_start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )

    def halt(self) -> None:
        """Stop the server mid-test (``pg_ctl stop -m fast``: open connections are cut, as in an
        outage), keeping its data for ``resume``."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the halted server again on the same port with the same data."""
        self._pg_ctl_start()
        wait_for_port(self.port)

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError):
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def wait_for_port(port: int, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port}")
