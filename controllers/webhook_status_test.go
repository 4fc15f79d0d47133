package controllers

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// TestWebhookConditionsTable: every state of a Webhook (see the api
// package docs) from its inputs, and what kstatus makes of it.
func TestWebhookConditionsTable(t *testing.T) {
	ok := webhooks.URLCheck{Host: "hooks.example.com"}
	noSecret := fmt.Errorf("%w: Secret s not found", errors.New("no signing Secret"))
	for _, tc := range []struct {
		name      string
		check     webhooks.URLCheck
		secretErr error
		figures   kurzv1alpha1.WebhookStatus
		want      conds
		kstatus   status.Status
	}{
		{"fresh", ok, nil, kurzv1alpha1.WebhookStatus{}, conds{ready: "True/Subscribed"}, status.CurrentStatus},
		{"delivering", ok, nil, kurzv1alpha1.WebhookStatus{LastSuccessTime: &metav1.Time{}}, conds{ready: "True/Subscribed"}, status.CurrentStatus},
		{"failing", ok, nil, kurzv1alpha1.WebhookStatus{ConsecutiveFailures: 3, LastError: "HTTP 503 Service Unavailable"},
			conds{ready: "False/DeliveryFailing", reconciling: "True/DeliveryFailing"}, status.InProgressStatus},
		{"gone", ok, nil, kurzv1alpha1.WebhookStatus{ConsecutiveFailures: 1, LastError: "HTTP 410 Gone"},
			conds{ready: "False/ReceiverGone", stalled: "True/ReceiverGone"}, status.FailedStatus},
		{"refused when connecting", ok, nil, kurzv1alpha1.WebhookStatus{ConsecutiveFailures: 1, LastError: "address refused: 127.0.0.1 is a loopback address"},
			conds{ready: "False/URLRefused", stalled: "True/URLRefused"}, status.FailedStatus},
		{"refused by the check", webhooks.URLCheck{Host: "127.0.0.1", Refused: "address refused: 127.0.0.1 is a loopback address"}, nil, kurzv1alpha1.WebhookStatus{},
			conds{ready: "False/URLRefused", stalled: "True/URLRefused"}, status.FailedStatus},
		{"no secret", ok, noSecret, kurzv1alpha1.WebhookStatus{}, conds{ready: "False/SecretNotFound", stalled: "True/SecretNotFound"}, status.FailedStatus},
		{"invalid secret", ok, errSecretInvalid{name: "s", key: "secret", err: errors.New("bad")}, kurzv1alpha1.WebhookStatus{ConsecutiveFailures: 2, LastError: "timeout after 10s"},
			conds{ready: "False/SecretInvalid", stalled: "True/SecretInvalid"}, status.FailedStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			w := &kurzv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "a", Generation: 2}, Status: tc.figures}
			w.Status.ObservedGeneration = 2
			setWebhookStatus(w, tc.check, tc.secretErr)
			g.Expect(condsOf(w.Status.Conditions)).To(Equal(tc.want))
			g.Expect(w.Status.Host).To(Equal(tc.check.Host))
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
			g.Expect(err).NotTo(HaveOccurred())
			u := &unstructured.Unstructured{Object: obj}
			u.SetGroupVersionKind(kurzv1alpha1.GroupVersion.WithKind("Webhook"))
			res, err := status.Compute(u)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res.Status).To(Equal(tc.kstatus))
		})
	}
}

// TestWebhookNewGenerationClearsFailures: the failures of the old URL say
// nothing about the new one.
func TestWebhookNewGenerationClearsFailures(t *testing.T) {
	g := NewWithT(t)
	w := &kurzv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Generation: 3},
		Status: kurzv1alpha1.WebhookStatus{ObservedGeneration: 2, ConsecutiveFailures: 5, LastError: "HTTP 410 Gone"}}
	setWebhookStatus(w, webhooks.URLCheck{Host: "h"}, nil)
	g.Expect(w.Status.ConsecutiveFailures).To(BeZero())
	g.Expect(w.Status.LastError).To(BeEmpty())
	g.Expect(condsOf(w.Status.Conditions)).To(Equal(conds{ready: "True/Subscribed"}))
	g.Expect(w.Status.ObservedGeneration).To(Equal(int64(3)))
}
