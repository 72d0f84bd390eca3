#!/bin/sh
# pg-test.sh start|stop|url DIR - a private, throw-away PostgreSQL for tests.
#
# start: initdb a cluster in DIR/data and start it listening only on a Unix
#        socket in DIR (no TCP), with a database `tessera_test`; prints the
#        libpq URL, e.g. postgresql:///tessera_test?host=/tmp/pg.x&user=postgres
#        (trust authentication: any local user may connect as `postgres`).
# stop:  stop the server and remove everything it created under DIR.
# url:   print the URL of a running cluster in DIR.
#
# Durability is switched off (fsync, synchronous_commit, full_page_writes):
# this cluster holds nothing worth keeping.  Keep DIR short: a Unix socket
# path is limited to 107 bytes.  As root the server runs as user postgres
# (initdb refuses root); otherwise as the calling user.
set -eu

usage() {
        echo "usage: $0 start|stop|url DIR" >&2
        exit 2
}

[ $# -eq 2 ] || usage
cmd=$1
dir=$2
db=tessera_test

bindir=
for d in /usr/lib/postgresql/15/bin $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -rV); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
                bindir=$d
                break
        fi
done
if [ -z "$bindir" ]; then
        echo "pg-test.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2
        exit 1
fi

# Run a command as the owner of the cluster.
as_owner() {
        if [ "$(id -u)" -eq 0 ]; then
                runuser -u postgres -- "$@"
        else
                "$@"
        fi
}

url() {
        echo "postgresql:///$db?host=$dir&user=postgres"
}

case $cmd in
start)
        mkdir -p "$dir"
        dir=$(cd "$dir" && pwd)
        if [ ${#dir} -gt 90 ]; then
                echo "pg-test.sh: '$dir' is too long for a Unix socket path" >&2
                exit 1
        fi
        if [ -f "$dir/data/postmaster.pid" ] && as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
                url
                exit 0
        fi
        if [ "$(id -u)" -eq 0 ]; then
                if ! id postgres >/dev/null 2>&1; then
                        echo "pg-test.sh: no user 'postgres' (apt-get install postgresql)" >&2
                        exit 1
                fi
                chown postgres: "$dir"
                chmod 0755 "$dir"
        fi
        if [ ! -f "$dir/data/PG_VERSION" ]; then
                as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync \
                        >"$dir/initdb.log" 2>&1 || {
                        cat "$dir/initdb.log" >&2
                        exit 1
                }
        fi
        as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
                -o "-c listen_addresses='' -k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
                start >/dev/null || {
                cat "$dir/server.log" >&2
                exit 1
        }
        psql="$bindir/psql"
        [ -x "$psql" ] || psql=psql
        "$psql" -X -q -v ON_ERROR_STOP=1 "postgresql:///postgres?host=$dir&user=postgres" \
                -c "CREATE DATABASE $db" >/dev/null
        url
        ;;
stop)
        [ -d "$dir" ] || exit 0
        dir=$(cd "$dir" && pwd)
        if [ -f "$dir/data/postmaster.pid" ]; then
                as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
        fi
        rm -rf "$dir/data" "$dir/initdb.log" "$dir/server.log"
        rmdir "$dir" 2>/dev/null || true
        ;;
url)
        dir=$(cd "$dir" && pwd)
        url
        ;;
*)
        usage
        ;;
esac
