package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/devenv"
	"github.com/kurz-dev/kurz/internal/parallel"
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
	if have == 0 && c.emptyReplica && !c.loadOnly && !c.controlPlaneOnly && !c.statusFloor {
		if err := measureEmpty(ctx, c, env, r); err != nil {
			return err
		}
	}
	if have >= c.n {
		logf("%d Links there already: no load", have)
		r.loadRate = -1
		return nil
	}
	start := time.Now()
	if c.bulk() {
		// Links 0 and 1 through kube-apiserver: the template and its check.
		if err := createLinks(ctx, c, cl, have, min(2, c.n)); err != nil {
			return err
		}
		if c.n > 2 {
			if err := loadEtcd(ctx, env.EtcdURL(), max(have, 2), c.n, c.lastApplied); err != nil {
				return fmt.Errorf("bulk load: %w", err)
			}
		}
		logf("wrote %d Links into etcd in %s", c.n-have, time.Since(start).Round(time.Second))
		return verifyServed(ctx, cl, c.n)
	}
	if err := createLinks(ctx, c, cl, have, c.n); err != nil {
		return err
	}
	el := time.Since(start)
	r.loadRate = float64(c.n-have) / el.Seconds()
	logf("created %d Links in %s (%.0f/s)", c.n-have, el.Round(time.Second), r.loadRate)
	return nil
}

// createLinks creates Links from..to-1 through kube-apiserver, with
// c.workers creates in flight.
func createLinks(ctx context.Context, c config, cl client.Client, from, to int) error {
	if from >= to {
		return nil
	}
	logf("creating Links %d..%d with %d workers", from, to-1, c.workers)
	return parallel.Each(ctx, from, to, c.workers, func(i int) error {
		if err := cl.Create(ctx, benchLink(i, c.lastApplied)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Link %d: %w", i, err)
		}
		if i%10000 == 0 && i > from {
			logf("%d Links", i)
		}
		return nil
	})
}

// verifyServed checks that kube-apiserver serves the n loaded Links: it
// counts them, gets the last and finds it by a field selector.
func verifyServed(ctx context.Context, cl client.Client, n int) error {
	start := time.Now()
	have, err := countLinks(ctx, cl)
	if err != nil {
		return err
	}
	if have != n {
		return fmt.Errorf("kube-apiserver counts %d Links, not %d", have, n)
	}
	want := benchLink(n-1, false)
	var got kurzv1alpha1.Link
	if err := cl.Get(ctx, client.ObjectKeyFromObject(want), &got); err != nil {
		return fmt.Errorf("get the last Link: %w", err)
	}
	if got.Spec.Key != want.Spec.Key || got.Spec.URL != want.Spec.URL || got.UID == "" || got.Generation != 1 {
		return fmt.Errorf("the last Link is not as loaded: %+v", got)
	}
	if err := selectLast(ctx, cl, n); err != nil {
		if !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) {
			return err
		}
		// Without the watch cache kube-apiserver reads and filters every
		// Link from etcd within its 60 s request timeout: a limit of the
		// control plane (docs/scaling.md), not of the load.
		logf("field-selected list: %v (kube-apiserver's request timeout; count and get agree)", err)
		return nil
	}
	logf("kube-apiserver serves the %d Links: count, get and field selector agree (%s)", n, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// selectLast lists Links by the last one's spec.key, as
// `kubectl get links --field-selector` does, and expects exactly it.
func selectLast(ctx context.Context, cl client.Client, n int) error {
	want := benchLink(n-1, false)
	var sel kurzv1alpha1.LinkList
	if err := cl.List(ctx, &sel, client.InNamespace(namespace), client.MatchingFields{"spec.key": want.Spec.Key}); err != nil {
		return fmt.Errorf("field-selected list: %w", err)
	}
	if len(sel.Items) != 1 || sel.Items[0].Name != want.Name {
		return fmt.Errorf("spec.key=%s selects %d Links, not %s", want.Spec.Key, len(sel.Items), want.Name)
	}
	return nil
}
