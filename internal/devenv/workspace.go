package devenv

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kurz-dev/kurz/internal/jwtexp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// Workspace is the namespace kurz dev sets up for the API.
	Workspace = "default"
	// ServiceAccount is the API user of the workspace; DIR/token is its token.
	ServiceAccount = "kurz-admin"
	// Role is the ClusterRole bound to ServiceAccount in Workspace.
	Role = "kurz-editor"

	// tokenKeepMargin: a stored token closer than this to its expiry is
	// replaced at start rather than left to die during the session.
	tokenKeepMargin = 7 * 24 * time.Hour
)

// setUpWorkspace makes namespace default a workspace: ServiceAccount
// kurz-admin bound to kurz-editor there.
func setUpWorkspace(ctx context.Context, c client.Client) error {
	// The API server creates "default" itself, shortly after it is ready.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Name: Workspace}, &corev1.Namespace{}) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for namespace %s: %w", Workspace, err)
	}
	sa := corev1ac.ServiceAccount(ServiceAccount, Workspace).
		WithLabels(map[string]string{"app.kubernetes.io/name": "kurz"})
	if err := c.Apply(ctx, sa, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply ServiceAccount %s/%s: %w", Workspace, ServiceAccount, err)
	}
	rb := rbacv1ac.RoleBinding(ServiceAccount, Workspace).
		WithLabels(map[string]string{"app.kubernetes.io/name": "kurz"}).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("ClusterRole").WithName(Role)).
		WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName(ServiceAccount).WithNamespace(Workspace))
	if err := c.Apply(ctx, rb, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply RoleBinding %s/%s: %w", Workspace, ServiceAccount, err)
	}
	return nil
}

// ensureToken keeps the token in path when the API server still accepts it
// as the workspace's ServiceAccount for audience and it is not about to
// expire; otherwise it requests a new one-year token for audience (so it is
// an API token, not a kube-apiserver credential) and writes it with mode
// 0600. It reports whether it issued a new token.
func ensureToken(ctx context.Context, cs kubernetes.Interface, path, audience string) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if tok := strings.TrimSpace(string(old)); tok != "" {
		ok, err := tokenStillGood(ctx, cs, tok, audience)
		if err != nil {
			return false, err
		}
		if ok {
			return false, os.Chmod(path, 0o600)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(Workspace).CreateToken(ctx, ServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: ptr.To(int64(TokenLifetime / time.Second)),
			Audiences:         []string{audience},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("request a token for %s/%s: %w", Workspace, ServiceAccount, err)
	}
	return true, writeFileAtomic(path, []byte(tr.Status.Token+"\n"), 0o600)
}

// tokenStillGood asks the API server (TokenReview) whether tok authenticates
// as the workspace's ServiceAccount for audience, and checks its expiry. A
// token of an older kurz dev, minted for kube-apiserver, is not: it is
// replaced.
func tokenStillGood(ctx context.Context, cs kubernetes.Interface, tok, audience string) (bool, error) {
	if exp, ok := jwtexp.Of(tok); !ok || time.Until(exp) < tokenKeepMargin {
		return false, nil
	}
	review, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: tok, Audiences: []string{audience}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("review the stored token: %w", err)
	}
	want := "system:serviceaccount:" + Workspace + ":" + ServiceAccount
	return review.Status.Authenticated && review.Status.User.Username == want &&
		slices.Contains(review.Status.Audiences, audience), nil
}
