package linkcodec

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	kurzscheme "github.com/kurz-dev/kurz/internal/scheme"
)

// client-go's serializer as controller-runtime builds it for a typed
// client, and the same with this package's decoding.
var (
	std  runtime.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(kurzscheme.Scheme)}
	fast                              = Wrap(std, nil, Skip{})
)

type decoded struct {
	typ watch.EventType
	obj runtime.Object
	err string
}

// decodeStream reads every event of a watch stream as the reflector does.
func decodeStream(t testing.TB, ns runtime.NegotiatedSerializer, stream []byte) []decoded {
	t.Helper()
	return decodeReader(t, ns, bytes.NewReader(stream))
}

// decodeReader is decodeStream from a reader.
func decodeReader(t testing.TB, ns runtime.NegotiatedSerializer, r io.Reader) []decoded {
	t.Helper()
	objects, events, framer, err := runtime.NewClientNegotiator(ns, kurzv1alpha1.GroupVersion).StreamDecoder(runtime.ContentTypeJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	frames := framer.NewFrameReader(io.NopCloser(r))
	d := restclientwatch.NewDecoder(streaming.NewDecoder(frames, events), objects)
	var out []decoded
	for {
		typ, obj, err := d.Decode()
		if errors.Is(err, io.EOF) {
			return out
		}
		out = append(out, decoded{typ: typ, obj: obj, err: errString(err)})
		if err != nil {
			return out
		}
	}
}

// decodeObject decodes data as a typed client's Do().Into(into) does.
func decodeObject(t testing.TB, ns runtime.NegotiatedSerializer, data []byte, into runtime.Object) decoded {
	t.Helper()
	d, err := runtime.NewClientNegotiator(ns, kurzv1alpha1.GroupVersion).Decoder(runtime.ContentTypeJSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := d.Decode(data, nil, into)
	return decoded{obj: obj, err: errString(err)}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func ptr[T any](v T) *T { return &v }

// fullLink sets every field a Link has, with strings that need escapes.
func fullLink(i int) *kurzv1alpha1.Link {
	at := metav1.NewTime(time.Date(2026, 11, 23, 12, 0, i%60, 0, time.UTC))
	micro := metav1.NewMicroTime(time.Date(2026, 11, 23, 12, 0, 0, 123456000, time.UTC))
	l := &kurzv1alpha1.Link{
		TypeMeta: metav1.TypeMeta{APIVersion: "kurz.dev/v1alpha1", Kind: "Link"},
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("link-%d", i), Namespace: "team-a", UID: "0b9e9c1c-7a4e-4a0e-9d4e-5f6a7b8c9d0e",
			ResourceVersion: "12345", Generation: 3, CreationTimestamp: at,
			Labels:      map[string]string{"app": "kurz", "tier": "a<b>&c"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"kurz.dev/v1alpha1","kind":"Link","spec":{"url":"https://example.com/\u00e9?a=1&b=2"}}` + "\n"},
			Finalizers:  []string{"kurz.dev/clicks"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "kurz.dev/v1alpha1", Time: &at, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:spec":{".":{},"f:domain":{},"f:key":{}}}`),
			}},
		},
		Spec: kurzv1alpha1.LinkSpec{
			Domain: "go.example.com", Key: fmt.Sprintf("k%d", i),
			URL:                "https://www.example.com/articles/é/ünïcode?ref=news&x=\"q\"",
			IOS:                ptr(kurzv1alpha1.URL("https://apps.apple.com/app/x")),
			Android:            ptr(kurzv1alpha1.URL("https://play.google.com/store/apps/x")),
			UTM:                &kurzv1alpha1.LinkUTM{Source: ptr("news"), Medium: ptr("email"), Campaign: ptr("🎉 launch"), Term: ptr("t"), Content: ptr("c")},
			ExternalID:         ptr(int64(9007199254740993)),
			PasswordHash:       ptr("$2a$10$abcdefghijklmnopqrstuv"),
			ExpiresAt:          &at,
			ExpiredRedirectURL: ptr(kurzv1alpha1.URL("https://example.com/expired")),
			Tags:               []string{"a", "b\tc"},
		},
		Status: kurzv1alpha1.LinkStatus{
			ShortURL: "https://go.example.com/k", Clicks: 42, LastClickTime: &at, CreatedAt: &micro, UpdatedAt: &micro,
			UpdatedGeneration: 3, ObservedGeneration: 3,
			ClickWriters:              []kurzv1alpha1.ClickWriter{{ID: "replica-1", Seq: 7, Time: at}},
			ClickWritersPrunedThrough: &at,
			Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 3,
				LastTransitionTime: at, Reason: "Serving", Message: "The link serves https://go.example.com/k",
			}},
		},
	}
	l.Spec.UTM.Name = ptr("n")
	return l
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := stdjson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// eventJSON is a watch event as kube-apiserver writes it: metav1.WatchEvent,
// type first.
func eventJSON(t testing.TB, typ watch.EventType, obj any) []byte {
	return mustJSON(t, metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: mustJSON(t, obj)}})
}

