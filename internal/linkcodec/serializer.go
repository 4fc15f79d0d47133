package linkcodec

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Wrap returns ns with its application/json decoding done by this package
// (frames, watch events, Links and LinkLists); encoding, the other media
// types and every other kind stay ns's.
func Wrap(ns runtime.NegotiatedSerializer) runtime.NegotiatedSerializer {
	infos := slices.Clone(ns.SupportedMediaTypes())
	for i, info := range infos {
		if info.MediaType != runtime.ContentTypeJSON {
			continue
		}
		info.Serializer = jsonSerializer{info.Serializer}
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
type jsonSerializer struct{ runtime.Serializer }

func (s jsonSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	return decoder{std: s.Serializer}.Decode(data, defaults, into)
}
