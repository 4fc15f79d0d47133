package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// benchDomain is the Domain every link of the run is on.
const benchDomain = "bench-import.example"

// apiClient calls kurz's API with the dev token.
type apiClient struct {
	ctx   context.Context
	base  string
	token string
}

// post sends body as JSON and returns the status and the answer.
func (a apiClient) post(path string, body any) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(a.ctx, http.MethodPost, a.base+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

func (a apiClient) createDomain(host string) error {
	status, out, err := a.post("/api/v1/domains", map[string]string{"domain": host})
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("create domain %s: %d %.300s", host, status, out)
	}
	return err
}

// bulkLatency times n bulk creates of 100 new links, one after another.
func (a apiClient) bulkLatency(n int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for r := range n {
		items := make([]map[string]string, 100)
		for i := range items {
			items[i] = map[string]string{"domain": benchDomain, "key": fmt.Sprintf("bulk%d-%d", r, i), "url": fmt.Sprintf("https://example.com/bulk/%d/%d", r, i)}
		}
		start := time.Now()
		status, out, err := a.post("/api/v1/links/bulk", items)
		took := time.Since(start)
		if err != nil {
			return nil, err
		}
		var answer struct {
			Data []struct {
				Status int `json:"status"`
			} `json:"data"`
		}
		if status != http.StatusOK || json.Unmarshal(out, &answer) != nil || len(answer.Data) != len(items) {
			return nil, fmt.Errorf("bulk create %d: %d %.300s", r, status, out)
		}
		for i, it := range answer.Data {
			if it.Status != http.StatusCreated {
				return nil, fmt.Errorf("bulk create %d, item %d: status %d", r, i, it.Status)
			}
		}
		lat = append(lat, took)
	}
	return lat, nil
}

// pctl is the q quantile of lat (nearest rank).
func pctl(lat []time.Duration, q float64) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

// importRun is what one kurz import did.
type importRun struct {
	elapsed time.Duration
	created int
	etas    []etaLine
	// cpu is the CPU time of kurz dev, its control plane and kurz import
	// while the import ran, in seconds, by process.
	cpu cpuTimes
}

// etaLine is a progress line that printed an ETA.
type etaLine struct {
	at   time.Duration // since kurz import started
	text string        // the clock time it was read
	done int
	eta  time.Duration
}

var (
	progressLine = regexp.MustCompile(`^kurz import: (\d+)/\d+ links .*, ETA (\S+)$`)
	createdLine  = regexp.MustCompile(`^Created (\d+) links, (\d+) already present, (\d+) failed`)
)

// importCSV writes n new links (keys prefix0...) as a kurz CSV and runs
// kurz import --api on it, reading its progress as it comes.
func importCSV(ctx context.Context, kurz string, d *dev, prefix string, n int) (importRun, error) {
	var csv strings.Builder
	csv.WriteString("domain,key,url,tags\n")
	for i := range n {
		fmt.Fprintf(&csv, "%s,%s%d,https://example.com/%s/%d,imported|%s\n", benchDomain, prefix, i, prefix, i, prefix)
	}
	path := filepath.Join(d.dir, prefix+".csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o600); err != nil {
		return importRun{}, err
	}
	cmd := exec.CommandContext(ctx, kurz, "import", "--api", "http://"+d.apiAddr, "--token-file", d.tokenFile(), path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return importRun{}, err
	}
	start, cpu0 := time.Now(), serverCPU(d.dir)
	if err := cmd.Start(); err != nil {
		return importRun{}, err
	}
	var r importRun
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		at := time.Since(start)
		log.WriteString(line + "\n")
		fmt.Fprintf(os.Stderr, "%6.1fs %s\n", at.Seconds(), line)
		if m := progressLine.FindStringSubmatch(line); m != nil {
			done, _ := strconv.Atoi(m[1])
			eta, err := time.ParseDuration(m[2])
			if err == nil {
				r.etas = append(r.etas, etaLine{at: at, text: time.Now().UTC().Format("15:04:05"), done: done, eta: eta})
			}
		}
		if m := createdLine.FindStringSubmatch(line); m != nil {
			r.created, _ = strconv.Atoi(m[1])
		}
	}
	err = cmd.Wait()
	r.elapsed = time.Since(start)
	r.cpu = serverCPU(d.dir).since(cpu0)
	r.cpu["kurz import"] = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	if err != nil {
		return r, fmt.Errorf("kurz import: %w\n%s", err, log.String())
	}
	if r.created != n {
		return r, fmt.Errorf("kurz import created %d links of %d:\n%s", r.created, n, log.String())
	}
	return r, nil
}
