// Package bcryptproc compares passwords with bcrypt hashes in a worker
// process, so that the comparisons never take CPU from the redirect server
// in ways the kernel cannot take back.
//
// A bcrypt comparison at cost 12 is about a quarter second of CPU. Run on a
// goroutine, it holds one of the runtime's GOMAXPROCS processors (Ps) for
// all of it: a lowered OS priority of its thread (nice, SCHED_IDLE) decides
// only which thread a CPU runs, not which goroutine a P runs, so the
// redirects' goroutines wait for the P until the runtime preempts the
// comparison (every 10 ms). With GOMAXPROCS 1 (one CPU, or a pod limited to
// one) the redirects then get the P between 10 ms slices of bcrypt; with
// more Ps they still lose one per comparison. And the lower the thread's
// priority, the longer everything that needs that thread to run waits: a
// garbage collection stops the world only once every P's goroutine has
// stopped, and a thread the kernel does not run cannot stop. Measured with
// redirect-bench -load password (50 clients posting wrong passwords to
// cost-12 links, 8 clients fetching redirects), server on one CPU: redirect
// p99 44 to 51 ms during the flood, 1.5 to 2.0 ms without; with the
// comparisons on a thread at SCHED_IDLE and a P of their own, a garbage
// collection waited up to 1.3 s for that thread while another process kept
// the CPU busy.
//
// The worker is the running executable started again with KURZ_BCRYPT_WORKER
// in its environment: this package's init then serves comparisons on stdin
// and stdout and exits, before the program's main runs, so any binary that
// links the package is its own worker. It runs GOMAXPROCS comparisons at
// once (the caller's concurrency), every thread under SCHED_IDLE: the kernel
// gives it a CPU only when no other thread wants one. Nothing in the server
// waits for it but the password checks themselves, on a pipe, holding no P.
// So redirects lose nothing to a flood of password checks, and the checks
// get what CPU is left: few, when the redirects keep the CPUs busy.
//
// The worker is started at the first comparison, and again at the first
// after it died (comparisons in flight then fail); it exits when its stdin
// closes, so also when the process that started it dies.
package bcryptproc
