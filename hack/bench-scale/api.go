package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// apiFigure is the latency of one API request, repeated.
type apiFigure struct {
	name     string
	p50, p99 time.Duration
}

// measureAPI times the first, middle and last page of the link list and a
// show, one request at a time.
func measureAPI(ctx context.Context, c config, m *managerProc, token string, r *results) error {
	base := "http://" + m.api + "/api/v1/links"
	get := func(url string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
		}
		return b, err
	}
	first, err := get(base + "?page=1")
	if err != nil {
		return err
	}
	var page struct {
		Meta struct {
			LastPage int `json:"last_page"`
		} `json:"meta"`
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(first, &page); err != nil {
		return fmt.Errorf("page 1: %w", err)
	}
	if len(page.Data) == 0 {
		return fmt.Errorf("page 1 is empty")
	}
	for _, t := range []struct{ name, url string }{
		{"list page 1", base + "?page=1"},
		{fmt.Sprintf("list page %d (middle)", page.Meta.LastPage/2), fmt.Sprintf("%s?page=%d", base, max(page.Meta.LastPage/2, 1))},
		{fmt.Sprintf("list page %d (last)", page.Meta.LastPage), fmt.Sprintf("%s?page=%d", base, page.Meta.LastPage)},
		{"show", base + "/" + page.Data[0].ID},
	} {
		lat := make([]time.Duration, 0, c.apiSamples)
		for range c.apiSamples {
			start := time.Now()
			if _, err := get(t.url); err != nil {
				return err
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		r.api = append(r.api, apiFigure{name: t.name, p50: pctl(lat, 0.50), p99: pctl(lat, 0.99)})
	}
	return nil
}

func pctl(sorted []time.Duration, p float64) time.Duration {
	return sorted[int(float64(len(sorted)-1)*p)]
}
