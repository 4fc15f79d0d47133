package webhooks

import (
	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Click demand: link.clicked costs the rest of kurz only while a Webhook
// of the cluster subscribes to it. Until then Clicked returns at once,
// and the redirect's capture, when only webhooks need it, does not run
// (OnClickDemand; internal/analytics/wiring's OnDemand). The first Webhook
// that wants link.clicked starts the capture; the last one going away
// stops it again.

// OnClickDemand registers f, called with true when the first Webhook of the
// cluster that subscribes to link.clicked appears and with false when the
// last one is gone (never twice the same in a row). Call it before the
// manager starts; f runs on the Webhook informer's goroutine and must not
// block.
func (d *Dispatcher) OnClickDemand(f func(on bool)) {
	d.demandMu.Lock()
	defer d.demandMu.Unlock()
	d.onDemand = append(d.onDemand, f)
}

// WantsClicks reports whether a Webhook of the cluster subscribes to
// link.clicked, as the dispatcher last saw its Webhooks.
func (d *Dispatcher) WantsClicks() bool { return d.wantClicks.Load() }

// recountClicks decides, after a Webhook was added, changed or deleted,
// whether any Webhook wants link.clicked (a walk over the cached Webhooks:
// they change rarely), and tells the registered functions when that flips.
func (d *Dispatcher) recountClicks() {
	want := false
	for _, obj := range d.webhooks.List() {
		if w, ok := obj.(*kurzv1alpha1.Webhook); ok && w.DeletionTimestamp == nil && wants(w, kurzv1alpha1.EventLinkClicked) {
			want = true
			break
		}
	}
	d.demandMu.Lock()
	defer d.demandMu.Unlock()
	if want == d.wantClicks.Load() {
		return
	}
	d.wantClicks.Store(want)
	for _, f := range d.onDemand {
		f(want)
	}
}
