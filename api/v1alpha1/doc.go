// Package v1alpha1 holds the kurz.dev/v1alpha1 API: the Link and Domain kinds.
//
// +kubebuilder:object:generate=true
// +groupName=kurz.dev
package v1alpha1
