package webhooks

import (
	"context"
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// figuresTick is how often the figures are looked at; each Webhook's are
// written at most every statusInterval.
const figuresTick = time.Second

// writeFigures writes each Webhook's delivery figures to its status: when
// they changed, at most every statusInterval per Webhook (and replica),
// never per delivery. The controller reads them to set the conditions.
func (d *Dispatcher) writeFigures(ctx context.Context) {
	tick := time.NewTicker(figuresTick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			now := d.now()
			for _, s := range d.sendersNow() {
				if snap, ok := s.fig.due(now, d.statusInterval); ok {
					if err := d.patchFigures(ctx, s, snap); err != nil {
						s.fig.unwritten()
						ctrl.LoggerFrom(ctx).V(1).Info("cannot write a Webhook's delivery figures; retrying", "webhook", s.key, "error", err.Error())
					}
				}
			}
		}
	}
}

// figuresPatch is the merge patch of the delivery fields of a Webhook's
// status: the other fields (conditions, observedGeneration) are the
// controller's and stay as they are.
type figuresPatch struct {
	Status figuresStatus `json:"status"`
}

type figuresStatus struct {
	LastDeliveryTime    *metav1.Time `json:"lastDeliveryTime"`
	LastSuccessTime     *metav1.Time `json:"lastSuccessTime"`
	ConsecutiveFailures int64        `json:"consecutiveFailures"`
	// LastError is null after a success: the merge patch removes it.
	LastError *string `json:"lastError"`
}

// patchFigures writes snap to s's Webhook, unless the status already holds
// a later delivery (another replica's): the figures then stay theirs.
func (d *Dispatcher) patchFigures(ctx context.Context, s *sender, snap snapshot) error {
	var cur kurzv1alpha1.Webhook
	if err := d.cache.Get(ctx, s.key, &cur); err != nil {
		return client.IgnoreNotFound(err)
	}
	if cur.UID != s.cfg.Load().uid {
		return nil // another Webhook took the name
	}
	last := metav1.NewTime(snap.lastDelivery.Truncate(time.Second))
	if t := cur.Status.LastDeliveryTime; t != nil && t.After(last.Time) {
		return nil
	}
	p := figuresStatus{LastDeliveryTime: &last, ConsecutiveFailures: snap.failures}
	if !snap.lastSuccess.IsZero() {
		t := metav1.NewTime(snap.lastSuccess.Truncate(time.Second))
		p.LastSuccessTime = &t
	} else {
		p.LastSuccessTime = cur.Status.LastSuccessTime
	}
	if snap.lastError != "" {
		e := truncate(snap.lastError, 256)
		p.LastError = &e
	}
	body, err := json.Marshal(figuresPatch{Status: p})
	if err != nil {
		return err
	}
	obj := &kurzv1alpha1.Webhook{}
	obj.Namespace, obj.Name = s.key.Namespace, s.key.Name
	return client.IgnoreNotFound(d.client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, body)))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
