package webhooks

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// senderConfig is what a sender needs of its Webhook's spec, built once
// per generation: a sender reads it for every attempt, and a new
// generation swaps it whole.
type senderConfig struct {
	uid         types.UID
	generation  int64
	url         string
	timeout     time.Duration
	maxAttempts int
	// maxClicks bounds a link.clicked batch's clicks.
	maxClicks int
	events    eventSet
	// selector and tags select link.* events (see selects); nil and
	// empty select every Link.
	selector labels.Selector
	tags     []string
	secret   kurzv1alpha1.WebhookSecretRef
	client   *http.Client
	// refused, when not empty, says why kurz delivers nothing to url (a
	// refused address literal, a Service it may not reach): events are
	// dropped and counted.
	refused string
}

// eventSet is a set of WebhookEvents as bits, in WebhookEvents' order.
type eventSet uint16

func eventBit(t kurzv1alpha1.WebhookEvent) eventSet {
	for i, e := range kurzv1alpha1.WebhookEvents {
		if e == t {
			return 1 << i
		}
	}
	return 0
}

func newEventSet(ts []kurzv1alpha1.WebhookEvent) eventSet {
	var s eventSet
	for _, t := range ts {
		s |= eventBit(t)
	}
	return s
}

func (s eventSet) has(t kurzv1alpha1.WebhookEvent) bool { return s&eventBit(t) != 0 }

// selects reports whether a Link with these labels and tags passes the
// Webhook's linkSelector: its label selector, and any of its tags.
func (c *senderConfig) selects(l map[string]string, tags []string) bool {
	if c.selector != nil && !c.selector.Matches(labels.Set(l)) {
		return false
	}
	if len(c.tags) == 0 {
		return true
	}
	for _, t := range tags {
		for _, want := range c.tags {
			if t == want {
				return true
			}
		}
	}
	return false
}

// filtersLinks reports whether the Webhook selects only some Links.
func (c *senderConfig) filtersLinks() bool { return c.selector != nil || len(c.tags) > 0 }

// servicePattern is a Service's name in cluster DNS (WebhookServicePattern).
var servicePattern = regexp.MustCompile(kurzv1alpha1.WebhookServicePattern)

// target is what kurz decides about a Webhook's URL before it connects:
// its host, the addresses it may connect to, or why it refuses the URL.
type target struct {
	host    string
	policy  addressPolicy
	refused string
}

// targetOf decides about rawURL of a Webhook in namespace.
func (o Options) targetOf(rawURL, namespace string) target {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return target{refused: "the URL is not an absolute http(s) URL with a host"}
	}
	host := strings.ToLower(u.Hostname())
	t := target{host: host, policy: addressPolicy{loopback: o.AllowLoopback}}
	if servicePattern.MatchString(host) {
		if strings.Split(host, ".")[1] != namespace {
			t.refused = "the URL names a Service of another namespace; a Webhook may reach Services of its own namespace only"
			return t
		}
		if !o.AllowClusterServices {
			t.refused = "the URL names a cluster Service, which this kurz does not deliver to (--webhook-allow-cluster-services)"
			return t
		}
		t.policy.private = true
		return t
	}
	if u.Scheme != "https" {
		t.refused = "the URL must be https (http only for a Service of this namespace)"
		return t
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := t.policy.check(a); err != nil {
			t.refused = refusedPrefix + err.Error()
		}
	}
	return t
}

// configOf builds the sender configuration of w.
func (d *Dispatcher) configOf(w *kurzv1alpha1.Webhook) *senderConfig {
	timeout := time.Duration(w.Spec.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	attempts := int(w.Spec.MaxAttempts)
	if attempts <= 0 {
		attempts = 8
	}
	maxClicks := int(w.Spec.MaxClicksPerRequest)
	if maxClicks <= 0 {
		maxClicks = defaultMaxClicks
	}
	secret := w.Spec.SecretRef
	if secret.Key == "" {
		secret.Key = "secret"
	}
	c := &senderConfig{
		uid: w.UID, generation: w.Generation, url: w.Spec.URL,
		timeout: timeout, maxAttempts: attempts, maxClicks: maxClicks, events: newEventSet(w.Spec.Events), secret: secret,
	}
	if s := w.Spec.LinkSelector; s != nil {
		c.tags = s.Tags
		if len(s.MatchLabels) > 0 || len(s.MatchExpressions) > 0 {
			sel, err := metav1.LabelSelectorAsSelector(&s.LabelSelector)
			if err != nil {
				c.refused = fmt.Sprintf("spec.linkSelector: %v", err)
				return c
			}
			c.selector = sel
		}
	}
	t := d.o.targetOf(w.Spec.URL, w.Namespace)
	if c.refused = t.refused; c.refused == "" {
		c.client = d.newClient(t.policy, timeout)
	}
	return c
}
