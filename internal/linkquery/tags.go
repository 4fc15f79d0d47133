package linkquery

// TagCount is a tag and how many links of the namespace carry it.
type TagCount struct {
	Name  string
	Links int
}

// Tags returns every tag of namespace's links with its link count, in no
// particular order.
func (ix *Index) Tags(namespace string) []TagCount {
	sp := ix.space(namespace)
	if sp == nil {
		return []TagCount{}
	}
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	out := make([]TagCount, 0, len(sp.tags.ids))
	for id, name := range sp.tags.names {
		if name != "" {
			out = append(out, TagCount{Name: name, Links: int(sp.tags.counts[id])})
		}
	}
	return out
}
