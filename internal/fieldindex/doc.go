// Package fieldindex registers the cache field indexes every kurz role looks
// objects up by, so that no role lists and filters a whole kind per request.
package fieldindex
