package redirect

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestNormalizeHost(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"go.example.com", "go.example.com", true},
		{"Go.Example.COM", "go.example.com", true},
		{"go.example.com:8080", "go.example.com", true},
		{"GO.example.com.:443", "go.example.com", true},
		{"go.example.com.", "go.example.com", true},
		{"", "", false},
		{":80", "", false},
		{".", "", false},
		{"[::1]:80", "", false},
		{strings.Repeat("a", 254), "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			g := NewWithT(t)
			var buf [maxHostLen]byte
			got, ok := normalizeHost([]byte(tc.in), buf[:])
			g.Expect(ok).To(Equal(tc.ok))
			if tc.ok {
				g.Expect(string(got)).To(Equal(tc.want))
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in       string
		key      string
		root, ok bool
	}{
		{"/", "", true, false},
		{"/abc", "abc", false, true},
		{"/A-b_9", "A-b_9", false, true},
		{"/abc/", "", false, false},
		{"/a/b", "", false, false},
		{"/a.b", "", false, false},
		{"/" + strings.Repeat("k", 64), strings.Repeat("k", 64), false, true},
		{"/" + strings.Repeat("k", 65), "", false, false},
		{"", "", false, false},
		{"abc", "", false, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			g := NewWithT(t)
			key, root, ok := parseKey([]byte(tc.in))
			g.Expect(root).To(Equal(tc.root))
			g.Expect(ok).To(Equal(tc.ok))
			g.Expect(string(key)).To(Equal(tc.key))
		})
	}
}

func TestWithUTM(t *testing.T) {
	utm := []kv{{"utm_source", "news letter"}, {"utm_medium", "email"}}
	for _, tc := range []struct{ dest, want string }{
		{"https://e.com/p", "https://e.com/p?utm_source=news+letter&utm_medium=email"},
		{"https://e.com/p?a=1", "https://e.com/p?a=1&utm_source=news+letter&utm_medium=email"},
		{"https://e.com/p?utm_source=x", "https://e.com/p?utm_source=x&utm_medium=email"},
		{"https://e.com/p?", "https://e.com/p?utm_source=news+letter&utm_medium=email"},
		{"https://e.com/p#frag", "https://e.com/p?utm_source=news+letter&utm_medium=email#frag"},
		{"https://e.com/p?utm_source=a&utm_medium=b", "https://e.com/p?utm_source=a&utm_medium=b"},
		// A badly escaped value still counts as present.
		{"https://e.com/p?utm_source=%zz", "https://e.com/p?utm_source=%zz&utm_medium=email"},
	} {
		t.Run(tc.dest, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(withUTM(tc.dest, utm)).To(Equal(tc.want))
			// The index keeps the URL itself and the interned rest.
			base, add := splitUTM(tc.dest, utm)
			g.Expect(base + add).To(Equal(tc.want))
			if !strings.Contains(tc.dest, "#") {
				g.Expect(base).To(Equal(tc.dest))
			}
		})
	}
}

func TestMergeQuery(t *testing.T) {
	for _, tc := range []struct{ dest, q, want string }{
		{"https://e.com/p", "", "https://e.com/p"},
		{"https://e.com/p", "a=1", "https://e.com/p?a=1"},
		{"https://e.com/p?a=0&b=2", "a=1&c=3", "https://e.com/p?b=2&a=1&c=3"},
		{"https://e.com/p?x=%20y#f", "z=1", "https://e.com/p?x=%20y&z=1#f"},
		{"https://e.com/p?utm_source=kurz", "utm_source=ad", "https://e.com/p?utm_source=ad"},
		{"https://e.com/p", "&&", "https://e.com/p"},
	} {
		t.Run(tc.dest+"+"+tc.q, func(t *testing.T) {
			NewWithT(t).Expect(mergeQuery(tc.dest, tc.q)).To(Equal(tc.want))
		})
	}
}

