// Package config embeds the manifests the kurz binary installs by itself:
// `kurz dev` applies the CRDs and the API user roles to its local control plane.
package config
