// Package synth generates realistic click events for the analytics store's
// tests and benchmarks: many links with a skewed popularity (a few hot, many
// cold), a day's rhythm, returning visitors, a mix of real browser and bot
// User-Agents (classified by analytics.UAClassifier, as capture does),
// countries, cities, referrers and UTM values with the visitor's overriding the
// link's now and then. The same Config and seed give the same events.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/kurz-dev/kurz/internal/analytics"
)

// Config shapes the data.
type Config struct {
	Links      int
	Namespaces int
	// Clicks over the whole range, spread over Days days from Start (a UTC
	// midnight).
	Clicks int64
	Days   int
	Start  time.Time
	Seed   uint64
	// Skew is the Zipf exponent of link popularity (0.8: the hottest link
	// has about 4 % of the clicks with 10 000 links, the top 100 a third).
	Skew float64
	// People is the pool of distinct visitors (IP and User-Agent).
	People int
}

// Generator produces Config's events day by day.
type Generator struct {
	cfg      Config
	links    []analytics.LinkRef
	linkUTM  []analytics.UTM
	cum      []float64 // cumulative link popularity
	uas      []analytics.UAClass
	uaCum    []float64
	ctyCum   []float64
	refCum   []float64
	personUA []uint8
	personCC []uint8
}

// New returns a generator for cfg.
func New(cfg Config) *Generator {
	if cfg.Namespaces < 1 {
		cfg.Namespaces = 1
	}
	if cfg.Skew == 0 {
		cfg.Skew = 0.8
	}
	if cfg.People == 0 {
		cfg.People = max(1000, int(cfg.Clicks/5))
	}
	g := &Generator{cfg: cfg}
	r := rand.New(rand.NewPCG(cfg.Seed, 1))
	for i := range cfg.Links {
		ns := fmt.Sprintf("team-%d", i%cfg.Namespaces)
		g.links = append(g.links, analytics.LinkRef{
			UID:       fmt.Sprintf("%08x-0000-4000-8000-%012x", cfg.Seed&0xffffffff, i),
			Namespace: ns, Name: fmt.Sprintf("link-%d", i), Domain: "go.example.com", Key: fmt.Sprintf("k%d", i),
		})
		var u analytics.UTM
		if r.Float64() < 0.6 {
			u = analytics.UTM{
				Source:   sources[r.IntN(len(sources))],
				Medium:   mediums[r.IntN(len(mediums))],
				Campaign: fmt.Sprintf("campaign-%d", r.IntN(300)),
			}
		}
		g.linkUTM = append(g.linkUTM, u)
	}
	// Popularity: Zipf over a random permutation, so hot links are spread
	// over namespaces and uids.
	w := make([]float64, cfg.Links)
	for i, p := range r.Perm(cfg.Links) {
		w[p] = 1 / math.Pow(float64(i+1), cfg.Skew)
	}
	g.cum = cumulative(w)
	c := analytics.NewUAClassifier(0)
	uw := make([]float64, 0, len(userAgents))
	for _, u := range userAgents {
		g.uas = append(g.uas, c.Classify(u.ua))
		uw = append(uw, u.weight)
	}
	g.uaCum = cumulative(uw)
	g.ctyCum = cumulative(zipf(len(countries), 1.2))
	g.refCum = cumulative(zipf(len(referrers), 1.0))
	g.personUA = make([]uint8, cfg.People)
	g.personCC = make([]uint8, cfg.People)
	for p := range cfg.People {
		g.personUA[p] = uint8(pick(g.uaCum, r.Float64()))
		g.personCC[p] = uint8(pick(g.ctyCum, r.Float64()))
	}
	return g
}

// Links are the generated links; Link i has popularity rank unknown.
func (g *Generator) Links() []analytics.LinkRef { return g.links }

// Days is the number of days.
func (g *Generator) Days() int { return g.cfg.Days }

// Hottest is the index of the most clicked link.
func (g *Generator) Hottest() int {
	best, bw := 0, -1.0
	for i := range g.cum {
		w := g.cum[i]
		if i > 0 {
			w -= g.cum[i-1]
		}
		if w > bw {
			best, bw = i, w
		}
	}
	return best
}

