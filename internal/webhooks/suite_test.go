package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/controllers/controllerstest"
	"github.com/kurz-dev/kurz/internal/dns/dnstest"
	"github.com/kurz-dev/kurz/internal/manager"
	"github.com/kurz-dev/kurz/internal/testenv"
	"github.com/kurz-dev/kurz/internal/webhooks"
)

var (
	cfg       *rest.Config
	k8sClient client.Client
	// logs holds every log line of the suite's managers, at every level:
	// TestSecretNeverLeaks greps it.
	logs testenv.Output
)

// Timeouts are generous: other packages' tests share the two cores.
const (
	timeout = 60 * time.Second
	poll    = 50 * time.Millisecond
)

func TestMain(m *testing.M) {
	if file := os.Getenv(webhooks.ReceiverEnv); file != "" {
		webhooks.RunReceiverProcess(file)
	}
	// Set before testenv.Main's (the first logger set wins): every level
	// up to V(7), into logs, and to stderr with KURZ_TEST_LOG. From V(8)
	// on, client-go logs the bodies of API requests and answers, which
	// hold Webhooks' specs (docs/security.md says not to run kurz so).
	var out io.Writer = &logs
	if os.Getenv("KURZ_TEST_LOG") != "" {
		out = io.MultiWriter(&logs, os.Stderr)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(out), zap.UseDevMode(true), zap.Level(zapcore.Level(-7))))
	testenv.Main(m, testenv.Options{}, func(e *testenv.Env) error {
		cfg, k8sClient = e.Config, e.Client
		return nil
	})
}

var counter atomic.Int64

func unique(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, counter.Add(1), time.Now().UnixNano()%1e6)
}

func newNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unique("wh")}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// replicaOptions are a replica's options: controllers and webhooks on
// (domains verified against dns, receivers trusted through caFile,
// loopback allowed as kurz dev allows it), no listeners but the ones a
// test turns on. Leader election is on, with a Lease of the test's own
// and short times: a test may run several replicas, and each elected
// term builds its controllers afresh (controller names repeat across a
// test's managers).
func replicaOptions(t testing.TB, dns *dnstest.Server, caFile string) manager.Options {
	o := manager.DefaultOptions()
	o.LeaderElect = true
	o.LeaderElectionNamespace = "default"
	o.LeaderElectionID = unique("kurz-controllers")
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
	o.MetricsBindAddress = "0"
	o.HealthProbeBindAddress = "0"
	o.EnableAPI = false
	o.EnableRedirect = false
	o.ShutdownDelay = 0
	o.Controllers = controllerstest.Options(dns)
	o.Webhooks.AllowLoopback = true
	o.Webhooks.CAFile = caFile
	return o
}

// replica is a running manager.
type replica struct {
	m    *manager.Manager
	stop context.CancelFunc
	done chan struct{} // closed when Start returned
	err  error         // what Start returned
}

// startReplica builds and starts a manager with o; it stops when the test
// ends (or earlier, with halt).
func startReplica(t testing.TB, o manager.Options) *replica {
	t.Helper()
	m, err := manager.New(context.Background(), cfg, o)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{m: m, stop: cancel, done: make(chan struct{})}
	go func() {
		r.err = m.Start(ctx)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
			if r.err != nil {
				t.Errorf("manager: %v", r.err)
			}
		case <-time.After(timeout):
			t.Errorf("manager did not stop within %s", timeout)
		}
	})
	return r
}

// halt stops the replica and waits until it has.
func (r *replica) halt() {
	r.stop()
	<-r.done
}

// received is one request a receiver got.
type received struct {
	id, timestamp, signature string
	body                     []byte
	at                       time.Time
}

// payload is the decoded body.
type payload struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Version   string          `json:"version"`
	Data      json.RawMessage `json:"data"`
}

func (r received) payload(g Gomega) payload {
	var p payload
	g.Expect(json.Unmarshal(r.body, &p)).To(Succeed())
	return p
}

// receiver is an HTTPS webhook receiver with the test certificate of
// net/http/httptest (valid for 127.0.0.1), which kurz trusts through
// --webhook-ca-file: a real TLS handshake, verified.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []received
	// status answers the n-th request (from 1); nil: 200.
	status func(n int) int
	// hold, when set, makes every request wait until it is closed.
	hold chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(func() {
		rc.release()
		rc.srv.Close()
	})
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, received{
		id: r.Header.Get("webhook-id"), timestamp: r.Header.Get("webhook-timestamp"),
		signature: r.Header.Get("webhook-signature"), body: body, at: time.Now(),
	})
	n, status, hold := len(rc.got), rc.status, rc.hold
	rc.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}
	code := http.StatusOK
	if status != nil {
		code = status(n)
	}
	w.WriteHeader(code)
}

