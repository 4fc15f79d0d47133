package linkcodec

import (
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// framer splits a stream into its top-level JSON values, as
// k8s.io/apimachinery's JSON framer does, with v2's tokenizer.
type framer struct{}

func (framer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	f := &frameReader{r: r}
	f.dec = jsontext.NewDecoder(readErrors{f}, options)
	return f
}

// NewFrameWriter: JSON values need no framing when written.
func (framer) NewFrameWriter(w io.Writer) io.Writer { return w }

// frameReader's Read returns one whole value per call, or as much as fits
// with io.ErrShortBuffer and the rest on the next calls (the contract of
// the streaming decoder, which then grows its buffer).
type frameReader struct {
	r         io.ReadCloser
	dec       *jsontext.Decoder
	remaining []byte
	readErr   error // the connection's last error but io.EOF
}

// readErrors keeps the connection's errors, which jsontext wraps.
type readErrors struct{ f *frameReader }

func (r readErrors) Read(p []byte) (int, error) {
	n, err := r.f.r.Read(p)
	if err != nil && err != io.EOF {
		r.f.readErr = err
	}
	return n, err
}

func (f *frameReader) Read(data []byte) (int, error) {
	if len(f.remaining) > 0 {
		n := copy(data, f.remaining)
		f.remaining = f.remaining[n:]
		if len(f.remaining) > 0 {
			return n, io.ErrShortBuffer
		}
		f.remaining = nil
		return n, nil
	}
	v, err := f.dec.ReadValue()
	if err != nil {
		return 0, f.cause(err)
	}
	n := copy(data, v)
	if n < len(v) {
		// v is the decoder's buffer, valid until the next ReadValue.
		f.remaining = append([]byte(nil), v[n:]...)
		return n, io.ErrShortBuffer
	}
	return n, nil
}

func (f *frameReader) Close() error { return f.r.Close() }

// cause returns the error client-go's watch expects: the connection's own
// error where there was one (it tells a dropped connection by its text),
// and io.EOF and io.ErrUnexpectedEOF themselves (it compares them with ==,
// and takes the latter for a dropped connection too).
func (f *frameReader) cause(err error) error {
	switch {
	case f.readErr != nil:
		return f.readErr
	case err == io.EOF:
		return io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		return io.ErrUnexpectedEOF
	}
	return err
}
