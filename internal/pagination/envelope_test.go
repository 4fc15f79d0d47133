package pagination

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
)

const testPath = "http://127.0.0.1:8080/api/v1/links"

// u is the URL of page n, written out by hand rather than by the code under
// test.
func u(n int) string { return testPath + "?page=" + strconv.Itoa(n) }

// wantLinks spells meta.links in a small notation: "<-" Previous without URL,
// "<N" Previous to page N, "N" a page, "N*" the active page, "..." a gap,
// ">-" and ">N" for Next.
func wantLinks(spec string) []Link {
	var out []Link
	for _, tok := range strings.Fields(spec) {
		switch {
		case tok == "...":
			out = append(out, Link{Label: "..."})
		case tok[0] == '<' || tok[0] == '>':
			l := Link{Label: "&laquo; Previous"}
			if tok[0] == '>' {
				l.Label = "Next &raquo;"
			}
			if tok[1:] != "-" {
				n, _ := strconv.Atoi(tok[1:])
				s := u(n)
				l.URL = &s
			}
			out = append(out, l)
		default:
			active := strings.HasSuffix(tok, "*")
			n, err := strconv.Atoi(strings.TrimSuffix(tok, "*"))
			if err != nil {
				panic(fmt.Sprintf("bad token %q", tok))
			}
			s := u(n)
			out = append(out, Link{URL: &s, Label: strconv.Itoa(n), Active: active})
		}
	}
	return out
}

// equalOrNil is Equal, or BeNil for nil (Gomega refuses Equal(nil)).
func equalOrNil(v any) types.GomegaMatcher {
	if v == nil {
		return BeNil()
	}
	return Equal(v)
}

