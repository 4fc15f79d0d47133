#!/usr/bin/env bash
# Benchmark the redirect server against nginx answering `return 302`.
#
# Both servers hold the same core (taskset -c 0, nginx with one worker, kurz
# with GOMAXPROCS following the affinity); wrk runs on the other core with the
# same connections, duration and a Lua script picking random keys of the
# LINKS links. Each round runs every server once, in a rotating order
# (below). kurz runs the real handler (index lookup, expiry, device
# targeting, utm, click counting, metrics) through hack/redirect-bench,
# which fills the index directly instead of from a cluster.
#
# Each round also reports the server's CPU time per request (user+system,
# from /proc): on a machine shared with other work, requests/s mostly says
# how much of core 0 a server got, CPU per request what it costs.
#
# ANALYTICS=1 (the default) also serves "analytics": the same server with
# click analytics on (-analytics: the capture ring, its consumer and the
# SQLite store writer, all in the process pinned to core 0, as on a
# replica), in the same rounds; the requests carry a browser's
# User-Agent and a Referer. At the end it prints the analytics server's
# events taken, rows and clicks written and drops.
#
# Knobs: LINKS (10000), CONNECTIONS (64), DURATION (10s), ROUNDS (3),
# KURZ_ADDR and NGINX_ADDR (default: free loopback ports, so two runs never
# collide), BEFORE: a redirect-bench binary built from another tree (e.g.
# `git worktree add /tmp/main main && (cd /tmp/main && go build -o
# /tmp/rb-main ./hack/redirect-bench)`), served as "before"
# on the same core in the same rounds, to compare a change
# against the code it changes under the same load.
set -euo pipefail

LINKS=${LINKS:-10000}
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
HOST=bench.kurz.test
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}

need_apt() {
	local missing=()
	command -v wrk >/dev/null || missing+=(wrk)
	command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
	[ ${#missing[@]} -eq 0 ] && return
	echo "installing ${missing[*]}"
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	if ! $sudo apt-get install -y "${missing[@]}" >/dev/null 2>&1; then
		$sudo apt-get update >/dev/null
		$sudo apt-get install -y "${missing[@]}" >/dev/null
	fi
}
need_apt
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

# shellcheck source=hack/bench-redirect-lib.sh
. "$ROOT/hack/bench-redirect-lib.sh"
need_two_cores bench-redirect
start_work

echo "building the benchmark server"
(cd "$ROOT" && $GO build -o "$WORK/redirect-bench" ./hack/redirect-bench)
BEFORE=${BEFORE:-}
ANALYTICS=${ANALYTICS:-1}
mapfile -t ports < <("$WORK/redirect-bench" -free-ports 4)
KURZ_ADDR=${KURZ_ADDR:-127.0.0.1:${ports[0]}}
NGINX_ADDR=${NGINX_ADDR:-127.0.0.1:${ports[1]}}
BEFORE_ADDR=127.0.0.1:${ports[2]}
ANALYTICS_ADDR=127.0.0.1:${ports[3]}
SERVERS="nginx kurz"

keys_lua "$WORK/random-keys.lua" "$HOST" "$LINKS"

mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $WORK/nginx/body;
	proxy_temp_path $WORK/nginx/proxy;
	fastcgi_temp_path $WORK/nginx/fastcgi;
	uwsgi_temp_path $WORK/nginx/uwsgi;
	scgi_temp_path $WORK/nginx/scgi;
	server {
		listen $NGINX_ADDR;
		location / { return 302 https://www.example.com/; }
	}
}
NGINX

taskset -c 0 "$NGINX" -p "$WORK/nginx" -e "$WORK/nginx/error.log" -c "$WORK/nginx/nginx.conf" &
PIDS+=($!)
NGINX_MASTER=$!
taskset -c 0 "$WORK/redirect-bench" -addr "$KURZ_ADDR" -host "$HOST" -links "$LINKS" >"$WORK/kurz.out" 2>&1 &
PIDS+=($!)
KURZ_PID=$!
if [ -n "$BEFORE" ]; then
	taskset -c 0 "$BEFORE" -addr "$BEFORE_ADDR" -host "$HOST" -links "$LINKS" >"$WORK/before.out" 2>&1 &
	PIDS+=($!)
	BEFORE_PID=$!
	SERVERS="nginx kurz before"
fi
if [ "$ANALYTICS" = 1 ]; then
	taskset -c 0 "$WORK/redirect-bench" -addr "$ANALYTICS_ADDR" -host "$HOST" -links "$LINKS" -analytics "$WORK/analytics.db" >"$WORK/analytics.out" 2>&1 &
	PIDS+=($!)
	ANALYTICS_PID=$!
	SERVERS="$SERVERS analytics"
fi

wait_up() {
	for _ in $(seq 100); do
		curl -s -o /dev/null -H "Host: $HOST" "http://$1/k0" && return
		sleep 0.1
	done
	echo "server on $1 did not come up" >&2
	cat "$WORK/kurz.out" "$WORK/nginx/error.log" >&2 || true
	exit 1
}
wait_up "$NGINX_ADDR"
wait_up "$KURZ_ADDR"
[ -z "$BEFORE" ] || wait_up "$BEFORE_ADDR"
[ "$ANALYTICS" != 1 ] || wait_up "$ANALYTICS_ADDR"

# The answer under test must be the real redirect, not a 404.
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $HOST" "http://$KURZ_ADDR/k$((LINKS - 1))")
if [ "$code" != 302 ]; then
	echo "kurz answered $code for a known key, expected 302" >&2
	exit 1
fi

NGINX_WORKER=$(pgrep -P "$NGINX_MASTER" | head -1)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

run_wrk() { # name addr duration pid
	local before after
	before=$(cpu_ticks "$4")
	taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"$3" --latency -s "$WORK/random-keys.lua" "http://$2/" >"$WORK/wrk.out"
	after=$(cpu_ticks "$4")
	awk -v name="$1" -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" '/^RESULT/ {
		split($5, r, "=")
		printf "%s %s cpu_us_per_req=%.1f\n", name, $0, (r[2] > 0 ? ticks / hz * 1e6 / r[2] : 0) }' "$WORK/wrk.out"
}

server_of() { # name: sets addr and pid
	case $1 in
	nginx) addr=$NGINX_ADDR pid=$NGINX_WORKER ;;
	kurz) addr=$KURZ_ADDR pid=$KURZ_PID ;;
	before) addr=$BEFORE_ADDR pid=$BEFORE_PID ;;
	analytics) addr=$ANALYTICS_ADDR pid=$ANALYTICS_PID ;;
	esac
}

