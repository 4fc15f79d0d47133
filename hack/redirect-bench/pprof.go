package main

import (
	"fmt"
	"net/http"
	_ "net/http/pprof" // the profiles, on -pprof's listener only
	"os"
	"time"
)

// servePprof serves net/http/pprof on addr (a loopback address apart from
// the redirect listener), so that a profile can be taken of the server
// under hack/bench-redirect.sh's load:
// go tool pprof -seconds 20 http://127.0.0.1:6060/debug/pprof/profile
func servePprof(addr string) {
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "pprof:", err)
	}
}
