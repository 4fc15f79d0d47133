package qr

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strconv"
	"sync"

	qrcode "github.com/skip2/go-qrcode"
)

// levels maps the API's error correction letters to go-qrcode's levels
// (L 7 %, M 15 %, Q 25 %, H 30 % of the code may be damaged).
var levels = map[string]qrcode.RecoveryLevel{
	"L": qrcode.Low,
	"M": qrcode.Medium,
	"Q": qrcode.High,
	"H": qrcode.Highest,
}

// Content types of the formats.
const (
	contentTypePNG = "image/png"
	contentTypeSVG = "image/svg+xml"
)

// Render draws o.Content as a QR code. Zero Size, Level and Format take
// their defaults; colours and Margin are used as given (see DefaultOptions).
func Render(o Options) (data []byte, contentType string, err error) {
	o = o.normalized()
	if err := o.validate(); err != nil {
		return nil, "", err
	}
	modules, err := bitmap(o)
	if err != nil {
		return nil, "", err
	}
	if o.Format == SVG {
		return renderSVG(o, modules), contentTypeSVG, nil
	}
	data, err = renderPNG(o, modules)
	if err != nil {
		return nil, "", err
	}
	return data, contentTypePNG, nil
}

// SizeError says that the code and its margin need more modules than the
// image has pixels (a long link at level H with a wide margin in 64 pixels).
// The message is meant for the user, as a field error of "size"; the API
// finds it with errors.As and answers 422.
type SizeError struct {
	// Min is the smallest size that fits, one pixel per module.
	Min int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("The size must be at least %d for this link and margin.", e.Min)
}

// bitmap returns the code's modules without quiet zone (true is dark).
func bitmap(o Options) ([][]bool, error) {
	q, err := qrcode.New(o.Content, levels[o.Level])
	if err != nil {
		return nil, fmt.Errorf("qr: encoding content: %w", err)
	}
	// The margin is drawn here, in the asked number of modules.
	q.DisableBorder = true
	m := q.Bitmap()
	if side := len(m) + 2*o.Margin; side > o.Size {
		return nil, &SizeError{Min: side}
	}
	return m, nil
}

// renderPNG draws the modules on an exactly Size x Size two-colour image.
// When Size is not a multiple of the module count, modules are one pixel
// wider or narrower than others (pixel p belongs to module p*n/Size); the
// colours stay exact, which scaling with smoothing would not keep.
func renderPNG(o Options, modules [][]bool) ([]byte, error) {
	n := len(modules) + 2*o.Margin
	img := image.NewPaletted(image.Rect(0, 0, o.Size, o.Size), color.Palette{o.Background, o.Foreground})

	col := make([]int, o.Size) // module column of each pixel column, -1 in the margin
	for x := range col {
		col[x] = moduleAt(x, n, o.Size, o.Margin, len(modules))
	}
	prev := -2
	for y := 0; y < o.Size; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+o.Size]
		my := moduleAt(y, n, o.Size, o.Margin, len(modules))
		if my == prev {
			copy(row, img.Pix[(y-1)*img.Stride:])
			continue
		}
		prev = my
		if my < 0 {
			continue // quiet zone: palette index 0, the background
		}
		for x, mx := range col {
			if mx >= 0 && modules[my][mx] {
				row[x] = 1
			}
		}
	}

	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: encoderBuffers}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("qr: encoding png: %w", err)
	}
	return buf.Bytes(), nil
}

// encoderBuffers reuses the PNG encoder's compressor state (most of an
// uncached render's allocations) across renders.
var encoderBuffers = &encoderPool{}

type encoderPool struct{ p sync.Pool }

func (e *encoderPool) Get() *png.EncoderBuffer {
	b, _ := e.p.Get().(*png.EncoderBuffer)
	return b
}

func (e *encoderPool) Put(b *png.EncoderBuffer) { e.p.Put(b) }

// moduleAt maps pixel p of size to a module index of the code, or -1 in
// the quiet zone.
func moduleAt(p, n, size, margin, code int) int {
	m := p*n/size - margin
	if m < 0 || m >= code {
		return -1
	}
	return m
}

// renderSVG draws the same modules as one path of unit squares in a
// viewBox of modules, scaled to Size pixels.
func renderSVG(o Options, modules [][]bool) []byte {
	n := len(modules) + 2*o.Margin
	var b bytes.Buffer
	b.Grow(256 + len(modules)*len(modules)*4)
	size, side := strconv.Itoa(o.Size), strconv.Itoa(n)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="` + size + `" height="` + size +
		`" viewBox="0 0 ` + side + ` ` + side + `" shape-rendering="crispEdges">`)
	b.WriteString(`<rect width="` + side + `" height="` + side + `"` + fill(o.Background) + `/>`)
	b.WriteString(`<path` + fill(o.Foreground) + ` d="`)
	for y, row := range modules {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			start := x
			for x < len(row) && row[x] {
				x++
			}
			// One rectangle per run of dark modules on a row.
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", start+o.Margin, y+o.Margin, x-start, x-start)
		}
	}
	b.WriteString(`"/></svg>` + "\n")
	return b.Bytes()
}

// fill renders a colour as fill (and fill-opacity when not opaque).
func fill(c color.RGBA) string {
	s := fmt.Sprintf(` fill="#%02X%02X%02X"`, c.R, c.G, c.B)
	if c.A != 0xff {
		s += fmt.Sprintf(` fill-opacity="%s"`, strconv.FormatFloat(float64(c.A)/255, 'f', 3, 64))
	}
	return s
}