echo "warming up"
for s in $SERVERS; do
	server_of "$s"
	run_wrk "$s" "$addr" 2s "$pid" >/dev/null
done

echo "rounds: $ROUNDS x $DURATION, $CONNECTIONS connections, $LINKS random keys"
: >"$WORK/results"
# Round r starts one server further along the list (nginx kurz before, kurz
# before nginx, before nginx kurz, ...): over as many rounds as servers, each
# runs in every position once and none runs twice in a row. Alternating the
# list and its reverse kept kurz in the middle every round and ran the ends
# twice in a row at each turn: "before" came out 3-4 % ahead of kurz both
# with two binaries and with the same two swapped (stop-47 notes).
read -r -a servers <<<"$SERVERS"
for r in $(seq "$ROUNDS"); do
	order=()
	for i in "${!servers[@]}"; do
		order+=("${servers[$(((r - 1 + i) % ${#servers[@]}))]}")
	done
	for s in "${order[@]}"; do
		server_of "$s"
		line=$(run_wrk "$s" "$addr" "$DURATION" "$pid")
		echo "  round $r: $line"
		echo "$line" >>"$WORK/results"
	done
done

# The summary gives each server's median over the rounds (of req/s, p99 and
# CPU per request, each on its own), and the ratios of those medians: one
# round that the machine slowed moves a mean, not a median.
median() { # server field: the median of field over the server's rounds
	grep "^$1 " "$WORK/results" | tr ' ' '\n' | sed -n "s/^$2=//p" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
worst() { # server field: the largest value of field over the server's rounds
	grep "^$1 " "$WORK/results" | tr ' ' '\n' | sed -n "s/^$2=//p" | sort -g | tail -1
}
summary() { # server label
	printf "%-10s %8.0f req/s  p99 %5.2f ms (median; worst round %5.2f)  %5.1f us CPU/request  errors %d\n" "$2:" \
		"$(median "$1" rps)" "$(median "$1" p99_us | awk '{ print $1 / 1000 }')" "$(worst "$1" p99_us | awk '{ print $1 / 1000 }')" \
		"$(median "$1" cpu_us_per_req)" "$(grep "^$1 " "$WORK/results" | tr ' ' '\n' | sed -n 's/^errors=//p' | awk '{ s += $1 } END { print s + 0 }')"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo "medians of $ROUNDS rounds:"
summary nginx nginx
summary kurz kurz
echo "ratio kurz/nginx: $(ratio "$(median kurz rps)" "$(median nginx rps)") req/s (aim >= 0.9), $(ratio "$(median kurz p99_us)" "$(median nginx p99_us)") p99 (aim <= 1.5); CPU per request nginx/kurz: $(ratio "$(median nginx cpu_us_per_req)" "$(median kurz cpu_us_per_req)")"
if [ -n "$BEFORE" ]; then
	summary before before
	echo "ratio before/nginx: $(ratio "$(median before rps)" "$(median nginx rps)"); kurz/before: $(ratio "$(median kurz rps)" "$(median before rps)") req/s, $(ratio "$(median before cpu_us_per_req)" "$(median kurz cpu_us_per_req)") CPU per request before/kurz"
fi
if [ "$ANALYTICS" = 1 ]; then
	summary analytics analytics
	echo "ratio analytics/kurz: $(ratio "$(median analytics rps)" "$(median kurz rps)") req/s (aim >= 0.9); CPU per click spent on analytics: $(awk -v a="$(median analytics cpu_us_per_req)" -v k="$(median kurz cpu_us_per_req)" 'BEGIN { printf "%.2f", a - k }') us"
	echo "analytics requests measured: $(grep '^analytics ' "$WORK/results" | tr ' ' '\n' | sed -n 's/^requests=//p' | awk '{ s += $1 } END { print s + 0 }') over $((ROUNDS * ${DURATION%s})) s"
fi
if [ "$ANALYTICS" = 1 ]; then
	sleep 6 # the writer's last flush
	kill -USR1 "$ANALYTICS_PID"
	sleep 1
	grep -E '^analytics ' "$WORK/analytics.out" || true
	echo "analytics store: $(du -k "$WORK/analytics.db"* | awk '{ s += $1 } END { print s }') KiB on disk"
fi
grep -E '^(links in index|index memory per link)' "$WORK/kurz.out"
