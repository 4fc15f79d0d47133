package webhooks

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// ReceiverEnv makes the test binary a webhook receiver and nothing else
// (TestMain checks it first): the benchmarks that measure what sending
// costs the replica (BenchmarkRedirectWebhooksOnOff, BenchmarkClickDelivery)
// run the receiver in a process of its own, so that its CPU is not
// counted as the sender's. Its value is the file the receiver writes its
// URL and certificate to. With ReceiverH2Env set the receiver offers
// HTTP/2 as well as HTTP/1.1 (httptest's default is HTTP/1.1 only).
const (
	ReceiverEnv   = "KURZ_BENCH_WEBHOOK_RECEIVER"
	ReceiverH2Env = "KURZ_BENCH_WEBHOOK_RECEIVER_H2"
)

// RunReceiverProcess serves HTTPS until the process is killed: POSTs are
// deliveries whose clicks it counts, GET /count answers the count.
func RunReceiverProcess(file string) {
	var clicks atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprint(w, clicks.Load())
			return
		}
		body, _ := io.ReadAll(r.Body)
		clicks.Add(int64(bytes.Count(body, []byte(`"count":`))))
	}))
	srv.EnableHTTP2 = os.Getenv(ReceiverH2Env) != ""
	srv.StartTLS()
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, append([]byte(srv.URL+"\n"), cert...), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Rename(tmp, file); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	select {}
}

// ReceiverProc is the receiver process as a benchmark sees it.
type ReceiverProc struct {
	URL    string
	CAFile string
	Roots  *x509.CertPool
	client *http.Client
	pid    int
}

// CPU is the user and system CPU time the receiver process has used, from
// /proc (0 where it cannot be read).
func (r *ReceiverProc) CPU() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis: utime and
	// stime are the 12th and 13th, in clock ticks (100 a second on Linux).
	_, rest, ok := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// StartReceiverProcess starts the receiver on cpu (all CPUs when cpu < 0),
// offering HTTP/2 when h2, and waits until it serves; it is killed when
// tb ends.
func StartReceiverProcess(tb testing.TB, cpu int, h2 bool) *ReceiverProc {
	tb.Helper()
	dir := tb.TempDir()
	file := filepath.Join(dir, "receiver")
	cmd := exec.Command(os.Args[0])
	if cpu >= 0 {
		cmd = exec.Command("taskset", "-c", strconv.Itoa(cpu), os.Args[0])
	}
	cmd.Env = append(os.Environ(), ReceiverEnv+"="+file)
	if h2 {
		cmd.Env = append(cmd.Env, ReceiverH2Env+"=1")
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var data []byte
	for deadline := time.Now().Add(time.Minute); ; {
		var err error
		if data, err = os.ReadFile(file); err == nil {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the receiver process wrote no address: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	url, cert, _ := strings.Cut(string(data), "\n")
	r := &ReceiverProc{URL: url, CAFile: filepath.Join(dir, "ca.pem"), Roots: x509.NewCertPool(), pid: cmd.Process.Pid}
	if err := os.WriteFile(r.CAFile, []byte(cert), 0o600); err != nil {
		tb.Fatal(err)
	}
	if !r.Roots.AppendCertsFromPEM([]byte(cert)) {
		tb.Fatal("the receiver's certificate does not parse")
	}
	r.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: r.Roots}}}
	return r
}

// Clicks is how many clicks the receiver has received.
func (r *ReceiverProc) Clicks() (int64, error) {
	res, err := r.client.Get(r.URL + "/count")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(body), 10, 64)
}
