package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
)

// Where the Links live: the workspace of kurz dev's API token.
const (
	namespace = devenv.Workspace
	host      = "bench.kurz.test"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(kurzv1alpha1.AddToScheme(s))
	return s
}()

func newClient(env *devenv.Env) (client.WithWatch, error) {
	cfg := env.Config()
	cfg.QPS = -1 // the loader measures the control plane, not client-go's limiter
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}

func linkName(i int) string { return fmt.Sprintf("l%07d", i) }
func linkKey(i int) string  { return fmt.Sprintf("k%d", i) }

// benchLink is Link i as kubectl apply would create it.
func benchLink(i int, lastApplied bool) *kurzv1alpha1.Link {
	src, campaign := "bench", fmt.Sprintf("c%d", i%100)
	l := &kurzv1alpha1.Link{
		TypeMeta:   metav1.TypeMeta{APIVersion: kurzv1alpha1.GroupVersion.String(), Kind: "Link"},
		ObjectMeta: metav1.ObjectMeta{Name: linkName(i), Namespace: namespace},
		Spec: kurzv1alpha1.LinkSpec{
			Domain: host,
			Key:    linkKey(i),
			URL:    kurzv1alpha1.URL(fmt.Sprintf("https://www.example.com/articles/%d/a-page-about-something?ref=newsletter", i)),
			UTM:    &kurzv1alpha1.LinkUTM{Source: &src, Campaign: &campaign},
		},
	}
	if lastApplied {
		l.Annotations = map[string]string{}
		b, _ := json.Marshal(l) // the object as applied, annotations empty
		l.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = string(b) + "\n"
	}
	return l
}

// countLinks returns how many Links namespace holds, from one list call.
func countLinks(ctx context.Context, c client.Client) (int, error) {
	var l kurzv1alpha1.LinkList
	if err := c.List(ctx, &l, client.InNamespace(namespace), client.Limit(1)); err != nil {
		return 0, err
	}
	n := len(l.Items)
	if l.RemainingItemCount != nil {
		n += int(*l.RemainingItemCount)
	}
	return n, nil
}

// load creates the Domain and whatever of the N Links is missing.
func load(ctx context.Context, c config, env *devenv.Env, r *results) error {
	cl, err := newClient(env)
	if err != nil {
		return err
	}
	d := &kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: namespace},
		Spec:       kurzv1alpha1.DomainSpec{Domain: host},
	}
	nf := kurzv1alpha1.URL("https://www.example.com/")
	d.Spec.NotFoundURL = &nf
	if err := cl.Create(ctx, d); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create Domain: %w", err)
	}
	have, err := countLinks(ctx, cl)
	if err != nil {
		return err
	}
	if have >= c.n {
		logf("%d Links there already: no load", have)
		r.loadRate = -1
		return nil
	}
	logf("creating Links %d..%d with %d workers", have, c.n-1, c.workers)
	start := time.Now()
	var next atomic.Int64
	next.Store(int64(have))
	var wg sync.WaitGroup
	errs := make(chan error, c.workers)
	for range c.workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= c.n || ctx.Err() != nil {
					return
				}
				if err := cl.Create(ctx, benchLink(i, c.lastApplied)); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- fmt.Errorf("create Link %d: %w", i, err)
					return
				}
				if i%10000 == 0 && i > have {
					logf("%d Links", i)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	el := time.Since(start)
	r.loadRate = float64(c.n-have) / el.Seconds()
	logf("created %d Links in %s (%.0f/s)", c.n-have, el.Round(time.Second), r.loadRate)
	return ctx.Err()
}
