package linkcodec

import (
	"slices"

	"github.com/go-json-experiment/json"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// Wrap returns ns with its application/json decoding done by this package
// (frames, watch events, Links and LinkLists); encoding, the other media
// types and every other kind stay ns's. each, when not nil, is called on
// every Link decoded, alone or in a LinkList, before the caller gets it;
// skip is what each drops, which the decoder then does not build.
func Wrap(ns runtime.NegotiatedSerializer, each func(*kurzv1alpha1.Link), skip Skip) runtime.NegotiatedSerializer {
	opts := skip.options()
	infos := slices.Clone(ns.SupportedMediaTypes())
	for i, info := range infos {
		if info.MediaType != runtime.ContentTypeJSON {
			continue
		}
		info.Serializer = jsonSerializer{Serializer: info.Serializer, each: each, opts: opts}
		if s := info.StreamSerializer; s != nil {
			info.StreamSerializer = &runtime.StreamSerializerInfo{
				EncodesAsText: s.EncodesAsText,
				Serializer:    eventDecoder{Serializer: s.Serializer},
				Framer:        framer{},
			}
		}
		infos[i] = info
	}
	return negotiated{NegotiatedSerializer: ns, infos: infos}
}

type negotiated struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func (n negotiated) SupportedMediaTypes() []runtime.SerializerInfo { return n.infos }

// jsonSerializer is the JSON serializer with Decode replaced.
type jsonSerializer struct {
	runtime.Serializer
	each func(*kurzv1alpha1.Link)
	opts json.Options
}

func (s jsonSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := decoder{std: s.Serializer, opts: s.opts}.Decode(data, defaults, into)
	if err != nil || s.each == nil {
		return obj, gvk, err
	}
	switch o := obj.(type) {
	case *kurzv1alpha1.Link:
		s.each(o)
	case *kurzv1alpha1.LinkList:
		for i := range o.Items {
			s.each(&o.Items[i])
		}
	}
	return obj, gvk, nil
}