// streams are watch streams as kube-apiserver writes them, and some it
// would not.
func streams(t testing.TB) map[string][]byte {
	full := fullLink(1)
	minimal := &kurzv1alpha1.Link{TypeMeta: full.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "d"}, Spec: kurzv1alpha1.LinkSpec{Domain: "a.b", Key: "k", URL: "https://a.b"}}
	bookmark := map[string]any{"kind": "Link", "apiVersion": "kurz.dev/v1alpha1", "metadata": map[string]any{
		"resourceVersion": "999", "creationTimestamp": nil, "annotations": map[string]string{"k8s.io/initial-events-end": "true"}},
		"spec": map[string]any{"domain": "", "key": "", "url": ""}, "status": map[string]any{}}
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: "too old resource version: 1 (2)", Reason: metav1.StatusReasonExpired, Code: 410}
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, []byte("\n")) }
	return map[string][]byte{
		"initial events and bookmark": join(eventJSON(t, watch.Added, full), eventJSON(t, watch.Added, minimal),
			eventJSON(t, watch.Bookmark, bookmark)),
		"modified and deleted": join(eventJSON(t, watch.Modified, full), eventJSON(t, watch.Deleted, minimal)),
		"error status":         eventJSON(t, watch.Error, status),
		"unknown fields and no whitespace between frames": []byte(`{"type":"ADDED","object":{"apiVersion":"kurz.dev/v1alpha1","kind":"Link","metadata":{"name":"x","zzz":[1,{"a":null}]},"spec":{"domain":"a.b","key":"k","url":"https://a.b","future":true}},"extra":1}` +
			`{"type":"ADDED","object":{"kind":"Link","apiVersion":"kurz.dev/v1alpha1","metadata":{"name":"y"},"spec":{"domain":"a.b","key":"k2","url":"https://a.b"}}}`),
		"repeated names, last wins":              []byte(`{"type":"ADDED","type":"MODIFIED","object":{"apiVersion":"kurz.dev/v1alpha1","kind":"Link","metadata":{"name":"x","name":"y"},"spec":{"domain":"a.b","key":"k","key":"k2","url":"https://a.b"}}}`),
		"invalid UTF-8":                          append(append([]byte(`{"type":"ADDED","object":{"apiVersion":"kurz.dev/v1alpha1","kind":"Link","metadata":{"name":"x"},"spec":{"domain":"a.b","key":"`), 0xff, 0xfe), []byte(`","url":"https://a.b"}}}`)...),
		"escapes":                                []byte(`{"type":"ADDED","object":{"apiVersion":"kurz.dev/v1alpha1","kind":"Link","metadata":{"name":"x"},"spec":{"domain":"a.b","key":"\u006b\/\t\"","url":"https://a.b/\ud83c\udf89\u2028"}}}`),
		"null object":                            []byte(`{"type":"ADDED","object":null}`),
		"wrong type in object":                   []byte(`{"type":"ADDED","object":{"apiVersion":"kurz.dev/v1alpha1","kind":"Link","metadata":{"name":"x"},"spec":{"domain":"a.b","key":7,"url":"https://a.b"}}}`),
		"kind missing":                           []byte(`{"type":"ADDED","object":{"apiVersion":"kurz.dev/v1alpha1","metadata":{"name":"x"}}}`),
		"other kind":                             []byte(`{"type":"ADDED","object":{"apiVersion":"kurz.dev/v1alpha1","kind":"Domain","metadata":{"name":"x"},"spec":{"domain":"a.b"}}}`),
		"invalid event type":                     []byte(`{"type":"SURPRISE","object":{"apiVersion":"kurz.dev/v1alpha1","kind":"Link"}}`),
		"truncated":                              eventJSON(t, watch.Added, full)[:700],
		"syntax error":                           []byte(`{"type":"ADDED","object":{"apiVersion":"kurz.dev/v1alpha1",,}}`),
		"large frame":                            eventJSON(t, watch.Added, withLongURL(full, 300_000)),
		"whitespace around frames":               append(append([]byte(" \n\t"), join(eventJSON(t, watch.Added, full), []byte("\r\n"), eventJSON(t, watch.Deleted, minimal))...), " \n"...),
		"escaped quotes and brackets in strings": []byte(`{"type":"ADDED","object":{"apiVersion":"kurz.dev/v1alpha1","kind":"Link","metadata":{"name":"x","labels":{"a":"\\","b":"\\\"}]","c":"\\\\"}},"spec":{"domain":"a.b","key":"[{\"","url":"https://a.b"}}}`),
		"a value neither object nor array":       []byte(" \n 7 " + string(eventJSON(t, watch.Added, minimal))),
	}
}

