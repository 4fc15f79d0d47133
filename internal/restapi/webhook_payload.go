package restapi

import (
	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// LinkObject is the API's link object of l in the workspace workspaceID
// (its namespace's uid): the data of link.* webhook payloads
// (internal/webhooks), so a receiver gets exactly what GET
// /api/v1/links/{id} answers, and both change together.
func LinkObject(l *kurzv1alpha1.Link, workspaceID string) any { return newLinkView(l, workspaceID) }

// DomainObject is the API's domain object of d: the data of domain.*
// webhook payloads.
func DomainObject(d *kurzv1alpha1.Domain, workspaceID string) any {
	return newDomainView(d, workspaceID)
}
