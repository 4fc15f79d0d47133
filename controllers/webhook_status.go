package controllers

import (
	"errors"
	"fmt"
	"strings"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// verdict is what a Webhook's delivery figures say.
type verdict int

const (
	delivering verdict = iota // no attempt yet, or the last one succeeded
	failing                   // the last attempt failed; retries go on
	gone                      // the receiver answered 410 Gone
	refused                   // the address was refused when kurz connected
)

// deliveryVerdict reads the figures the dispatchers wrote.
func deliveryVerdict(st *kurzv1alpha1.WebhookStatus) verdict {
	switch {
	case st.ConsecutiveFailures == 0 && st.LastError == "":
		return delivering
	case webhooks.IsGone(st.LastError):
		return gone
	case webhooks.IsRefusal(st.LastError):
		return refused
	}
	return failing
}

// setWebhookStatus sets w's status from its URL check, its Secret's
// (secretErr: nil when the Secret holds a valid secret) and the delivery
// figures. A new generation starts with clean figures: the failures of
// the old URL say nothing about the new one.
func setWebhookStatus(w *kurzv1alpha1.Webhook, check webhooks.URLCheck, secretErr error) {
	if g := w.Status.ObservedGeneration; g != 0 && g != w.Generation {
		w.Status.ConsecutiveFailures, w.Status.LastError = 0, ""
	}
	w.Status.Host = check.Host
	w.Status.ObservedGeneration = w.Generation
	setReadiness(w, webhookReadiness(w, check, secretErr))
}

// webhookReadiness says how w's state reads (see the api package docs), in
// the order of what blocks more: the Secret (nothing can be signed), the
// URL (nothing can be sent), the receiver's 410, an address refused when
// connecting, failing deliveries (retried: waiting), else Subscribed.
func webhookReadiness(w *kurzv1alpha1.Webhook, check webhooks.URLCheck, secretErr error) readiness {
	st := &w.Status
	var invalid errSecretInvalid
	switch {
	case errors.As(secretErr, &invalid):
		return readiness{progress: stalled, reason: kurzv1alpha1.ReasonSecretInvalid, message: invalid.Error() + "; nothing is sent until it is fixed"}
	case secretErr != nil:
		return readiness{progress: stalled, reason: kurzv1alpha1.ReasonSecretNotFound, message: secretMessage(secretErr)}
	case check.Refused != "":
		return readiness{progress: stalled, reason: kurzv1alpha1.ReasonURLRefused, message: "kurz does not deliver to this URL: " + check.Refused}
	}
	switch deliveryVerdict(st) {
	case gone:
		return readiness{progress: stalled, reason: kurzv1alpha1.ReasonReceiverGone,
			message: "The receiver answered 410 Gone, which asks senders to stop; kurz still sends new events: fix the receiver, or change or delete this Webhook"}
	case refused:
		return readiness{progress: stalled, reason: kurzv1alpha1.ReasonURLRefused, message: "kurz does not deliver to this URL: " + st.LastError}
	case failing:
		return readiness{progress: waiting, reason: kurzv1alpha1.ReasonDeliveryFailing,
			message: fmt.Sprintf("%d delivery attempts failed in a row, the last: %s; retries go on", st.ConsecutiveFailures, st.LastError)}
	}
	msg := "Events go to " + check.Host
	if check.Unresolved {
		msg += " (its name does not resolve now)"
	}
	return readiness{progress: settled, reason: kurzv1alpha1.ReasonSubscribed, message: msg}
}

// secretMessage says which Secret is missing and how to fix it.
func secretMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "no signing Secret: ") + "; create it with the label " + kurzv1alpha1.WebhookSigningLabel + "=true (nothing is sent meanwhile)"
}
