package webhooks

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

func TestAddressPolicy(t *testing.T) {
	strict, dev, service := addressPolicy{}, addressPolicy{loopback: true}, addressPolicy{private: true}
	for _, tc := range []struct {
		addr         string
		strict       string // the refusal's kind under each policy; "" allowed
		dev, service string
		comment      string
	}{
		{"93.184.215.14", "", "", "", "public"},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", "", "", "", "public IPv6"},
		{"127.0.0.1", "loopback", "", "loopback", ""},
		{"127.9.9.9", "loopback", "", "loopback", "all of 127/8"},
		{"::1", "loopback", "", "loopback", ""},
		{"::ffff:127.0.0.1", "loopback", "", "loopback", "IPv4-mapped"},
		{"169.254.169.254", "metadata service", "metadata service", "metadata service", ""},
		{"::ffff:169.254.169.254", "metadata service", "metadata service", "metadata service", "IPv4-mapped"},
		{"169.254.1.1", "link-local", "link-local", "link-local", ""},
		{"fe80::1", "link-local", "link-local", "link-local", ""},
		{"10.0.0.1", "private", "private", "", ""},
		{"172.16.5.4", "private", "private", "", ""},
		{"172.32.0.1", "", "", "", "just past 172.16/12"},
		{"192.168.1.1", "private", "private", "", ""},
		{"100.64.0.1", "private", "private", "", "CGNAT"},
		{"fd00:ec2::254", "private", "private", "", "AWS's IPv6 metadata address is ULA"},
		{"0.0.0.0", "reserved", "reserved", "reserved", "unspecified"},
		{"::", "reserved", "reserved", "reserved", "unspecified"},
		{"224.0.0.1", "reserved", "reserved", "reserved", "multicast"},
		{"ff02::1", "reserved", "reserved", "reserved", "multicast"},
		{"255.255.255.255", "reserved", "reserved", "reserved", "broadcast"},
		{"64:ff9b::7f00:1", "reserved", "reserved", "reserved", "NAT64 of 127.0.0.1"},
		{"2002:7f00:1::", "reserved", "reserved", "reserved", "6to4 of 127.0.0.1"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			g := NewWithT(t)
			a := netip.MustParseAddr(tc.addr)
			for _, p := range []struct {
				policy addressPolicy
				want   string
			}{{strict, tc.strict}, {dev, tc.dev}, {service, tc.service}} {
				err := p.policy.check(a)
				if p.want == "" {
					g.Expect(err).NotTo(HaveOccurred(), "%+v %s", p.policy, tc.comment)
					continue
				}
				var re *RefusedError
				g.Expect(errors.As(err, &re)).To(BeTrue(), "%+v refuses %s", p.policy, tc.comment)
				g.Expect(re.Kind).To(Equal(p.want))
			}
		})
	}
}

func TestParseSecret(t *testing.T) {
	g := NewWithT(t)
	k24 := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	keys, err := ParseSecret([]byte(k24))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys).To(HaveLen(1))
	g.Expect(keys[0]).To(HaveLen(24))

	keys, err = ParseSecret([]byte(" " + k24 + "\n" + k24 + "\n"))
	g.Expect(err).NotTo(HaveOccurred(), "two while rotating, white space around")
	g.Expect(keys).To(HaveLen(2))

	for _, bad := range []string{
		"", "   ", "hunter2", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // no prefix
		"whsec_", "whsec_c2hvcnQ=", // 5 bytes
		"whsec_" + strings.Repeat("QUFB", 22), // 66 bytes
		"whsec_not base64!", k24 + " " + k24 + " " + k24 + " " + k24 + " " + k24,
	} {
		_, err := ParseSecret([]byte(bad))
		g.Expect(err).To(MatchError(ErrSecretInvalid), "%q", bad)
		if len(bad) > 8 {
			g.Expect(err.Error()).NotTo(ContainSubstring(bad), "the message never repeats the value")
		}
	}
}

// The published test vector of the Standard Webhooks reference libraries:
// a receiver's library must accept what kurz signs.
func TestSignatureMatchesTheReferenceVector(t *testing.T) {
	g := NewWithT(t)
	keys, err := ParseSecret([]byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(signature(keys, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))).
		To(Equal("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="))
	two := append(keys, keys[0])
	g.Expect(signature(two, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))).
		To(Equal("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="))
}

