package restapi

import (
	"context"
	"errors"
	"net/http"

	"golang.org/x/sync/errgroup"
)

// meVerbs are the verbs /api/v1/me reports for each resource: those the
// API's routes check (routes.go).
var meVerbs = []string{"list", "get", "create", "update", "delete"}

// meResources are the resources /api/v1/me reports on.
var meResources = []string{"links", "domains", "webhooks"}

// meView answers GET /api/v1/me: who the token is, its workspace, and
// which verbs RBAC grants it, so a client (the console) shows only the
// controls that would work. It is advice, not enforcement: every route
// still checks its own verb.
type meView struct {
	Username      string                     `json:"username"`
	WorkspaceID   string                     `json:"workspace_id"`
	WorkspaceName string                     `json:"workspace_name"`
	Can           map[string]map[string]bool `json:"can"`
}

// GET /api/v1/me
func (s *server) showMe(w http.ResponseWriter, r *http.Request, c *caller) error {
	wid, err := s.workspaceID(r.Context(), c)
	if err != nil {
		return err
	}
	can, err := s.permissions(r.Context(), c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, meView{Username: c.user.Username, WorkspaceID: wid, WorkspaceName: c.workspace, Can: can})
	return nil
}

// permissions asks, as each route would, whether c may do every verb of
// meVerbs on every resource of meResources: the same SubjectAccessReviews,
// cached the same way, so /me and the routes cannot disagree. The fifteen
// reviews run at once; a cached caller costs none.
func (s *server) permissions(ctx context.Context, c *caller) (map[string]map[string]bool, error) {
	type answer struct {
		resource, verb string
		allowed        bool
	}
	answers := make([]answer, 0, len(meVerbs)*len(meResources))
	for _, res := range meResources {
		for _, verb := range meVerbs {
			answers = append(answers, answer{resource: res, verb: verb})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	for i := range answers {
		a := &answers[i]
		g.Go(func() error {
			err := s.auth.authorize(gctx, c, a.verb, a.resource)
			switch {
			case err == nil:
				a.allowed = true
			case errors.Is(err, errForbidden):
			default:
				return err
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[string]map[string]bool, len(meResources))
	for _, a := range answers {
		if out[a.resource] == nil {
			out[a.resource] = make(map[string]bool, len(meVerbs))
		}
		out[a.resource][a.verb] = a.allowed
	}
	return out, nil
}
