package linkcodec

import (
	"errors"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Skip names what the caller drops from every Link it decodes, which the
// decoder then reads past without building: a start decodes every Link, and
// in a Link applied with kubectl and settled they are 1 195 of its 2 030
// bytes (BenchmarkWatchStream's appliedLink) and half of what decoding it
// allocated (kubectl's last-applied annotation is the object again, as an
// escaped string; managedFields nests a map per field). Skip saves work;
// it is not a filter: what the decoder leaves to client-go's (what is not
// a Link or a LinkList, or what encoding/json/v2 refuses) comes whole, so
// the caller still drops these, as cacheslim.Transform does.
type Skip struct {
	// ManagedFields leaves metadata.managedFields nil.
	ManagedFields bool
	// Annotation, when not empty, is an annotation left out; the map is
	// nil when it held no other.
	Annotation string
}

// options returns the decoding options with s's unmarshalers.
func (s Skip) options() json.Options {
	if s == (Skip{}) {
		return options
	}
	return json.JoinOptions(options, json.WithUnmarshalers(json.JoinUnmarshalers(
		timeUnmarshalers,
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, m *metav1.ObjectMeta) error {
			v := skimmedMetas.Get().(*skimmedMeta)
			defer func() {
				*v = skimmedMeta{} // zero, as the next decode expects, and holding nothing
				skimmedMetas.Put(v)
			}()
			if err := json.UnmarshalDecode(dec, v); err != nil {
				return err
			}
			*m = v.ObjectMeta
			m.Annotations, m.ManagedFields = v.Annotations, v.ManagedFields
			return nil
		}),
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, a *annotations) error {
			return a.read(dec, s.Annotation)
		}),
		json.UnmarshalFromFunc(func(dec *jsontext.Decoder, f *managedFields) error {
			if !s.ManagedFields {
				return json.UnmarshalDecode(dec, (*[]metav1.ManagedFieldsEntry)(f))
			}
			if k := dec.PeekKind(); k != '[' && k != 'n' {
				return errNotList // as client-go's decoder refuses it
			}
			*f = nil
			return dec.SkipValue()
		}),
	)))
}

// skimmedMeta is ObjectMeta with the two fields Skip may leave out
// shadowing its own (a shallower field wins the name, as in Go), so every
// other field of ObjectMeta, this version's or a later one's, decodes as
// it does in a Link.
type skimmedMeta struct {
	metav1.ObjectMeta `json:",inline"`
	Annotations       annotations   `json:"annotations,omitempty"`
	ManagedFields     managedFields `json:"managedFields,omitempty"`
}

// skimmedMetas holds the skimmedMeta a Link's metadata is decoded into
// before it is copied out. One per Link decoded was garbage the size of
// ObjectMeta: 276 MB of a start's allocations at a million Links (a heap
// profile of bench-scale's), 288 B and 4 % of the time a Link in
// BenchmarkWatchStream's skipping decoder.
var skimmedMetas = sync.Pool{New: func() any { return new(skimmedMeta) }}

type (
	annotations   map[string]string
	managedFields []metav1.ManagedFieldsEntry
)

var (
	errNotStrings = errors.New("linkcodec: annotations that are not an object of strings")
	errNotList    = errors.New("linkcodec: managedFields that are not a list")
)

// read decodes an object of strings as map[string]string does, but for
// the value named skip; the map is nil when that was all it held (as
// cacheslim's dropAnnotation leaves it). A repeated name's last value wins.
func (a *annotations) read(dec *jsontext.Decoder, skip string) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		*a = nil
		return nil
	case '{':
	default:
		return errNotStrings
	}
	m, skipped := map[string]string{}, false
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		k := name.String() // before the next read voids name
		if skip != "" && k == skip {
			if dec.PeekKind() != '"' {
				return errNotStrings // as client-go's decoder refuses it
			}
			skipped = true
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		v, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if v.Kind() != '"' {
			return errNotStrings
		}
		m[k] = v.String()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if skipped && len(m) == 0 {
		m = nil
	}
	*a = m
	return nil
}
