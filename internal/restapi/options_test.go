package restapi

import (
	"net"
	"testing"

	"github.com/kurz-dev/kurz/internal/optionstest"
)

func TestOptionsValidate(t *testing.T) {
	optionstest.Validate(t, DefaultOptions, []optionstest.Case[Options]{
		{Name: "no bind address", Edit: func(o *Options) { o.BindAddress = "" }, Error: "--api-bind-address"},
		{Name: "a listener instead of an address", Edit: func(o *Options) { o.BindAddress, o.Listener = "", &net.TCPListener{} }, Error: ""},
		{Name: "negative rate limit", Edit: func(o *Options) { o.RateLimit = -1 }, Error: "--api-rate-limit"},
		{Name: "no rate limit", Edit: func(o *Options) { o.RateLimit, o.UnauthenticatedRateLimit = 0, 0 }, Error: ""},
		{Name: "negative unauthenticated rate limit", Edit: func(o *Options) { o.UnauthenticatedRateLimit = -1 }, Error: "--api-unauthenticated-rate-limit"},
		{Name: "no audience", Edit: func(o *Options) { o.TokenAudiences = nil }, Error: "at least one audience"},
		{Name: "empty audience", Edit: func(o *Options) { o.TokenAudiences = []string{"kurz", ""} }, Error: "empty audience"},
		{Name: "public URL without scheme", Edit: func(o *Options) { o.PublicURL = "go.example.com" }, Error: "--api-public-url"},
		{Name: "public URL", Edit: func(o *Options) { o.PublicURL = "https://go.example.com" }, Error: ""},
		{Name: "no auth cache", Edit: func(o *Options) { o.AuthCacheTTL = 0 }, Error: "--api-auth-cache-ttl"},
		{Name: "no write wait", Edit: func(o *Options) { o.WriteWait = 0 }, Error: "WriteWait"},
		{Name: "no QR cache", Edit: func(o *Options) { o.QRCacheSize = 0 }, Error: "QRCacheSize"},
		{Name: "no shutdown timeout", Edit: func(o *Options) { o.ShutdownTimeout = 0 }, Error: "ShutdownTimeout"},
	})
}
