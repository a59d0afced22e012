#!/usr/bin/env bash
# N `streamlit run` replicas of GPU Field Guide behind nginx, all on loopback, for a local scale-out
# test (deploy/README.md). Everything it starts is recorded under $RUN_DIR and stopped by `stop`.
#
#   deploy/run-local.sh start [REPLICAS] [PORT]   # default 2 replicas, nginx on 127.0.0.1:8500
#   deploy/run-local.sh pids                      # replica pids, comma-separated (bench --pid)
#   deploy/run-local.sh spread                    # websockets and sticky keys per replica (access log)
#   deploy/run-local.sh status
#   deploy/run-local.sh store                     # the live classes' store, any password masked
#   deploy/run-local.sh stop
#
# Environment: RUN_DIR (default ${TMPDIR:-/tmp}/gpu-field-guide-deploy), FIRST_REPLICA_PORT (8601),
# PYTHON (default .venv/bin/python, else python3), GFG_CLASS_DB (the live classes' store, an
# SQLAlchemy URL such as postgresql+psycopg://user@host/db, passed to every replica; unset, the
# replicas share the SQLite file under GFG_DATA_DIR, which works only while they share one disk),
# GFG_PUBLIC_URL (the address students' phones open, e.g. http://192.168.1.20:8500; the lecturer's
# join link and QR code use it), GFG_TRUSTED_PROXIES (proxies besides loopback whose
# X-Forwarded-For the class's rate limits believe).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN_DIR="${RUN_DIR:-${TMPDIR:-/tmp}/gpu-field-guide-deploy}"
FIRST_REPLICA_PORT="${FIRST_REPLICA_PORT:-8601}"
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
NGINX_CONF="$RUN_DIR/nginx.conf"

die() { echo "run-local: $*" >&2; exit 1; }

# The live classes' store in words: GFG_CLASS_DB with its password (and any query string, which can
# carry one too) replaced by ***, or the SQLite default. Never echo GFG_CLASS_DB itself.
store_words() {
    if [ -n "${GFG_CLASS_DB:-}" ]; then
        printf '%s\n' "$GFG_CLASS_DB" | sed -E 's#^([^:/]+://[^:/@]*):[^/]*@#\1:***@#; s#\?.*$#?***#'
    else
        echo "the SQLite file under ${GFG_DATA_DIR:-$ROOT/.data} (set GFG_CLASS_DB to share one PostgreSQL)"
    fi
}

# A pid from a pid file, if that process is alive and is what we started (not a recycled pid).
live_pid() {
    local file="$1" expect="$2" pid
    [ -f "$file" ] || return 1
    pid="$(cat "$file")"
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$expect" || return 1
    echo "$pid"
}

wait_healthy() {
    "$PYTHON" - "$1" "$2" <<'EOF'
import sys, time, urllib.request
url, timeout = sys.argv[1], float(sys.argv[2])
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    try:
        with opener.open(url, timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.3)
sys.exit(f"{url} not healthy within {timeout:.0f} s")
EOF
}

port_free() {
    "$PYTHON" -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', int(sys.argv[1]))) == 0)" "$1"
}

ensure_nginx() {
    command -v nginx >/dev/null 2>&1 && return
    if [ "$(id -u)" -eq 0 ]; then
        echo "installing Debian's nginx"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
    else
        die "nginx is not installed: sudo apt-get install -y nginx"
    fi
}

