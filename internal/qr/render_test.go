package qr

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kurz-dev/kurz/internal/qr/qrtest"
	. "github.com/onsi/gomega"
	qrcode "github.com/skip2/go-qrcode"
)

const content = "https://kurz.example/launch-2026"

// modules is the code without quiet zone, as go-qrcode makes it.
func modules(t *testing.T, o Options) [][]bool {
	t.Helper()
	q, err := qrcode.New(o.Content, levels[o.Level])
	if err != nil {
		t.Fatal(err)
	}
	q.DisableBorder = true
	return q.Bitmap()
}

func TestRenderPNG(t *testing.T) {
	opts := func(f func(*Options)) Options {
		o := DefaultOptions()
		o.Content = content
		f(&o)
		return o
	}
	cases := map[string]Options{
		"defaults":            opts(func(*Options) {}),
		"colours":             opts(func(o *Options) { o.Foreground, o.Background = rgb(0x1a, 0x2b, 0x3c), rgb(0xf0, 0xe0, 0xd0) }),
		"size not a multiple": opts(func(o *Options) { o.Size = 301 }),
		"smallest":            opts(func(o *Options) { o.Size, o.Level = 64, "L" }),
		"largest":             opts(func(o *Options) { o.Size, o.Margin = 2048, 32 }),
		"level H":             opts(func(o *Options) { o.Level = "H" }),
		"level Q margin 1":    opts(func(o *Options) { o.Level, o.Margin = "Q", 1 }),
		"margin 0":            opts(func(o *Options) { o.Margin = 0 }),
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			data, ct, err := Render(o)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ct).To(Equal("image/png"))
			img, err := png.Decode(bytes.NewReader(data))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(img.Bounds()).To(Equal(image.Rect(0, 0, o.Size, o.Size)))

			// Every pixel is exactly the colour of its module: pixel p is in
			// module p*n/size of the n modules across, margin included.
			code := modules(t, o)
			n := len(code) + 2*o.Margin
			for y := 0; y < o.Size; y++ {
				for x := 0; x < o.Size; x++ {
					mx, my := x*n/o.Size-o.Margin, y*n/o.Size-o.Margin
					want := o.Background
					if mx >= 0 && my >= 0 && mx < len(code) && my < len(code) && code[my][mx] {
						want = o.Foreground
					}
					r, gr, b, a := img.At(x, y).RGBA()
					got := rgb(uint8(r>>8), uint8(gr>>8), uint8(b>>8))
					if got != want || a != 0xffff {
						t.Fatalf("pixel (%d,%d) is %v (alpha %d), want %v", x, y, got, a, want)
					}
				}
			}
			// The finder pattern's corner module is dark, the margin light.
			px := (o.Margin*o.Size + n - 1) / n // first pixel of module (margin, margin)
			g.Expect(img.At(px, px)).To(Equal(o.Foreground))
			if o.Margin > 0 {
				g.Expect(img.At(0, 0)).To(Equal(o.Background))
				g.Expect(img.At(o.Size-1, o.Size-1)).To(Equal(o.Background))
			}

			if o.Margin == 0 {
				return // a reader needs a quiet zone; the pixels were checked above
			}
			text, err := qrtest.Decode(img)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(text).To(Equal(content))
		})
	}
}

// TestRenderPNGReadsBack draws links that gozxing's finder-pattern search
// (its path for photographs) could not read, though each code is valid: the
// API tests, which use random host names, failed on such a link now and then.
func TestRenderPNGReadsBack(t *testing.T) {
	for _, c := range []string{
		"https://h100070096-8.example.com/qr-Key_1",
		"https://h100428327-31.example.com/qr-Key_1",
		"https://h100973256-8.example.com/qr-Key_1",
		"https://h101003586-18.example.com/qr-Key_1",
	} {
		t.Run(c, func(t *testing.T) {
			g := NewWithT(t)
			o := DefaultOptions()
			o.Content = c
			data, _, err := Render(o)
			g.Expect(err).NotTo(HaveOccurred())
			img, err := png.Decode(bytes.NewReader(data))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(qrtest.Decode(img)).To(Equal(c))
		})
	}
}

var runRE = regexp.MustCompile(`^M(\d+) (\d+)h(\d+)v1h-(\d+)z`)

