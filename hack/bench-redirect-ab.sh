#!/usr/bin/env bash
# Compare two builds of the redirect server under the same load at the same
# time, for changes too small for make bench-redirect to tell apart.
#
# make bench-redirect runs one server at a time, ten seconds each; on the
# project's virtual machine the same binary's requests/s moves by 10-20 %
# from one ten seconds to the next, so a change of 1-3 % is lost in it.
# Here both servers run at once on core 0, each loaded by its own wrk on
# core 1 (same connections, same random keys, same headers as
# bench-redirect): the kernel's scheduler gives each half of the core, and
# whatever else the machine does in those seconds slows both. The ratio of
# their requests/s is then the inverse ratio of their CPU per request: the
# same binary against itself gives 1.00 within a few thousandths. Sets of
# rounds at different times differ more than that while the host is busy:
# one pair of builds gave medians of 1.008 and 0.992 in two sets of five
# rounds (docs/scaling.md), so tell a change by several sets, and take
# one under 2 % for no change.
#
# It is a comparison of two builds of one server (the same threads, the same
# share of the core), not of kurz against nginx: servers with other thread
# layouts do not split the core evenly.
#
# A: a redirect-bench binary (e.g. built from the code a change replaces:
# `git worktree add /tmp/before main && (cd /tmp/before && go build -o
# /tmp/rb-before ./hack/redirect-bench)`); B: another (default: this tree's).
# ANALYTICS=1 serves both with click analytics on (-analytics, each its own
# SQLite file); ANALYTICS=B only B, so that A=B's binary gives what
# analytics costs (its store writer is a second thread, at a lower
# priority: B's share of the core is a little over half while it writes).
# LINKS (10000), CONNECTIONS (64), DURATION (10s), ROUNDS (5).
set -euo pipefail

LINKS=${LINKS:-10000}
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-5}
ANALYTICS=${ANALYTICS:-0}
HOST=bench.kurz.test
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GO=${GO:-go}

if [ -z "${A:-}" ]; then
	echo "A= names the redirect-bench binary to compare against (see the comment at the top)" >&2
	exit 2
fi
command -v wrk >/dev/null || {
	echo "needs wrk (make bench-redirect installs it)" >&2
	exit 1
}
# shellcheck source=hack/bench-redirect-lib.sh
. "$ROOT/hack/bench-redirect-lib.sh"
need_two_cores bench-redirect-ab
start_work

if [ -z "${B:-}" ]; then
	echo "building B from this tree"
	(cd "$ROOT" && $GO build -o "$WORK/redirect-bench" ./hack/redirect-bench)
	B=$WORK/redirect-bench
fi
mapfile -t ports < <("$B" -free-ports 2)

start() { # binary port name
	local flags=()
	if [ "$ANALYTICS" = 1 ] || { [ "$ANALYTICS" = B ] && [ "$3" = b ]; }; then
		flags=(-analytics "$WORK/$3.db")
	fi
	taskset -c 0 "$1" -addr "127.0.0.1:$2" -host "$HOST" -links "$LINKS" "${flags[@]}" >"$WORK/$3.out" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 100); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $HOST" "http://127.0.0.1:$2/k$((LINKS - 1))")" = 302 ] && return
		sleep 0.1
	done
	echo "$3 on port $2 did not answer 302" >&2
	cat "$WORK/$3.out" >&2
	exit 1
}
start "$A" "${ports[0]}" a
start "$B" "${ports[1]}" b

keys_lua "$WORK/keys.lua" "$HOST" "$LINKS"

both() { # duration: both servers loaded at once; prints "rpsA rpsB"
	taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"$1" -s "$WORK/keys.lua" "http://127.0.0.1:${ports[0]}/" >"$WORK/a.wrk" &
	local w=$!
	taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"$1" -s "$WORK/keys.lua" "http://127.0.0.1:${ports[1]}/" >"$WORK/b.wrk"
	wait "$w"
	echo "$(sed -n 's/^RESULT rps=\([0-9]*\).*/\1/p' "$WORK/a.wrk") $(sed -n 's/^RESULT rps=\([0-9]*\).*/\1/p' "$WORK/b.wrk")"
}

echo "warming up"
both 2s >/dev/null
echo "rounds: $ROUNDS x $DURATION, both at once, $CONNECTIONS connections each, $LINKS random keys, analytics $(case $ANALYTICS in 1) echo on ;; B) echo "on in B" ;; *) echo off ;; esac)"
: >"$WORK/ratios"
for r in $(seq "$ROUNDS"); do
	read -r a b <<<"$(both "$DURATION")"
	ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')
	echo "  round $r: A $a req/s  B $b req/s  B/A $ratio"
	echo "$ratio" >>"$WORK/ratios"
done
sort -g "$WORK/ratios" | awk '{ v[NR] = $1 } END {
	m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "B/A requests/s: median %.3f, range %.3f-%.3f over %d rounds\n", m, v[1], v[NR], NR }'
