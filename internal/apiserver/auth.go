package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
)

// authCacheSize bounds each decision cache; past it the least recently used
// decisions are forgotten (and asked again).
const authCacheSize = 10000

// saPrefix starts the username of every ServiceAccount token.
const saPrefix = "system:serviceaccount:"

// caller is who makes a request: the ServiceAccount behind the token and the
// workspace (namespace) it belongs to.
type caller struct {
	user      authenticationv1.UserInfo
	workspace string
	// tokenKey is the sha256 of the token: the key of every per-token cache
	// and limiter, so the token itself is never kept.
	tokenKey string
}

// identity is a cached TokenReview answer; nil caller means unauthenticated.
type identity struct{ caller *caller }

// authenticator answers "who is this token" with TokenReview and "may they"
// with SubjectAccessReview, caching both briefly by token hash so a busy
// client costs no API calls per request.
type authenticator struct {
	c          client.Client
	identities *expirable.LRU[string, identity]
	decisions  *expirable.LRU[string, bool]
}

func newAuthenticator(c client.Client, ttl time.Duration) *authenticator {
	return &authenticator{
		c:          c,
		identities: expirable.NewLRU[string, identity](authCacheSize, nil, ttl),
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

// authenticate returns the caller of a token, or errUnauthenticated. Only
// ServiceAccount tokens name a workspace, so other users are not callers of
// this API (401): a token is an API credential only once it is bound to a
// workspace.
func (a *authenticator) authenticate(ctx context.Context, token string) (*caller, error) {
	key := hashToken(token)
	if id, ok := a.identities.Get(key); ok {
		if id.caller == nil {
			return nil, errUnauthenticated
		}
		return id.caller, nil
	}
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}
	if err := a.c.Create(ctx, review); err != nil {
		// Not cached: the next request asks again.
		return nil, fmt.Errorf("token review: %w", err)
	}
	var c *caller
	if review.Status.Authenticated {
		if ns, ok := serviceAccountNamespace(review.Status.User.Username); ok {
			c = &caller{user: review.Status.User, workspace: ns, tokenKey: key}
		}
	}
	a.identities.Add(key, identity{caller: c})
	if c == nil {
		return nil, errUnauthenticated
	}
	return c, nil
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
			return fmt.Errorf("subject access review: %w", err)
		}
		allowed = review.Status.Allowed && !review.Status.Denied
		a.decisions.Add(key, allowed)
	}
	if !allowed {
		return errForbidden
	}
	return nil
}
