package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/kurz-dev/kurz/internal/version"
)

// outcome is what one delivery attempt came to.
type outcome struct {
	// result is the result label of kurz_webhook_deliveries_total.
	result string
	// final: no further attempt (success, 410, a refused address).
	final bool
	// lastError is status.lastError's text: an HTTP status or an error's
	// class, never the URL (it may hold a token), a header or a body.
	lastError string
	// retryAfter is the receiver's Retry-After, if it gave one.
	retryAfter time.Duration
}

func (o outcome) ok() bool { return o.result == resultSuccess }

// Results (the result label of kurz_webhook_deliveries_total).
const (
	resultSuccess   = "success"
	resultHTTPError = "http_error"
	resultGone      = "gone"
	resultTimeout   = "timeout"
	resultTLS       = "tls"
	resultNetwork   = "network"
	resultRefused   = "refused"
)

// userAgent names kurz to receivers.
var userAgent = "kurz-webhooks/" + version.Get().Version

// attempt POSTs d to cfg's URL once, signed with keys at now.
func attempt(ctx context.Context, cfg *senderConfig, keys [][]byte, d *delivery, now time.Time) outcome {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	// A *bytes.Reader is a body the HTTP/1.1 transport knows is in
	// memory: it writes the headers and the body into its write buffer
	// and the connection in one TLS write. Any other reader makes it
	// flush the headers on their own first and copy the body through a
	// fresh 32 KiB buffer: two to three writes and 32 KiB of garbage a
	// request (BenchmarkClickDelivery). d.body is never changed, so the
	// transport may still read it after Do returned.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.url, bytes.NewReader(d.body))
	if err != nil {
		return outcome{result: resultNetwork, final: true, lastError: "invalid URL"}
	}
	ts := now.Unix()
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", userAgent)
	h.Set("webhook-id", d.id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", signature(keys, d.id, ts, d.body))
	resp, err := cfg.client.Do(req)
	if err != nil {
		return classify(err, cfg.timeout)
	}
	// Read a little, so a short answer leaves the connection reusable,
	// and never more: the answer means nothing to kurz but its status.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, bodyLimit))
	_ = resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		// A 2xx is success even if its body then broke off: the receiver
		// has taken the event.
		return outcome{result: resultSuccess, final: true}
	case code == http.StatusGone:
		return outcome{result: resultGone, final: true, lastError: httpStatus(code)}
	default:
		return outcome{result: resultHTTPError, lastError: httpStatus(code), retryAfter: retryAfter(resp.Header.Get("Retry-After"), now)}
	}
}

func httpStatus(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("HTTP %d %s", code, t)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// retryAfter parses a Retry-After header (seconds or an HTTP date); 0 when
// absent or unparsable.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// refusedPrefix starts the lastError of a refused address; Reason reads it.
const refusedPrefix = "address refused: "

// classify turns a failed request's error into an outcome. Its text is
// built from the error's class only: *url.Error's own message holds the
// whole URL.
func classify(err error, timeout time.Duration) outcome {
	var refused *RefusedError
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &refused):
		return outcome{result: resultRefused, final: true, lastError: refusedPrefix + refused.Error()}
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return outcome{result: resultNetwork, lastError: "DNS: no such host"}
		}
		if dnsErr.IsTimeout {
			return outcome{result: resultTimeout, lastError: "DNS: timeout"}
		}
		return outcome{result: resultNetwork, lastError: "DNS: lookup failed"}
	case errors.As(err, &unknownCA):
		return outcome{result: resultTLS, lastError: "TLS: certificate signed by an unknown authority (see --webhook-ca-file)"}
	case errors.As(err, &hostErr):
		return outcome{result: resultTLS, lastError: "TLS: certificate not valid for the host"}
	case errors.As(err, &invalid):
		return outcome{result: resultTLS, lastError: "TLS: certificate invalid or expired"}
	case errors.As(err, &certErr):
		return outcome{result: resultTLS, lastError: "TLS: certificate verification failed"}
	case errors.As(err, &recordErr):
		return outcome{result: resultTLS, lastError: "TLS: the receiver does not speak TLS"}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		return outcome{result: resultTimeout, lastError: fmt.Sprintf("timeout after %s", timeout)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return outcome{result: resultNetwork, lastError: "connection refused"}
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return outcome{result: resultNetwork, lastError: "connection reset"}
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return outcome{result: resultNetwork, lastError: "host unreachable"}
	}
	return outcome{result: resultNetwork, lastError: "network error"}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
