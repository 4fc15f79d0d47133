// Package cacheslim is the transform of kurz's informer cache: every
// replica holds every Link, so what no role reads is dropped before an
// object is stored, and strings many objects repeat share one copy.
package cacheslim

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// LastApplied is the annotation client-side `kubectl apply` writes: the
// whole object again, as JSON. No role reads it.
const LastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Transform is the cache's DefaultTransform: it drops managedFields, the
// last-applied annotation and a Link's kurz.dev/created-at once its status
// records that time, and makes what repeats across objects
// (namespace, hostname, condition type, status and reason, a Link's utm
// block) share one copy.
// Writes never start from a cached object as a whole (the API patches
// spec, the controllers and the redirect servers patch status), so nothing
// dropped here is ever written back as missing.
func Transform(in any) (any, error) {
	obj, err := meta.Accessor(in)
	if err != nil {
		return in, nil //nolint:nilerr // not an object (a tombstone): stored as it is
	}
	// Nil check first: setting nil on nil trips kubernetes#124337.
	if obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	dropAnnotation(obj, LastApplied)
	if l, ok := in.(*kurzv1alpha1.Link); ok && l.Status.CreatedAt != nil {
		// The API's creation time, recorded in status now (see
		// timestamps.Announce): a map per Link for nothing.
		dropAnnotation(obj, kurzv1alpha1.LinkCreatedAtAnnotation)
	}
	obj.SetNamespace(interned.of(obj.GetNamespace()))
	switch o := in.(type) {
	case *kurzv1alpha1.Link:
		o.APIVersion, o.Kind = interned.of(o.APIVersion), interned.of(o.Kind)
		o.Spec.Domain = kurzv1alpha1.Hostname(interned.of(string(o.Spec.Domain)))
		o.Spec.UTM = shareUTM(o.Spec.UTM)
		internConditions(o.Status.Conditions)
		shareLinkStatus(&o.Status)
	case *kurzv1alpha1.Domain:
		o.APIVersion, o.Kind = interned.of(o.APIVersion), interned.of(o.Kind)
		o.Spec.Domain = kurzv1alpha1.Hostname(interned.of(string(o.Spec.Domain)))
		internConditions(o.Status.Conditions)
	}
	return in, nil
}

// dropAnnotation deletes annotation key of obj, and the map when it was
// the last one.
func dropAnnotation(obj metav1.Object, key string) {
	a := obj.GetAnnotations()
	if _, ok := a[key]; !ok {
		return
	}
	delete(a, key)
	if len(a) == 0 {
		obj.SetAnnotations(nil)
	}
}

// internUTM shares utm values: campaigns and sources repeat across links.
func internUTM(u *kurzv1alpha1.LinkUTM) {
	if u == nil {
		return
	}
	for _, v := range []*string{u.Source, u.Medium, u.Campaign, u.Term, u.Content, u.Name} {
		if v != nil {
			*v = interned.of(*v)
		}
	}
}

// shareLinkStatus makes a settled Link's status hold its short URL once:
// the Ready message of an active link ends with it ("The link serves
// <shortURL>"), and a link never edited was updated when it was created.
// Cached objects are read only, so sharing memory between two fields is
// safe (a deep copy gives each its own).
func shareLinkStatus(st *kurzv1alpha1.LinkStatus) {
	if su := st.ShortURL; su != "" {
		for i := range st.Conditions {
			if m := st.Conditions[i].Message; len(m) > len(su) && m[len(m)-len(su):] == su {
				st.ShortURL = m[len(m)-len(su):]
				break
			}
		}
	}
	if st.CreatedAt != nil && st.UpdatedAt != nil && st.CreatedAt.Equal(st.UpdatedAt) {
		st.UpdatedAt = st.CreatedAt
	}
}

func internConditions(cs []metav1.Condition) {
	for i := range cs {
		c := &cs[i]
		c.Type = interned.of(c.Type)
		c.Status = metav1.ConditionStatus(interned.of(string(c.Status)))
		c.Reason = interned.of(c.Reason)
	}
}

// Intern returns the shared copy of s, for other values many objects
// repeat (the redirect index's utm_* suffixes). Pass a string that owns its
// memory: a substring would keep its whole source alive.
func Intern(s string) string { return interned.of(s) }

// interner hands out one copy of each string it has seen. It is meant for
// the few values many objects share; past maxInterned strings (a cluster
// churning namespaces or hostnames) it stops adding, so it cannot grow
// without bound, and the strings it hands out stay valid whatever happens.
type interner struct {
	mu sync.RWMutex
	m  map[string]string
}

const maxInterned = 1 << 16

var interned = &interner{m: map[string]string{}}

func (in *interner) of(s string) string {
	if s == "" {
		return s
	}
	in.mu.RLock()
	c, ok := in.m[s]
	in.mu.RUnlock()
	if ok {
		return c
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.m[s]; ok {
		return c
	}
	if len(in.m) >= maxInterned {
		return s
	}
	in.m[s] = s
	return s
}
