package manager

import (
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kurz-dev/kurz/internal/webhooks"
)

// cacheByObject is the cache's per-kind settings: the controllers' (the
// route controllers read Ingresses or HTTPRoutes and Gateways, Secrets and
// Certificates in kurz's namespace only) and webhook delivery's (the
// Secrets labelled for signing, in every namespace), nil when no role
// needs any. It sets o.Controllers.CertManager from what it found, so the
// controllers built later agree with the cache: the composition root's one
// write to the options it validated.
func cacheByObject(cfg *rest.Config, o *Options) (map[client.Object]cache.ByObject, error) {
	by, err := routingByObject(cfg, o)
	if err != nil || !o.EnableWebhooks {
		return by, err
	}
	return webhooks.CacheSecrets(by), nil
}

func routingByObject(cfg *rest.Config, o *Options) (map[client.Object]cache.ByObject, error) {
	if !o.EnableControllers || !o.Controllers.Routing() {
		return nil, nil
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("HTTP client: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("REST mapper: %w", err)
	}
	byObject, certManager, err := o.Controllers.CacheByObject(mapper)
	o.Controllers.CertManager = certManager
	return byObject, err
}
