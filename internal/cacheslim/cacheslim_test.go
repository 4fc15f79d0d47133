package cacheslim

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// fresh returns a string equal to s in memory of its own, as a JSON decoder
// would produce for each object.
func fresh(s string) string { return strings.Clone(s) }

func link(name string) *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: fresh("team-a"),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations:   map[string]string{LastApplied: `{"spec":{}}`},
		},
		Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(fresh("go.example")), Key: name},
		Status: kurzv1alpha1.LinkStatus{Conditions: []metav1.Condition{
			{Type: fresh("Ready"), Status: metav1.ConditionStatus(fresh("True")), Reason: fresh("Active"), Message: "The link serves https://go.example/" + name},
		}},
	}
}

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestTransformDropsWhatNoRoleReads(t *testing.T) {
	g := NewWithT(t)
	l := link("a")
	l.Annotations["team"] = "growth"
	out, err := Transform(l)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(BeIdenticalTo(l))
	g.Expect(l.ManagedFields).To(BeNil())
	g.Expect(l.Annotations).To(Equal(map[string]string{"team": "growth"}), "other annotations stay")

	only := link("b")
	_, _ = Transform(only)
	g.Expect(only.Annotations).To(BeNil(), "an empty annotation map is dropped too")
	g.Expect(only.Status.Conditions[0].Message).To(Equal("The link serves https://go.example/b"), "messages stay: controllers compare them")
}

func TestTransformSharesRepeatedStrings(t *testing.T) {
	g := NewWithT(t)
	a, b := link("a"), link("b")
	g.Expect(same(a.Namespace, b.Namespace)).To(BeFalse())
	_, _ = Transform(a)
	_, _ = Transform(b)
	g.Expect(same(a.Namespace, b.Namespace)).To(BeTrue())
	g.Expect(same(string(a.Spec.Domain), string(b.Spec.Domain))).To(BeTrue())
	ca, cb := a.Status.Conditions[0], b.Status.Conditions[0]
	g.Expect(same(ca.Type, cb.Type) && same(string(ca.Status), string(cb.Status)) && same(ca.Reason, cb.Reason)).To(BeTrue())
	g.Expect(a.Spec.Key).To(Equal("a"), "values are unchanged")
	g.Expect(b.Namespace).To(Equal("team-a"))
}

func TestTransformPassesOtherValuesThrough(t *testing.T) {
	g := NewWithT(t)
	tomb := toolscache.DeletedFinalStateUnknown{Key: "team-a/a"}
	out, err := Transform(tomb)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(Equal(tomb))
}

func TestInternerStopsGrowingAtItsBound(t *testing.T) {
	g := NewWithT(t)
	in := &interner{m: map[string]string{}}
	for i := range maxInterned + 10 {
		in.of("ns-" + strconv.Itoa(i))
	}
	g.Expect(in.m).To(HaveLen(maxInterned))
	s := fresh("past the bound")
	g.Expect(same(in.of(s), s)).To(BeTrue(), "past the bound a string is handed back as it is")
}

func TestTransformStoresALinksShortURLOnce(t *testing.T) {
	g := NewWithT(t)
	l := link("a")
	l.Status.ShortURL = fresh("https://go.example/a")
	at := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	l.Status.CreatedAt, l.Status.UpdatedAt = &at, at.DeepCopy()
	src, other := fresh("news"), fresh("news")
	l.Spec.UTM = &kurzv1alpha1.LinkUTM{Source: &src}
	m := &kurzv1alpha1.Link{Spec: kurzv1alpha1.LinkSpec{UTM: &kurzv1alpha1.LinkUTM{Campaign: &other}}}
	_, _ = Transform(l)
	_, _ = Transform(m)
	msg := l.Status.Conditions[0].Message
	g.Expect(l.Status.ShortURL).To(Equal("https://go.example/a"))
	g.Expect(same(l.Status.ShortURL, msg[len(msg)-len(l.Status.ShortURL):])).To(BeTrue())
	g.Expect(l.Status.UpdatedAt).To(BeIdenticalTo(l.Status.CreatedAt))
	g.Expect(same(*l.Spec.UTM.Source, *m.Spec.UTM.Campaign)).To(BeTrue())

	edited := link("b")
	edited.Status.ShortURL = "https://other.example/b"
	later := metav1.NewMicroTime(at.Add(time.Second))
	edited.Status.CreatedAt, edited.Status.UpdatedAt = &at, &later
	_, _ = Transform(edited)
	g.Expect(edited.Status.ShortURL).To(Equal("https://other.example/b"), "a message about another URL is no source")
	g.Expect(edited.Status.UpdatedAt.Time).To(Equal(later.Time))
}

// The API's announced creation time stays until status records it (the
// API's answers read it until then), and goes after.
func TestTransformDropsTheCreationTimeOnceRecorded(t *testing.T) {
	g := NewWithT(t)
	const at = "2026-11-26T07:00:00.123456Z"
	pending := link("a")
	pending.Annotations = map[string]string{kurzv1alpha1.LinkCreatedAtAnnotation: at}
	_, _ = Transform(pending)
	g.Expect(pending.Annotations).To(Equal(map[string]string{kurzv1alpha1.LinkCreatedAtAnnotation: at}))

	recorded := link("b")
	recorded.Annotations = map[string]string{kurzv1alpha1.LinkCreatedAtAnnotation: at, "team": "growth"}
	created := metav1.NewMicroTime(time.Date(2026, 11, 26, 7, 0, 0, 123456000, time.UTC))
	recorded.Status.CreatedAt = &created
	_, _ = Transform(recorded)
	g.Expect(recorded.Annotations).To(Equal(map[string]string{"team": "growth"}))

	d := &kurzv1alpha1.Domain{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kurzv1alpha1.LinkCreatedAtAnnotation: at}}}
	d.Status.CreatedAt = &created
	_, _ = Transform(d)
	g.Expect(d.Annotations).To(HaveLen(1), "a Link's annotation only")
}

// Links with the same utm block share one; a different value, or a value
// set empty instead of unset, gets its own.
func TestTransformSharesUTM(t *testing.T) {
	g := NewWithT(t)
	utm := func(src, campaign *string) *kurzv1alpha1.LinkUTM {
		return &kurzv1alpha1.LinkUTM{Source: src, Campaign: campaign}
	}
	str := func(s string) *string { s = fresh(s); return &s }
	in := func(u *kurzv1alpha1.LinkUTM) *kurzv1alpha1.LinkUTM {
		l := link("u")
		l.Spec.UTM = u
		_, _ = Transform(l)
		return l.Spec.UTM
	}
	a := in(utm(str("utm-share-news"), str("utm-share-spring")))
	g.Expect(in(utm(str("utm-share-news"), str("utm-share-spring")))).To(BeIdenticalTo(a))
	g.Expect(*a.Source).To(Equal("utm-share-news"))
	g.Expect(*a.Campaign).To(Equal("utm-share-spring"))

	other := in(utm(str("utm-share-news"), str("utm-share-autumn")))
	g.Expect(other).NotTo(BeIdenticalTo(a))
	g.Expect(*other.Campaign).To(Equal("utm-share-autumn"))

	unset := in(utm(str("utm-share-news"), nil))
	empty := in(utm(str("utm-share-news"), str("")))
	g.Expect(unset).NotTo(BeIdenticalTo(empty))
	g.Expect(unset.Campaign).To(BeNil())
	g.Expect(empty.Campaign).To(HaveValue(Equal("")))
	g.Expect(in(nil)).To(BeNil())
}
