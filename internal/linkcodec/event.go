package linkcodec

import (
	"bytes"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// eventDecoder decodes a watch stream's frames into metav1.WatchEvent,
// taking the object's bytes as they are (the object decoder reads them
// next); anything else goes to std.
type eventDecoder struct{ runtime.Serializer }

// event is metav1.WatchEvent's JSON.
type event struct {
	Type   string         `json:"type"`
	Object jsontext.Value `json:"object"`
}

func (d eventDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	out, ok := into.(*metav1.WatchEvent)
	if !ok {
		return d.Serializer.Decode(data, defaults, into)
	}
	var e event
	if err := json.Unmarshal(data, &e, options); err != nil {
		*out = metav1.WatchEvent{}
		return d.Serializer.Decode(data, defaults, into)
	}
	*out = metav1.WatchEvent{Type: e.Type}
	// As runtime.RawExtension's UnmarshalJSON: null is no object.
	if !bytes.Equal(e.Object, []byte("null")) {
		out.Object.Raw = e.Object
	}
	return out, nil, nil
}
