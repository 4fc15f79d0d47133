// Package importer reads the links of other link shorteners (and kurz's own
// CSV) into one neutral record, Link: the fields of the API's link body.
// It is pure: bytes in, checked links out. `kurz import` (cmd/kurz) writes
// them as Link manifests (internal/importer/manifest) or creates them
// through the bulk API (internal/importer/bulk).
//
// One file per format; each says where its format is documented and which
// version of the source project was read (docs/import.md lists them too).
// The format is told from the CSV header or the JSON's shape (Detect), or
// forced.
//
// Decisions:
//
//   - Every link is checked with internal/validation, the API's own
//     validators built from the CRD's rules, so manifests apply and bulk
//     items are refused only for what needs the cluster (a domain outside
//     the workspace, a key taken). A record kurz would refuse is invalid,
//     with every reason; the import stops before writing anything unless
//     --skip-invalid. Two records with the same domain and key: the second
//     is invalid.
//   - What a source has and kurz has no field for (titles, analytics, geo
//     targeting, folders, creation dates...) is not an error: it is counted
//     per source field (Result.Dropped) and listed at the end. Records left
//     out on purpose (banned or disabled in the source, a root link) are
//     listed too.
//   - A protection is never dropped silently: a link whose source says it
//     has a password the export does not carry (Kutt) is invalid, not
//     imported open. No source exports bcrypt hashes (YOURLS and Shlink
//     have no passwords, Bitly exports none, Kutt a boolean, Dub the
//     plaintext), so passwords are plaintext here and hashed on the way
//     out, as the API does.
//   - Messages name fields, keys and domains, never a password or a URL's
//     value (URLs may carry tokens; the report lands in CI logs).
package importer
