package cacheslim

import (
	"sync"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// utmKey is a LinkUTM's values and which of them are set (a nil value and
// an empty one are different specs).
type utmKey struct {
	vals [6]string
	set  uint8
}

func keyOf(u *kurzv1alpha1.LinkUTM) utmKey {
	var k utmKey
	for i, v := range utmFields(u) {
		if *v != nil {
			k.vals[i] = **v
			k.set |= 1 << i
		}
	}
	return k
}

func utmFields(u *kurzv1alpha1.LinkUTM) [6]**string {
	return [6]**string{&u.Source, &u.Medium, &u.Campaign, &u.Term, &u.Content, &u.Name}
}

// utms hands out one LinkUTM per distinct value: the links of a campaign
// carry the same utm block, and each decoded copy is 80 bytes (the struct
// and a pointer cell per value). Bounded like interned.
type utmInterner struct {
	mu sync.Mutex
	m  map[utmKey]*kurzv1alpha1.LinkUTM
}

var utms = &utmInterner{m: map[utmKey]*kurzv1alpha1.LinkUTM{}}

// shareUTM returns the shared LinkUTM equal to u (its values interned
// first), or u itself past the bound. Cached objects are read only: no
// code writes a cached Link's utm in place (a reconcile or the API works
// on a deep copy, which copies the block), so Links may share one.
func shareUTM(u *kurzv1alpha1.LinkUTM) *kurzv1alpha1.LinkUTM {
	if u == nil {
		return nil
	}
	internUTM(u)
	k := keyOf(u)
	utms.mu.Lock()
	defer utms.mu.Unlock()
	if s, ok := utms.m[k]; ok {
		return s
	}
	if len(utms.m) < maxInterned {
		utms.m[k] = u
	}
	return u
}
