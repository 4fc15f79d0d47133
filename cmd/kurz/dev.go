package main

import "errors"

// runDev is `kurz dev`; see internal/devenv.
func runDev(args []string) error { return errors.New("not implemented yet") }
