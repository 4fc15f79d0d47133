package restapi

import (
	"net/http"
)

// DELETE /api/v1/links/bulk: {"ids": [...]}, 1..100 links deleted, each
// answered as DELETE /api/v1/links/{id} answers (200 with its message, or
// 404). There is no atomic mode: a deleted Link cannot come back with its
// id, so a failure halfway could not be undone.
func (s *server) bulkDeleteLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	raw, err := decodeObject(r)
	if err != nil {
		return err
	}
	f := &form{raw: raw}
	ids := decodeIDs(f)
	if err := f.errs.err(); err != nil {
		return err
	}
	if err := s.chargeItems(w, c, len(ids), "ids"); err != nil {
		return err
	}
	answer := bulkAnswer{Data: make([]bulkItem, len(ids))}
	_ = forEach(ctx, len(ids), false, func(i int) error {
		out := &answer.Data[i]
		out.Index, out.ID = i, ids[i]
		obj, err := s.links.find(ctx, s, c, ids[i])
		if err == nil {
			err = s.links.delete(ctx, s, obj)
		}
		if err != nil {
			out.fail(ctx, err)
			return nil
		}
		s.links.awaitDelete(ctx, s, obj)
		out.Status, out.Message = http.StatusOK, msgLinkDeleted
		return nil
	})
	for i := range answer.Data {
		if out := &answer.Data[i]; out.Status == 0 {
			out.Index, out.ID = i, ids[i]
			out.fail(ctx, notAttempted(ctx))
		}
	}
	writeJSON(w, http.StatusOK, answer)
	return nil
}
