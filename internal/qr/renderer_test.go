package qr

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// counted makes r count its renders.
func counted(r *Renderer) *int {
	n := 0
	next := r.render
	r.render = func(o Options) ([]byte, string, error) {
		n++
		return next(o)
	}
	return &n
}

func TestRendererCaches(t *testing.T) {
	g := NewWithT(t)
	r := NewRenderer(2)
	renders := counted(r)
	o := DefaultOptions()
	o.Content = content

	first, ct, err := r.Render(o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ct).To(Equal("image/png"))
	g.Expect(*renders).To(Equal(1))

	again, ct2, err := r.Render(o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ct2).To(Equal(ct))
	g.Expect(again).To(Equal(first))
	g.Expect(*renders).To(Equal(1), "a cache hit must not render")

	// Size 0 is the default size: the same image.
	zero := o
	zero.Size = 0
	_, _, err = r.Render(zero)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*renders).To(Equal(1))

	// Any other option is another image.
	for _, f := range []func(*Options){
		func(o *Options) { o.Content += "x" },
		func(o *Options) { o.Foreground.R = 1 },
		func(o *Options) { o.Background.B = 1 },
		func(o *Options) { o.Size = 513 },
		func(o *Options) { o.Level = "H" },
		func(o *Options) { o.Margin = 5 },
		func(o *Options) { o.Format = SVG },
	} {
		other := o
		f(&other)
		before := *renders
		_, _, err := r.Render(other)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(*renders).To(Equal(before+1), "options %+v", other)
	}

	// Bounded: o was evicted by the later images.
	_, _, err = r.Render(o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*renders).To(Equal(9))
}

func TestRendererDoesNotCacheErrors(t *testing.T) {
	g := NewWithT(t)
	r := NewRenderer(10)
	fail := true
	calls := 0
	r.render = func(o Options) ([]byte, string, error) {
		calls++
		if fail {
			return nil, "", errors.New("boom")
		}
		return []byte("img"), "image/png", nil
	}
	o := DefaultOptions()
	o.Content = content
	_, _, err := r.Render(o)
	g.Expect(err).To(MatchError("boom"))
	fail = false
	data, _, err := r.Render(o)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(data).To(Equal([]byte("img")))
	g.Expect(calls).To(Equal(2))
}

func TestRendererConcurrent(t *testing.T) {
	g := NewWithT(t)
	r := NewRenderer(4)
	want, _, err := Render(Options{Content: content, Foreground: black, Background: white, Margin: 4})
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan []byte, 8)
	for range 8 {
		go func() {
			data, _, err := r.Render(Options{Content: content, Foreground: black, Background: white, Margin: 4})
			if err != nil {
				data = nil
			}
			done <- data
		}()
	}
	for range 8 {
		g.Eventually(done, 20*time.Second).Should(Receive(Equal(want)))
	}
}
