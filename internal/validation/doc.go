// Package validation holds the field rules of Links and Domains as Go
// functions, so the /api/v1 server refuses exactly what kube-apiserver refuses
// through the CRD schema (markers in api/v1alpha1) before it writes anything.
//
// Every validator returns "" when the value is valid and otherwise a message
// that completes the sentence "The <field> field ...", e.g. "must not be
// greater than 64 characters". The API server builds its Laravel-style
// messages from them; the CRD validation tests feed one table of bad values
// through both kube-apiserver and these functions.
//
// Lengths count characters (runes), as the OpenAPI maxLength of a CRD does.
package validation
