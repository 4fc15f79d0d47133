package linkcodec

import (
	"errors"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// timeUnmarshalers read metav1.Time and metav1.MicroTime as their
// UnmarshalJSON methods do (null is the zero time, a string is parsed and
// given in Local), from v2's token rather than through encoding/json: a
// Link holds up to a dozen timestamps, and their methods were a fifth of
// the bytes a decoded Link allocated. A value they refuse makes v2 refuse
// the object, which client-go's decoder then reads, errors and all.
var timeUnmarshalers = json.JoinUnmarshalers(
	json.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *metav1.Time) (err error) {
		t.Time, err = readTime(dec, time.RFC3339)
		return err
	}),
	json.UnmarshalFromFunc(func(dec *jsontext.Decoder, t *metav1.MicroTime) (err error) {
		t.Time, err = readTime(dec, metav1.RFC3339Micro)
		return err
	}),
)

var errNotTime = errors.New("linkcodec: a time that is neither a string nor null")

func readTime(dec *jsontext.Decoder, layout string) (time.Time, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return time.Time{}, err
	}
	switch tok.Kind() {
	case 'n':
		return time.Time{}, nil
	case '"':
		t, err := time.Parse(layout, tok.String())
		if err != nil {
			return time.Time{}, err
		}
		return t.Local(), nil
	}
	return time.Time{}, errNotTime
}
