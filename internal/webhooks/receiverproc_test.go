package webhooks_test

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
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// receiverEnv makes the test binary a webhook receiver and nothing else
// (TestMain checks it first): BenchmarkRedirectWebhooksOnOff runs the
// receiver in a process of its own, pinned to another core than the
// replica's, so that "on" pays for sending the clicks and not for
// receiving them too. Its value is the file the receiver writes its URL
// and certificate to.
const receiverEnv = "KURZ_BENCH_WEBHOOK_RECEIVER"

// runReceiverProcess serves HTTPS until the process is killed: POSTs are
// deliveries whose clicks it counts, GET /count answers the count.
func runReceiverProcess(file string) {
	var clicks atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprint(w, clicks.Load())
			return
		}
		body, _ := io.ReadAll(r.Body)
		clicks.Add(int64(bytes.Count(body, []byte(`"count":`))))
	}))
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

// receiverProc is the receiver process as the benchmark sees it.
type receiverProc struct {
	url    string
	caFile string
	client *http.Client
}

// startReceiverProcess starts the receiver on cpu (all CPUs when cpu < 0)
// and waits until it serves; it is killed when b ends.
func startReceiverProcess(b *testing.B, cpu int) *receiverProc {
	g := NewWithT(b)
	dir := b.TempDir()
	file := filepath.Join(dir, "receiver")
	cmd := exec.Command(os.Args[0])
	if cpu >= 0 {
		cmd = exec.Command("taskset", "-c", strconv.Itoa(cpu), os.Args[0])
	}
	cmd.Env = append(os.Environ(), receiverEnv+"="+file)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	g.Expect(cmd.Start()).To(Succeed())
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var data []byte
	g.Eventually(func() error {
		var err error
		data, err = os.ReadFile(file)
		return err
	}, timeout, poll).Should(Succeed(), "the receiver process wrote its address")
	url, cert, _ := strings.Cut(string(data), "\n")
	r := &receiverProc{url: url, caFile: filepath.Join(dir, "ca.pem")}
	g.Expect(os.WriteFile(r.caFile, []byte(cert), 0o600)).To(Succeed())
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM([]byte(cert))).To(BeTrue())
	r.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return r
}

// clicks is how many clicks the receiver has received.
func (r *receiverProc) clicks(g Gomega) int64 {
	res, err := r.client.Get(r.url + "/count")
	g.Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	n, err := strconv.ParseInt(string(body), 10, 64)
	g.Expect(err).NotTo(HaveOccurred(), "%q", body)
	return n
}

// pinProcess pins every thread of pid to cpu; threads made later are
// cloned from pinned ones and keep it.
func pinProcess(b *testing.B, pid, cpu int) {
	out, err := exec.Command("taskset", "-a", "-p", "-c", strconv.Itoa(cpu), strconv.Itoa(pid)).CombinedOutput()
	NewWithT(b).Expect(err).NotTo(HaveOccurred(), "%s", out)
}

// childPIDs are the processes pid started (the suite's etcd and
// kube-apiserver), from /proc.
func childPIDs(pid int) []int {
	var pids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// lastCPU is the core the benchmark gives wrk, the receiver and the
// control plane; -1 on a single core (nothing is pinned).
func lastCPU() int {
	if n := runtime.NumCPU(); n >= 2 {
		return n - 1
	}
	return -1
}