// Day calls f with the events of day d (0-based) in time order, one click
// each (Clicks 1).
func (g *Generator) Day(d int, f func(e *analytics.Event)) {
	r := rand.New(rand.NewPCG(g.cfg.Seed, uint64(d)+2))
	n := g.cfg.Clicks / int64(g.cfg.Days)
	if int64(d) < g.cfg.Clicks%int64(g.cfg.Days) {
		n++
	}
	day := g.cfg.Start.Add(time.Duration(d) * 24 * time.Hour)
	secs := make([]int32, n)
	for i := range secs {
		secs[i] = int32(diurnal(r))
	}
	slices.Sort(secs)
	var e analytics.Event
	for _, s := range secs {
		e = analytics.Event{Time: day.Add(time.Duration(s) * time.Second), Clicks: 1}
		li := pick(g.cum, r.Float64())
		e.Link = g.links[li]
		// Each link has its own audience, mostly: people drawn near the
		// link's index return to it (a visitor clicks again the same day).
		p := (li*7919 + int(math.Abs(r.NormFloat64())*float64(g.cfg.People)/50)) % g.cfg.People
		if r.Float64() < 0.5 {
			p = r.IntN(g.cfg.People)
		}
		ua := g.uas[g.personUA[p]]
		e.Device, e.OS, e.Browser = ua.Device, ua.OS, ua.Browser
		e.Visitor = visitor(uint64(p), d)
		if r.Float64() < 0.9 {
			e.Country = countries[g.personCC[p]]
			// Seven in ten people's cities are known, from a few names that
			// every country shares (a city is keyed by its country). Drawn
			// from p, not r, so that the other values stay as they were.
			if p%10 < 7 {
				e.City = cityKeys[g.personCC[p]][p%len(cityNames)]
			}
		}
		if r.Float64() < 0.55 {
			if r.Float64() < 0.08 {
				e.Referrer = fmt.Sprintf("site%d.example", r.IntN(5000))
			} else {
				e.Referrer = referrers[pick(g.refCum, r.Float64())]
			}
		}
		u := g.linkUTM[li]
		if r.Float64() < 0.1 {
			u.Source = sources[r.IntN(len(sources))]
		}
		e.UTMSource, e.UTMMedium, e.UTMCampaign = u.Source, u.Medium, u.Campaign
		f(&e)
	}
}

// visitor mimics a day's salted hash: a person has a new hash every day.
func visitor(p uint64, day int) uint64 {
	x := p*0x9e3779b97f4a7c15 ^ uint64(day)*0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	if x == 0 {
		x = 1
	}
	return x
}

// diurnal is a second of the day, more often in the (UTC) afternoon.
func diurnal(r *rand.Rand) int {
	for {
		s := r.IntN(86400)
		if r.Float64() < 0.55+0.45*math.Sin(float64(s)/86400*2*math.Pi-math.Pi/2) {
			return s
		}
	}
}

func zipf(n int, s float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1 / math.Pow(float64(i+1), s)
	}
	return w
}

func cumulative(w []float64) []float64 {
	out := make([]float64, len(w))
	var sum float64
	for _, x := range w {
		sum += x
	}
	var acc float64
	for i, x := range w {
		acc += x / sum
		out[i] = acc
	}
	out[len(out)-1] = 1
	return out
}

func pick(cum []float64, u float64) int {
	i, _ := slices.BinarySearch(cum, u)
	return min(i, len(cum)-1)
}

var sources = []string{"newsletter", "twitter", "linkedin", "facebook", "google", "partner", "qr", "slack", "instagram", "youtube"}
var mediums = []string{"email", "social", "cpc", "referral", "print", "organic"}

var countries = []string{"US", "IN", "GB", "DE", "BR", "FR", "CA", "JP", "ES", "IT", "NL", "AU", "MX", "PL", "SE", "TR", "ID", "KR", "CH", "AR", "BE", "NG", "ZA", "AT", "PH", "VN", "EG", "DK", "NO", "FI", "IE", "PT", "CZ", "RO", "IL", "SG", "NZ", "CL", "CO", "UA"}

// cityNames are names of cities in more than one country.
var cityNames = []string{"Springfield", "Paris", "San José", "Frankfurt", "Victoria", "Córdoba", "Hamilton"}

// cityKeys[c][i] is analytics.CityKey(countries[c], cityNames[i]), built
// once: an Event holds a city's key, not its parts.
var cityKeys = func() [][]string {
	out := make([][]string, len(countries))
	for c, cc := range countries {
		for _, n := range cityNames {
			out[c] = append(out[c], analytics.CityKey(cc, n))
		}
	}
	return out
}()

var referrers = []string{"t.co", "google.com", "linkedin.com", "facebook.com", "l.instagram.com", "news.ycombinator.com", "reddit.com", "youtube.com", "bing.com", "duckduckgo.com", "mail.google.com", "outlook.live.com", "slack.com", "teams.microsoft.com", "github.com", "medium.com", "substack.com", "lnkd.in", "m.facebook.com", "com.google.android.gm", "discord.com", "web.whatsapp.com", "baidu.com", "yandex.ru", "stackoverflow.com"}

type weightedUA struct {
	ua     string
	weight float64
}

// userAgents are real browsers' and bots' User-Agents with rough shares;
// the bots (link unfurlers, crawlers, scripts) are about 9 %.
var userAgents = []weightedUA{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", 22},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1", 18},
	{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36", 14},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15", 8},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0", 7},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0", 4},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", 3},
	{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", 2},
	{"Mozilla/5.0 (iPad; CPU OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1", 3},
	{"Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36", 4},
	{"Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", 1},
	{"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", 1},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0", 1},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1", 3},
	{"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", 2},
	{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 1.5},
	{"Twitterbot/1.0", 1.5},
	{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", 1.5},
	{"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", 1},
	{"curl/8.5.0", 1},
	{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 0.5},
	{"", 0.5},
	{"Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36", 0.3},
}
