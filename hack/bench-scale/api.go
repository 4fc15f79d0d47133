package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"time"
)

// apiFigure is the latency of one API request, repeated.
type apiFigure struct {
	name          string
	p50, p99, max time.Duration
}

// apiClient calls kurz's API with the dev token.
type apiClient struct {
	ctx   context.Context
	base  string // http://host:port/api/v1
	token string
	probe *tailProbe // nil: no tail report
}

// call sends body (JSON, when not nil) and returns the answer's body; any
// status but 200 is an error.
func (a apiClient) call(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(a.ctx, method, a.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %s: %.300s", method, path, resp.Status, b)
	}
	return b, err
}

// listPage is what the figures read of a list answer.
type listPage struct {
	Meta struct {
		LastPage int `json:"last_page"`
		Total    int `json:"total"`
	} `json:"meta"`
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
}

func (a apiClient) list(path string) (listPage, error) {
	var p listPage
	b, err := a.call(http.MethodGet, path, nil)
	if err == nil {
		err = json.Unmarshal(b, &p)
	}
	return p, err
}

// time runs samples requests made by next (i counts from 0) one at a time
// and adds their p50 and p99 to r.
func (a apiClient) time(r *results, name string, samples int, next func(i int) (method, path string, body any)) error {
	lat := make([]time.Duration, 0, samples)
	var slow []string
	var before tailSample
	if a.probe != nil {
		before = a.probe.sample()
	}
	for i := range samples {
		method, path, body := next(i)
		start := time.Now()
		if _, err := a.call(method, path, body); err != nil {
			return err
		}
		d := time.Since(start)
		lat = append(lat, d)
		if a.probe != nil && d > slowRequest {
			slow = append(slow, a.probe.slowAt(start, d))
		}
	}
	if a.probe != nil {
		a.probe.report(name, before, a.probe.sample(), slow)
	}
	slices.Sort(lat)
	r.api = append(r.api, apiFigure{name: name, p50: pctl(lat, 0.50), p99: pctl(lat, 0.99), max: lat[len(lat)-1]})
	return nil
}

// measureAPI times the API's reads and its bulk writes, one request at a
// time. It first tags 1 000 links through the bulk API (the loaded links
// have no tags), then runs the reads (readRound) and bulk creates and
// deletes of 100 links, and deletes what it created.
func measureAPI(ctx context.Context, c config, m *managerProc, probe *tailProbe, token, managerLog string, r *results) error {
	a := apiClient{ctx: ctx, base: "http://" + m.api + "/api/v1", token: token, probe: probe}
	first, err := a.list("/links?page=1")
	if err != nil {
		return err
	}
	if len(first.Data) == 0 {
		return fmt.Errorf("page 1 is empty")
	}
	if err := tagLinks(a, r, min(1000, c.n)); err != nil {
		return err
	}
	last, middle := first.Meta.LastPage, max(first.Meta.LastPage/2, 1)
	figs := []*readFigure{
		readOf("list page 1", "/links?page=1"),
		readOf(fmt.Sprintf("list page %d (middle)", middle), fmt.Sprintf("/links?page=%d", middle)),
		readOf(fmt.Sprintf("list page %d (last)", last), fmt.Sprintf("/links?page=%d", last)),
		readOf("show", "/links/"+first.Data[0].ID),
	}
	for _, q := range []string{
		"tag=bench-tag", "sort=key", "sort=-clicks", "sort=last_click", "state=active",
		"exclude_tag=bench-tag&sort=updated_at", "search=4242", "search=4242&sort=key",
	} {
		p, err := a.list("/links?" + q)
		if err != nil {
			return err
		}
		for _, page := range slices.Compact([]int{1, max(p.Meta.LastPage, 1)}) {
			name := fmt.Sprintf("links?%s page %d of %d (%d links)", q, page, p.Meta.LastPage, p.Meta.Total)
			figs = append(figs, readOf(name, fmt.Sprintf("/links?%s&page=%d", q, page)))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	figs = append(figs, &readFigure{name: "lookup by domain and key", path: func() string {
		return "/links/lookup?" + url.Values{"domain": {host}, "key": {linkKey(rng.IntN(c.n))}}.Encode()
	}}, readOf("tags", "/tags?sort=count"))
	var traced func() error
	if c.apiTrace > 0 {
		traced = startTrace(ctx, m, c.apiTrace, filepath.Join(c.outDir, "api-trace.out"))
	}
	if err := readRound(a, c, figs, managerLog, r); err != nil {
		return err
	}
	if traced != nil {
		if err := traced(); err != nil {
			logf("api trace: %v", err)
		} else {
			logf("api trace: %s", filepath.Join(c.outDir, "api-trace.out"))
		}
	}
	return bulkCreateDelete(a, r, 5)
}

// tagLinks adds the tag bench-tag to n links (the first pages of the
// list) with bulk updates of 100, timing them.
func tagLinks(a apiClient, r *results, n int) error {
	var ids []string
	for page := 1; len(ids) < n; page++ {
		p, err := a.list(fmt.Sprintf("/links?page=%d", page))
		if err != nil {
			return err
		}
		if len(p.Data) == 0 {
			break
		}
		for _, d := range p.Data {
			ids = append(ids, d.ID)
		}
	}
	ids = ids[:min(n, len(ids))]
	batches := (len(ids) + 99) / 100
	return a.time(r, fmt.Sprintf("bulk update of 100 links (add a tag; %d requests)", batches), batches, func(i int) (string, string, any) {
		return http.MethodPatch, "/links/bulk", map[string]any{"ids": ids[i*100 : min(len(ids), i*100+100)], "add_tags": []string{"bench-tag"}}
	})
}

// bulkCreateDelete times rounds bulk creates of 100 new links, then the
// bulk deletes of them.
func bulkCreateDelete(a apiClient, r *results, rounds int) error {
	ids := make([][]string, rounds)
	err := a.time(r, fmt.Sprintf("bulk create of 100 links (%d requests)", rounds), rounds, func(i int) (string, string, any) {
		items := make([]map[string]any, 100)
		for j := range items {
			items[j] = map[string]any{"domain": host, "key": fmt.Sprintf("bulk-%d-%d", i, j),
				"url": fmt.Sprintf("https://www.example.com/bulk/%d/%d", i, j), "tags": []string{"bench-bulk"}}
		}
		return http.MethodPost, "/links/bulk", items
	})
	if err != nil {
		return err
	}
	var all []string
	for page := 1; ; page++ {
		p, err := a.list(fmt.Sprintf("/links?tag=bench-bulk&sort=key&page=%d", page))
		if err != nil {
			return err
		}
		if len(p.Data) == 0 {
			break
		}
		for _, d := range p.Data {
			all = append(all, d.ID)
		}
	}
	if len(all) != rounds*100 {
		return fmt.Errorf("bulk creates: %d links tagged bench-bulk, want %d", len(all), rounds*100)
	}
	for i := range rounds {
		ids[i] = all[i*100 : i*100+100]
	}
	return a.time(r, fmt.Sprintf("bulk delete of 100 links (%d requests)", rounds), rounds, func(i int) (string, string, any) {
		return http.MethodDelete, "/links/bulk", map[string]any{"ids": ids[i]}
	})
}

// pctl is the p-th quantile of sorted, by the nearest rank below: of 200,
// the p99 is the third slowest (index 197).
func pctl(sorted []time.Duration, p float64) time.Duration {
	return sorted[int(float64(len(sorted)-1)*p)]
}
