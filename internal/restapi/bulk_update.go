package restapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/timestamps"
	"github.com/kurz-dev/kurz/internal/validation"
)

// linkPatch is a validated PATCH /api/v1/links/bulk body: the links (ids)
// and the one change made to each: set (url and the optional fields, as an
// update takes them: absent keeps, null clears), then add_tags, then
// remove_tags.
type linkPatch struct {
	ids                 []string
	url                 optional[string]
	set                 linkOptions
	addTags, removeTags []string
	// hash is the bcrypt hash of set.password, made once for every link.
	hash *string
}

// decodeLinkPatch reads and validates a bulk PATCH body. key and domain
// cannot be set in bulk: every link would claim the same address.
func decodeLinkPatch(raw map[string]json.RawMessage) (linkPatch, error) {
	f := &form{raw: raw}
	var p linkPatch
	p.ids = decodeIDs(f)
	rawSet, hasSet := raw["set"]
	hasSet = hasSet && !isNull(rawSet)
	if hasSet {
		set, err := parseObject(rawSet)
		if err != nil {
			f.fail("set", "must be an object")
		} else {
			sf := &form{raw: set}
			for _, name := range []string{"key", "domain"} {
				if _, ok := set[name]; ok {
					sf.fail(name, "is prohibited")
				}
			}
			p.url = sf.str("url", true)
			if p.url.present && p.url.value == nil {
				sf.fail("url", msgNotEmpty)
			}
			sf.check("url", p.url.value, validation.URL)
			p.set = decodeLinkOptions(sf)
			for _, field := range sf.errs.order {
				for _, msg := range sf.errs.msgs[field] {
					f.errs.add("set."+field, msg)
				}
			}
		}
	}
	p.addTags = tagList(f, "add_tags")
	p.removeTags = tagList(f, "remove_tags")
	if !hasSet && len(p.addTags) == 0 && len(p.removeTags) == 0 && !f.errs.has("add_tags") && !f.errs.has("remove_tags") {
		f.fail("set", "is required when add tags and remove tags are not present")
	}
	return p, f.errs.err()
}

const msgNotEmpty = "must not be empty"

// tagList reads an optional list of tags: each checked as a link's tags
// are, repeats dropped.
func tagList(f *form, field string) []string {
	list := f.stringList(field)
	if list.value == nil {
		return nil
	}
	for i, t := range *list.value {
		if msg := validation.Tag(t); msg != "" {
			f.fail(field+"."+strconv.Itoa(i), msg)
		}
	}
	return dedupe(*list.value)
}

