package analytics

import (
	"fmt"
	"testing"
)

var uaCases = []struct {
	name, ua string
	want     UAClass
}{
	{"chrome windows", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", UAClass{DeviceDesktop, "Windows", "Chrome"}},
	{"safari iphone", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1", UAClass{DeviceMobile, "iOS", "Safari"}},
	{"safari ipad", "Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1", UAClass{DeviceTablet, "iOS", "Safari"}},
	{"chrome android phone", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", UAClass{DeviceMobile, "Android", "Chrome"}},
	{"chrome android tablet (no Mobile)", "Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", UAClass{DeviceTablet, "Android", "Chrome"}},
	{"firefox mac", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0", UAClass{DeviceDesktop, "MacOS", "Firefox"}},
	{"edge", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", UAClass{DeviceDesktop, "Windows", "Edge"}},
	{"googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", UAClass{Device: DeviceBot}},
	{"slack unfurler", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", UAClass{Device: DeviceBot}},
	{"curl", "curl/8.5.0", UAClass{Device: DeviceBot}},
	{"wget", "Wget/1.21.4", UAClass{Device: DeviceBot}},
	{"okhttp", "okhttp/4.12.0", UAClass{Device: DeviceBot}},
	{"gptbot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", UAClass{Device: DeviceBot}},
	{"applebot", "Mozilla/5.0 (compatible; Applebot/0.1; +http://www.apple.com/go/applebot)", UAClass{Device: DeviceBot}},
	{"bytespider claims android", "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", UAClass{Device: DeviceBot}},
	{"headless chrome", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36", UAClass{Device: DeviceBot}},
	{"no user-agent", "", UAClass{Device: DeviceBot}},
	{"smart tv", "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36", UAClass{DeviceOther, "Linux", "Samsung Browser"}},
	{"phone brand with bot in its name", "Mozilla/5.0 (Linux; Android 10; CUBOT X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", UAClass{DeviceMobile, "Android", "Chrome"}},
}

func TestClassifyUA(t *testing.T) {
	c := NewUAClassifier(0)
	for _, tc := range uaCases {
		for range 2 { // parsed, then cached
			if got := c.Classify(tc.ua); got != tc.want {
				t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
			}
			if got := c.ClassifyBytes([]byte(tc.ua)); got != tc.want {
				t.Errorf("%s (bytes): got %+v, want %+v", tc.name, got, tc.want)
			}
		}
	}
}

func TestUACacheIsBounded(t *testing.T) {
	c := NewUAClassifier(100)
	for i := range 1000 {
		c.Classify(fmt.Sprintf("Mozilla/5.0 (Windows NT 10.0) Chrome/%d.0", i))
	}
	if n := c.CacheLen(); n > 100 {
		t.Fatalf("cache holds %d entries, bound 100", n)
	}
	// Still right after evictions.
	if got := c.Classify(uaCases[0].ua); got != uaCases[0].want {
		t.Fatalf("got %+v", got)
	}
}

func TestCachedClassifyAllocatesNothing(t *testing.T) {
	c := NewUAClassifier(0)
	ua := []byte(uaCases[1].ua)
	c.ClassifyBytes(ua)
	if n := testing.AllocsPerRun(100, func() { c.ClassifyBytes(ua) }); n != 0 {
		t.Fatalf("a cached classification allocates %v times", n)
	}
}

// BenchmarkParseUA is the parser's cost without the cache (a User-Agent
// seen for the first time).
func BenchmarkParseUA(b *testing.B) {
	c := NewUAClassifier(0)
	for _, name := range []string{"chrome windows", "safari iphone", "chrome android phone", "firefox mac", "googlebot", "curl"} {
		var ua string
		for _, tc := range uaCases {
			if tc.name == name {
				ua = tc.ua
			}
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				classifyUA(c.parser, ua)
			}
		})
	}
}

// BenchmarkClassifyCached is a repeated User-Agent: one hash, one map lookup.
func BenchmarkClassifyCached(b *testing.B) {
	c := NewUAClassifier(0)
	ua := []byte(uaCases[0].ua)
	b.ReportAllocs()
	for b.Loop() {
		c.ClassifyBytes(ua)
	}
}
