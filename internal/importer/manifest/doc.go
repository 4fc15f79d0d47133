// Package manifest writes imported links as Link manifests for a GitOps
// repository: to stdout, to one multi-document file, or to a directory with
// one file per link.
//
// Decisions:
//
//   - Names are deterministic: the readable prefix the API uses
//     (kurzv1alpha1.LinkNamePrefix, "Summer_Sale" -> "summer-sale-") and 10
//     hex digits of SHA-256 over domain/key, where the API lets
//     kube-apiserver append a random suffix. A re-run over the same source
//     writes the same names, so a GitOps tool updates instead of
//     duplicating, and the diff of a re-run is empty. domain/key is what
//     identifies a link in a workspace; 40 bits of hash make a collision
//     between two links of one import improbable (and it is an error, not
//     an overwrite).
//   - spec.passwordHash is bcrypt at bcrypt.DefaultCost (10), as the API
//     hashes. bcrypt salts every hash, so a re-run keeps the hash already
//     written for that name when it still verifies against the password:
//     otherwise every re-run would change every protected link.
//   - Nothing half-written: every manifest is rendered first; a file is
//     written beside its target and renamed over it, a directory's files
//     all written before any is renamed into place. Files of links no longer
//     in the source are left alone (they may be the repository's own).
//   - Manifests carry no status and no creationTimestamp: only what a
//     person would write (apiVersion, kind, metadata.name, an optional
//     namespace, spec).
package manifest
