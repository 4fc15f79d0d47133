package linkcodec

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// framer splits a stream into its top-level JSON values, as
// k8s.io/apimachinery's JSON framer does: objects and arrays by scan, any
// other value (kube-apiserver sends none) by v2's tokenizer, from there on.
type framer struct{}

func (framer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return &frameReader{r: r, buf: make([]byte, 0, 64<<10)}
}

// NewFrameWriter: JSON values need no framing when written.
func (framer) NewFrameWriter(w io.Writer) io.Writer { return w }

// frameReader's Read returns one whole value per call, or as much as fits
// with io.ErrShortBuffer and the rest on the next calls (the contract of
// the streaming decoder, which then grows its buffer).
type frameReader struct {
	r io.ReadCloser
	// buf[start:] is read and not yet framed.
	buf       []byte
	start     int
	remaining []byte
	readErr   error             // the connection's last error but io.EOF
	slow      *jsontext.Decoder // once a value was neither object nor array
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
	v, err := f.next()
	if err != nil {
		return 0, err
	}
	n := copy(data, v)
	if n < len(v) {
		// v is the reader's buffer, valid until the next frame.
		f.remaining = append([]byte(nil), v[n:]...)
		return n, io.ErrShortBuffer
	}
	return n, nil
}

// next returns the next value, a slice of buf valid until the next call.
func (f *frameReader) next() ([]byte, error) {
	if f.slow != nil {
		v, err := f.slow.ReadValue()
		if err != nil {
			return nil, f.cause(err)
		}
		return v, nil
	}
	var s scan
	started, from := false, 0 // from: where scanning resumes, past start
	for {
		b := f.buf[f.start:]
		if !started {
			for from < len(b) && isSpace(b[from]) {
				from++
			}
			if from < len(b) {
				f.start += from
				b, from = b[from:], 0
				if b[0] != '{' && b[0] != '[' {
					return f.toSlow()
				}
				started = true
			}
		}
		if started {
			if end := s.run(b, from); end >= 0 {
				f.start += end
				return b[:end], nil
			}
			from = len(b)
		}
		if err := f.fill(); err != nil {
			if err == io.EOF && started {
				err = io.ErrUnexpectedEOF // a value cut short
			}
			return nil, f.cause(err)
		}
	}
}

// fill reads more of the stream after what buf holds, moving the unframed
// bytes to its front first and growing it when they fill it.
func (f *frameReader) fill() error {
	if f.start > 0 {
		n := copy(f.buf, f.buf[f.start:])
		f.buf, f.start = f.buf[:n], 0
	}
	if len(f.buf) == cap(f.buf) {
		f.buf = slices.Grow(f.buf, cap(f.buf))
	}
	for {
		n, err := f.r.Read(f.buf[len(f.buf):cap(f.buf)])
		f.buf = f.buf[:len(f.buf)+n]
		if err != nil && err != io.EOF {
			f.readErr = err
		}
		if n > 0 {
			return nil // an error comes again on the next read
		}
		if err != nil {
			return err
		}
	}
}

// toSlow hands the rest of the stream, what buf holds first, to v2's
// tokenizer, and returns its first value.
func (f *frameReader) toSlow() ([]byte, error) {
	rest := bytes.Clone(f.buf[f.start:])
	f.buf, f.start = nil, 0
	f.slow = jsontext.NewDecoder(io.MultiReader(bytes.NewReader(rest), readErrors{f}), options)
	return f.next()
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
