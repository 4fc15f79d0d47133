// Package config embeds the manifests the kurz binary installs by itself:
// `kurz dev` applies the CRDs, the API user roles and the metrics reader role
// to its local control plane.
package config
