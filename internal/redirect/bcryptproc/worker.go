package bcryptproc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// envWorker, set in a process's environment, makes it a worker: the
// package's init serves comparisons on stdin and stdout and exits, before
// the program's main runs. Any binary that links the package (kurz,
// redirect-bench, a test binary) can so be started as its own worker.
const envWorker = "KURZ_BCRYPT_WORKER"

// Frame limits: a bcrypt hash is 60 bytes, and bcrypt reads at most 72
// bytes of a password (the form's body is at most 8 KiB).
const (
	maxHash     = 128
	maxPassword = 8 << 10
)

func init() {
	if os.Getenv(envWorker) == "" {
		return
	}
	if err := lowerPriority(); err != nil {
		// Still apart from the server's runtime, which matters most.
		fmt.Fprintf(os.Stderr, "kurz bcrypt worker: cannot lower its priority, comparing at the normal one: %v\n", err)
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "kurz bcrypt worker: %v\n", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// serve answers requests from in until it ends: each is compared on a
// goroutine of its own (the parent bounds how many it sends at once), and
// each answer is written whole.
func serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	var mu sync.Mutex
	var werr error
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		id, hash, pw, err := readRequest(r)
		if errors.Is(err, io.EOF) {
			return nil // the parent closed its end, or is gone
		}
		if err != nil {
			return err
		}
		wg.Go(func() {
			var a [5]byte
			binary.LittleEndian.PutUint32(a[:4], id)
			if bcrypt.CompareHashAndPassword(hash, pw) == nil {
				a[4] = 1
			}
			mu.Lock()
			defer mu.Unlock()
			if werr == nil {
				_, werr = out.Write(a[:])
			}
		})
	}
}

// A request is id, len(hash), len(password) (little-endian uint32s), then
// the hash and the password; an answer is id and one byte, 1 for a match.
func appendRequest(b []byte, id uint32, hash, pw []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(hash))) //nolint:gosec // at most maxHash
	b = binary.LittleEndian.AppendUint32(b, uint32(len(pw)))   //nolint:gosec // at most maxPassword
	b = append(b, hash...)
	return append(b, pw...)
}

func readRequest(r *bufio.Reader) (id uint32, hash, pw []byte, err error) {
	var h [12]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, nil, err
	}
	id = binary.LittleEndian.Uint32(h[0:])
	nh, np := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
	if nh > maxHash || np > maxPassword {
		return 0, nil, nil, fmt.Errorf("request %d: hash of %d bytes, password of %d", id, nh, np)
	}
	b := make([]byte, nh+np)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, nil, io.ErrUnexpectedEOF
	}
	return id, b[:nh], b[nh:], nil
}
