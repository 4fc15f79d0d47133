package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/dns"
	"github.com/kurz-dev/kurz/internal/fieldindex"
)

// Verifier checks a domain against DNS (implemented by *dns.Verifier).
type Verifier interface {
	Verify(ctx context.Context, domain, token string) (dns.Result, error)
}

// DomainReconciler proves Domains through DNS and settles which one holds a
// hostname claimed in several namespaces.
type DomainReconciler struct {
	client.Client
	Recorder events.EventRecorder
	Verifier Verifier
	Schedule Schedule
	// Now is the clock; tests may stop it.
	Now func() time.Time
	// events emits the domain.verified and domain.unverified events
	// webhooks deliver.
	events changes
}

// SetupWithManager registers the controller. Status writes (its own
// lastCheckTime above all) never trigger a reconcile of the Domain written:
// DNS rechecks are driven by RequeueAfter alone. Only a recorded claim
// wakes the other Domains of its hostname.
func (r *DomainReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	b := statusController(mgr, "domain", &kurzv1alpha1.Domain{}, workers)
	// A Domain appearing, leaving, changing hostname or recording its
	// claim can take or release the hostname of the Domains that share it.
	return watchDomains(b, r.domainsSharingHostname).Complete(r)
}

// +kubebuilder:rbac:groups=kurz.dev,resources=domains,verbs=get;list;watch
// +kubebuilder:rbac:groups=kurz.dev,resources=domains/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Reconcile computes a Domain's status, checking DNS when a check is due,
// and patches the status when it changed.
func (r *DomainReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileStatus(ctx, r.Client, r.Recorder, req, statusPass[*kurzv1alpha1.Domain]{kind: "domain", compute: r.computeStatus, patched: r.events.domainPatched})
}

// computeStatus reads what d's status depends on (the Domains claiming its
// hostname, its namespace) and sets it. Its patch always carries the
// resourceVersion it was computed from: a pass that read d before another
// write (a leader that lost its Lease meanwhile, a cache behind) must not
// overwrite newer DNS proof or a newer claim; it gets 409 Conflict and
// runs again. Link status has no such lock: the redirect servers' click
// flushes move it all the time.
func (r *DomainReconciler) computeStatus(ctx context.Context, d *kurzv1alpha1.Domain) (ctrl.Result, bool, error) {
	var claimants kurzv1alpha1.DomainList
	if err := r.List(ctx, &claimants, client.MatchingFields{fieldindex.Domain: string(d.Spec.Domain)}); err != nil {
		return ctrl.Result{}, false, fmt.Errorf("list Domains of %s: %w", d.Spec.Domain, err)
	}
	ns := &corev1.Namespace{}
	if err := r.Get(ctx, types.NamespacedName{Name: d.Namespace}, ns); err != nil {
		return ctrl.Result{}, false, fmt.Errorf("get namespace of Domain %s: %w", d.Name, err)
	}
	return r.setStatus(ctx, d, claimants.Items, ns.UID, r.Now()), true, nil
}
