package routing

import (
	"slices"
	"strings"
)

// RouteSlot is one of kurz's HTTPRoutes as Assign sees it: its name, its
// hostname and the Gateway or ListenerSet its parentRefs name ("" none).
type RouteSlot struct {
	Name, Host, Parent string
}

// Plan is what kurz's Gateways (or ListenerSets) should hold.
type Plan struct {
	// Routes maps every route to the parent its listener is in; "" for a
	// route that gets none (its hostname is another route's).
	Routes map[string]string
	// Parents maps every parent kurz keeps to its hostnames, sorted: one
	// HTTPS listener each.
	Parents map[string][]string
	// Delete are the parents kurz owns that hold no hostname any more.
	Delete []string
}

// Assign decides which of kurz's parents (Gateways or ListenerSets named
// ParentName(i)) holds each route's listener, at most capacity hostnames
// each. owned are the parents kurz has, with the hostnames their
// listeners hold now; taken are names of that kind kurz does not own.
//
//   - A route keeps its parent (a hostname keeps its Gateway, so its
//     listener, and the certificate issued for it, are not moved), unless
//     that name is taken by an object kurz does not own.
//   - A hostname gets one listener: of two routes with one hostname (for a
//     moment, while one Domain loses it to another) the one assigned
//     first, else the first by name, keeps it.
//   - A parent over capacity (assignments made from a stale read) keeps
//     the hostnames it already lists, then the first by route name; the
//     rest are assigned again.
//   - New routes fill parents in name order, in route-name order; a new
//     parent gets the lowest free index.
//   - Owned parents left empty are deleted.
func Assign(routes []RouteSlot, owned map[string][]string, taken []string, capacity int) Plan {
	plan := Plan{Routes: map[string]string{}, Parents: map[string][]string{}}
	routes = slices.Clone(routes)
	// Assigned routes first, so they win a duplicate hostname.
	slices.SortFunc(routes, func(a, b RouteSlot) int {
		if (a.Parent == "") != (b.Parent == "") {
			if a.Parent != "" {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	listed := map[string]map[string]bool{}
	for p, hosts := range owned {
		listed[p] = map[string]bool{}
		for _, h := range hosts {
			listed[p][h] = true
		}
	}
	hostTaken := map[string]bool{}
	members := map[string][]RouteSlot{}
	var pending []RouteSlot
	for _, r := range routes {
		if hostTaken[r.Host] {
			plan.Routes[r.Name] = ""
			continue
		}
		hostTaken[r.Host] = true
		if r.Parent == "" || slices.Contains(taken, r.Parent) {
			pending = append(pending, r)
			continue
		}
		members[r.Parent] = append(members[r.Parent], r)
	}
	for p, rs := range members {
		// Already listed first, then by name; the overflow is reassigned.
		slices.SortStableFunc(rs, func(a, b RouteSlot) int {
			la, lb := listed[p][a.Host], listed[p][b.Host]
			if la != lb {
				if la {
					return -1
				}
				return 1
			}
			return strings.Compare(a.Name, b.Name)
		})
		if len(rs) > capacity {
			pending = append(pending, rs[capacity:]...)
			rs = rs[:capacity]
		}
		members[p] = rs
	}
	slices.SortFunc(pending, func(a, b RouteSlot) int { return strings.Compare(a.Name, b.Name) })

	// Parents that may take routes: those with members or owned, in index
	// order, then new ones.
	var open []string
	for p := range members {
		open = append(open, p)
	}
	for p := range owned {
		if _, ok := members[p]; !ok && !slices.Contains(taken, p) {
			open = append(open, p)
		}
	}
	slices.SortFunc(open, compareParents)
	next := 0
	newParent := func() string {
		for {
			name := ParentName(next)
			next++
			if !slices.Contains(taken, name) && !slices.Contains(open, name) {
				open = append(open, name)
				return name
			}
		}
	}
	i := 0
	for _, r := range pending {
		for i < len(open) && len(members[open[i]]) >= capacity {
			i++
		}
		if i == len(open) {
			newParent()
		}
		p := open[i]
		r.Parent = p
		members[p] = append(members[p], r)
	}

	for p, rs := range members {
		hosts := make([]string, 0, len(rs))
		for _, r := range rs {
			plan.Routes[r.Name] = p
			hosts = append(hosts, r.Host)
		}
		slices.Sort(hosts)
		plan.Parents[p] = hosts
	}
	for p := range owned {
		if len(members[p]) == 0 {
			plan.Delete = append(plan.Delete, p)
		}
	}
	slices.SortFunc(plan.Delete, compareParents)
	return plan
}

// compareParents orders parent names by their index (kurz-2 before
// kurz-10), other names after them by name.
func compareParents(a, b string) int {
	ia, oka := parentIndex(a)
	ib, okb := parentIndex(b)
	switch {
	case oka && okb:
		return ia - ib
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

func parentIndex(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "kurz-")
	if !ok || s == "" {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
