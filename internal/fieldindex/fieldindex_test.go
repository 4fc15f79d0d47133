package fieldindex_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/fieldindex"
)

// recorder is a FieldIndexer that keeps the extract functions.
type recorder map[string]client.IndexerFunc

func (r recorder) IndexField(_ context.Context, obj client.Object, field string, f client.IndexerFunc) error {
	r[kindOf(obj)+" "+field] = f
	return nil
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *kurzv1alpha1.Link:
		return "Link"
	case *kurzv1alpha1.Domain:
		return "Domain"
	}
	return "?"
}

func TestSetup(t *testing.T) {
	g := NewWithT(t)
	r := recorder{}
	g.Expect(fieldindex.Setup(context.Background(), r)).To(Succeed())

	link := &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{UID: "u1"},
		Spec:       kurzv1alpha1.LinkSpec{Domain: "go.example", Key: "a/b"},
	}
	domain := &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{UID: "u2"},
		Spec:       kurzv1alpha1.DomainSpec{Domain: "go.example"},
	}
	tests := []struct {
		index string
		obj   client.Object
		want  string
	}{
		{"Link " + fieldindex.UID, link, "u1"},
		{"Domain " + fieldindex.UID, domain, "u2"},
		{"Link " + fieldindex.Domain, link, "go.example"},
		{"Domain " + fieldindex.Domain, domain, "go.example"},
		{"Link " + fieldindex.DomainKey, link, "go.example/a/b"},
	}
	g.Expect(r).To(HaveLen(len(tests)))
	for _, tt := range tests {
		t.Run(tt.index, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(r).To(HaveKey(tt.index))
			g.Expect(r[tt.index](tt.obj)).To(Equal([]string{tt.want}))
		})
	}
	g.Expect(fieldindex.DomainKeyOf("go.example", "a/b")).To(Equal("go.example/a/b"))
}
