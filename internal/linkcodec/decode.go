package linkcodec

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

var (
	linkGVK     = kurzv1alpha1.GroupVersion.WithKind("Link")
	linkListGVK = kurzv1alpha1.GroupVersion.WithKind("LinkList")
)

// options make v2 read what client-go's decoder (sigs.k8s.io/json, with
// case-sensitive names) reads: a repeated name's last value wins, invalid
// UTF-8 becomes U+FFFD, unknown names are ignored (v2's default), times
// parse as metav1's methods parse them (time.go).
var options = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	json.WithUnmarshalers(timeUnmarshalers),
)

// decoder is the object decoder: Links and LinkLists with v2, the rest
// (and whatever v2 refuses, so errors read as client-go's) with std.
type decoder struct {
	std  runtime.Decoder
	opts json.Options // options, or a Skip's
}

func (d decoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	switch o := into.(type) {
	case nil:
		if l := new(kurzv1alpha1.Link); decodeAs(data, l, linkGVK, d.opts) {
			return l, &linkGVK, nil
		}
	case *kurzv1alpha1.Link:
		if decodeAs(data, o, linkGVK, d.opts) {
			return o, &linkGVK, nil
		}
	case *kurzv1alpha1.LinkList:
		if decodeAs(data, o, linkListGVK, d.opts) {
			return o, &linkListGVK, nil
		}
	}
	zero(into) // what v2 may have half-written
	return d.std.Decode(data, defaults, into)
}

// decodeAs unmarshals data into the zeroed obj and tells whether it is
// whole and of kind gvk.
func decodeAs[T any, PT interface {
	*T
	runtime.Object
}](data []byte, obj PT, gvk schema.GroupVersionKind, opts json.Options) bool {
	var zero T
	*obj = zero
	if err := json.Unmarshal(data, obj, opts); err != nil {
		return false
	}
	return obj.GetObjectKind().GroupVersionKind() == gvk
}

// zero clears the kinds decodeAs may have written into; others are left
// to std, as client-go would.
func zero(into runtime.Object) {
	switch o := into.(type) {
	case *kurzv1alpha1.Link:
		*o = kurzv1alpha1.Link{}
	case *kurzv1alpha1.LinkList:
		*o = kurzv1alpha1.LinkList{}
	}
}
