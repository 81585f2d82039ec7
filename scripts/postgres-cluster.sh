#!/usr/bin/env bash
# A throwaway PostgreSQL cluster in a folder of its own, for the tests, the benchmark and for
# trying several instances (scripts/two-instances.sh):
#
#   scripts/postgres-cluster.sh start DIR [--fast]   initdb in DIR (if new) and start it; prints its URL
#   scripts/postgres-cluster.sh stop DIR [crash]     stop it (the folder stays; rm -rf it to forget it);
#                                                    crash: its processes killed (kill -9), connections
#                                                    cut without a word, recovery at the next start
#   scripts/postgres-cluster.sh url DIR              print the URL of a started cluster
#
# The server listens on 127.0.0.1 on a free port, with a password (scram-sha-256) for the one
# role, `capture`, and the database `capture`; its log is DIR/postgres.log, at PostgreSQL's
# default settings (no statements logged). --fast turns fsync off: for tests only, a machine's
# crash loses the cluster (a server's kill -9 loses nothing). The server offers TLS with a
# certificate of its own for 127.0.0.1, DIR/server.crt (sslrootcert= for verify-full).
#
# PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user that
# Debian's package makes (or `nobody`), and the folder is handed to it.
set -euo pipefail

command=${1:-}
dir=${2:-}
if [ -z "$command" ] || [ -z "$dir" ]; then
    echo "usage: $0 start DIR [--fast] | stop DIR [crash] | url DIR" >&2
    exit 2
fi
fast=${3:-}

# PostgreSQL's programs: on the PATH, or where Debian puts them (the newest version).
bin=""
if ! command -v pg_ctl >/dev/null 2>&1; then
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [ -z "$bin" ]; then
        echo "PostgreSQL's server is not installed: apt-get install postgresql (make test does)" >&2
        exit 1
    fi
    bin="$bin/"
fi

as_owner=()
owner=""
if [ "$(id -u)" -eq 0 ]; then
    owner=postgres
    id -u "$owner" >/dev/null 2>&1 || owner=nobody
    as_owner=(runuser -u "$owner" --)
fi

url() {
    local port password
    port=$(cat "$dir/port")
    password=$(cat "$dir/password")
    echo "postgres://capture:$password@127.0.0.1:$port/capture"
}

case "$command" in
start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        python3 -c 'import secrets; print(secrets.token_hex(16))' >"$dir/password"
        # A free port, asked of the kernel.
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' >"$dir/port"
        # A self-signed certificate for 127.0.0.1, so that sslmode=require and verify-full can
        # be tried against it.
        openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=127.0.0.1" \
            -addext "subjectAltName=IP:127.0.0.1" -keyout "$dir/server.key" -out "$dir/server.crt" >/dev/null 2>&1
        chmod 600 "$dir/server.key"
        if [ -n "$owner" ]; then chown -R "$owner" "$dir"; fi
        chmod 700 "$dir"
        "${as_owner[@]}" "${bin}initdb" -D "$dir/data" -U capture --pwfile="$dir/password" --auth=scram-sha-256 \
            --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
            cat "$dir/initdb.log" >&2
            exit 1
        }
        {
            echo "listen_addresses = '127.0.0.1'"
            echo "port = $(cat "$dir/port")"
            echo "unix_socket_directories = '$dir'"
            # The suite's stores each hold a few connections, hundreds of stores at once in two
            # test processes; two servers and a benchmark more.
            echo "max_connections = 800"
            echo "ssl = on"
            echo "ssl_cert_file = '$dir/server.crt'"
            echo "ssl_key_file = '$dir/server.key'"
            if [ "$fast" = "--fast" ]; then
                echo "fsync = off"
                echo "synchronous_commit = off"
                echo "full_page_writes = off"
            fi
        } >>"$dir/data/postgresql.conf"
    fi
    if ! "${as_owner[@]}" "${bin}pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        "${as_owner[@]}" "${bin}pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null || {
            tail -20 "$dir/postgres.log" >&2
            exit 1
        }
        # The database the URL names, made once.
        if ! PGPASSWORD=$(cat "$dir/password") "${bin}psql" -h 127.0.0.1 -p "$(cat "$dir/port")" -U capture -d postgres -tAc \
            "SELECT 1 FROM pg_database WHERE datname = 'capture'" | grep -q 1; then
            PGPASSWORD=$(cat "$dir/password") "${bin}psql" -h 127.0.0.1 -p "$(cat "$dir/port")" -U capture -d postgres -qc \
                "CREATE DATABASE capture" >/dev/null
        fi
    fi
    url
    ;;
stop)
    if [ -f "$dir/data/PG_VERSION" ]; then
        if [ "${3:-}" = crash ]; then
            # Every backend killed where it stands (over TLS, no goodbye), then the postmaster
            # stopped before it restarts them.
            postmaster=$(head -1 "$dir/data/postmaster.pid")
            pkill -KILL -P "$postmaster" || true
            "${as_owner[@]}" "${bin}pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
        else
            "${as_owner[@]}" "${bin}pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
        fi
    fi
    ;;
url)
    url
    ;;
*)
    echo "usage: $0 start DIR [--fast] | stop DIR [crash] | url DIR" >&2
    exit 2
    ;;
esac