func TestRenderSVG(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	o.Content, o.Format, o.Size, o.Margin = content, SVG, 300, 2
	o.Foreground, o.Background = rgb(0x1a, 0x2b, 0x3c), rgb(0xf0, 0xe0, 0xd0)
	data, ct, err := Render(o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ct).To(Equal("image/svg+xml"))

	// Well-formed XML, root svg sized as asked.
	type svgRect struct {
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
		Fill   string `xml:"fill,attr"`
	}
	type svgPath struct {
		Fill string `xml:"fill,attr"`
		D    string `xml:"d,attr"`
	}
	var doc struct {
		XMLName xml.Name  `xml:"http://www.w3.org/2000/svg svg"`
		Width   string    `xml:"width,attr"`
		Height  string    `xml:"height,attr"`
		ViewBox string    `xml:"viewBox,attr"`
		Rect    []svgRect `xml:"rect"`
		Path    []svgPath `xml:"path"`
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(xml.Unmarshal(data, &doc)).To(Succeed())
	code := modules(t, o)
	n := len(code) + 2*o.Margin
	g.Expect(doc.Width).To(Equal("300"))
	g.Expect(doc.Height).To(Equal("300"))
	g.Expect(doc.ViewBox).To(Equal(fmt.Sprintf("0 0 %d %d", n, n)))
	g.Expect(doc.Rect).To(HaveLen(1))
	g.Expect(doc.Rect[0]).To(Equal(svgRect{Width: strconv.Itoa(n), Height: strconv.Itoa(n), Fill: "#F0E0D0"}))
	g.Expect(doc.Path).To(HaveLen(1))
	g.Expect(doc.Path[0].Fill).To(Equal("#1A2B3C"))

	// The path's runs paint exactly the dark modules, offset by the margin.
	painted := make([][]bool, n)
	for i := range painted {
		painted[i] = make([]bool, n)
	}
	d := doc.Path[0].D
	for d != "" {
		m := runRE.FindStringSubmatch(d)
		g.Expect(m).NotTo(BeNil(), "unexpected path data %q", d[:min(len(d), 40)])
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		w, _ := strconv.Atoi(m[3])
		g.Expect(m[4]).To(Equal(m[3]))
		for i := x; i < x+w; i++ {
			g.Expect(painted[y][i]).To(BeFalse(), "module painted twice")
			painted[y][i] = true
		}
		d = d[len(m[0]):]
	}
	for y := range n {
		for x := range n {
			cy, cx := y-o.Margin, x-o.Margin
			want := cx >= 0 && cy >= 0 && cx < len(code) && cy < len(code) && code[cy][cx]
			g.Expect(painted[y][x]).To(Equal(want), "module (%d,%d)", x, y)
		}
	}
}

func TestRenderInvalid(t *testing.T) {
	ok := DefaultOptions()
	ok.Content = content
	cases := map[string]func(*Options){
		"no content":   func(o *Options) { o.Content = "" },
		"size 63":      func(o *Options) { o.Size = 63 },
		"size 2049":    func(o *Options) { o.Size = 2049 },
		"margin -1":    func(o *Options) { o.Margin = -1 },
		"margin 33":    func(o *Options) { o.Margin = 33 },
		"level X":      func(o *Options) { o.Level = "X" },
		"format gif":   func(o *Options) { o.Format = "gif" },
		"too long":     func(o *Options) { o.Content = strings.Repeat("x", 3000) },
		"does not fit": func(o *Options) { o.Content, o.Size = strings.Repeat("x", 500), 64 },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			o := ok
			f(&o)
			_, _, err := Render(o)
			NewWithT(t).Expect(err).To(HaveOccurred())
		})
	}
	t.Run("does not fit", func(t *testing.T) {
		g := NewWithT(t)
		o := ok
		o.Size, o.Margin, o.Level = 64, 32, "H"
		_, _, err := Render(o)
		var se *SizeError
		g.Expect(errors.As(err, &se)).To(BeTrue(), "error %v", err)
		// 64 modules of margin plus the code's side (4 * version + 17).
		code := len(modules(t, o))
		g.Expect(code % 4).To(Equal(1))
		g.Expect(se.Min).To(Equal(64 + code))
		g.Expect(err.Error()).To(Equal(fmt.Sprintf("The size must be at least %d for this link and margin.", 64+code)))

		o.Size = se.Min // one pixel per module fits
		_, _, err = Render(o)
		g.Expect(err).NotTo(HaveOccurred())
	})
	t.Run("zero size, level and format take defaults", func(t *testing.T) {
		g := NewWithT(t)
		o := ok
		o.Size, o.Level, o.Format = 0, "", ""
		data, ct, err := Render(o)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ct).To(Equal("image/png"))
		cfg, err := png.DecodeConfig(bytes.NewReader(data))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Width).To(Equal(DefaultSize))
	})
}
