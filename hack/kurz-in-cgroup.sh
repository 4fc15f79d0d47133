#!/usr/bin/env bash
# kurz in a memory cgroup of its own, as in a container with a memory limit:
# the -kurz of `go run ./hack/bench-scale` (docs/scaling.md, "A replica's memory").
#
#   KURZ_CG_LIMIT=350000000 KURZ_BIN=bin/kurz hack/kurz-in-cgroup.sh manager ...
#
# KURZ_BIN is copied to a fresh file whose pages are dropped from the page
# cache, so the pages kurz runs from are read, and charged, inside the
# cgroup: the kernel charges a file's pages to the first cgroup that reads
# them, and a binary already cached would be charged elsewhere. Needs a
# writable cgroup filesystem (v2 with the memory controller, or v1's memory
# hierarchy); the cgroup is left behind for its counters
# (memory.max_usage_in_bytes, memory.failcnt, memory.events).
set -euo pipefail
limit=${KURZ_CG_LIMIT:?bytes}
src=${KURZ_BIN:-bin/kurz}
bin=$(mktemp "${TMPDIR:-/tmp}/kurz-in-cgroup.XXXXXX")
cp "$src" "$bin"
chmod +x "$bin"
sync "$bin"
dd if="$bin" iflag=nocache count=0 status=none
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cg=/sys/fs/cgroup/kurz-$$
	mkdir "$cg"
	echo "$limit" >"$cg/memory.max"
else
	cg=/sys/fs/cgroup/memory/kurz-$$
	mkdir "$cg"
	echo "$limit" >"$cg/memory.limit_in_bytes"
fi
echo "kurz-in-cgroup: $cg, limit $limit bytes" >&2
echo $$ >"$cg/cgroup.procs"
exec "$bin" "$@"
