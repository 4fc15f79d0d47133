package restapi

import (
	"fmt"
	"net/url"
)

// checkPublicURL refuses a --api-public-url that cannot prefix page links.
func checkPublicURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--api-public-url %q must be an http(s) URL like https://api.example.com", s)
	}
	return nil
}
