package validation

import "golang.org/x/net/idna"

// idnaProfile maps user input the way browsers do (UTS #46: case folding,
// width mapping) and converts it to punycode. Label lengths and characters
// are left to Hostname so the messages stay the same for every input.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
)
