package analytics

import (
	"hash/maphash"
	"strings"
	"unsafe"

	useragent "github.com/medama-io/go-useragent"
	"github.com/medama-io/go-useragent/agents"
)

// UAClass is what analytics keeps of a User-Agent.
type UAClass struct {
	Device      Device
	OS, Browser string // the parser's names ("Windows", "Chrome"), "" unknown
}

// DefaultUACacheSize bounds a UAClassifier's cache: real traffic has a few
// thousand distinct User-Agents a day, so this holds them all while a flood
// of random ones costs at most this many entries (about 64 B each).
const DefaultUACacheSize = 16384

// UAClassifier classifies User-Agents with github.com/medama-io/go-useragent
// (a trie built once per process, allocation-free parses) behind a bounded
// cache keyed by the string's hash, so a repeated User-Agent costs one map
// lookup. One writer goroutine owns it; it is not safe for concurrent use.
//
// On top of the parser: no User-Agent at all is a bot (every browser sends
// one); a User-Agent without an OS that names a crawler, a spider or an HTTP
// library is a bot (the parser misses AhrefsBot-style tokens when they are
// not separate words, and Applebot, GPTBot, Wget, okhttp); an Android
// device without "Mobile" is a tablet (Google's rule for Android UAs); a TV
// is "other".
type UAClassifier struct {
	parser *useragent.Parser
	seed   maphash.Seed
	cache  map[uint64]UAClass
	max    int
}

// NewUAClassifier returns a classifier whose cache holds at most size
// entries (DefaultUACacheSize when size <= 0).
func NewUAClassifier(size int) *UAClassifier {
	if size <= 0 {
		size = DefaultUACacheSize
	}
	return &UAClassifier{
		parser: useragent.NewParser(), // built once per process
		seed:   maphash.MakeSeed(),
		cache:  make(map[uint64]UAClass, min(size, 1024)),
		max:    size,
	}
}

// Classify is ua's class.
func (c *UAClassifier) Classify(ua string) UAClass {
	k := maphash.String(c.seed, ua)
	if v, ok := c.cache[k]; ok {
		return v
	}
	v := classifyUA(c.parser, ua)
	if len(c.cache) >= c.max {
		for old := range c.cache { // map order is random: a random eviction
			delete(c.cache, old)
			break
		}
	}
	c.cache[k] = v
	return v
}

// ClassifyBytes is Classify for a User-Agent held in a reused buffer,
// without copying it.
func (c *UAClassifier) ClassifyBytes(ua []byte) UAClass {
	// Neither the cache nor the parser keeps the string.
	return c.Classify(unsafe.String(unsafe.SliceData(ua), len(ua)))
}

// Parse is ua's class without the cache: for a caller that caches classes
// itself (capture's consumer, with the names interned). The parser does
// not keep ua.
func (c *UAClassifier) Parse(ua string) UAClass { return classifyUA(c.parser, ua) }

// CacheLen is the number of cached classes.
func (c *UAClassifier) CacheLen() int { return len(c.cache) }

// botWords mark a User-Agent without an OS as a bot (lower case).
var botWords = []string{"bot", "spider", "crawl", "wget", "okhttp", "http-client", "httpclient", "libwww", "scrapy", "headless", "fetch", "python", "java/", "curl"}

func classifyUA(p *useragent.Parser, ua string) UAClass {
	if strings.TrimSpace(ua) == "" {
		return UAClass{Device: DeviceBot}
	}
	a := p.Parse(ua)
	c := UAClass{OS: string(a.OS()), Browser: string(a.Browser())}
	switch a.Device() {
	case agents.DeviceBot:
		return UAClass{Device: DeviceBot}
	case agents.DeviceDesktop:
		c.Device = DeviceDesktop
	case agents.DeviceMobile:
		c.Device = DeviceMobile
		if a.OS() == agents.OSAndroid && !strings.Contains(ua, "Mobile") {
			c.Device = DeviceTablet
		}
	case agents.DeviceTablet:
		c.Device = DeviceTablet
	default:
		c.Device = DeviceOther
	}
	if c.OS == "" || strings.Contains(ua, "spider") || strings.Contains(ua, "Spider") {
		lower := strings.ToLower(ua)
		for _, w := range botWords {
			if strings.Contains(lower, w) {
				return UAClass{Device: DeviceBot}
			}
		}
	}
	return c
}
