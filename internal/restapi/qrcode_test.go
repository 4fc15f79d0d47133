package restapi

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/kurz-dev/kurz/internal/qr/qrtest"
	"github.com/kurz-dev/kurz/internal/testenv"

	. "github.com/onsi/gomega"
)

// decodeQR reads the text of a PNG QR code and the colours it is drawn in.
func decodeQR(g Gomega, data []byte) (string, map[color.RGBA]int) {
	img, err := png.Decode(bytes.NewReader(data))
	g.Expect(err).NotTo(HaveOccurred())
	text, err := qrtest.Decode(img)
	g.Expect(err).NotTo(HaveOccurred())
	colours := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			colours[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	return text, colours
}

// pngQR asks c (in test t) for the QR code at path with body, checks that
// the answer is 200 with a QR code of text, and returns the answer and the
// colours the code is drawn in.
func pngQR(t *testing.T, c *apiClient, path string, body any, text string) (response, map[color.RGBA]int) {
	t.Helper()
	g := NewWithT(t)
	c.t = t
	r := c.do("PUT", path, body)
	g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
	got, colours := decodeQR(g, r.raw)
	g.Expect(got).To(Equal(text))
	return r, colours
}

func TestQRCode(t *testing.T) {
	testenv.Need(t)
	w, host := newWorkspaceWithDomain(t)
	l := w.createLink(t, map[string]any{"key": "qr-Key_1", "domain": host, "url": "https://example.com"})
	path := "/api/v1/links/" + l["id"].(string) + "/qr-code"
	short := "https://" + host + "/qr-Key_1"

	t.Run("defaults: black on white PNG, inline", func(t *testing.T) {
		g := NewWithT(t)
		r, colours := pngQR(t, w.viewer, path, nil, short)
		g.Expect(r.header.Get("Content-Type")).To(Equal("image/png"))
		g.Expect(r.header.Get("Cache-Control")).To(Equal("private"))
		g.Expect(r.header.Get("Content-Disposition")).To(BeEmpty())
		g.Expect(colours).To(HaveLen(2))
		g.Expect(colours).To(HaveKey(color.RGBA{0, 0, 0, 255}))
		g.Expect(colours).To(HaveKey(color.RGBA{255, 255, 255, 255}))
	})

	t.Run("colour and download from the query", func(t *testing.T) {
		g := NewWithT(t)
		r, colours := pngQR(t, w.viewer, path+"?color=%231A2B3C&download=true", nil, short)
		g.Expect(r.header.Get("Content-Disposition")).To(Equal(`attachment; filename="qr-Key_1.png"`))
		g.Expect(colours).To(HaveKey(color.RGBA{0x1a, 0x2b, 0x3c, 255}))
		g.Expect(colours).NotTo(HaveKey(color.RGBA{0, 0, 0, 255}))
	})

	t.Run("parameters from a JSON body", func(t *testing.T) {
		g := NewWithT(t)
		r, colours := pngQR(t, w.viewer, path, map[string]any{"color": "#800000", "download": false, "size": 256}, short)
		g.Expect(r.header.Get("Content-Disposition")).To(BeEmpty())
		img, err := png.Decode(bytes.NewReader(r.raw))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(img.Bounds().Size()).To(Equal(image.Pt(256, 256)))
		g.Expect(colours).To(HaveKey(color.RGBA{0x80, 0, 0, 255}))
	})

	t.Run("SVG", func(t *testing.T) {
		g := NewWithT(t)
		w.viewer.t = t
		r := w.viewer.do("PUT", path+"?format=svg&download=1", nil)
		g.Expect(r.status).To(Equal(http.StatusOK), "%s", r)
		g.Expect(r.header.Get("Content-Type")).To(HavePrefix("image/svg+xml"))
		g.Expect(r.header.Get("Content-Disposition")).To(Equal(`attachment; filename="qr-Key_1.svg"`))
		g.Expect(strings.Contains(string(r.raw), "<svg")).To(BeTrue())
	})

	t.Run("invalid parameters are 422 on the parameter", func(t *testing.T) {
		g := NewWithT(t)
		w.viewer.t = t
		r := w.viewer.do("PUT", path+"?color=red&download=maybe", nil)
		g.Expect(r.status).To(Equal(http.StatusUnprocessableEntity), "%s", r)
		g.Expect(r.fieldErrors("color")).To(HaveLen(1))
		g.Expect(r.fieldErrors("download")).To(Equal([]string{"The download field must be true or false."}))
		g.Expect(r.body["message"]).To(Equal("The download field must be true or false. (and 1 more error)"))
		r = w.viewer.do("PUT", path, `{"size": 5}`)
		g.Expect(r.status).To(Equal(http.StatusUnprocessableEntity))
		g.Expect(r.fieldErrors("size")).To(HaveLen(1))
		r = w.viewer.do("PUT", path, `{"size": `)
		g.Expect(r.status).To(Equal(http.StatusBadRequest))
		// Each parameter is in range, but the code and its quiet zone do not
		// fit in 64 pixels: the caller can fix that, so it is a 422 too.
		r = w.viewer.do("PUT", path+"?size=64&margin=32", nil)
		g.Expect(r.status).To(Equal(http.StatusUnprocessableEntity), "%s", r)
		g.Expect(r.fieldErrors("size")).To(ConsistOf(MatchRegexp(`^The size must be at least \d+ for this link and margin\.$`)))
	})

	t.Run("unknown link", func(t *testing.T) {
		w.viewer.t = t
		NewWithT(t).Expect(w.viewer.do("PUT", "/api/v1/links/nope/qr-code", nil).status).To(Equal(http.StatusNotFound))
	})
}