func withLongURL(l *kurzv1alpha1.Link, n int) *kurzv1alpha1.Link {
	l = l.DeepCopy()
	l.Spec.URL = kurzv1alpha1.URL("https://example.com/" + strings.Repeat("a", n))
	return l
}

// TestStreamsDecodeAsClientGo: every stream gives the same events, objects
// and errors through this package as through client-go's decoder.
func TestStreamsDecodeAsClientGo(t *testing.T) {
	for name, stream := range streams(t) {
		t.Run(name, func(t *testing.T) {
			want, got := decodeStream(t, std, stream), decodeStream(t, fast, stream)
			if len(want) == 0 {
				t.Fatal("client-go decoded nothing: the case tests nothing")
			}
			if name == "syntax error" { // the tokenizers word it differently
				if last := len(got) - 1; last >= 0 && len(got) == len(want) && got[last].err != "" && want[last].err != "" {
					got[last].err, want[last].err = "syntax", "syntax"
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded differently\n got: %s\nwant: %s", dump(got), dump(want))
			}
		})
	}
}

// TestFramesEndAnywhere: a stream decodes the same whatever its reads
// return, a byte at a time or cut anywhere.
func TestFramesEndAnywhere(t *testing.T) {
	for name, stream := range streams(t) {
		whole := decodeStream(t, fast, stream)
		for how, cut := range map[string]func(io.Reader) io.Reader{"a byte at a time": iotest.OneByteReader, "halves": iotest.HalfReader, "data with EOF": iotest.DataErrReader} {
			if got := decodeReader(t, fast, cut(bytes.NewReader(stream))); !reflect.DeepEqual(got, whole) {
				t.Errorf("%s, %s: decoded differently\n got: %s\nwant: %s", name, how, dump(got), dump(whole))
			}
		}
	}
}

// TestReadErrorsPassThrough: an error of the connection reaches client-go's
// watch as the error itself (it tells a dropped connection by its text).
func TestReadErrorsPassThrough(t *testing.T) {
	reset := errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer")
	stream := append(eventJSON(t, watch.Added, fullLink(1)), eventJSON(t, watch.Added, fullLink(2))...)
	for _, ns := range []runtime.NegotiatedSerializer{std, fast} {
		_, events, framer, err := runtime.NewClientNegotiator(ns, kurzv1alpha1.GroupVersion).StreamDecoder(runtime.ContentTypeJSON, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := io.MultiReader(bytes.NewReader(stream[:len(stream)-100]), iotest.ErrReader(reset))
		d := streaming.NewDecoder(framer.NewFrameReader(io.NopCloser(r)), events)
		if _, _, err := d.Decode(nil, &metav1.WatchEvent{}); err != nil {
			t.Fatalf("first event: %v", err)
		}
		if _, _, err := d.Decode(nil, &metav1.WatchEvent{}); err != reset {
			t.Errorf("second event: error %v, want the reader's %v", err, reset)
		}
	}
}

type objectCase struct {
	data []byte
	into func() runtime.Object
}

// objectCases are LIST responses (the informer's fallback when the server
// cannot stream) and single objects.
func objectCases(t testing.TB) map[string]objectCase {
	list := &kurzv1alpha1.LinkList{TypeMeta: metav1.TypeMeta{APIVersion: "kurz.dev/v1alpha1", Kind: "LinkList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "77", Continue: "abc"}}
	for i := range 3 {
		list.Items = append(list.Items, *fullLink(i))
	}
	cases := map[string]objectCase{
		"list":                {mustJSON(t, list), func() runtime.Object { return &kurzv1alpha1.LinkList{} }},
		"list into non-empty": {mustJSON(t, list), func() runtime.Object { return &kurzv1alpha1.LinkList{Items: make([]kurzv1alpha1.Link, 5)} }},
		"link":                {mustJSON(t, fullLink(4)), func() runtime.Object { return &kurzv1alpha1.Link{} }},
		"link into non-empty": {mustJSON(t, fullLink(4)), func() runtime.Object { return fullLink(9) }},
		"link, no target":     {mustJSON(t, fullLink(5)), func() runtime.Object { return nil }},
		"status into link":    {[]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":404,"reason":"NotFound"}`), func() runtime.Object { return &kurzv1alpha1.Link{} }},
		"list as link":        {mustJSON(t, list), func() runtime.Object { return &kurzv1alpha1.Link{} }},
		"domain":              {[]byte(`{"kind":"Domain","apiVersion":"kurz.dev/v1alpha1","metadata":{"name":"d"},"spec":{"domain":"a.b"}}`), func() runtime.Object { return &kurzv1alpha1.Domain{} }},
	}
	// Times as metav1's methods read them (time.go): null, offsets,
	// escapes, and what they refuse.
	for name, ts := range map[string]string{
		"time null": `null`, "time with an offset": `"2026-11-27T12:00:00+02:00"`, "time escaped": `"\u0032026-11-27T12:00:00Z"`,
		"time with fractions": `"2026-11-27T12:00:00.5Z"`, "time not RFC 3339": `"27 Nov 2026"`, "time a number": `1764244800`,
		"time an object": `{}`, "time empty": `""`,
	} {
		link := `{"kind":"Link","apiVersion":"kurz.dev/v1alpha1","metadata":{"name":"t","creationTimestamp":` + ts +
			`,"deletionTimestamp":` + ts + `,"managedFields":[{"manager":"m","time":` + ts + `}]},"spec":{"domain":"a.b","key":"k","url":"https://x"}}`
		cases[name] = objectCase{[]byte(link), func() runtime.Object { return &kurzv1alpha1.Link{} }}
	}
	return cases
}

// TestListsDecodeAsClientGo: lists and single objects decode the same.
func TestListsDecodeAsClientGo(t *testing.T) {
	cases := objectCases(t)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			want, got := decodeObject(t, std, c.data, c.into()), decodeObject(t, fast, c.data, c.into())
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded differently\n got: %s\nwant: %s", dump(got), dump(want))
			}
		})
	}
}

// FuzzObjectDecodesAsClientGo: for any bytes, a Link decodes to what
// client-go decodes, or fails as it does.
func FuzzObjectDecodesAsClientGo(f *testing.F) {
	f.Add(mustJSON(f, fullLink(1)))
	f.Add([]byte(`{"apiVersion":"kurz.dev/v1alpha1","kind":"Link","metadata":{"name":"x"},"spec":{"domain":"a.b","key":"k","url":"u"}}`))
	f.Add([]byte(`{"kind":"Status","apiVersion":"v1","code":410}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, got := decodeObject(t, std, data, nil), decodeObject(t, fast, data, nil)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decoded %q differently\n got: %s\nwant: %s", data, dump(got), dump(want))
		}
	})
}

func dump(v any) string { return fmt.Sprintf("%+v", v) }

// appliedLink is Link i as a replica's start reads it where Links are
// applied with kubectl and settled by kurz (bench-scale's): kubectl's
// last-applied annotation, its and kurz's managedFields, a Ready status.
func appliedLink(t testing.TB, i int) *kurzv1alpha1.Link {
	at := metav1.NewTime(time.Date(2026, 11, 23, 12, 0, i%60, 0, time.UTC))
	micro := metav1.NewMicroTime(at.Time)
	src, campaign := "bench", fmt.Sprintf("c%d", i%100)
	l := &kurzv1alpha1.Link{
		TypeMeta:   metav1.TypeMeta{APIVersion: "kurz.dev/v1alpha1", Kind: "Link"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("l%07d", i), Namespace: "bench", Annotations: map[string]string{}},
		Spec: kurzv1alpha1.LinkSpec{
			Domain: "go.example.com", Key: fmt.Sprintf("k%d", i),
			URL: kurzv1alpha1.URL(fmt.Sprintf("https://www.example.com/articles/%d/a-page-about-something?ref=newsletter", i)),
			UTM: &kurzv1alpha1.LinkUTM{Source: &src, Campaign: &campaign},
		},
	}
	l.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = string(mustJSON(t, l)) + "\n"
	l.UID, l.ResourceVersion, l.Generation, l.CreationTimestamp = "0b9e9c1c-7a4e-4a0e-9d4e-5f6a7b8c9d0e", "123456", 1, at
	l.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "kurz.dev/v1alpha1", Time: &at, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}},"f:spec":{".":{},"f:domain":{},"f:key":{},"f:url":{},"f:utm":{".":{},"f:campaign":{},"f:source":{}}}}`),
	}, {
		Manager: "kurz", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "kurz.dev/v1alpha1", Time: &at, FieldsType: "FieldsV1", Subresource: "status",
		FieldsV1: metav1.NewFieldsV1(`{"f:status":{".":{},"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:createdAt":{},"f:observedGeneration":{},"f:shortURL":{},"f:updatedAt":{},"f:updatedGeneration":{}}}`),
	}}
	short := "https://go.example.com/" + l.Spec.Key
	l.Status = kurzv1alpha1.LinkStatus{ShortURL: short, CreatedAt: &micro, UpdatedAt: &micro, UpdatedGeneration: 1, ObservedGeneration: 1,
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: at, Reason: "Serving", Message: "The link serves " + short}}}
	return l
}

