package restapi

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/consolesession"
	"github.com/kurz-dev/kurz/internal/fieldindex"
	"github.com/kurz-dev/kurz/internal/pagination"
)

// The API server reviews tokens and access for every caller, reads and
// writes Links and Domains (and their status, for the created/updated
// stamps), and reads namespaces for workspace ids.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// +kubebuilder:rbac:groups=kurz.dev,resources=links;domains,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=kurz.dev,resources=links/status;domains/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Setup adds the API server to mgr. It runs on every replica. Call it
// before mgr starts: it registers the list indexes on the cache's informers.
func Setup(mgr ctrl.Manager, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	// Creating the informers now (the cache is not started yet, so this does
	// not block) makes the manager wait for them to sync before it starts
	// the server, so the first request already sees every object.
	ctx := context.Background()
	cachedLinks, err := fieldindex.NewLinks(ctx, mgr.GetCache())
	if err != nil {
		return fmt.Errorf("api server: %w", err)
	}
	s := newServer(mgr.GetClient(), mgr.GetAPIReader(), cachedLinks, o)
	if o.ConsoleSessionKeyFile != "" {
		if s.sessions, err = consolesession.LoadKeyFile(o.ConsoleSessionKeyFile); err != nil {
			return fmt.Errorf("api server: %w", err)
		}
	} else {
		mgr.GetLogger().WithName("restapi").Info(noSessionKey)
	}
	linkInformer, err := mgr.GetCache().GetInformer(ctx, &kurzv1alpha1.Link{})
	if err != nil {
		return fmt.Errorf("api server: Link informer: %w", err)
	}
	// One handler feeds both link indexes, the list index last: a write
	// awaited in it (await.go) is in the other one too.
	if err := pagination.Register(linkInformer, o.InitialLinks, pagination.Sink[*kurzv1alpha1.Link](s.linkQuery), s.links.index); err != nil {
		return err
	}
	domainInformer, err := mgr.GetCache().GetInformer(ctx, &kurzv1alpha1.Domain{})
	if err != nil {
		return fmt.Errorf("api server: Domain informer: %w", err)
	}
	if err := s.domains.index.Register(domainInformer); err != nil {
		return err
	}
	webhookInformer, err := mgr.GetCache().GetInformer(ctx, &kurzv1alpha1.Webhook{})
	if err != nil {
		return fmt.Errorf("api server: Webhook informer: %w", err)
	}
	if err := s.webhooks.index.Register(webhookInformer); err != nil {
		return err
	}
	if _, err := mgr.GetCache().GetInformer(ctx, &corev1.Namespace{}); err != nil {
		return fmt.Errorf("api server: Namespace informer: %w", err)
	}
	return mgr.Add(s)
}
