// Package crds holds CRDs of other projects copied from their Go modules
// (make cert-manager-crds, make gateway-api-crds; VERSION and SHA256SUMS
// beside each set say which): the test suites install them in envtest, and
// `kurz dev` installs the Gateway API's when routing through it and the
// control plane has none.
package thirdparty

import "embed"

// GatewayAPI is the Gateway API's standard channel (gateway-api/*.yaml).
//
//go:embed gateway-api/*.yaml
var GatewayAPI embed.FS
