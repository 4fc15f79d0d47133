package config

import "embed"

// CRDs holds the generated CustomResourceDefinitions (crd/bases/*.yaml).
//
//go:embed crd/bases/*.yaml
var CRDs embed.FS

// UserRoles holds the ClusterRoles kurz-viewer and kurz-editor that grant API
// users access to a workspace when bound in its namespace.
//
//go:embed rbac/user_roles.yaml
var UserRoles []byte

// MetricsReaderRole is the ClusterRole kurz-metrics-reader: bound to a
// subject, its token may scrape /metrics (served over HTTPS with token
// checks by default). `kurz dev` installs it so that users can bind it.
//
//go:embed rbac/metrics_reader_role.yaml
var MetricsReaderRole []byte
