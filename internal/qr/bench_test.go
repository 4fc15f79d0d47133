package qr

import "testing"

func benchOptions(f Format) Options {
	o := DefaultOptions()
	o.Content = "https://kurz.example/launch-2026"
	o.Format = f
	return o
}

func BenchmarkRender(b *testing.B) {
	for _, f := range []Format{PNG, SVG} {
		b.Run(string(f), func(b *testing.B) {
			o := benchOptions(f)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Render(o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRendererCached(b *testing.B) {
	r := NewRenderer(128)
	o := benchOptions(PNG)
	if _, _, err := r.Render(o); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := r.Render(o); err != nil {
			b.Fatal(err)
		}
	}
}