func items(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestBuildEnvelope(t *testing.T) {
	type want struct {
		from, to   any // nil or an int
		last       int
		prev, next any // nil or a page number
		links      string
	}
	cases := []struct {
		total, page, count int
		want               want
	}{
		{0, 1, 0, want{nil, nil, 1, nil, nil, "<- 1* >-"}},
		{0, 2, 0, want{nil, nil, 1, 1, nil, "<1 1 >-"}},
		{1, 1, 1, want{1, 1, 1, nil, nil, "<- 1* >-"}},
		{25, 1, 25, want{1, 25, 1, nil, nil, "<- 1* >-"}},
		{25, 2, 0, want{nil, nil, 1, 1, nil, "<1 1 >-"}},
		{26, 1, 25, want{1, 25, 2, nil, 2, "<- 1* 2 >2"}},
		{26, 2, 1, want{26, 26, 2, 1, nil, "<1 1 2* >-"}},
		{51, 1, 25, want{1, 25, 3, nil, 2, "<- 1* 2 3 >2"}},
		{51, 2, 25, want{26, 50, 3, 1, 3, "<1 1 2* 3 >3"}},
		{51, 3, 1, want{51, 51, 3, 2, nil, "<2 1 2 3* >-"}},
		{51, 4, 0, want{nil, nil, 3, 3, nil, "<3 1 2 3 >-"}},
		{400, 1, 25, want{1, 25, 16, nil, 2, "<- 1* 2 3 4 5 6 7 8 9 10 ... 15 16 >2"}},
		{400, 8, 25, want{176, 200, 16, 7, 9, "<7 1 2 ... 5 6 7 8* 9 10 11 ... 15 16 >9"}},
		{400, 9, 25, want{201, 225, 16, 8, 10, "<8 1 2 ... 6 7 8 9* 10 11 12 ... 15 16 >10"}},
		{400, 10, 25, want{226, 250, 16, 9, 11, "<9 1 2 ... 7 8 9 10* 11 12 13 14 15 16 >11"}},
		{400, 16, 25, want{376, 400, 16, 15, nil, "<15 1 2 ... 7 8 9 10 11 12 13 14 15 16* >-"}},
		{400, 17, 0, want{nil, nil, 16, 16, nil, "<16 1 2 ... 7 8 9 10 11 12 13 14 15 16 >-"}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("total=%d/page=%d", c.total, c.page), func(t *testing.T) {
			g := NewWithT(t)
			env := Build(testPath, c.page, c.total, items(c.count))

			// Compare through JSON so that null versus absent versus []
			// is checked too.
			raw, err := json.Marshal(env)
			g.Expect(err).NotTo(HaveOccurred())
			var got map[string]any
			g.Expect(json.Unmarshal(raw, &got)).To(Succeed())

			pageURL := func(p any) any {
				if p == nil {
					return nil
				}
				return u(p.(int))
			}
			num := func(v any) any {
				if v == nil {
					return nil
				}
				return float64(v.(int))
			}
			data := make([]any, c.count)
			for i := range data {
				data[i] = float64(i + 1)
			}
			g.Expect(got["data"]).To(Equal(data))
			g.Expect(got["links"]).To(Equal(map[string]any{
				"first": u(1),
				"last":  u(c.want.last),
				"prev":  pageURL(c.want.prev),
				"next":  pageURL(c.want.next),
			}))

			meta := got["meta"].(map[string]any)
			g.Expect(meta).To(HaveLen(8))
			g.Expect(meta["current_page"]).To(Equal(float64(c.page)))
			g.Expect(meta).To(HaveKeyWithValue("from", equalOrNil(num(c.want.from))))
			g.Expect(meta).To(HaveKeyWithValue("to", equalOrNil(num(c.want.to))))
			g.Expect(meta["last_page"]).To(Equal(float64(c.want.last)))
			g.Expect(meta["path"]).To(Equal(testPath))
			g.Expect(meta["per_page"]).To(Equal(float64(25)))
			g.Expect(meta["total"]).To(Equal(float64(c.total)))
			g.Expect(env.Meta.Links).To(Equal(wantLinks(c.want.links)))
		})
	}
}

// TestBuildJSON pins the exact bytes of a small envelope, field order and
// nulls included.
func TestBuildJSON(t *testing.T) {
	g := NewWithT(t)
	raw, err := json.Marshal(Build[string](testPath, 1, 0, nil))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(raw)).To(Equal(`{"data":[],"links":{"first":"` + testPath + `?page=1","last":"` + testPath +
		`?page=1","prev":null,"next":null},"meta":{"current_page":1,"from":null,"last_page":1,"links":[` +
		`{"url":null,"label":"\u0026laquo; Previous","active":false},` +
		`{"url":"` + testPath + `?page=1","label":"1","active":true},` +
		`{"url":null,"label":"Next \u0026raquo;","active":false}],` +
		`"path":"` + testPath + `","per_page":25,"to":null,"total":0}}`))
}

// A narrowed list carries its query in every page URL, page last, while
// meta.path stays the bare endpoint.
func TestBuildWithQuery(t *testing.T) {
	g := NewWithT(t)
	q := "tag=a&tag=b&sort=-clicks"
	env := BuildWithQuery[int](testPath, q, 2, 3*PerPage, []int{1})
	at := func(n int) string { return testPath + "?" + q + "&page=" + strconv.Itoa(n) }
	g.Expect(env.Links.First).To(Equal(at(1)))
	g.Expect(env.Links.Last).To(Equal(at(3)))
	g.Expect(*env.Links.Prev).To(Equal(at(1)))
	g.Expect(*env.Links.Next).To(Equal(at(3)))
	g.Expect(env.Meta.Path).To(Equal(testPath))
	var urls []string
	for _, l := range env.Meta.Links {
		urls = append(urls, *l.URL)
	}
	g.Expect(urls).To(Equal([]string{at(1), at(1), at(2), at(3), at(3)}))
	g.Expect(BuildWithQuery[int](testPath, "", 1, 0, nil)).To(Equal(Build[int](testPath, 1, 0, nil)))
}

