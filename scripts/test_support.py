"""Helpers the test scripts beside this file share (each is run as `python3 scripts/NAME.py`,
so this folder is on its import path)."""

import random
import socket
import subprocess
import time
import urllib.parse
import urllib.request


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def new_database(url: str, prefix: str) -> str:
    """A new, empty database (named `prefix` and ten random letters) on the PostgreSQL server
    of `url`; its URL."""
    name = prefix + "".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10))
    subprocess.run(["psql", url, "-XAtq", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(url)._replace(path="/" + name))


class Serve:
    """A `capture-cli serve` on 127.0.0.1 (a free port, or `port`), its output appended to `log`,
    started and answering `ready` (a path: /readyz waits for the scanner too, /livez only for the
    listener) within `wait` seconds, or the caller's run ends with `who` and the log named."""

    def __init__(self, cli: str, database: str, options: list[str], log: str, who: str, port: int | None = None,
                 ready: str = "/readyz", wait: float = 30):
        self.port = port or free_port()
        self.log = log
        with open(log, "a") as out:
            self.process = subprocess.Popen([cli, "serve", "--port", str(self.port), "--database", database] + options,
                                            stdout=out, stderr=out)
        deadline = time.time() + wait
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{who} exited; see {log}")
            try:
                with urllib.request.urlopen(self.url + ready, timeout=1):
                    return
            except OSError:
                time.sleep(0.02)
        raise SystemExit(f"{who} did not start; see {log}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
