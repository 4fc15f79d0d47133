# Shared by bench-redirect.sh and bench-redirect-ab.sh, which source it.

# need_two_cores NAME: the benchmarks pin the servers to core 0 and wrk to
# core 1.
need_two_cores() {
	if [ "$(nproc)" -lt 2 ]; then
		echo "$1 needs 2 cores (servers on one, wrk on the other)" >&2
		exit 1
	fi
}

# start_work makes WORK, a temporary directory, and PIDS, the servers
# started; at exit the servers are stopped and WORK removed.
start_work() {
	WORK=$(mktemp -d)
	PIDS=()
	trap cleanup EXIT
}

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}

# keys_lua FILE HOST LINKS writes wrk's script: a browser's User-Agent and
# a Referer on every request, a random one of the keys k0..k(LINKS-1), and
# at the end one line "RESULT rps=… p99_us=… errors=… requests=…".
keys_lua() {
	cat >"$1" <<LUA
math.randomseed(os.time())
wrk.headers["Host"] = "$2"
wrk.headers["User-Agent"] = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
wrk.headers["Referer"] = "https://news.example.com/today"
request = function()
	return wrk.format("GET", "/k" .. math.random(0, $3 - 1))
end
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("RESULT rps=%.0f p99_us=%d errors=%d requests=%d\n",
		summary.requests / (summary.duration / 1e6), latency:percentile(99),
		e.connect + e.read + e.write + e.status + e.timeout, summary.requests))
end
LUA
}
