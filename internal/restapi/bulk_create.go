package restapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// createItem is one link of a bulk create: its input, the hash of its
// password, and what became of it (err, or the created obj).
type createItem struct {
	in   linkInput
	hash *string
	err  error
	obj  *kurzv1alpha1.Link
}

// POST /api/v1/links/bulk[?atomic=true]: a JSON array of 1..100 link
// bodies. Each is checked as POST /api/v1/links checks it, a later item
// with the domain and key of an earlier one is "taken", then every valid
// one is created (bulkWorkers at a time) under the claim locks of all of
// them. Without atomic each item is answered on its own; with it, one
// invalid item refuses the request (422, nothing written), and a create
// that fails deletes what the request had created.
func (s *server) bulkCreateLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	atomic, err := atomicParam(r)
	if err != nil {
		return err
	}
	raws, err := decodeArray(r, "links")
	if err != nil {
		return err
	}
	if err := s.chargeItems(w, c, len(raws), "links"); err != nil {
		return err
	}
	wid, err := s.workspaceID(ctx, c)
	if err != nil {
		return err
	}
	items := make([]createItem, len(raws))
	names := make([]string, 0, len(raws))
	for i, raw := range raws {
		it := &items[i]
		var m map[string]json.RawMessage
		if m, it.err = parseObject(raw); it.err == nil {
			it.in, it.err = decodeLinkInput(m)
		}
		if it.err == nil {
			names = append(names, linkClaimName(c, it.in))
		}
	}
	unlock := s.locks.lockAll(names)
	defer unlock()
	if err := s.checkBulkClaims(ctx, c, items); err != nil {
		return err
	}
	if atomic {
		if errs := refusedItems(items); len(errs) > 0 {
			return batchError(ctx, errs, len(items), "created")
		}
	}
	if err := hashPasswords(ctx, items); err != nil {
		return err
	}
	wctx := ctx
	if atomic {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), bulkWriteTimeout)
		defer cancel()
	}
	if failed := s.createItems(wctx, c, items, atomic); failed >= 0 {
		return writeFailed(ctx, failed, items[failed].err, s.deleteCreated(wctx, items))
	}
	objs := make([]*kurzv1alpha1.Link, len(items))
	for i := range items {
		objs[i] = items[i].obj
	}
	s.settleWrites(ctx, objs, nil)
	answer := bulkAnswer{Data: make([]bulkItem, len(items))}
	for i := range items {
		it, out := &items[i], &answer.Data[i]
		out.Index = i
		if it.obj == nil {
			out.fail(ctx, it.err)
			continue
		}
		v := newLinkView(it.obj, wid)
		out.Status, out.Link = http.StatusCreated, &v
	}
	writeJSON(w, http.StatusOK, answer)
	return nil
}

// linkClaimName is the name a link write locks (see lockedInput).
func linkClaimName(c *caller, in linkInput) string {
	return c.workspace + "/" + in.domain + "/" + in.key
}

// checkBulkClaims runs the cluster checks of every item still valid, in
// order: a later item with an earlier one's domain and key is refused as
// taken. An error that is no answer for one item (the cache failing) is
// returned.
func (s *server) checkBulkClaims(ctx context.Context, c *caller, items []createItem) error {
	held := map[string]bool{}
	first := map[string]bool{}
	for i := range items {
		it := &items[i]
		if it.err != nil {
			continue
		}
		name := linkClaimName(c, it.in)
		if first[name] {
			it.err = validationError("key", "The key has already been taken.")
			continue
		}
		first[name] = true
		err := s.checkLinkClaims(ctx, c, it.in, nil, held)
		var ae *apiError
		if err != nil && !errors.As(err, &ae) {
			return err
		}
		it.err = err
	}
	return nil
}

// refusedItems returns the errors of the items refused, by index.
func refusedItems(items []createItem) map[int]error {
	errs := map[int]error{}
	for i := range items {
		if items[i].err != nil {
			errs[i] = items[i].err
		}
	}
	return errs
}

// hashPasswords hashes the passwords of the valid items, bulkWorkers at
// a time (bcrypt costs tens of milliseconds each, on purpose).
func hashPasswords(ctx context.Context, items []createItem) error {
	return forEach(ctx, len(items), true, func(i int) error {
		it := &items[i]
		if it.err != nil || it.in.password.value == nil {
			return nil
		}
		var err error
		it.hash, err = hashPassword(it.in.password)
		return err
	})
}

// createItems creates the valid items (each announcing its creation time,
// see createLinkObject: one write a link) and returns -1, or
// with atomic the index of the first item whose create failed (the
// others under way finish; none starts after it).
func (s *server) createItems(ctx context.Context, c *caller, items []createItem, atomic bool) int {
	err := forEach(ctx, len(items), atomic, func(i int) error {
		it := &items[i]
		if it.err != nil {
			return nil
		}
		l := &kurzv1alpha1.Link{}
		l.Namespace = c.workspace
		it.in.apply(&l.Spec, it.hash)
		if it.err = s.createLinkObject(ctx, l); it.err != nil {
			return it.err
		}
		it.obj = l
		return nil
	})
	for i := range items {
		it := &items[i]
		if it.err == nil && it.obj == nil {
			// Not attempted: the client went away (or, with atomic, an
			// earlier item failed).
			it.err = err
			if it.err == nil {
				it.err = notAttempted(ctx)
			}
		}
	}
	if !atomic || err == nil {
		return -1
	}
	// Workers take items in order and finish what they started, so the
	// first item not created is the one that failed (or, when the time ran
	// out, the first one not attempted).
	for i := range items {
		if items[i].obj == nil {
			return i
		}
	}
	return -1
}

// undoBackoff retries the deletes and restores that undo an atomic
// request, for about six seconds.
var undoBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 6}

// deleteCreated deletes the links an atomic create made before one
// failed, waits until the lists no longer show them, and says so for the
// answer's message.
func (s *server) deleteCreated(ctx context.Context, items []createItem) string {
	var mu sync.Mutex
	var left []string
	deleted := 0
	_ = forEach(ctx, len(items), false, func(i int) error {
		obj := items[i].obj
		if obj == nil {
			return nil
		}
		uid := obj.UID
		err := retry.OnError(undoBackoff, func(err error) bool { return !apierrors.IsNotFound(err) }, func() error {
			return s.client.Delete(ctx, obj, client.Preconditions{UID: &uid})
		})
		mu.Lock()
		defer mu.Unlock()
		if err != nil && !apierrors.IsNotFound(err) {
			logf.FromContext(ctx).Error(err, "could not delete a link of a failed atomic bulk create", "link", client.ObjectKeyFromObject(obj))
			left = append(left, string(uid))
			return nil
		}
		deleted++
		s.links.awaitDelete(ctx, s, obj)
		return nil
	})
	msg := fmt.Sprintf("None of the %d links was kept: the %d created were deleted.", len(items), deleted)
	if len(left) > 0 {
		msg = fmt.Sprintf("%d links created could not be deleted and remain (ids %s); %d were deleted.", len(left), strings.Join(left, ", "), deleted)
	}
	return msg
}
