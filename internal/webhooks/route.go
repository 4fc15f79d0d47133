package webhooks

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
)

// routeChanges turns the controllers' change events into deliveries for
// the Webhooks that want them: the body is built once per event and shared.
func (d *Dispatcher) routeChanges(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-d.changes:
			d.route(ctx, c)
		}
	}
}

func (d *Dispatcher) route(ctx context.Context, c Change) {
	var namespace string
	switch {
	case c.Link != nil:
		namespace = c.Link.Namespace
	case c.Domain != nil:
		namespace = c.Domain.Namespace
	default:
		return
	}
	var targets []*sender
	for _, w := range d.webhooksOf(namespace) {
		if !wants(w, c.Type) {
			continue
		}
		s := d.senderFor(w)
		if s == nil { // not started, or w deleted since it was read
			continue
		}
		if c.Link != nil && !s.cfg.Load().selects(c.Link.Labels, c.Link.Spec.Tags) {
			continue
		}
		targets = append(targets, s)
	}
	if len(targets) == 0 {
		return
	}
	body, err := changeBody(c, d.workspaceID(ctx, namespace))
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot encode a webhook event", "type", c.Type, "id", c.ID)
		return
	}
	dl := &delivery{typ: c.Type, id: c.ID, body: body}
	for _, s := range targets {
		s.enqueue(dl)
	}
}
