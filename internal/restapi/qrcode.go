package restapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/kurz-dev/kurz/internal/qr"
)

// qrParams lists the QR parameters in the order their errors are reported.
var qrParams = []string{"download", "color", "background", "size", "level", "margin", "format"}

// PUT /api/v1/links/{id}/qr-code: the QR code of the short link, as PNG
// (or SVG). Parameters come from the query string or a JSON body.
func (s *server) linkQRCode(w http.ResponseWriter, r *http.Request, c *caller) error {
	l, err := s.links.find(r.Context(), s, c, r.PathValue("id"))
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	p, fieldErrs, err := qr.ParseParams(r.URL.Query(), body)
	if err != nil {
		return errMalformedJSON
	}
	if len(fieldErrs) > 0 {
		var f fieldErrors
		for _, name := range qrParams {
			for _, msg := range fieldErrs[name] {
				f.add(name, msg)
			}
		}
		return f.err()
	}
	p.Options.Content = l.ShortURL()
	data, contentType, err := s.qr.Render(p.Options)
	var tooSmall *qr.SizeError
	if errors.As(err, &tooSmall) {
		// Only the link and the asked size and margin decide this: the
		// caller can fix it, so it is a validation error, not a 500.
		var f fieldErrors
		f.add("size", tooSmall.Error())
		return f.err()
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	// The image shows a workspace's link: browsers may keep it, shared
	// caches may not.
	h.Set("Cache-Control", "private")
	if p.Download {
		ext := "png"
		if p.Options.Format == qr.SVG {
			ext = "svg"
		}
		h.Set("Content-Disposition", `attachment; filename="`+l.Spec.Key+"."+ext+`"`)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	return nil
}
