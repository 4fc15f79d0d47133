package console

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// Prefix is where the console is served on the API listener.
const Prefix = "/console/"

//go:embed static
var files embed.FS

// static is the console's files, rooted at their directory.
var static = func() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	return sub
}()

// ContentSecurityPolicy is sent with every console answer. It allows the
// console's own scripts, styles and API calls and nothing else: no inline
// script or style, no other origin, no framing (clickjacking), no plugin,
// and forms post only to the console itself.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the console's files under Prefix, index.html for the
// directory itself, 404 for anything else.
func Handler() http.Handler {
	fileServer := http.FileServerFS(static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		// Files change with the binary: revalidate on each load (they are
		// small; an upgrade must not mix old and new modules).
		h.Set("Cache-Control", "no-cache")
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		if name == "" {
			name = "index.html"
		}
		if !fs.ValidPath(name) || path.Clean(name) != name {
			http.NotFound(w, r)
			return
		}
		if st, err := fs.Stat(static, name); err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		if name == "index.html" {
			// FileServer would redirect /index.html to ./; serve it directly.
			http.ServeFileFS(w, r, static, name)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + name
		fileServer.ServeHTTP(w, r2)
	})
}