start() {
    local replicas="${1:-2}" port="${2:-8500}" servers="" i p pid
    [[ "$replicas" =~ ^[0-9]+$ ]] && [ "$replicas" -ge 1 ] && [ "$replicas" -le 16 ] ||
        die "REPLICAS must be 1..16"
    ensure_nginx
    if live_pid "$RUN_DIR/nginx.pid" nginx >/dev/null; then die "already running (stop it first)"; fi
    mkdir -p "$RUN_DIR/logs"
    chmod 755 "$RUN_DIR"  # nginx workers (another user when started as root) create temp dirs here
    : >"$RUN_DIR/logs/access.log"
    port_free "$port" || die "port $port is taken"

    for ((i = 0; i < replicas; i++)); do
        p=$((FIRST_REPLICA_PORT + i))
        port_free "$p" || die "port $p is taken"
        (
            cd "$ROOT"
            export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"  # as the Dockerfile (see its comment)
            export GFG_CLASS_DB="${GFG_CLASS_DB:-}"  # live classes: one store for every replica
            export GFG_PUBLIC_URL="${GFG_PUBLIC_URL:-}" GFG_TRUSTED_PROXIES="${GFG_TRUSTED_PROXIES:-}"
            exec setsid "$PYTHON" -m streamlit run app.py \
                --server.headless=true --server.address=127.0.0.1 --server.port="$p" \
                --server.fileWatcherType=none --server.runOnSave=false \
                --browser.gatherUsageStats=false
        ) >"$RUN_DIR/replica-$p.log" 2>&1 &
        echo $! >"$RUN_DIR/replica-$p.pid"
        servers+="        server 127.0.0.1:$p;"$'\n'
    done
    for ((i = 0; i < replicas; i++)); do
        p=$((FIRST_REPLICA_PORT + i))
        wait_healthy "http://127.0.0.1:$p/_stcore/health" 120 || { stop; die "replica $p failed: $RUN_DIR/replica-$p.log"; }
    done

    # deploy/nginx.conf with this run's replicas and port.
    SERVERS="$servers" awk '
        /# replicas:begin/ { print; printf "%s", ENVIRON["SERVERS"]; skip = 1; next }
        /# replicas:end/   { skip = 0 }
        !skip
    ' "$ROOT/deploy/nginx.conf" | sed "s/listen 127\.0\.0\.1:8500;/listen 127.0.0.1:$port;/" >"$NGINX_CONF"
    nginx -t -q -e stderr -p "$RUN_DIR" -c "$NGINX_CONF"
    nginx -e stderr -p "$RUN_DIR" -c "$NGINX_CONF"
    wait_healthy "http://127.0.0.1:$port/_stcore/health" 30 || { stop; die "nginx does not answer"; }
    echo "GPU Field Guide: http://127.0.0.1:$port  ($replicas replicas on ports $FIRST_REPLICA_PORT.., logs in $RUN_DIR)"
    echo "live classes: $(store_words)"
    echo "load test: .venv/bin/python -m bench.concurrency --url http://127.0.0.1:$port --pid $(pids)"
}

pids() {
    local f pid out=""
    for f in "$RUN_DIR"/replica-*.pid; do
        [ -e "$f" ] || continue
        if pid="$(live_pid "$f" streamlit)"; then out+="${out:+,}$pid"; fi
    done
    echo "$out"
}

status() {
    local f pid
    if pid="$(live_pid "$RUN_DIR/nginx.pid" nginx)"; then echo "nginx: pid $pid"; else echo "nginx: stopped"; fi
    for f in "$RUN_DIR"/replica-*.pid; do
        [ -e "$f" ] || continue
        if pid="$(live_pid "$f" streamlit)"; then echo "$(basename "$f" .pid): pid $pid"; else echo "$(basename "$f" .pid): stopped"; fi
    done
}

# Websocket connections (logged when they close) and distinct sticky cookies per replica.
spread() {
    local log="$RUN_DIR/logs/access.log"
    [ -f "$log" ] || die "no access log at $log"
    awk '
        / "GET [^ ]*\/_stcore\/stream / {
            for (i = 1; i <= NF; i++) {
                if ($i ~ /^upstream=/) up = substr($i, 10)
                if ($i ~ /^sticky=/) key = substr($i, 8)
            }
            ws[up]++
            if (!((up, key) in seen)) { seen[up, key] = 1; keys[up]++ }
        }
        END {
            printf "%-22s %12s %16s\n", "replica", "websockets", "sticky cookies"
            for (up in ws) printf "%-22s %12d %16d\n", up, ws[up], keys[up]
        }
    ' "$log"
}

stop() {
    local f pid n
    if pid="$(live_pid "$RUN_DIR/nginx.pid" nginx)"; then
        nginx -e stderr -p "$RUN_DIR" -c "$NGINX_CONF" -s quit || kill -TERM "$pid"
        for n in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.2; done
        echo "nginx stopped"
    fi
    for f in "$RUN_DIR"/replica-*.pid; do
        [ -e "$f" ] || continue
        if pid="$(live_pid "$f" streamlit)"; then
            kill -TERM "$pid"
            for n in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.2; done
            if [ -d "/proc/$pid" ]; then kill -KILL "$pid"; fi
            echo "$(basename "$f" .pid) stopped"
        fi
        rm -f "$f"
    done
}

case "${1:-}" in
    start) shift; start "$@" ;;
    stop) stop ;;
    status) status ;;
    pids) pids ;;
    spread) spread ;;
    store) echo "live classes: $(store_words)" ;;
    *) sed -n '2,17p' "$0"; exit 2 ;;
esac
