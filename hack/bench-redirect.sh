#!/usr/bin/env bash
# Benchmark the redirect server against nginx answering `return 302`.
#
# Both servers hold the same core (taskset -c 0, nginx with one worker, kurz
# with GOMAXPROCS following the affinity); wrk runs on the other core with the
# same connections, duration and a Lua script picking random keys of the
# LINKS links. Rounds alternate between the servers. kurz runs the real
# handler (index lookup, expiry, device targeting, utm, click counting,
# metrics) through hack/redirect-bench, which fills the index
# directly instead of from a cluster.
#
# Each round also reports the server's CPU time per request (user+system,
# from /proc): on a machine shared with other work, requests/s mostly says
# how much of core 0 a server got, CPU per request what it costs.
#
# ANALYTICS=1 (the default) also serves "analytics": the same server with
# click analytics on (-analytics: the capture ring, its consumer and the
# SQLite store writer, all in the process pinned to core 0, as on a
# replica), in the same alternating rounds; the requests carry a browser's
# User-Agent and a Referer. At the end it prints the analytics server's
# events taken, rows and clicks written and drops.
#
# Knobs: LINKS (10000), CONNECTIONS (64), DURATION (10s), ROUNDS (3),
# KURZ_ADDR and NGINX_ADDR (default: free loopback ports, so two runs never
# collide), BEFORE: a redirect-bench binary built from another tree (e.g.
# `git worktree add /tmp/main main && (cd /tmp/main && go build -o
# /tmp/rb-main ./hack/redirect-bench)`), served as "before"
# on the same core in the same alternating rounds, to compare a change
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

if [ "$(nproc)" -lt 2 ]; then
	echo "bench-redirect needs 2 cores (server on one, wrk on the other)" >&2
	exit 1
fi

WORK=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT

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

cat >"$WORK/random-keys.lua" <<LUA
math.randomseed(os.time())
wrk.headers["Host"] = "$HOST"
wrk.headers["User-Agent"] = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
wrk.headers["Referer"] = "https://news.example.com/today"
request = function()
	return wrk.format("GET", "/k" .. math.random(0, $LINKS - 1))
end
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("RESULT rps=%.0f p99_us=%d errors=%d requests=%d\n",
		summary.requests / (summary.duration / 1e6), latency:percentile(99),
		e.connect + e.read + e.write + e.status + e.timeout, summary.requests))
end
LUA

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
reversed=$(echo "$SERVERS" | tr ' ' '\n' | tac | tr '\n' ' ')
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then order=$SERVERS; else order=$reversed; fi
	for s in $order; do
		server_of "$s"
		line=$(run_wrk "$s" "$addr" "$DURATION" "$pid")
		echo "  round $r: $line"
		echo "$line" >>"$WORK/results"
	done
done

awk '
	{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1, kv[1]] += kv[2] } ; n[$1]++
	  split($4, p, "="); if (p[2] > p99[$1]) p99[$1] = p[2] }
	END {
		for (s in n) { rps[s] = v[s, "rps"] / n[s]; cpu[s] = v[s, "cpu_us_per_req"] / n[s] }
		printf "nginx: %8.0f req/s  p99 %6.2f ms (worst round)  %5.1f us CPU/request  errors %d\n", rps["nginx"], p99["nginx"] / 1000, cpu["nginx"], v["nginx", "errors"]
		printf "kurz:  %8.0f req/s  p99 %6.2f ms (worst round)  %5.1f us CPU/request  errors %d\n", rps["kurz"], p99["kurz"] / 1000, cpu["kurz"], v["kurz", "errors"]
		printf "ratio kurz/nginx: %.2f (aim >= 0.9); CPU per request nginx/kurz: %.2f\n", rps["kurz"] / rps["nginx"], cpu["nginx"] / cpu["kurz"]
		if ("before" in n) {
			printf "before: %8.0f req/s  p99 %6.2f ms (worst round)  %5.1f us CPU/request  errors %d\n", rps["before"], p99["before"] / 1000, cpu["before"], v["before", "errors"]
			printf "ratio before/nginx: %.2f; kurz/before: %.2f\n", rps["before"] / rps["nginx"], rps["kurz"] / rps["before"]
		}
		if ("analytics" in n) {
			printf "analytics: %8.0f req/s  p99 %6.2f ms (worst round)  %5.1f us CPU/request  errors %d\n", rps["analytics"], p99["analytics"] / 1000, cpu["analytics"], v["analytics", "errors"]
			printf "ratio analytics/kurz: %.3f; CPU per click spent on analytics: %.2f us\n", rps["analytics"] / rps["kurz"], cpu["analytics"] - cpu["kurz"]
			printf "analytics requests measured: %d over %d s\n", v["analytics", "requests"], n["analytics"] * dur
		}
	}' dur="${DURATION%s}" "$WORK/results"
if [ "$ANALYTICS" = 1 ]; then
	sleep 6 # the writer's last flush
	kill -USR1 "$ANALYTICS_PID"
	sleep 1
	grep -E '^analytics ' "$WORK/analytics.out" || true
	echo "analytics store: $(du -k "$WORK/analytics.db"* | awk '{ s += $1 } END { print s }') KiB on disk"
fi
grep -E '^(links in index|index memory per link)' "$WORK/kurz.out"
