package validation

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestValidators(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	tests := []struct {
		name  string
		check func(string) string
		value string
		valid bool
	}{
		{"url https", URL, "https://example.com/a?b=c#d", true},
		{"url http port", URL, "http://example.com:8080", true},
		{"url ipv6", URL, "http://[::1]/x", true},
		{"url upper scheme", URL, "HTTPS://example.com", true},
		{"url max", URL, "https://e.com/" + long(2048-14), true},
		{"url too long", URL, "https://e.com/" + long(2048-13), false},
		{"url empty", URL, "", false},
		{"url relative", URL, "/path", false},
		{"url no host", URL, "https:///path", false},
		{"url javascript", URL, "javascript:alert(1)", false},
		{"url data", URL, "data:text/html,hi", false},
		{"url file", URL, "file:///etc/passwd", false},
		{"url ftp", URL, "ftp://example.com", false},
		{"url userinfo", URL, "https://user:pw@example.com/", false},
		{"url user only", URL, "https://user@example.com/", false},
		{"url at in path", URL, "https://example.com/@me", true},
		{"url no scheme", URL, "example.com", false},

		{"key", Key, "abc_DEF-123", true},
		{"key max", Key, long(64), true},
		{"key too long", Key, long(65), false},
		{"key empty", Key, "", false},
		{"key slash", Key, "a/b", false},
		{"key dot", Key, "a.b", false},
		{"key space", Key, "a b", false},
		{"key unicode", Key, "é", false},

		{"host", Hostname, "example.com", true},
		{"host single label", Hostname, "localhost", true},
		{"host punycode", Hostname, "xn--bcher-kva.de", true},
		{"host upper", Hostname, "Example.com", false},
		{"host underscore", Hostname, "a_b.com", false},
		{"host leading dash", Hostname, "-a.com", false},
		{"host trailing dot", Hostname, "a.com.", false},
		{"host empty label", Hostname, "a..com", false},
		{"host label 63", Hostname, long(63) + ".com", true},
		{"host label 64", Hostname, long(64) + ".com", false},
		{"host too long", Hostname, strings.Repeat(long(63)+".", 4) + "com", false},
		{"host empty", Hostname, "", false},
		{"host port", Hostname, "a.com:80", false},

		{"utm", UTM, "newsletter", true},
		{"utm empty", UTM, "", true},
		{"utm max", UTM, long(255), true},
		{"utm too long", UTM, long(256), false},

		{"tag", Tag, "marketing", true},
		{"tag max", Tag, long(64), true},
		{"tag too long", Tag, long(65), false},
		{"tag empty", Tag, "", false},

		{"password", Password, "secret", true},
		{"password 72 bytes", Password, long(72), true},
		{"password 73 bytes", Password, long(73), false},
		{"password empty", Password, "", false},

		{"hash", PasswordHash, "$2a$10$" + strings.Repeat("a", 53), true},
		{"hash plaintext", PasswordHash, "hunter2", false},
		{"hash cost 04", PasswordHash, "$2b$04$" + strings.Repeat("a", 53), true},
		{"hash cost 12", PasswordHash, "$2y$12$" + strings.Repeat("a", 53), true},
		{"hash cost 13", PasswordHash, "$2a$13$" + strings.Repeat("a", 53), false},
		{"hash cost 14", PasswordHash, "$2y$14$" + strings.Repeat("a", 53), false},
		{"hash cost 03", PasswordHash, "$2a$03$" + strings.Repeat("a", 53), false},
		{"hash cost 15", PasswordHash, "$2a$15$" + strings.Repeat("a", 53), false},
		{"hash cost 31", PasswordHash, "$2a$31$" + strings.Repeat("a", 53), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			msg := tt.check(tt.value)
			if tt.valid {
				g.Expect(msg).To(BeEmpty())
			} else {
				g.Expect(msg).NotTo(BeEmpty())
			}
		})
	}
}

func TestTagsAndExternalID(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Tags([]string{"a", "b"})).To(BeEmpty())
	g.Expect(Tags([]string{"a", "a"})).NotTo(BeEmpty())
	many := make([]string, 33)
	for i := range many {
		many[i] = strings.Repeat("x", i+1)
	}
	g.Expect(Tags(many[:32])).To(BeEmpty())
	g.Expect(Tags(many)).NotTo(BeEmpty())
	g.Expect(ExternalID(0)).To(BeEmpty())
	g.Expect(ExternalID(-1)).NotTo(BeEmpty())
}

func TestNormalizeHostname(t *testing.T) {
	tests := map[string]string{
		" Example.COM ": "example.com",
		"example.com.":  "example.com",
		"bücher.de":     "xn--bcher-kva.de",
		"BÜCHER.de":     "xn--bcher-kva.de",
		"ｅｘａｍｐｌｅ.com":   "example.com",
		"":              "",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			g := NewWithT(t)
			got := NormalizeHostname(in)
			g.Expect(got).To(Equal(want))
			if want != "" {
				g.Expect(Hostname(got)).To(BeEmpty())
			}
		})
	}
}

// FuzzHostname checks that whatever NormalizeHostname returns, Hostname
// either accepts it as a valid stored hostname or names a problem, and that
// accepted names are stable under normalization (no second form).
func FuzzHostname(f *testing.F) {
	for _, s := range []string{"example.com", "Bücher.de", "a..b", "-x.com", " A.COM. ", "xn--", "ｅ.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeHostname(s)
		if Hostname(n) != "" {
			return
		}
		if !hostnamePattern.MatchString(n) || len(n) > 253 {
			t.Fatalf("Hostname accepted %q", n)
		}
		if again := NormalizeHostname(n); again != n {
			t.Fatalf("normalizing %q again gave %q", n, again)
		}
	})
}

// FuzzURL checks that an accepted URL is one a browser would follow to an
// http(s) host, never a script or a credential-bearing authority.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"https://example.com", "javascript:alert(1)", "https://u:p@h/", "http://[::1]:80/a", "HTTP://X", "https://a.com/@b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if URL(s) != "" {
			return
		}
		lower := strings.ToLower(s)
		if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
			t.Fatalf("URL accepted %q", s)
		}
		if userInfoPattern.MatchString(s) {
			t.Fatalf("URL accepted user-info in %q", s)
		}
	})
}

func FuzzKey(f *testing.F) {
	for _, s := range []string{"abc", "a/b", "", "é", "a-b_c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Key(s) != "" {
			return
		}
		for _, r := range s {
			ok := r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
			if !ok {
				t.Fatalf("Key accepted %q", s)
			}
		}
		if len(s) == 0 || len(s) > 64 {
			t.Fatalf("Key accepted length %d", len(s))
		}
	})
}
