package restapi

import (
	"encoding/json"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/validation"
)

// Bounds of a Webhook's numbers, as its CRD's markers say.
const (
	webhookMinTimeout, webhookMaxTimeout   = 1, 30
	webhookMinAttempts, webhookMaxAttempts = 1, 20
	webhookMinClicks, webhookMaxClicks     = 1, 1000
)

// webhookInput is a validated webhook body: url, events and secret_name
// required; the others optional (absent keeps, null clears: back to the
// default).
type webhookInput struct {
	url            string
	events         []kurzv1alpha1.WebhookEvent
	secretName     string
	secretKey      optional[string]
	linkSelector   optional[kurzv1alpha1.WebhookLinkSelector]
	payloadVersion optional[string]
	timeoutSeconds optional[int64]
	maxAttempts    optional[int64]
	maxClicks      optional[int64]
}

func decodeWebhookInput(raw map[string]json.RawMessage) (webhookInput, error) {
	f := &form{raw: raw}
	var in webhookInput
	var ok bool
	if in.url, ok = f.required("url"); ok {
		f.check("url", &in.url, validation.WebhookURL)
	}
	in.events = decodeEvents(f)
	if in.secretName, ok = f.required("secret_name"); ok {
		f.check("secret_name", &in.secretName, validation.SecretName)
	}
	in.secretKey = f.str("secret_key", true)
	f.check("secret_key", in.secretKey.value, validation.SecretKey)
	in.payloadVersion = f.str("payload_version", true)
	f.check("payload_version", in.payloadVersion.value, func(v string) string {
		if v != "v1" {
			return "must be v1"
		}
		return ""
	})
	in.timeoutSeconds = f.integer("timeout_seconds")
	between(f, "timeout_seconds", in.timeoutSeconds, webhookMinTimeout, webhookMaxTimeout)
	in.maxAttempts = f.integer("max_attempts")
	between(f, "max_attempts", in.maxAttempts, webhookMinAttempts, webhookMaxAttempts)
	in.maxClicks = f.integer("max_clicks_per_request")
	between(f, "max_clicks_per_request", in.maxClicks, webhookMinClicks, webhookMaxClicks)
	in.linkSelector = decodeLinkSelector(f)
	return in, f.errs.err()
}

// decodeEvents reads events: a non-empty set of event names.
func decodeEvents(f *form) []kurzv1alpha1.WebhookEvent {
	list := f.stringList("events")
	if f.errs.has("events") {
		return nil
	}
	if list.value == nil || len(*list.value) == 0 {
		f.fail("events", "is required")
		return nil
	}
	var out []kurzv1alpha1.WebhookEvent
	seen := map[string]bool{}
	for i, e := range *list.value {
		if msg := validation.WebhookEvent(e); msg != "" {
			f.fail("events."+strconv.Itoa(i), msg)
			continue
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, kurzv1alpha1.WebhookEvent(e))
		}
	}
	return out
}

func between(f *form, name string, v optional[int64], lo, hi int64) {
	if v.value != nil && (*v.value < lo || *v.value > hi) {
		f.fail(name, "must be between "+strconv.FormatInt(lo, 10)+" and "+strconv.FormatInt(hi, 10))
	}
}

// selectorField turns a label selector's field path into the API's names:
// matchExpressions[0].values[1] is match_expressions.0.values.1.
var selectorField = strings.NewReplacer("matchExpressions", "match_expressions", "matchLabels", "match_labels", "[", ".", "]", "")

// linkSelectorBody is link_selector as the API takes and shows it.
type linkSelectorBody struct {
	MatchLabels      map[string]string                 `json:"match_labels"`
	MatchExpressions []metav1.LabelSelectorRequirement `json:"match_expressions"`
	Tags             []string                          `json:"tags"`
}

// decodeLinkSelector reads link_selector: null or {} selects every link.
func decodeLinkSelector(f *form) optional[kurzv1alpha1.WebhookLinkSelector] {
	v, ok := f.raw["link_selector"]
	if !ok {
		return optional[kurzv1alpha1.WebhookLinkSelector]{}
	}
	if isNull(v) {
		return optional[kurzv1alpha1.WebhookLinkSelector]{present: true}
	}
	var b linkSelectorBody
	if err := json.Unmarshal(v, &b); err != nil {
		f.fail("link_selector", "must be an object with match_labels, match_expressions and tags")
		return optional[kurzv1alpha1.WebhookLinkSelector]{}
	}
	sel := kurzv1alpha1.WebhookLinkSelector{
		LabelSelector: metav1.LabelSelector{MatchLabels: b.MatchLabels, MatchExpressions: b.MatchExpressions},
	}
	bad := false
	for _, e := range metav1validation.ValidateLabelSelector(&sel.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("link_selector")) {
		name := selectorField.Replace(e.Field)
		detail := e.Detail
		if detail == "" {
			detail = e.ErrorBody()
		}
		f.errs.add(name, "The "+attribute(name)+" field is invalid: "+detail+".")
		bad = true
	}
	for i, t := range b.Tags {
		if msg := validation.Tag(t); msg != "" {
			f.fail("link_selector.tags."+strconv.Itoa(i), msg)
			bad = true
		}
	}
	if bad {
		return optional[kurzv1alpha1.WebhookLinkSelector]{}
	}
	sel.Tags = dedupe(b.Tags)
	if msg := validation.Tags(sel.Tags); msg != "" {
		f.fail("link_selector.tags", msg)
		return optional[kurzv1alpha1.WebhookLinkSelector]{}
	}
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 && len(sel.Tags) == 0 {
		return optional[kurzv1alpha1.WebhookLinkSelector]{present: true}
	}
	return optional[kurzv1alpha1.WebhookLinkSelector]{present: true, value: &sel}
}

// apply writes the input onto spec.
func (in webhookInput) apply(spec *kurzv1alpha1.WebhookSpec) {
	spec.URL = in.url
	spec.Events = in.events
	spec.SecretRef.Name = in.secretName
	if in.secretKey.present {
		spec.SecretRef.Key = ""
		if v := in.secretKey.value; v != nil {
			spec.SecretRef.Key = *v
		}
	}
	in.linkSelector.apply(&spec.LinkSelector)
	if in.payloadVersion.present {
		spec.PayloadVersion = ""
		if v := in.payloadVersion.value; v != nil {
			spec.PayloadVersion = *v
		}
	}
	applyInt32(in.timeoutSeconds, &spec.TimeoutSeconds)
	applyInt32(in.maxAttempts, &spec.MaxAttempts)
	applyInt32(in.maxClicks, &spec.MaxClicksPerRequest)
}

// applyInt32 sets dst from o; null clears it (the CRD's default applies).
func applyInt32(o optional[int64], dst *int32) {
	if !o.present {
		return
	}
	*dst = 0
	if o.value != nil {
		*dst = int32(*o.value) //nolint:gosec // checked against the CRD's bounds
	}
}
