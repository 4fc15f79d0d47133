package linkcodec

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

var skipping = Wrap(std, nil, Skip{ManagedFields: true, Annotation: lastApplied})

// dropSkipped drops from what client-go decoded what skipping leaves out,
// as cacheslim.Transform drops it.
func dropSkipped(obj runtime.Object) {
	drop := func(l *kurzv1alpha1.Link) {
		l.ManagedFields = nil
		if _, ok := l.Annotations[lastApplied]; ok {
			delete(l.Annotations, lastApplied)
			if len(l.Annotations) == 0 {
				l.Annotations = nil
			}
		}
	}
	switch o := obj.(type) {
	case *kurzv1alpha1.Link:
		drop(o)
	case *kurzv1alpha1.LinkList:
		for i := range o.Items {
			drop(&o.Items[i])
		}
	}
}

// annotationCases are Links whose annotations test Skip.Annotation.
func annotationCases() map[string]objectCase {
	link := func(annotations string) objectCase {
		return objectCase{[]byte(`{"kind":"Link","apiVersion":"kurz.dev/v1alpha1","metadata":{"name":"a","annotations":` + annotations +
			`,"managedFields":[{"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},"spec":{"domain":"a.b","key":"k","url":"https://x"}}`),
			func() runtime.Object { return &kurzv1alpha1.Link{} }}
	}
	return map[string]objectCase{
		"only last-applied":         link(`{"` + lastApplied + `":"{\"spec\":{\"url\":\"https://x\"}}\n"}`),
		"last-applied and another":  link(`{"a":"1","` + lastApplied + `":"{}","b":"\u00e9"}`),
		"last-applied twice":        link(`{"` + lastApplied + `":"x","` + lastApplied + `":"y"}`),
		"another twice":             link(`{"a":"1","a":"2"}`),
		"no annotations":            link(`{}`),
		"annotations null":          link(`null`),
		"last-applied not a string": link(`{"` + lastApplied + `":{"spec":{}}}`),
		"another not a string":      link(`{"a":1}`),
		"annotations a list":        link(`["a"]`),
		"managedFields not a list": {[]byte(`{"kind":"Link","apiVersion":"kurz.dev/v1alpha1","metadata":{"name":"a","managedFields":{"manager":"m"}},"spec":{"domain":"a.b","key":"k","url":"https://x"}}`),
			func() runtime.Object { return &kurzv1alpha1.Link{} }},
		"managedFields null": {[]byte(`{"kind":"Link","apiVersion":"kurz.dev/v1alpha1","metadata":{"name":"a","managedFields":null},"spec":{"domain":"a.b","key":"k","url":"https://x"}}`),
			func() runtime.Object { return &kurzv1alpha1.Link{} }},
	}
}

// TestSkipDecodesAsClientGoLessWhatIsDropped: with a Skip, every stream,
// list and object decodes, once the caller drops managedFields and the
// annotation, to what client-go decodes with them dropped, or fails as
// client-go does. (That they are not built at all is
// TestSkipLeavesTheRestAlone's.)
func TestSkipDecodesAsClientGoLessWhatIsDropped(t *testing.T) {
	for name, stream := range streams(t) {
		t.Run("stream "+name, func(t *testing.T) {
			want, got := decodeStream(t, std, stream), decodeStream(t, skipping, stream)
			for i := range want {
				dropSkipped(want[i].obj)
				if i < len(got) {
					dropSkipped(got[i].obj)
				}
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
	cases := objectCases(t)
	for name, c := range annotationCases() {
		cases[name] = c
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			want, got := decodeObject(t, std, c.data, c.into()), decodeObject(t, skipping, c.data, c.into())
			dropSkipped(want.obj)
			dropSkipped(got.obj) // what went to client-go's decoder whole
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded differently\n got: %s\nwant: %s", dump(got), dump(want))
			}
		})
	}
}

// TestSkipLeavesTheRestAlone: a Skip's annotation is the only one left out,
// and the fields Skip shadows still decode when it does not skip them.
func TestSkipLeavesTheRestAlone(t *testing.T) {
	data := annotationCases()["last-applied and another"].data
	got := decodeObject(t, skipping, data, &kurzv1alpha1.Link{}).obj.(*kurzv1alpha1.Link)
	if want := map[string]string{"a": "1", "b": "é"}; !reflect.DeepEqual(got.Annotations, want) || got.ManagedFields != nil || got.Name != "a" {
		t.Errorf("skipping: annotations %v, managedFields %v, name %q", got.Annotations, got.ManagedFields, got.Name)
	}
	annotationOnly := Wrap(std, nil, Skip{Annotation: lastApplied})
	got = decodeObject(t, annotationOnly, data, &kurzv1alpha1.Link{}).obj.(*kurzv1alpha1.Link)
	if len(got.ManagedFields) != 1 || got.ManagedFields[0].Manager != "kubectl" || len(got.Annotations) != 2 {
		t.Errorf("skipping the annotation only: annotations %v, managedFields %+v", got.Annotations, got.ManagedFields)
	}
	fieldsOnly := Wrap(std, nil, Skip{ManagedFields: true})
	got = decodeObject(t, fieldsOnly, data, &kurzv1alpha1.Link{}).obj.(*kurzv1alpha1.Link)
	if got.ManagedFields != nil || len(got.Annotations) != 3 || got.Annotations[lastApplied] != "{}" {
		t.Errorf("skipping managedFields only: annotations %v, managedFields %+v", got.Annotations, got.ManagedFields)
	}
}