// release lets held requests go.
func (rc *receiver) release() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.hold != nil {
		select {
		case <-rc.hold:
		default:
			close(rc.hold)
		}
	}
}

func (rc *receiver) url() string { return rc.srv.URL + "/hook" }

// requests returns what the receiver got so far.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// ofType returns the requests whose payload has type t.
func (rc *receiver) ofType(g Gomega, t kurzv1alpha1.WebhookEvent) []received {
	var out []received
	for _, r := range rc.requests() {
		if r.payload(g).Type == string(t) {
			out = append(out, r)
		}
	}
	return out
}

// caFile writes the test servers' certificate (httptest uses one for all)
// as a PEM file for --webhook-ca-file.
func caFile(t *testing.T, rc *receiver) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	NewWithT(t).Expect(os.WriteFile(path, pemBytes, 0o600)).To(Succeed())
	return path
}

// newSecret creates a signing Secret in ns and returns its value.
func newSecret(t testing.TB, ns, name string, labelled bool) string {
	t.Helper()
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	value := "whsec_" + base64.StdEncoding.EncodeToString(raw)
	createSecret(t, ns, name, labelled, value)
	return value
}

func createSecret(t testing.TB, ns, name string, labelled bool, value string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: map[string]string{"secret": value}}
	if labelled {
		s.Labels = map[string]string{kurzv1alpha1.WebhookSigningLabel: "true"}
	}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), s)).To(Succeed())
}

// verify checks a request's Standard Webhooks signature with the secret,
// written here from the spec, apart from the package's own code: the
// signed content is id.timestamp.body, the MAC HMAC-SHA256 keyed by the
// secret's base64-decoded bytes after "whsec_", the header a space
// separated list of "v1,<base64 MAC>". The timestamp must be recent.
func verify(g Gomega, secret string, r received) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	g.Expect(err).NotTo(HaveOccurred())
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(r.id + "." + r.timestamp + "."))
	mac.Write(r.body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	found := false
	for _, s := range strings.Fields(r.signature) {
		if hmac.Equal([]byte(s), []byte(want)) {
			found = true
		}
	}
	g.Expect(found).To(BeTrue(), "signature %q of %s does not verify", r.signature, r.id)
	ts, err := strconv.ParseInt(r.timestamp, 10, 64)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(time.Since(time.Unix(ts, 0))).To(BeNumerically("<", 5*time.Minute))
	g.Expect(r.id).NotTo(ContainSubstring("."))
}

// newWebhook creates a Webhook in ns to url for events, signed with the
// Secret secret.
func newWebhook(t *testing.T, ns, name, url, secret string, events ...kurzv1alpha1.WebhookEvent) *kurzv1alpha1.Webhook {
	t.Helper()
	w := &kurzv1alpha1.Webhook{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kurzv1alpha1.WebhookSpec{
			URL: url, Events: events,
			SecretRef: kurzv1alpha1.WebhookSecretRef{Name: secret},
		},
	}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), w)).To(Succeed())
	return w
}

// readyOf returns a Webhook's Ready condition as "Status/Reason" and its
// message.
func readyOf(w *kurzv1alpha1.Webhook) func(Gomega) string {
	return func(g Gomega) string {
		got := &kurzv1alpha1.Webhook{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(w), got)).To(Succeed())
		c := meta.FindStatusCondition(got.Status.Conditions, kurzv1alpha1.ConditionReady)
		if c == nil || c.ObservedGeneration != got.Generation {
			return ""
		}
		return string(c.Status) + "/" + c.Reason
	}
}

func getWebhook(g Gomega, w *kurzv1alpha1.Webhook) *kurzv1alpha1.Webhook {
	got := &kurzv1alpha1.Webhook{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(w), got)).To(Succeed())
	return got
}

func newLink(ns, name, host, key string) *kurzv1alpha1.Link {
	return &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kurzv1alpha1.LinkSpec{Domain: kurzv1alpha1.Hostname(host), Key: key,
			URL: kurzv1alpha1.URL("https://example.com/" + key)},
	}
}

// linkObservedBy waits until the Link controller reconciled l's current
// generation.
func linkObserved(g Gomega, l *kurzv1alpha1.Link) {
	g.Eventually(func(g Gomega) {
		got := &kurzv1alpha1.Link{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(l), got)).To(Succeed())
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
	}, timeout, poll).Should(Succeed())
}
