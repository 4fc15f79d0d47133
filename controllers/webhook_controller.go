package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

// WebhookReconciler sets a Webhook's status: its host, whether kurz can
// sign (the Secret) and deliver (the URL) its events, and how deliveries
// go, from the figures every replica's dispatcher writes to the status
// (lastDeliveryTime, consecutiveFailures, lastError).
type WebhookReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// URLs decides about Webhooks' URLs with delivery's own rules.
	URLs *webhooks.Checker
}

// dnsRecheck is how soon a Webhook whose verdict rests on DNS (its name
// resolved to refused addresses, or did not resolve) is checked again.
const dnsRecheck = 5 * time.Minute

// SetupWithManager registers the controller. It reconciles a Webhook when
// its spec changes, when the delivery figures change its verdict (failing
// or not, refused, gone: not every figures write), and when its Secret
// changes.
func (r *WebhookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("webhook").
		For(&kurzv1alpha1.Webhook{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, verdictChanged))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.webhooksOfSecret)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
}

// +kubebuilder:rbac:groups=kurz.dev,resources=webhooks,verbs=get;list;watch
// +kubebuilder:rbac:groups=kurz.dev,resources=webhooks/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile computes a Webhook's status and patches it when it changed.
func (r *WebhookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileStatus(ctx, r.Client, r.Recorder, req, statusPass[*kurzv1alpha1.Webhook]{kind: "webhook", compute: r.computeStatus})
}

// computeStatus checks w's Secret and URL and sets its status.
func (r *WebhookReconciler) computeStatus(ctx context.Context, w *kurzv1alpha1.Webhook) (ctrl.Result, bool, error) {
	var secretErr error
	value, err := webhooks.SecretValue(ctx, r.Client, w.Namespace, w.Spec.SecretRef)
	switch {
	case webhooks.IsNoSecret(err):
		secretErr = err
	case err != nil:
		return ctrl.Result{}, false, fmt.Errorf("read the Secret of Webhook %s: %w", w.Name, err)
	default:
		if _, err := webhooks.ParseSecret(value); err != nil {
			secretErr = errSecretInvalid{name: w.Spec.SecretRef.Name, key: secretKey(w), err: err}
		}
	}
	check := r.URLs.Check(ctx, w)
	setWebhookStatus(w, check, secretErr)
	if check.ByDNS || check.Unresolved {
		return ctrl.Result{RequeueAfter: dnsRecheck}, false, nil
	}
	return ctrl.Result{}, false, nil
}

// errSecretInvalid: the Secret's value is not a Standard Webhooks secret.
// Its text names the Secret and key, never the value.
type errSecretInvalid struct {
	name, key string
	err       error
}

func (e errSecretInvalid) Error() string {
	return "Secret " + e.name + ", key " + e.key + ": " + e.err.Error()
}

func (e errSecretInvalid) Unwrap() error { return e.err }

func secretKey(w *kurzv1alpha1.Webhook) string {
	if k := w.Spec.SecretRef.Key; k != "" {
		return k
	}
	return "secret"
}

// webhooksOfSecret maps a signing Secret to the Webhooks of its namespace
// that name it.
func (r *WebhookReconciler) webhooksOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var list kurzv1alpha1.WebhookList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list Webhooks of a Secret", "namespace", o.GetNamespace())
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if list.Items[i].Spec.SecretRef.Name == o.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// verdictChanged passes a Webhook's status-only update when its delivery
// figures change what its conditions say (see deliveryVerdict), so the
// figures written every 30 s do not each cause a reconcile.
var verdictChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*kurzv1alpha1.Webhook)
		n, ok2 := e.ObjectNew.(*kurzv1alpha1.Webhook)
		return ok1 && ok2 && deliveryVerdict(&o.Status) != deliveryVerdict(&n.Status)
	},
}
