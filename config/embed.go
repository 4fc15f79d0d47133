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