func TestDevice(t *testing.T) {
	for _, tc := range []struct {
		ua   string
		want deviceKind
	}{
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)", deviceIOS},
		{"Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X)", deviceIOS},
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8)", deviceAndroid},
		{"Mozilla/5.0 (X11; Linux x86_64)", deviceOther},
		{"Mozilla/5.0 (iPod touch; CPU iPhone OS 12_0 like Mac OS X)", deviceIOS},
		{"Mozilla/5.0 (Linux; Android 14; iPhone-case edition)", deviceIOS}, // an iOS name wins
		{"iPiPad", deviceIOS},
		{"xiPo iPa iPhon", deviceOther},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", deviceOther},
		{"", deviceOther},
	} {
		t.Run(tc.ua, func(t *testing.T) {
			NewWithT(t).Expect(device([]byte(tc.ua))).To(Equal(tc.want))
		})
	}
}

// FuzzDevice: the one-pass search for iOS names answers as three searches
// would.
func FuzzDevice(f *testing.F) {
	for _, ua := range []string{"iPhone", "iPad", "iPod", "Android", "iPiPod", "iP", "AndroidiPad", "x"} {
		f.Add([]byte(ua))
	}
	f.Fuzz(func(t *testing.T, ua []byte) {
		want := deviceOther
		switch {
		case bytes.Contains(ua, []byte("iPhone")), bytes.Contains(ua, []byte("iPad")), bytes.Contains(ua, []byte("iPod")):
			want = deviceIOS
		case bytes.Contains(ua, []byte("Android")):
			want = deviceAndroid
		}
		if got := device(ua); got != want {
			t.Fatalf("device(%q) = %d, want %d", ua, got, want)
		}
	})
}

func FuzzNormalizeHost(f *testing.F) {
	f.Add([]byte("go.example.com"))
	f.Add([]byte("GO.Example.com.:8443"))
	f.Fuzz(func(t *testing.T, h []byte) {
		var buf [maxHostLen]byte
		orig := bytes.Clone(h)
		got, ok := normalizeHost(h, buf[:])
		if !bytes.Equal(h, orig) {
			t.Fatalf("input modified")
		}
		if !ok {
			return
		}
		if len(got) == 0 || len(got) > maxHostLen {
			t.Fatalf("bad length %d", len(got))
		}
		for _, c := range got {
			if 'A' <= c && c <= 'Z' {
				t.Fatalf("%q still has upper case", got)
			}
		}
		// A plain hostname comes back as the lowercase of itself.
		if !bytes.ContainsAny(orig, ":[") && !bytes.HasSuffix(orig, []byte(".")) &&
			!bytes.Equal(got, asciiLower(orig)) {
			t.Fatalf("%q -> %q", orig, got)
		}
	})
}

func asciiLower(b []byte) []byte {
	out := bytes.Clone(b)
	for i, c := range out {
		if 'A' <= c && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return out
}

func FuzzParseKey(f *testing.F) {
	f.Add([]byte("/abc"))
	f.Add([]byte("/"))
	f.Add([]byte("/a/b"))
	f.Fuzz(func(t *testing.T, p []byte) {
		key, root, ok := parseKey(p)
		if root && ok {
			t.Fatal("root and key at once")
		}
		if !ok {
			return
		}
		if len(key) == 0 || len(key) > maxKeyLen || "/"+string(key) != string(p) {
			t.Fatalf("bad key %q from %q", key, p)
		}
		if url.PathEscape(string(key)) != string(key) {
			t.Fatalf("key %q needs escaping", key)
		}
	})
}

func FuzzMergeQuery(f *testing.F) {
	f.Add("https://e.com/p?a=1#f", "a=2&b=3")
	f.Fuzz(func(t *testing.T, dest, q string) {
		out := mergeQuery(dest, q)
		if q == "" && out != dest {
			t.Fatalf("empty query changed %q to %q", dest, out)
		}
		base, _, _ := strings.Cut(dest, "#")
		path, _, _ := strings.Cut(base, "?")
		if !strings.HasPrefix(out, path) {
			t.Fatalf("%q lost its path %q", out, path)
		}
	})
}
