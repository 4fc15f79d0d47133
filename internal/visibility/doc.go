// Package visibility gives read-your-writes over views fed by informers:
// after the API writes an object, it waits until the view its next read
// comes from (the list index) holds the write, so a client that creates a
// link and lists at once sees it, and then until the redirect index of the
// same process does, so a click sent at once follows the write. The wait
// is bounded by the caller's context; a view that lags longer only delays
// the answer.
package visibility