// apply makes the change to spec.
func (p *linkPatch) apply(spec *kurzv1alpha1.LinkSpec) {
	if v := p.url.value; v != nil {
		spec.URL = kurzv1alpha1.URL(*v)
	}
	p.set.apply(spec, p.hash)
	if len(p.addTags)+len(p.removeTags) == 0 {
		return
	}
	tags := slices.Clone(spec.Tags)
	for _, t := range p.addTags {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	tags = slices.DeleteFunc(tags, func(t string) bool { return slices.Contains(p.removeTags, t) })
	spec.Tags = nil
	if len(tags) > 0 {
		spec.Tags = tags
	}
}

// check refuses a change that would leave l with too many tags (a 422 on
// tags, as an update would answer).
func (p *linkPatch) check(l *kurzv1alpha1.Link) error {
	spec := l.Spec.DeepCopy()
	p.apply(spec)
	if msg := validation.Tags(spec.Tags); msg != "" {
		return validationError("tags", "The tags field "+msg+".")
	}
	return nil
}

// updateItem is one link of a bulk update: the cached link found (cur),
// what it was just before the write (before) and as written (obj), or err.
type updateItem struct {
	cur, before, obj *kurzv1alpha1.Link
	err              error
}

// PATCH /api/v1/links/bulk[?atomic=true]: the same change to 1..100 links
// (ids). Without atomic each link is found, checked, updated (retried on
// conflict, as PUT is) and stamped on its own; with it, every link is
// found and checked first (one missing or refused: 422, nothing written),
// and a write that fails restores the links already changed.
func (s *server) bulkUpdateLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	atomic, err := atomicParam(r)
	if err != nil {
		return err
	}
	raw, err := decodeObject(r)
	if err != nil {
		return err
	}
	p, err := decodeLinkPatch(raw)
	if err != nil {
		return err
	}
	if err := s.chargeItems(w, c, len(p.ids), "ids"); err != nil {
		return err
	}
	if p.hash, err = hashPassword(p.set.password); err != nil {
		return err
	}
	wid, err := s.workspaceID(ctx, c)
	if err != nil {
		return err
	}
	items := make([]updateItem, len(p.ids))
	for i, id := range p.ids {
		it := &items[i]
		if it.cur, it.err = s.links.find(ctx, s, c, id); it.err == nil {
			it.err = p.check(it.cur)
		}
	}
	wctx := ctx
	if atomic {
		errs := map[int]error{}
		for i := range items {
			if err := items[i].err; err != nil {
				errs[i] = prefixed("id", err)
			}
		}
		if len(errs) > 0 {
			return batchError(ctx, errs, len(items), "changed")
		}
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), bulkWriteTimeout)
		defer cancel()
	}
	err = forEach(wctx, len(items), atomic, func(i int) error {
		it := &items[i]
		if it.err != nil {
			return nil
		}
		it.obj, it.err = s.links.update(wctx, s, it.cur, func(l *kurzv1alpha1.Link) {
			it.before = l.DeepCopy()
			p.apply(&l.Spec)
		})
		if it.err != nil {
			it.obj = nil
		}
		return it.err
	})
	if atomic && err != nil {
		failed := slices.IndexFunc(items, func(it updateItem) bool { return it.obj == nil })
		if items[failed].err == nil {
			items[failed].err = err
		}
		return writeFailed(ctx, failed, items[failed].err, s.restoreUpdated(wctx, items))
	}
	objs := make([]*kurzv1alpha1.Link, len(items))
	for i := range items {
		objs[i] = items[i].obj
	}
	s.settleWrites(ctx, objs, timestamps.TouchLink)
	answer := bulkAnswer{Data: make([]bulkItem, len(items))}
	for i := range items {
		it, out := &items[i], &answer.Data[i]
		out.Index, out.ID = i, p.ids[i]
		if it.obj == nil {
			if it.err == nil {
				it.err = notAttempted(ctx)
			}
			out.fail(ctx, it.err)
			continue
		}
		v := newLinkView(it.obj, wid)
		out.Status, out.Link = http.StatusOK, &v
	}
	writeJSON(w, http.StatusOK, answer)
	return nil
}

// prefixed names an error without fields ("Link not found.") after field,
// so that an atomic refusal says "3.id"; field errors keep their names.
func prefixed(field string, err error) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.fields == nil && ae.status != http.StatusInternalServerError {
		return validationError(field, ae.message)
	}
	return err
}

// restoreUpdated writes back the spec each changed link had before an
// atomic update failed, under the resourceVersion it wrote (a link changed
// by someone else since keeps that change), and says so for the answer.
func (s *server) restoreUpdated(ctx context.Context, items []updateItem) string {
	var mu sync.Mutex
	var left []string
	restored := 0
	_ = forEach(ctx, len(items), false, func(i int) error {
		it := &items[i]
		if it.obj == nil || it.before == nil {
			return nil
		}
		back := it.obj.DeepCopy()
		back.Spec = *it.before.Spec.DeepCopy()
		err := retry.OnError(undoBackoff, func(err error) bool { return !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) }, func() error {
			return s.client.Patch(ctx, back, client.MergeFromWithOptions(it.obj, client.MergeFromWithOptimisticLock{}))
		})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			logf.FromContext(ctx).Error(err, "could not restore a link of a failed atomic bulk update", "link", client.ObjectKeyFromObject(it.obj))
			left = append(left, string(it.obj.UID))
			return nil
		}
		restored++
		s.links.awaitWrite(ctx, s, back)
		return nil
	})
	msg := fmt.Sprintf("None of the %d links was changed: the %d changed were restored.", len(items), restored)
	if len(left) > 0 {
		msg = fmt.Sprintf("%d links changed could not be restored (ids %s); %d were restored.", len(left), strings.Join(left, ", "), restored)
	}
	return msg
}
