// Package linkcodec decodes kube-apiserver's JSON for Links in one pass
// each, for the informer every kurz replica fills with every Link at start.
//
// client-go reads each event of that stream five times with encoding/json:
// once to find where the frame ends, once to validate and once to decode
// the watch event, once to sniff the object's kind, once more to validate
// and decode the object. At 100 000 Links that was 8 of the 13 CPU-seconds
// a replica spent before its last Link redirected, on one goroutine.
//
// Here a frame's end and a watch event's object are found by brackets and
// strings alone (scan.go; other values and event layouts than
// kube-apiserver's go to encoding/json/v2's tokenizer), and only the object
// is read through: a Link (or LinkList) is unmarshaled with encoding/json/v2
// (github.com/go-json-experiment/json, the standard library's v2, stable
// from Go 1.27), reading past what the caller drops (Skip), and only then
// checked to be one; anything else, such as the Status of an ERROR event,
// and anything v2 refuses, goes to client-go's own decoder. The objects are
// the same as client-go's (codec_test.go decodes the same streams both
// ways and compares them; skip_test.go with what Skip names dropped).
package linkcodec
