package qr

import (
	lru "github.com/hashicorp/golang-lru/v2"
)

// Renderer renders through a bounded LRU cache keyed by all options, so a
// code asked for again (the same link, colours and size) costs a map
// look-up. Returned slices are shared with the cache: callers must not
// modify them.
type Renderer struct {
	cache *lru.Cache[Options, rendered]
	// render is Render; tests swap it to count renders.
	render func(Options) ([]byte, string, error)
}

type rendered struct {
	data        []byte
	contentType string
}

// NewRenderer returns a renderer caching up to size images (at least 1).
func NewRenderer(size int) *Renderer {
	c, err := lru.New[Options, rendered](max(size, 1))
	if err != nil {
		panic(err) // only for a size below 1, excluded above
	}
	return &Renderer{cache: c, render: Render}
}

// Render is the package's Render with a cache. Errors are not cached.
func (r *Renderer) Render(o Options) (data []byte, contentType string, err error) {
	o = o.normalized() // Size 0 and 512 are one image
	if hit, ok := r.cache.Get(o); ok {
		return hit.data, hit.contentType, nil
	}
	data, contentType, err = r.render(o)
	if err != nil {
		return nil, "", err
	}
	r.cache.Add(o, rendered{data: data, contentType: contentType})
	return data, contentType, nil
}
