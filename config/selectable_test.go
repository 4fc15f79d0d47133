package config_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/testenv"
)

// Links are selectable by spec.domain and spec.key on the server, so
// `kubectl get links --field-selector spec.domain=...` needs no client-side
// filter and a GitOps tool can list one domain's links.
func TestLinksSelectableByDomainAndKey(t *testing.T) {
	testenv.Need(t)
	g := NewWithT(t)
	ns := newNamespace(t)
	for i, l := range []struct{ domain, key string }{
		{"go.example.com", "docs"}, {"go.example.com", "blog"}, {"links.example.org", "docs"},
	} {
		obj := manifest(t, "Link", fmt.Sprintf("sel-%d", i), ns,
			fmt.Sprintf("{domain: %s, key: %s, url: https://example.com/}", l.domain, l.key))
		g.Expect(k8s.Create(context.Background(), obj)).To(Succeed())
	}

	names := func(fields client.MatchingFields) []string {
		list := &kurzv1alpha1.LinkList{}
		g.Expect(k8s.List(context.Background(), list, client.InNamespace(ns), fields)).To(Succeed())
		var out []string
		for _, l := range list.Items {
			out = append(out, l.Name)
		}
		return out
	}
	g.Expect(names(client.MatchingFields{"spec.domain": "go.example.com"})).To(ConsistOf("sel-0", "sel-1"))
	g.Expect(names(client.MatchingFields{"spec.key": "docs"})).To(ConsistOf("sel-0", "sel-2"))
	g.Expect(names(client.MatchingFields{"spec.domain": "go.example.com", "spec.key": "docs"})).To(ConsistOf("sel-0"))
	g.Expect(names(client.MatchingFields{"spec.domain": "nowhere.example"})).To(BeEmpty())

	out := kubectl(t, "get", "links", "-n", ns, "--field-selector", "spec.domain=links.example.org", "-o", "name")
	g.Expect(strings.Fields(out)).To(ConsistOf("link.kurz.dev/sel-2"))
}
