// Package scheme holds the one runtime.Scheme of kurz: the built-in kinds,
// CustomResourceDefinitions (which `kurz dev` installs and tests read), the
// Gateway API's v1 kinds and kurz.dev/v1alpha1. The manager, the installer and every test suite use
// it, so no two places disagree on which kinds a client knows.
package scheme
