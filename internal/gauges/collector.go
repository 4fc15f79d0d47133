package gauges

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/version"
)

var (
	linksDesc = prometheus.NewDesc("kurz_links",
		"Links by state (the reason of their Ready condition; new: not reconciled yet), as this replica's cache sees them.", []string{"state"}, nil)
	domainsDesc = prometheus.NewDesc("kurz_domains",
		"Domains by state (the reason of their Ready condition; new: not reconciled yet), as this replica's cache sees them.", []string{"state"}, nil)
)

// source is one manager's Links and Domains, counted by state.
type source struct {
	links, domains *tally
}

// newSource counts the objects of the links and domains informers.
func newSource(links, domains cache.Informer) (*source, error) {
	l, err := newTally(links, func(o any) string {
		if l, ok := o.(*kurzv1alpha1.Link); ok {
			return LinkState(l.Status.Conditions)
		}
		return ""
	})
	if err != nil {
		return nil, fmt.Errorf("count links for metrics: %w", err)
	}
	d, err := newTally(domains, func(o any) string {
		if d, ok := o.(*kurzv1alpha1.Domain); ok {
			return DomainState(d.Status.Conditions)
		}
		return ""
	})
	if err != nil {
		return nil, fmt.Errorf("count domains for metrics: %w", err)
	}
	return &source{links: l, domains: d}, nil
}

// objectCollector counts the objects of a running manager's cache at each
// scrape. A process runs one manager; tests run several, which see the
// same cluster: the oldest running one is counted.
type objectCollector struct {
	mu      sync.Mutex
	sources []*source
}

var (
	objects      = &objectCollector{}
	registerOnce sync.Once
)

// Register adds kurz_build_info and the Link and Domain gauges of mgr's
// cache to controller-runtime's registry; the gauges follow mgr's cache
// while mgr runs. It uses the informers the roles already have, so it adds
// no watch.
func Register(mgr ctrl.Manager) error {
	registerOnce.Do(func() { metrics.Registry.MustRegister(buildInfo(version.Get()), objects) })
	// Before the manager starts, GetInformer only registers the informer.
	ctx := context.Background()
	links, err := mgr.GetCache().GetInformer(ctx, &kurzv1alpha1.Link{})
	if err != nil {
		return fmt.Errorf("link informer for metrics: %w", err)
	}
	domains, err := mgr.GetCache().GetInformer(ctx, &kurzv1alpha1.Domain{})
	if err != nil {
		return fmt.Errorf("domain informer for metrics: %w", err)
	}
	s, err := newSource(links, domains)
	if err != nil {
		return err
	}
	return mgr.Add(s)
}

// Start counts s while the manager runs.
func (s *source) Start(ctx context.Context) error {
	objects.mu.Lock()
	objects.sources = append(objects.sources, s)
	objects.mu.Unlock()
	<-ctx.Done()
	objects.mu.Lock()
	defer objects.mu.Unlock()
	for i, o := range objects.sources {
		if o == s {
			objects.sources = append(objects.sources[:i], objects.sources[i+1:]...)
			break
		}
	}
	return nil
}

// NeedLeaderElection: every replica has the informers and reports them.
func (*source) NeedLeaderElection() bool { return false }

func (c *objectCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- linksDesc
	ch <- domainsDesc
}

// Collect exports nothing for a kind whose informer has not synced: a
// partial count would read as objects disappearing.
func (c *objectCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	var s *source
	if len(c.sources) > 0 {
		s = c.sources[0]
	}
	c.mu.Unlock()
	if s == nil {
		return
	}
	collect(ch, linksDesc, s.links, LinkStates)
	collect(ch, domainsDesc, s.domains, DomainStates)
}

func collect(ch chan<- prometheus.Metric, desc *prometheus.Desc, t *tally, states []string) {
	if !t.synced() {
		return
	}
	counts := make([]int, len(states))
	t.read(states, counts)
	for i, s := range states {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(counts[i]), s)
	}
}
