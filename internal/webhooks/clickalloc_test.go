package webhooks

import "testing"

// TestClickAllocatesNothing pins what a click costs the heap on its way to
// a link.clicked batch (Clicked: the lookup of its Link when the Webhook
// selects Links, its JSON written into the batch):
// nothing. A batch allocates when it leaves (its body's successor, the
// delivery, its id), not per click; every allocation per click was paid
// at every click of the cluster while a Webhook wanted link.clicked.
func TestClickAllocatesNothing(t *testing.T) {
	for _, selected := range []bool{false, true} {
		t.Run(map[bool]string{false: "every-link", true: "by-tag"}[selected], func(t *testing.T) {
			p := newClickPath(t, selected)
			click := func(i int) {
				p.ev.Link = p.links[i%len(p.links)]
				p.d.Clicked(&p.ev)
			}
			// One batch sent first: the next one fills a buffer of its
			// own, sized like it.
			for i := range fullBatch() + 1 {
				click(i)
			}
			p.d.sendBatch(p.s)
			before := len(p.s.q.items)
			i := 0
			// AllocsPerRun calls the function 101 times, fewer clicks than
			// a batch holds.
			allocs := testing.AllocsPerRun(100, func() { click(i); i++ })
			if len(p.s.q.items) != before || p.s.batchLen != i {
				t.Fatalf("a batch left during the measure (%d queued, %d batched of %d clicks)", len(p.s.q.items)-before, p.s.batchLen, i)
			}
			if allocs != 0 {
				t.Errorf("a click allocates %.2f times; want 0", allocs)
			}
		})
	}
}