// BenchmarkWatchStream decodes the initial events of 1 000 Links as a
// replica's start reads them (appliedLink), with client-go's decoder and
// with this package's, skipping what kurz's informer drops or not.
func BenchmarkWatchStream(b *testing.B) {
	var stream []byte
	for i := range 1000 {
		stream = append(stream, eventJSON(b, watch.Added, appliedLink(b, i))...)
		stream = append(stream, '\n')
	}
	for _, c := range []struct {
		name string
		ns   runtime.NegotiatedSerializer
	}{{"client-go", std}, {"linkcodec", fast}, {"linkcodec skipping", skipping}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				if got := decodeStream(b, c.ns, stream); len(got) != 1000 || got[999].err != "" {
					b.Fatalf("decoded %d events", len(got))
				}
			}
		})
	}
}

// TestEachSeesEveryLinkFirst: Wrap's each is called once on every Link a
// stream, a list or a single object decodes to, before the caller gets it,
// and on nothing else.
func TestEachSeesEveryLinkFirst(t *testing.T) {
	var seen []string
	mark := func(l *kurzv1alpha1.Link) {
		seen = append(seen, l.Name)
		l.Labels = map[string]string{"each": "seen"}
	}
	ns := Wrap(std, mark, Skip{})
	marked := func(obj runtime.Object) bool {
		l, ok := obj.(*kurzv1alpha1.Link)
		return ok && l.Labels["each"] == "seen"
	}

	stream := append(eventJSON(t, watch.Added, fullLink(1)), eventJSON(t, watch.Modified, fullLink(2))...)
	stream = append(stream, []byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410}}`)...)
	events := decodeStream(t, ns, stream)
	if len(events) != 3 || !marked(events[0].obj) || !marked(events[1].obj) || marked(events[2].obj) {
		t.Errorf("stream: each marked %v, events %s", seen, dump(events))
	}

	list := &kurzv1alpha1.LinkList{TypeMeta: metav1.TypeMeta{APIVersion: "kurz.dev/v1alpha1", Kind: "LinkList"}}
	list.Items = []kurzv1alpha1.Link{*fullLink(3), *fullLink(4)}
	got := decodeObject(t, ns, mustJSON(t, list), &kurzv1alpha1.LinkList{}).obj.(*kurzv1alpha1.LinkList)
	if !marked(&got.Items[0]) || !marked(&got.Items[1]) {
		t.Errorf("list items not all marked: %s", dump(got.Items))
	}
	if !marked(decodeObject(t, ns, mustJSON(t, fullLink(5)), nil).obj) {
		t.Error("a single Link was not marked")
	}
	want := []string{fullLink(1).Name, fullLink(2).Name, fullLink(3).Name, fullLink(4).Name, fullLink(5).Name}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("each saw %v, want %v, once each", seen, want)
	}
}

// FuzzEventDecodesAsClientGo: for any frame, the watch event (its type and
// its object's bytes) is what client-go's event decoder gives, or the same
// error; but for an event written as kube-apiserver writes them whose
// object is not JSON, which client-go refuses at once and this package's
// object decoder refuses next (readAPIServerEvent does not check it).
func FuzzEventDecodesAsClientGo(f *testing.F) {
	f.Add(eventJSON(f, watch.Added, fullLink(1)))
	f.Add([]byte(`{"type":"BOOKMARK","object":null,"type":"ADDED"}`))
	f.Add([]byte(`{"object":{"kind":"Status"} ,"type":"ERROR","x":[1,{}]} `))
	f.Add([]byte(`{"type":"ADDED","object":{}}{}`))
	f.Add([]byte(`{"type":"ADDED","object":{"kind":"Link",,"a":tru}} `))
	f.Add([]byte(`{"type":"ADD\u0045D","object":["\"}",{"]"}}]}`))
	var stdEvents runtime.Serializer
	for _, info := range std.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			stdEvents = info.StreamSerializer.Serializer
		}
	}
	ours := eventDecoder{Serializer: stdEvents}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, got metav1.WatchEvent
		_, _, wantErr := stdEvents.Decode(bytes.Clone(data), nil, &want)
		_, _, gotErr := ours.Decode(bytes.Clone(data), nil, &got)
		if wantErr != nil && gotErr == nil {
			if _, _, ok := readAPIServerEvent(data); ok && decodeObject(t, fast, got.Object.Raw, nil).err != "" {
				return // refused by the object decoder instead
			}
		}
		if errString(gotErr) != errString(wantErr) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("decoded %q differently\n got: %+v, %v\nwant: %+v, %v", data, got, gotErr, want, wantErr)
		}
	})
}
