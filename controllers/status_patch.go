package controllers

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patchStatus writes obj's status with a JSON merge patch computed against
// orig, so it carries only the fields this pass changed and never clobbers
// what others write to status (the redirect servers' click counts). With
// lock the patch also carries orig's resourceVersion: used when the pass
// stamped timestamps or minted the token, which must happen exactly once.
func patchStatus(ctx context.Context, c client.Client, orig, obj client.Object, lock bool) error {
	var patch client.Patch
	if lock {
		patch = client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	} else {
		patch = client.MergeFrom(orig)
	}
	if err := c.Status().Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("patch status: %w", err)
	}
	return nil
}
