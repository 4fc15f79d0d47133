package console

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Result()
}

// TestServesFilesWithPolicy: the index and the modules are served, with
// the CSP and the other headers on every answer, 404 too.
func TestServesFilesWithPolicy(t *testing.T) {
	for _, tc := range []struct {
		path, contentType string
		status            int
	}{
		{"/console/", "text/html; charset=utf-8", http.StatusOK},
		{"/console/js/app.js", "text/javascript; charset=utf-8", http.StatusOK},
		{"/console/console.css", "text/css; charset=utf-8", http.StatusOK},
		{"/console/nope.js", "", http.StatusNotFound},
		{"/console/js/", "", http.StatusNotFound},
		{"/console/../console.go", "", http.StatusNotFound},
		{"/console/js/../index.html", "", http.StatusNotFound},
	} {
		resp := get(t, tc.path)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.path, resp.StatusCode, tc.status)
		}
		if tc.contentType != "" && resp.Header.Get("Content-Type") != tc.contentType {
			t.Errorf("%s: Content-Type %q, want %q", tc.path, resp.Header.Get("Content-Type"), tc.contentType)
		}
		if got := resp.Header.Get("Content-Security-Policy"); got != ContentSecurityPolicy {
			t.Errorf("%s: CSP %q", tc.path, got)
		}
		for h, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", tc.path, h, got, want)
			}
		}
	}
	body, _ := io.ReadAll(get(t, "/console/").Body)
	if !strings.Contains(string(body), `<script type="module" src="js/app.js">`) {
		t.Errorf("index.html does not load the app: %s", body)
	}
}

// TestPolicyForbidsInline: the policy names no 'unsafe-*' source, and no
// file depends on what it forbids (inline script, inline style, event
// attributes, HTML parsing of strings), which a browser would refuse
// silently.
func TestPolicyForbidsInline(t *testing.T) {
	if strings.Contains(ContentSecurityPolicy, "unsafe") {
		t.Fatalf("CSP allows unsafe sources: %s", ContentSecurityPolicy)
	}
	eventAttr := regexp.MustCompile(`(?i)\son[a-z]+\s*=`)
	styleAttr := regexp.MustCompile(`(?i)\sstyle\s*=|<style`)
	htmlSinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function`)
	err := fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(static, name)
		if err != nil {
			return err
		}
		s := string(data)
		switch {
		case strings.HasSuffix(name, ".html"):
			for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(s, -1) {
				if !strings.Contains(tag, " src=") {
					t.Errorf("%s: inline script %s", name, tag)
				}
			}
			if eventAttr.MatchString(s) || styleAttr.MatchString(s) {
				t.Errorf("%s: inline event handler or style", name)
			}
		case strings.HasSuffix(name, ".js"):
			if m := htmlSinks.FindString(s); m != "" {
				t.Errorf("%s: uses %s; build elements with dom.js's h, which sets text", name, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
