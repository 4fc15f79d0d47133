package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// judgedPath lists the links the Link controller has judged: every Ready
// reason the state filter knows, so a link is in it once the controller's
// first status write (Ready, and the created/updated stamps) is done.
const judgedPath = "/api/v1/links?state=active&state=expired&state=conflict&state=no_domain"

// judged returns how many links of the workspace the controller has judged.
func (a apiClient) judged() (int, error) {
	req, err := http.NewRequestWithContext(a.ctx, http.MethodGet, a.base+judgedPath, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	var page struct {
		Meta struct {
			Total int `json:"total"`
		} `json:"meta"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &page) != nil {
		return 0, fmt.Errorf("list judged links: %d %.300s", resp.StatusCode, out)
	}
	return page.Meta.Total, nil
}

// settleTimeout bounds the wait for the controller to judge every link.
const settleTimeout = 15 * time.Minute

// awaitJudged waits until the controller has judged want links and
// returns how long that took: the import answers before the controller's
// status writes are done, and on a small machine they compete with it.
func (a apiClient) awaitJudged(want int) (time.Duration, error) {
	start := time.Now()
	for {
		n, err := a.judged()
		if err != nil {
			return 0, err
		}
		if n >= want {
			return time.Since(start), nil
		}
		if time.Since(start) > settleTimeout {
			return 0, fmt.Errorf("only %d of %d links judged after %s", n, want, settleTimeout)
		}
		select {
		case <-a.ctx.Done():
			return 0, a.ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
