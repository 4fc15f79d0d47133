package linkcodec

import (
	"bytes"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// eventDecoder decodes a watch stream's frames into metav1.WatchEvent,
// taking the object's bytes as they are (the object decoder reads them
// next); anything else goes to std.
type eventDecoder struct{ runtime.Serializer }

func (d eventDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	out, ok := into.(*metav1.WatchEvent)
	if !ok {
		return d.Serializer.Decode(data, defaults, into)
	}
	typ, object, err := readEvent(data)
	if err != nil {
		*out = metav1.WatchEvent{}
		return d.Serializer.Decode(data, defaults, into)
	}
	*out = metav1.WatchEvent{Type: typ}
	// As runtime.RawExtension's UnmarshalJSON: null is no object.
	if !bytes.Equal(object, []byte("null")) {
		out.Object.Raw = object
	}
	return out, nil, nil
}

var errNotEvent = errors.New("linkcodec: not a watch event")

// readEvent reads a watch event's type and the bytes of its object, as
// metav1.WatchEvent's JSON: names match exactly, the last of a repeated
// name wins, others are skipped.
//
// The object is a slice of data, not a copy (a copy was a fifth of the
// bytes a start allocated per Link): data is the frame the streaming
// decoder reads into its buffer, and client-go's watch decoder
// (k8s.io/client-go/rest/watch) decodes the object before it reads the
// next frame; the object decoder copies what it keeps.
func readEvent(data []byte) (typ string, object []byte, err error) {
	if typ, object, ok := readAPIServerEvent(data); ok {
		return typ, object, nil
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), options)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", nil, errNotEvent
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return "", nil, err
		}
		switch name.String() {
		case "type":
			tok, err := dec.ReadToken()
			if err != nil {
				return "", nil, err
			}
			if tok.Kind() != '"' {
				return "", nil, errNotEvent
			}
			typ = tok.String()
		case "object":
			v, err := dec.ReadValue()
			if err != nil {
				return "", nil, err
			}
			end := int(dec.InputOffset())
			object = data[end-len(v) : end : end]
		default:
			if err := dec.SkipValue(); err != nil {
				return "", nil, err
			}
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return "", nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return "", nil, errNotEvent // more after the event
	}
	return typ, object, nil
}

var (
	eventTypes  = map[string]string{"ADDED": "ADDED", "MODIFIED": "MODIFIED", "DELETED": "DELETED", "BOOKMARK": "BOOKMARK", "ERROR": "ERROR"}
	eventStart  = []byte(`{"type":"`)
	eventObject = []byte(`","object":`)
)

// readAPIServerEvent reads an event written as kube-apiserver writes every
// one, {"type":"<TYPE>","object":<object or array>} with nothing else, and
// tells whether data was one. The object's end is found by scan, not
// checked: the object decoder reads every byte of it next, and refuses what
// is not JSON (an event client-go's decoder would refuse fails there
// instead).
func readAPIServerEvent(data []byte) (typ string, object []byte, ok bool) {
	rest, ok := bytes.CutPrefix(data, eventStart)
	if !ok {
		return "", nil, false
	}
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return "", nil, false
	}
	for _, c := range rest[:q] {
		if c < 0x20 || c >= 0x80 || c == '\\' { // escapes, controls, UTF-8: the tokenizer's
			return "", nil, false
		}
	}
	typ, known := eventTypes[string(rest[:q])] // the usual types without a copy each
	if !known {
		typ = string(rest[:q])
	}
	if rest, ok = bytes.CutPrefix(rest[q:], eventObject); !ok || len(rest) == 0 || (rest[0] != '{' && rest[0] != '[') {
		return "", nil, false
	}
	var s scan
	end := s.run(rest, 0)
	if end < 0 || string(bytes.TrimRight(rest[end:], " \t\r\n")) != "}" {
		return "", nil, false
	}
	return typ, rest[:end:end], true
}
