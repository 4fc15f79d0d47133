package controllers

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/fieldindex"
)

// conflictRetry is how soon a pass that lost an optimistic-lock race runs
// again: the winner's write reaches the cache within milliseconds, and the
// status-only change it made would not trigger a reconcile by itself.
const conflictRetry = 200 * time.Millisecond

// LinkReconciler sets a Link's status: Ready and why, shortURL,
// observedGeneration and the created/updated stamps of kubectl edits.
type LinkReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// Links finds a link's key peers and a hostname's Links in the cache's
	// indexes.
	Links *fieldindex.Links
	// Now is the clock; tests may stop it.
	Now func() time.Time

	// owners tells Domain events that move a hostname from the others.
	owners hostOwners
	// events emits the link.* change events webhooks deliver.
	events changes
}

// SetupWithManager registers the controller. Every watch ignores updates
// that leave metadata.generation alone (status writes such as click
// flushes, label and annotation edits), so they never cause a reconcile;
// except a Domain's recorded claim, which decides who holds a hostname.
func (r *LinkReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	paced := newPacedLinks(pacedBound, pacedFeedInterval)
	b := statusController(mgr, "link", &kurzv1alpha1.Link{}, workers, createsPaced).
		// Creates reach the queue as it empties (link_pacing.go); the
		// first list's settled Links are not queued but checked once
		// (link_start.go).
		Watches(&kurzv1alpha1.Link{}, paced, builder.WithPredicates(onlyCreates, settledAtStart)).
		WatchesRawSource(paced.feed()).
		WatchesRawSource(r.startCheck(mgr.GetCache())).
		// A link appearing, leaving or changing its domain or key can win
		// or lose the key for the links that share it.
		Watches(&kurzv1alpha1.Link{}, handler.EnqueueRequestsFromMapFunc(r.linksSharingKey),
			builder.WithPredicates(predicate.GenerationChangedPredicate{}, notInInitialList))
	// A Domain appearing, leaving, changing hostname or recording its
	// claim decides whether the links of that hostname (in any namespace)
	// serve: all of them, paced as Creates are.
	return b.Watches(&kurzv1alpha1.Domain{}, paced.mapped(r.linksOfDomain),
		builder.WithPredicates(domainEventsForLinks...)).Complete(r)
}

// +kubebuilder:rbac:groups=kurz.dev,resources=links,verbs=get;list;watch
// +kubebuilder:rbac:groups=kurz.dev,resources=links/status,verbs=patch
// +kubebuilder:rbac:groups=kurz.dev,resources=domains,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile computes a Link's status and patches it when it changed.
func (r *LinkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileStatus(ctx, r.Client, r.Recorder, req, statusPass[*kurzv1alpha1.Link]{kind: "link", compute: r.computeStatus, quiet: firstActive, patched: r.events.linkPatched})
}

// computeStatus reads the link's inputs and sets its status; it requeues
// for the link's expiry.
func (r *LinkReconciler) computeStatus(ctx context.Context, link *kurzv1alpha1.Link) (ctrl.Result, bool, error) {
	now := r.Now()
	in, err := r.lookup(ctx, link)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	stamped := setLinkStatus(link, in, now)
	return linkRequeue(link, now), stamped, nil
}

// linkInputs are the objects a Link's readiness depends on.
type linkInputs struct {
	// domains are the Domains of every namespace with the link's
	// hostname, shallow copies of the cache's: read only.
	domains []kurzv1alpha1.Domain
	// peers are the Links of the namespace with the link's domain and key,
	// shallow copies of the cache's (fieldindex.Links.KeyPeers): read only.
	peers []kurzv1alpha1.Link
}

// lookup reads the link's inputs from the cache through field indexes.
func (r *LinkReconciler) lookup(ctx context.Context, link *kurzv1alpha1.Link) (linkInputs, error) {
	var domains kurzv1alpha1.DomainList
	// The cache's Domains, not copies: they are only read, and every
	// Link of a hostname reads the same few (at 100 000 Links on one
	// hostname, a copy each was 1.5 KB of garbage a reconcile).
	if err := r.List(ctx, &domains, client.MatchingFields{fieldindex.Domain: string(link.Spec.Domain)}, client.UnsafeDisableDeepCopy); err != nil {
		return linkInputs{}, fmt.Errorf("list Domains of %s: %w", link.Spec.Domain, err)
	}
	peers, err := r.Links.KeyPeers(link.Namespace, string(link.Spec.Domain), link.Spec.Key)
	if err != nil {
		return linkInputs{}, err
	}
	return linkInputs{domains: domains.Items, peers: peers}, nil
}

// firstActive reports whether c is a new link's first Ready, Active: the
// expected outcome of every create, not worth an event (one write per link
// created keeps bulk imports cheap).
func firstActive(orig *kurzv1alpha1.Link, c *metav1.Condition) bool {
	return len(orig.Status.Conditions) == 0 && c.Reason == kurzv1alpha1.ReasonActive
}