func TestWindow(t *testing.T) {
	cases := []struct {
		last, current int
		want          string
	}{
		{13, 1, "<- 1* 2 3 4 5 6 7 8 9 10 11 12 13 >2"},
		{13, 7, "<6 1 2 3 4 5 6 7* 8 9 10 11 12 13 >8"},
		{13, 13, "<12 1 2 3 4 5 6 7 8 9 10 11 12 13* >-"},
		// From 14 pages on, Laravel slides.
		{14, 1, "<- 1* 2 3 4 5 6 7 8 9 10 ... 13 14 >2"},
		{14, 7, "<6 1 2 3 4 5 6 7* 8 9 10 ... 13 14 >8"},
		{14, 8, "<7 1 2 ... 5 6 7 8* 9 10 11 12 13 14 >9"},
		{14, 14, "<13 1 2 ... 5 6 7 8 9 10 11 12 13 14* >-"},
		{20, 7, "<6 1 2 3 4 5 6 7* 8 9 10 ... 19 20 >8"},
		{20, 8, "<7 1 2 ... 5 6 7 8* 9 10 11 ... 19 20 >9"},
		{20, 13, "<12 1 2 ... 10 11 12 13* 14 15 16 ... 19 20 >14"}, // C = L-7: still the full slider
		{20, 14, "<13 1 2 ... 11 12 13 14* 15 16 17 18 19 20 >15"},  // C = L-6: the end
		{20, 21, "<20 1 2 ... 11 12 13 14 15 16 17 18 19 20 >-"},    // past the end
		{1000, 500, "<499 1 2 ... 497 498 499 500* 501 502 503 ... 999 1000 >501"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("L=%d/C=%d", c.last, c.current), func(t *testing.T) {
			g := NewWithT(t)
			env := Build[int](testPath, c.current, c.last*PerPage, nil)
			g.Expect(env.Meta.LastPage).To(Equal(c.last))
			g.Expect(env.Meta.Links).To(Equal(wantLinks(c.want)))
		})
	}
}

func TestParsePage(t *testing.T) {
	cases := map[string]int{
		"":                     1,
		"1":                    1,
		"2":                    2,
		"400":                  400,
		"+3":                   3,
		"007":                  7,
		"abc":                  1,
		"0":                    1,
		"-3":                   1,
		"1.5":                  1,
		"1e3":                  1,
		" 2":                   1,
		"2 ":                   1,
		"0x10":                 1,
		"99999999999999999999": 1, // overflows int64
		"9223372036854775807":  9223372036854775807,
	}
	for raw, want := range cases {
		t.Run(strconv.Quote(raw), func(t *testing.T) {
			NewWithT(t).Expect(ParsePage(raw)).To(Equal(want))
		})
	}
}

func TestOffset(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Offset(1)).To(Equal(0))
	g.Expect(Offset(2)).To(Equal(25))
	g.Expect(Offset(0)).To(Equal(0))
	g.Expect(Offset(ParsePage("9223372036854775807"))).To(BeNumerically(">", 0)) // saturates, no overflow
}

func FuzzParsePage(f *testing.F) {
	for _, s := range []string{"", "1", "25", "0", "-1", "abc", "1.5", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p := ParsePage(raw)
		if p < 1 {
			t.Fatalf("ParsePage(%q) = %d, want >= 1", raw, p)
		}
		// A plain decimal that fits is taken as it is; anything else is 1.
		if n, err := strconv.ParseUint(strings.TrimPrefix(raw, "+"), 10, 63); err == nil && n >= 1 && !strings.HasPrefix(raw, "+-") && !strings.HasPrefix(raw, "++") {
			if uint64(p) != n {
				t.Fatalf("ParsePage(%q) = %d, want %d", raw, p, n)
			}
		} else if p != 1 {
			t.Fatalf("ParsePage(%q) = %d, want 1", raw, p)
		}
		env := Build[int](testPath, p, 1000, nil)
		if env.Meta.CurrentPage != p || len(env.Meta.Links) < 3 {
			t.Fatalf("Build(page %d) = %+v", p, env.Meta)
		}
	})
}
