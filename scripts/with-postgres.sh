#!/usr/bin/env bash
# Runs a command beside a throwaway PostgreSQL cluster:
#
#     scripts/with-postgres.sh CMD [ARG…]
#
# Installs Debian's `postgresql` package if no server binaries are found, creates a cluster in a
# fresh temp folder owned by a non-root user, starts it on a free loopback port (its unix socket
# in the same folder), creates a database, exports
#     STRATA_TEST_POSTGRES_URL=postgres://strata@127.0.0.1:PORT/strata_test
# and runs CMD, with STRATA_TEST_POSTGRES_CTL naming a script that makes, stops (as a crash) and
# starts a second cluster for the tests of a PostgreSQL restart (see below). The clusters are
# stopped and its folder removed however the script ends; the exit status is CMD's.
# Authentication is `trust` on loopback only: the cluster lives as long as CMD.
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
    if [[ -d "$work_dir/restart-data" ]]; then
        "${as_owner[@]}" "$bin_dir/pg_ctl" -D "$work_dir/restart-data" -m immediate -w stop >/dev/null 2>&1 || true
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

# For the fault tests, a second throwaway cluster they may stop without disturbing the tests
# that share the first: `$STRATA_TEST_POSTGRES_CTL url` creates it on first use (same owner,
# folder and settings as above, its own free port), starts it if stopped and prints its URL;
# `stop` stops it at once (as a crash: `-m immediate`); `start` starts it again on the same
# folder and port. The trap above stops it with the first cluster.
ctl="$work_dir/pg-ctl"
{
    echo '#!/usr/bin/env bash'
    echo 'set -euo pipefail'
    printf 'as_owner=(%s)\n' "$(if [[ ${#as_owner[@]} -gt 0 ]]; then printf '%q ' "${as_owner[@]}"; fi)"
    printf 'bin_dir=%q\n' "$bin_dir"
    printf 'work_dir=%q\n' "$work_dir"
    cat <<'CTL'
data_dir="$work_dir/restart-data"
port_file="$work_dir/restart-port"
# Commits are acknowledged only once their WAL is written (synchronous_commit on): this
# cluster is stopped as a crash, and a commit the server acknowledged must survive it. fsync
# stays off: the process dies, not the machine, so what reached the OS is kept.
start() {
    local port
    port=$(cat "$port_file")
    "${as_owner[@]}" "$bin_dir/pg_ctl" -D "$data_dir" -l "$work_dir/restart-server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $work_dir -c fsync=off -c full_page_writes=off -c max_connections=200" \
        start >/dev/null
}
case "${1:-}" in
    url)
        if [[ ! -d "$data_dir" ]]; then
            "${as_owner[@]}" "$bin_dir/initdb" -D "$data_dir" -U strata --auth=trust --encoding=UTF8 \
                --locale=C --no-sync >"$work_dir/restart-initdb.log" 2>&1
            python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' >"$port_file"
            start
            "$bin_dir/createdb" -h 127.0.0.1 -p "$(cat "$port_file")" -U strata strata_test
        elif ! "${as_owner[@]}" "$bin_dir/pg_ctl" -D "$data_dir" status >/dev/null 2>&1; then
            start
        fi
        echo "postgres://strata@127.0.0.1:$(cat "$port_file")/strata_test"
        ;;
    stop) "${as_owner[@]}" "$bin_dir/pg_ctl" -D "$data_dir" -m immediate -w stop >/dev/null ;;
    start) start ;;
    *) echo "usage: $0 url|stop|start" >&2; exit 64 ;;
esac
CTL
} >"$ctl"
chmod 755 "$ctl"
export STRATA_TEST_POSTGRES_CTL="$ctl"
log "PostgreSQL $("$bin_dir/pg_ctl" --version | awk "{print \$3}") at $STRATA_TEST_POSTGRES_URL"

"$@" <&0 &
command_pid=$!
set +e
wait "$command_pid"
status=$?
set -e
exit "$status"
