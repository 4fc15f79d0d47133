package qr

import (
	"fmt"
	"image/color"
)

// Format is the image format of a rendered code.
type Format string

// The supported formats.
const (
	PNG Format = "png"
	SVG Format = "svg"
)

// Limits and defaults of the rendering options.
const (
	DefaultSize   = 512
	MinSize       = 64
	MaxSize       = 2048
	DefaultMargin = 4
	MaxMargin     = 32
	DefaultLevel  = "M"
)

// Options say what to draw and how.
type Options struct {
	// Content is the text encoded, the short link.
	Content string
	// Foreground colours the dark modules, Background the light ones and
	// the quiet zone.
	Foreground, Background color.RGBA
	// Size is the side of the image in pixels (MinSize..MaxSize); 0 means
	// DefaultSize.
	Size int
	// Level is the error correction level, L, M, Q or H; "" means M.
	Level string
	// Margin is the quiet zone in modules (0..MaxMargin). 0 is a valid
	// margin, so DefaultOptions rather than Render supplies the default.
	Margin int
	// Format is png or svg; "" means png.
	Format Format
}

// DefaultOptions are the options of a request that sets none: black on
// white, 512 pixels, level M, a 4 module margin, PNG.
func DefaultOptions() Options {
	return Options{
		Foreground: color.RGBA{A: 0xff},
		Background: color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff},
		Size:       DefaultSize,
		Level:      DefaultLevel,
		Margin:     DefaultMargin,
		Format:     PNG,
	}
}

// normalized fills the zero values that cannot be meant literally.
func (o Options) normalized() Options {
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	if o.Level == "" {
		o.Level = DefaultLevel
	}
	if o.Format == "" {
		o.Format = PNG
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Content == "":
		return fmt.Errorf("qr: empty content")
	case o.Size < MinSize || o.Size > MaxSize:
		return fmt.Errorf("qr: size %d is outside %d..%d", o.Size, MinSize, MaxSize)
	case o.Margin < 0 || o.Margin > MaxMargin:
		return fmt.Errorf("qr: margin %d is outside 0..%d", o.Margin, MaxMargin)
	case o.Format != PNG && o.Format != SVG:
		return fmt.Errorf("qr: unknown format %q", o.Format)
	}
	if _, ok := levels[o.Level]; !ok {
		return fmt.Errorf("qr: unknown level %q", o.Level)
	}
	return nil
}
