package restapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/pagination"
)

// The API server reads and writes Webhooks for their owners.
// +kubebuilder:rbac:groups=kurz.dev,resources=webhooks,verbs=get;list;watch;create;update;delete

const (
	webhooksPath      = "/api/v1/webhooks"
	msgWebhookDeleted = "Webhook deleted successfully."
)

func errWebhookNotFound() *apiError { return newError(http.StatusNotFound, "Webhook not found.") }

func webhookResource() *resource[*kurzv1alpha1.Webhook, webhookView] {
	r := &resource[*kurzv1alpha1.Webhook, webhookView]{
		name:      "webhook",
		newObject: func() *kurzv1alpha1.Webhook { return &kurzv1alpha1.Webhook{} },
		notFound:  errWebhookNotFound,
		view:      newWebhookView,
	}
	return r.indexedBy(func(w *kurzv1alpha1.Webhook) time.Time { return w.CreationTimestamp.Time })
}

// webhookRoutes are the routes of /api/v1/webhooks: list (the contract's
// pagination), create, show, update, delete, checked against
// webhooks.kurz.dev.
func (s *server) webhookRoutes() []route {
	return []route{
		{"GET " + webhooksPath, "list", "webhooks", s.listWebhooks, 0},
		{"POST " + webhooksPath, "create", "webhooks", s.createWebhook, 0},
		{"GET " + webhooksPath + "/{id}", "get", "webhooks", s.showWebhook, 0},
		{"PUT " + webhooksPath + "/{id}", "update", "webhooks", s.updateWebhook, 0},
		{"DELETE " + webhooksPath + "/{id}", "delete", "webhooks", s.deleteWebhook, 0},
	}
}

// GET /api/v1/webhooks
// One page of the workspace's Webhooks, newest first; no filters (a
// workspace has few).
func (s *server) listWebhooks(w http.ResponseWriter, r *http.Request, c *caller) error {
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	page := pagination.ParsePage(r.URL.Query().Get("page"))
	items, total := s.webhooks.index.Page(c.workspace, pagination.Offset(page), pagination.PerPage)
	views := make([]webhookView, len(items))
	for i, wh := range items {
		views[i] = newWebhookView(wh, wid)
	}
	writeJSON(w, http.StatusOK, pagination.Build(s.listURL(r, webhooksPath), page, total, views))
	return nil
}

// GET /api/v1/webhooks/{id}
func (s *server) showWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	wh, err := s.webhooks.find(r.Context(), s, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newWebhookView(wh, wid))
	return nil
}

// POST /api/v1/webhooks. The Secret is not looked at: the API server
// caches no Secret, and the Webhook's status says whether it is there.
func (s *server) createWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.webhooks.create(s, w, r, c, s.prepareWebhookWrite, func(ctx context.Context, wh *kurzv1alpha1.Webhook) error {
		wh.GenerateName = "webhook-"
		if err := s.client.Create(ctx, wh); err != nil {
			return fmt.Errorf("create webhook: %w", err)
		}
		return nil
	})
}

// PUT /api/v1/webhooks/{id}: url, events and secret_name are replaced;
// an optional field that is present is set (null: its default), one that
// is absent is kept.
func (s *server) updateWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.webhooks.replace(s, w, r, c, s.prepareWebhookWrite)
}

// DELETE /api/v1/webhooks/{id}
func (s *server) deleteWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.webhooks.remove(s, w, r, c, msgWebhookDeleted)
}

// prepareWebhookWrite decodes and validates the body. A Webhook claims
// nothing (no hostname, no key), so there is no lock to take and nothing
// to stamp.
func (s *server) prepareWebhookWrite(r *http.Request, c *caller, _ *kurzv1alpha1.Webhook) (p prepared[*kurzv1alpha1.Webhook], err error) {
	raw, err := decodeObject(r)
	if err != nil {
		return p, err
	}
	in, err := decodeWebhookInput(raw)
	if err != nil {
		return p, err
	}
	if p.workspaceID, err = s.workspaceID(r.Context(), c); err != nil {
		return p, err
	}
	p.apply = func(wh *kurzv1alpha1.Webhook) { in.apply(&wh.Spec) }
	p.stamp = func(*kurzv1alpha1.Webhook, time.Time) bool { return false }
	p.unlock = func() {}
	return p, nil
}