func TestBackoff(t *testing.T) {
	g := NewWithT(t)
	for n := 1; n <= 25; n++ {
		bound := backoffCap
		if n < 20 {
			bound = min(backoffBase<<(n-1), backoffCap)
		}
		for range 200 {
			d := backoff(n, 0)
			g.Expect(d).To(BeNumerically(">", 0))
			g.Expect(d).To(BeNumerically("<=", bound+time.Millisecond), "attempt %d", n)
		}
	}
	g.Expect(backoff(1, 30*time.Second)).To(Equal(30*time.Second), "Retry-After is honoured")
	g.Expect(backoff(1, time.Hour)).To(Equal(backoffCap), "up to the cap")
	// Full jitter: waits spread over the whole range.
	var low, high int
	for range 1000 {
		if d := backoff(4, 0); d < 4*time.Second {
			low++
		} else {
			high++
		}
	}
	g.Expect(low).To(BeNumerically(">", 300))
	g.Expect(high).To(BeNumerically(">", 300))
}

func TestTargets(t *testing.T) {
	o := Options{AllowClusterServices: true}
	for _, tc := range []struct {
		url, ns string
		o       Options
		refused string // a part of the refusal; "" allowed
		private bool
	}{
		{"https://hooks.example.com/x", "team", Options{}, "", false},
		{"https://127.0.0.1:8443/x", "team", Options{}, "loopback", false},
		{"https://127.0.0.1:8443/x", "team", Options{AllowLoopback: true}, "", false},
		{"https://[fe80::1]/x", "team", Options{}, "link-local", false},
		{"https://10.0.0.7/x", "team", o, "private", false},
		{"http://hooks.example.com/x", "team", Options{}, "must be https", false},
		{"http://recv.team.svc/x", "team", Options{}, "--webhook-allow-cluster-services", false},
		{"http://recv.team.svc/x", "team", o, "", true},
		{"https://recv.team.svc.cluster.local:8443/x", "team", o, "", true},
		{"http://recv.other.svc/x", "team", o, "another namespace", false},
		{"ftp://hooks.example.com/x", "team", o, "not an absolute http(s) URL", false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			g := NewWithT(t)
			got := tc.o.targetOf(tc.url, tc.ns)
			if tc.refused == "" {
				g.Expect(got.refused).To(BeEmpty())
			} else {
				g.Expect(got.refused).To(ContainSubstring(tc.refused))
			}
			g.Expect(got.policy.private).To(Equal(tc.private))
		})
	}
}

func TestSelects(t *testing.T) {
	g := NewWithT(t)
	d := &Dispatcher{o: DefaultOptions()}
	w := &kurzv1alpha1.Webhook{Spec: kurzv1alpha1.WebhookSpec{URL: "https://h.example/x", Events: []kurzv1alpha1.WebhookEvent{kurzv1alpha1.EventLinkCreated}}}
	all := d.configOf(w)
	g.Expect(all.filtersLinks()).To(BeFalse())
	g.Expect(all.selects(nil, nil)).To(BeTrue())
	g.Expect(all.events.has(kurzv1alpha1.EventLinkCreated)).To(BeTrue())
	g.Expect(all.events.has(kurzv1alpha1.EventLinkDeleted)).To(BeFalse())

	w.Spec.LinkSelector = &kurzv1alpha1.WebhookLinkSelector{
		LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold"}}}},
		Tags:          []string{"a", "b"},
	}
	some := d.configOf(w)
	g.Expect(some.selects(map[string]string{"tier": "gold"}, []string{"x", "b"})).To(BeTrue())
	g.Expect(some.selects(map[string]string{"tier": "gold"}, []string{"x"})).To(BeFalse())
	g.Expect(some.selects(map[string]string{"tier": "silver"}, []string{"a"})).To(BeFalse())
}

func TestQueueIsBoundedByBytes(t *testing.T) {
	g := NewWithT(t)
	q := newQueue(1000)
	body := make([]byte, 300)
	g.Expect(q.push(&delivery{id: "1", body: body})).To(Equal(pushed))
	g.Expect(q.push(&delivery{id: "2", body: body})).To(Equal(pushed))
	g.Expect(q.push(&delivery{id: "3", body: body})).To(Equal(full), "3 x (300 + 128) > 1000")
	d, ok := q.pop(context.Background())
	g.Expect(ok).To(BeTrue())
	g.Expect(d.id).To(Equal("1"))
	g.Expect(q.push(&delivery{id: "3", body: body})).To(Equal(pushed))
	g.Expect(q.drain()).To(Equal(2))
	g.Expect(q.push(&delivery{id: "4"})).To(Equal(closed))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, ok = q.pop(ctx)
	g.Expect(ok).To(BeFalse())
}

func TestRetryAfter(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	g.Expect(retryAfter("", now)).To(BeZero())
	g.Expect(retryAfter("120", now)).To(Equal(2 * time.Minute))
	g.Expect(retryAfter("Fri, 02 Jan 2026 03:05:05 GMT", now)).To(Equal(time.Minute))
	g.Expect(retryAfter("soon", now)).To(BeZero())
}
