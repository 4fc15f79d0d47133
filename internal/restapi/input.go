package restapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// optional is an optional request field: absent (keep what is there),
// present with null (clear it) or present with a value (set it).
type optional[T any] struct {
	present bool
	value   *T
}

func (o optional[T]) apply(dst **T) {
	if o.present {
		*dst = o.value
	}
}

// form reads the members of a JSON object body field by field, the way a
// Laravel request does: strings are trimmed (passwords excepted) and an
// empty string counts as null; a value of the wrong type is an error on its
// field. Messages go to errs, in the order the fields are read.
type form struct {
	raw  map[string]json.RawMessage
	errs fieldErrors
}

// attribute is how a field is named in messages: utm_source is "utm source".
func attribute(field string) string { return strings.ReplaceAll(field, "_", " ") }

func (f *form) fail(field, msg string) {
	f.errs.add(field, "The "+attribute(field)+" field "+msg+".")
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// str reads an optional string; trim says whether surrounding white space
// is dropped. An empty string reads as null.
func (f *form) str(field string, trim bool) optional[string] {
	v, ok := f.raw[field]
	if !ok {
		return optional[string]{}
	}
	if isNull(v) {
		return optional[string]{present: true}
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		f.fail(field, "must be a string")
		return optional[string]{}
	}
	if trim {
		s = strings.TrimSpace(s)
	}
	if s == "" {
		return optional[string]{present: true}
	}
	return optional[string]{present: true, value: &s}
}

// required reads a required string; ok is false (and the field failed)
// when it is missing, null, empty or not a string.
func (f *form) required(field string) (string, bool) {
	o := f.str(field, true)
	if f.errs.has(field) {
		return "", false
	}
	if o.value == nil {
		f.fail(field, "is required")
		return "", false
	}
	return *o.value, true
}

// integer reads an optional integer: a JSON integer or a string of
// digits (forms send numbers as strings).
func (f *form) integer(field string) optional[int64] {
	v, ok := f.raw[field]
	if !ok {
		return optional[int64]{}
	}
	if isNull(v) {
		return optional[int64]{present: true}
	}
	text := string(bytes.TrimSpace(v))
	if strings.HasPrefix(text, `"`) {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			f.fail(field, "must be an integer")
			return optional[int64]{}
		}
		if text = strings.TrimSpace(s); text == "" {
			return optional[int64]{present: true}
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		f.fail(field, "must be an integer")
		return optional[int64]{}
	}
	return optional[int64]{present: true, value: &n}
}

// dateFormats are the date-times accepted; times without a zone are UTC.
var dateFormats = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
}

// date reads an optional date-time string.
func (f *form) date(field string) optional[time.Time] {
	o := f.str(field, true)
	if !o.present || o.value == nil {
		return optional[time.Time]{present: o.present}
	}
	if t, ok := parseDate(*o.value); ok {
		return optional[time.Time]{present: true, value: &t}
	}
	f.fail(field, "must be a valid date")
	return optional[time.Time]{}
}

// parseDate reads one of dateFormats, in UTC. Kubernetes stores a zero
// time as null, and years before 1970 or after 9999 are no time anyone
// means: they are refused rather than dropped or mangled.
func parseDate(s string) (time.Time, bool) {
	for _, layout := range dateFormats {
		if t, err := time.Parse(layout, s); err == nil && t.Year() >= 1970 && t.Year() <= 9999 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// strings reads an optional array of strings (null clears it); element
// errors name the element, as Laravel does: tags.2.
func (f *form) stringList(field string) optional[[]string] {
	v, ok := f.raw[field]
	if !ok {
		return optional[[]string]{}
	}
	if isNull(v) {
		return optional[[]string]{present: true}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		f.fail(field, "must be an array")
		return optional[[]string]{}
	}
	out := make([]string, 0, len(items))
	bad := false
	for i, item := range items {
		var s string
		if err := json.Unmarshal(item, &s); err != nil {
			f.fail(field+"."+strconv.Itoa(i), "must be a string")
			bad = true
			continue
		}
		out = append(out, strings.TrimSpace(s))
	}
	if bad {
		return optional[[]string]{}
	}
	return optional[[]string]{present: true, value: &out}
}

// check runs a validator on a value that is present, recording its message.
func (f *form) check(field string, v *string, validate func(string) string) {
	if v == nil || f.errs.has(field) {
		return
	}
	if msg := validate(*v); msg != "" {
		f.fail(field, msg)
	}
}
