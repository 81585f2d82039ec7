"""Helpers the test scripts beside this file share (each is run as `python3 scripts/NAME.py`,
so this folder is on its import path)."""

import random
import socket
import subprocess
import urllib.parse


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
