package controllers

import (
	"context"
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// patchStatus writes obj's status with a JSON merge patch computed against
// orig, so it carries only the fields this pass changed and never clobbers
// what others write to status (the redirect servers' click counts). With
// lock the patch also carries orig's resourceVersion: used when the pass
// stamped timestamps or minted the token, which must happen exactly once.
//
// The patch is computed from the two statuses alone, not the whole objects
// (client.MergeFrom): the status subresource ignores everything else, so
// the patch is the same, and a bulk import of 100 000 Links does not
// marshal 200 000 whole objects to find it.
func patchStatus(ctx context.Context, c client.Client, orig, obj client.Object, lock bool) error {
	p := statusPatch{before: statusOf(orig), after: statusOf(obj)}
	if lock {
		if p.resourceVersion = orig.GetResourceVersion(); p.resourceVersion == "" {
			return fmt.Errorf("patch status of %s: no resourceVersion to lock on", client.ObjectKeyFromObject(orig))
		}
	}
	if err := c.Status().Patch(ctx, obj, p); err != nil {
		return fmt.Errorf("patch status: %w", err)
	}
	return nil
}

// statusOf returns the status of a kind whose status the controllers write.
func statusOf(o client.Object) any {
	switch o := o.(type) {
	case *kurzv1alpha1.Link:
		return &o.Status
	case *kurzv1alpha1.Domain:
		return &o.Status
	case *kurzv1alpha1.Webhook:
		return &o.Status
	}
	panic(fmt.Sprintf("controllers: no status patch for %T", o))
}

// statusPatch is a JSON merge patch from status before to status after,
// with metadata.resourceVersion as a precondition when resourceVersion is
// set (kube-apiserver answers 409 Conflict when the object moved on).
type statusPatch struct {
	before, after   any
	resourceVersion string
}

// statusDoc is the part of an object a status patch is computed over.
type statusDoc struct {
	Metadata *rvOnly `json:"metadata,omitempty"`
	Status   any     `json:"status"`
}

type rvOnly struct {
	ResourceVersion string `json:"resourceVersion"`
}

func (p statusPatch) Type() types.PatchType { return types.MergePatchType }

func (p statusPatch) Data(client.Object) ([]byte, error) {
	before, err := json.Marshal(statusDoc{Status: p.before})
	if err != nil {
		return nil, err
	}
	after := statusDoc{Status: p.after}
	if p.resourceVersion != "" {
		after.Metadata = &rvOnly{ResourceVersion: p.resourceVersion}
	}
	afterJSON, err := json.Marshal(after)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(before, afterJSON)
}
