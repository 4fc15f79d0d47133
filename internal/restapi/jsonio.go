package restapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"unicode/utf8"
)

// jsonBuffers keeps the buffers answers are encoded into. A page of 25
// links is about 20 KB; grown from nothing per request, its buffer was
// two thirds of the bytes a list request allocated, and at 100 000 links
// the allocation rate sets how often the collector marks a heap of
// 200 MB, which slows every request meanwhile (docs/scaling.md, "Finding
// links at scale").
var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledJSON bounds the buffers kept, so that one large answer (a bulk
// request's) does not stay in memory.
const maxPooledJSON = 256 << 10

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledJSON {
			jsonBuffers.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false) // URLs with & stay readable
	if err := enc.Encode(v); err != nil {
		// Only our own types are encoded; this is a bug, not bad input.
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"message":"Server Error."}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// readBody reads the (size-limited) request body.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge(mbe.Limit)
	}
	if err != nil {
		return nil, errMalformedJSON
	}
	return b, nil
}

// decodeObject reads a JSON object body into its raw members, so each field
// can be checked for presence, null and type on its own (a wrong type is a
// 422 on that field, not a 400 for the whole body). An empty body is an
// empty object: the required fields then say what is missing.
func decodeObject(r *http.Request) (map[string]json.RawMessage, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return parseObject(b)
}

func parseObject(b []byte) (map[string]json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	// JSON text is UTF-8; encoding/json would quietly turn invalid bytes
	// into U+FFFD and store something the client never sent.
	if !utf8.Valid(b) || !json.Valid(b) {
		return nil, errMalformedJSON
	}
	if b[0] != '{' {
		return nil, errNotObject
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, errMalformedJSON
	}
	return m, nil
}
