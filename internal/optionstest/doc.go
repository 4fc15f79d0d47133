// Package optionstest checks the options convention every role follows
// (DefaultOptions, BindFlags, Validate) with one table-test shape, so each
// package lists its cases and no test repeats the loop.
package optionstest
