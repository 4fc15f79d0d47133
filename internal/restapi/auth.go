package restapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// authCacheSize bounds the caches of good answers; past it the least
// recently used are forgotten (and asked again).
const authCacheSize = 10000

// Refused tokens are remembered apart from good ones, in a smaller cache
// with a shorter life: a flood of distinct bad tokens then only pushes out
// other bad tokens, never a real caller's identity, and a token refused
// because its ServiceAccount was not there yet works again soon.
const (
	rejectedCacheSize = 1000
	rejectedCacheTTL  = 5 * time.Second
)

// reviewTimeout bounds one TokenReview. The review runs for every request
// waiting on it, so it is not tied to the first request's context.
const reviewTimeout = 10 * time.Second

// saPrefix starts the username of every ServiceAccount token.
const saPrefix = "system:serviceaccount:"

// caller is who makes a request: the ServiceAccount behind the token and the
// workspace (namespace) it belongs to.
type caller struct {
	user      authenticationv1.UserInfo
	workspace string
	// tokenKey is the sha256 of the token: the key of the per-token caches,
	// so the token itself is never kept.
	tokenKey string
	// limitKey names the ServiceAccount (its uid) for the rate limit, so
	// that minting more tokens for it does not buy more requests.
	limitKey string
}

// authenticator answers "who is this token" with TokenReview and "may they"
// with SubjectAccessReview, caching both briefly by token hash so a busy
// client costs no API calls per request.
type authenticator struct {
	c client.Client
	// audiences are asked for in every TokenReview; an answer must name
	// one of them (see audienceMatches).
	audiences []string
	// identities holds good answers, rejected refusals (see rejectedCacheSize).
	identities *expirable.LRU[string, *caller]
	rejected   *expirable.LRU[string, struct{}]
	// reviews collapses concurrent reviews of one token into one.
	reviews   singleflight.Group
	decisions *expirable.LRU[string, bool]
}

func newAuthenticator(c client.Client, audiences []string, ttl time.Duration) *authenticator {
	return &authenticator{
		c:          c,
		audiences:  audiences,
		identities: expirable.NewLRU[string, *caller](authCacheSize, nil, ttl),
		rejected:   expirable.NewLRU[string, struct{}](rejectedCacheSize, nil, min(ttl, rejectedCacheTTL)),
		decisions:  expirable.NewLRU[string, bool](authCacheSize, nil, ttl),
	}
}

// bearerToken returns the token of an "Authorization: Bearer" header when
// it has the shape of a JWT (three base64url segments), as every Kubernetes
// ServiceAccount token has. Anything else is refused here, without a
// TokenReview: garbage costs kube-apiserver nothing, and variants of a real
// token with text appended (which a TokenReview may still accept) cannot mint
// fresh rate-limit buckets or cache entries.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, isJWT(token)
}

// isJWT reports whether s is three non-empty base64url segments joined by dots.
func isJWT(s string) bool {
	if len(s) > maxTokenLength {
		return false
	}
	segments := strings.Split(s, ".")
	if len(segments) != 3 {
		return false
	}
	for _, seg := range segments {
		if seg == "" || strings.IndexFunc(seg, notBase64URL) >= 0 {
			return false
		}
	}
	return true
}

func notBase64URL(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
}

// maxTokenLength bounds what is hashed and sent for review; ServiceAccount
// tokens are about a kilobyte.
const maxTokenLength = 16 << 10

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// cached returns what is remembered about the token with hash key: its
// caller (known good), or known as refused, or nothing.
func (a *authenticator) cached(key string) (c *caller, refused bool) {
	if c, ok := a.identities.Get(key); ok {
		return c, false
	}
	_, refused = a.rejected.Get(key)
	return nil, refused
}

// authenticate returns the caller of a token (key is its hash), or
// errUnauthenticated. Concurrent calls for one token share one TokenReview.
func (a *authenticator) authenticate(ctx context.Context, token, key string) (*caller, error) {
	v, err, _ := a.reviews.Do(key, func() (any, error) {
		// A review that ended between the caller's cache miss and now has
		// already answered.
		if c, refused := a.cached(key); c != nil || refused {
			return c, nil
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviewTimeout)
		defer cancel()
		return a.review(ctx, token, key)
	})
	if err != nil {
		return nil, err
	}
	c, _ := v.(*caller)
	if c == nil {
		return nil, errUnauthenticated
	}
	return c, nil
}

// review asks kube-apiserver about token and caches the answer; errors are
// not cached, so the next request asks again.
func (a *authenticator) review(ctx context.Context, token, key string) (*caller, error) {
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{
		Token:     token,
		Audiences: a.audiences,
	}}
	if err := a.c.Create(ctx, review); err != nil {
		authReviews.WithLabelValues("token", "error").Inc()
		return nil, fmt.Errorf("token review: %w", err)
	}
	authReviews.WithLabelValues("token", "ok").Inc()
	c := a.callerOf(review.Status, key)
	if c == nil {
		a.rejected.Add(key, struct{}{})
		return nil, nil
	}
	a.identities.Add(key, c)
	return c, nil
}

// callerOf turns a TokenReview answer into a caller, or nil. Only
// ServiceAccount tokens name a workspace, so other users are not callers of
// this API (401): a token is an API credential only once it is bound to a
// workspace, and only when it was minted for one of our audiences.
func (a *authenticator) callerOf(st authenticationv1.TokenReviewStatus, key string) *caller {
	if !st.Authenticated || !audienceMatches(st.Audiences, a.audiences) {
		return nil
	}
	ns, ok := serviceAccountNamespace(st.User.Username)
	if !ok {
		return nil
	}
	limitKey := "uid:" + st.User.UID
	if st.User.UID == "" { // not from a ServiceAccount token authenticator
		limitKey = "user:" + st.User.Username
	}
	return &caller{user: st.User, workspace: ns, tokenKey: key, limitKey: limitKey}
}

// audienceMatches reports whether the audiences a TokenReview answered with
// include one we asked for. An authenticator that ignores audiences answers
// with none: then the token is good for kube-apiserver itself, which is
// exactly what an API token must not be, so it is refused.
func audienceMatches(got, want []string) bool {
	for _, g := range got {
		if slices.Contains(want, g) {
			return true
		}
	}
	return false
}

// serviceAccountNamespace reads NS from system:serviceaccount:NS:NAME.
func serviceAccountNamespace(username string) (string, bool) {
	rest, ok := strings.CutPrefix(username, saPrefix)
	if !ok {
		return "", false
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
		return "", false
	}
	return ns, true
}

// authorize returns nil when the caller may do verb on resource (links or
// domains) in its workspace, else errForbidden.
func (a *authenticator) authorize(ctx context.Context, c *caller, verb, resource string) error {
	key := c.tokenKey + "/" + verb + "/" + resource
	allowed, ok := a.decisions.Get(key)
	if !ok {
		extra := make(map[string]authorizationv1.ExtraValue, len(c.user.Extra))
		for k, v := range c.user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   c.user.Username,
			UID:    c.user.UID,
			Groups: c.user.Groups,
			Extra:  extra,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: c.workspace,
				Verb:      verb,
				Group:     kurzv1alpha1.GroupVersion.Group,
				Resource:  resource,
			},
		}}
		if err := a.c.Create(ctx, review); err != nil {
			authReviews.WithLabelValues("access", "error").Inc()
			return fmt.Errorf("subject access review: %w", err)
		}
		authReviews.WithLabelValues("access", "ok").Inc()
		allowed = review.Status.Allowed && !review.Status.Denied
		a.decisions.Add(key, allowed)
	}
	if !allowed {
		return errForbidden
	}
	return nil
}
