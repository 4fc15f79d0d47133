package restapi

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/timestamps"
)

// webhookView is a Webhook as the API shows it: its spec in the API's
// names, and its state. It names the signing Secret, never its value.
type webhookView struct {
	ID             string            `json:"id"`
	WorkspaceID    string            `json:"workspace_id"`
	URL            string            `json:"url"`
	Events         []string          `json:"events"`
	SecretName     string            `json:"secret_name"`
	SecretKey      string            `json:"secret_key"`
	LinkSelector   *linkSelectorBody `json:"link_selector"`
	PayloadVersion string            `json:"payload_version"`
	TimeoutSeconds int32             `json:"timeout_seconds"`
	MaxAttempts    int32             `json:"max_attempts"`
	// MaxClicksPerRequest bounds a link.clicked request's clicks.
	MaxClicksPerRequest int32 `json:"max_clicks_per_request"`
	// Status is pending (not reconciled since its last edit), ready,
	// failing (deliveries fail, retries go on) or stalled (only a change
	// of the Webhook, its Secret or the receiver helps); Reason and
	// Message are its Ready condition's.
	Status              string  `json:"status"`
	StatusReason        *string `json:"status_reason"`
	StatusMessage       *string `json:"status_message"`
	LastDeliveryAt      *string `json:"last_delivery_at"`
	LastSuccessAt       *string `json:"last_success_at"`
	ConsecutiveFailures int64   `json:"consecutive_failures"`
	LastError           *string `json:"last_error"`
	CreatedAt           string  `json:"created_at"`
}

func newWebhookView(w *kurzv1alpha1.Webhook, workspaceID string) webhookView {
	v := webhookView{
		ID:                  string(w.UID),
		WorkspaceID:         workspaceID,
		URL:                 w.Spec.URL,
		Events:              make([]string, len(w.Spec.Events)),
		SecretName:          w.Spec.SecretRef.Name,
		SecretKey:           orDefault(w.Spec.SecretRef.Key, "secret"),
		PayloadVersion:      orDefault(w.Spec.PayloadVersion, "v1"),
		TimeoutSeconds:      orDefaultInt(w.Spec.TimeoutSeconds, 10),
		MaxAttempts:         orDefaultInt(w.Spec.MaxAttempts, 8),
		MaxClicksPerRequest: orDefaultInt(w.Spec.MaxClicksPerRequest, 100),
		Status:              webhookState(w),
		LastDeliveryAt:      timeString(w.Status.LastDeliveryTime),
		LastSuccessAt:       timeString(w.Status.LastSuccessTime),
		ConsecutiveFailures: w.Status.ConsecutiveFailures,
		CreatedAt:           w.CreationTimestamp.UTC().Format(timestamps.Format),
	}
	for i, e := range w.Spec.Events {
		v.Events[i] = string(e)
	}
	if s := w.Spec.LinkSelector; s != nil {
		v.LinkSelector = &linkSelectorBody{MatchLabels: s.MatchLabels, MatchExpressions: s.MatchExpressions, Tags: s.Tags}
		if v.LinkSelector.MatchLabels == nil {
			v.LinkSelector.MatchLabels = map[string]string{}
		}
		if v.LinkSelector.MatchExpressions == nil {
			v.LinkSelector.MatchExpressions = []metav1.LabelSelectorRequirement{}
		}
		if v.LinkSelector.Tags == nil {
			v.LinkSelector.Tags = []string{}
		}
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, kurzv1alpha1.ConditionReady); c != nil && c.ObservedGeneration == w.Generation {
		v.StatusReason, v.StatusMessage = &c.Reason, &c.Message
	}
	if e := w.Status.LastError; e != "" {
		v.LastError = &e
	}
	return v
}

// webhookState sums up the conditions for the current generation.
func webhookState(w *kurzv1alpha1.Webhook) string {
	if w.Status.ObservedGeneration != w.Generation {
		return "pending"
	}
	conds := w.Status.Conditions
	switch {
	case meta.IsStatusConditionTrue(conds, kurzv1alpha1.ConditionStalled):
		return "stalled"
	case meta.IsStatusConditionTrue(conds, kurzv1alpha1.ConditionReconciling):
		return "failing"
	case meta.IsStatusConditionTrue(conds, kurzv1alpha1.ConditionReady):
		return "ready"
	}
	return "pending"
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func orDefaultInt(n, def int32) int32 {
	if n == 0 {
		return def
	}
	return n
}

func timeString(t *metav1.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(timestamps.Format)
	return &s
}
