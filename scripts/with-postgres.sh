#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster:
#
#     scripts/with-postgres.sh CMD [ARG…]
#
# Installs Debian's `postgresql` package if no server binaries are found, creates a cluster in a
# fresh temp folder owned by a non-root user, starts it on a free loopback port (its unix socket
# in the same folder), creates a database, exports
#     STRATA_TEST_POSTGRES_URL=postgres://strata@127.0.0.1:PORT/strata_test
# and runs CMD. The cluster is stopped and its folder removed however the script ends; the exit
# status is CMD's. Authentication is `trust` on loopback only: the cluster lives as long as CMD.
#
# If STRATA_TEST_POSTGRES_URL is already set, CMD runs against that database instead.
set -euo pipefail

if [[ $# -eq 0 ]]; then
    echo "usage: $0 CMD [ARG…]" >&2
    exit 64
fi

if [[ -n "${STRATA_TEST_POSTGRES_URL:-}" ]]; then
    exec "$@"
fi

log() { echo "with-postgres: $*" >&2; }

# The server's binaries: Debian keeps them in /usr/lib/postgresql/VERSION/bin, off the PATH.
find_bin_dir() {
    local candidate
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [[ -x "$candidate/initdb" && -x "$candidate/pg_ctl" ]]; then
            echo "$candidate"
            return 0
        fi
    done
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
        return 0
    fi
    return 1
}

if ! bin_dir=$(find_bin_dir); then
    if [[ $(id -u) -ne 0 ]]; then
        log "PostgreSQL is not installed and installing it needs root (apt-get install postgresql)"
        exit 69
    fi
    log "installing PostgreSQL (apt-get install postgresql)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    if ! bin_dir=$(find_bin_dir); then
        log "PostgreSQL's initdb and pg_ctl are still missing after installing the package"
        exit 69
    fi
fi

# PostgreSQL refuses to run as root: as root, the cluster belongs to a system user.
as_owner=()
if [[ $(id -u) -eq 0 ]]; then
    owner=postgres
    if ! id -u "$owner" >/dev/null 2>&1; then
        owner=strata-pg
        if ! id -u "$owner" >/dev/null 2>&1; then
            useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$owner"
        fi
    fi
    as_owner=(setpriv --reuid="$owner" --regid="$(id -g "$owner")" --clear-groups --)
fi

work_dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-pg.XXXXXX")
data_dir="$work_dir/data"
started=0

cleanup() {
    local status=$?
    if [[ $started -eq 1 ]]; then
        "${as_owner[@]}" "$bin_dir/pg_ctl" -D "$data_dir" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$work_dir"
    exit "$status"
}
trap cleanup EXIT
# A signal stops CMD too (it runs in the background so that the trap runs at once, not after
# CMD ends), then the cluster.
command_pid=
forward() {
    if [[ -n "$command_pid" ]]; then kill "-$1" "$command_pid" 2>/dev/null || true; fi
    exit "$2"
}
trap 'forward INT 130' INT
trap 'forward TERM 143' TERM

if [[ ${#as_owner[@]} -gt 0 ]]; then
    chown "$owner" "$work_dir"
fi
chmod 700 "$work_dir"

"${as_owner[@]}" "$bin_dir/initdb" -D "$data_dir" -U strata --auth=trust --encoding=UTF8 \
    --locale=C --no-sync >"$work_dir/initdb.log" 2>&1 || {
    log "initdb failed:"; cat "$work_dir/initdb.log" >&2; exit 70
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Another process may take the port between choosing it and the server binding it: try a few.
for attempt in 1 2 3 4 5; do
    port=$(free_port)
    if "${as_owner[@]}" "$bin_dir/pg_ctl" -D "$data_dir" -l "$work_dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $work_dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >/dev/null 2>&1; then
        started=1
        break
    fi
    "${as_owner[@]}" "$bin_dir/pg_ctl" -D "$data_dir" -m immediate -w stop >/dev/null 2>&1 || true
done
if [[ $started -ne 1 ]]; then
    log "the server did not start:"; cat "$work_dir/server.log" >&2 || true
    exit 70
fi

"$bin_dir/createdb" -h 127.0.0.1 -p "$port" -U strata strata_test

export STRATA_TEST_POSTGRES_URL="postgres://strata@127.0.0.1:$port/strata_test"
log "PostgreSQL $("$bin_dir/pg_ctl" --version | awk "{print \$3}") at $STRATA_TEST_POSTGRES_URL"

"$@" <&0 &
command_pid=$!
set +e
wait "$command_pid"
status=$?
set -e
exit "$status"
