// Command redirect-bench serves the real redirect handler over an index
// filled directly with generated Links, without a cluster, for
// hack/bench-redirect.sh. Keys are k0 .. k<n-1> on one host. It prints the
// index's memory per link, then serves until SIGINT/SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/redirect"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	host := flag.String("host", "bench.kurz.test", "served hostname")
	n := flag.Int("links", 10000, "number of links")
	flag.Parse()

	before := heap()
	ix := redirect.NewIndex()
	ix.UpsertDomain(&kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "bench", UID: "domain-uid", Generation: 1},
		Spec:       kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(*host)},
	})
	for i := range *n {
		ix.UpsertLink(benchLink(*host, i))
	}
	after := heap()
	fmt.Printf("links in index: %d\n", ix.Len())
	fmt.Printf("index memory per link: %d bytes\n", (after-before)/uint64(*n))

	o := redirect.DefaultOptions()
	o.BindAddress = *addr
	srv, err := redirect.NewServer(o, ix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// benchLink is a Link with every redirect feature set that does not change
// the answer for a plain GET: device targets, utm, a future expiry.
func benchLink(host string, i int) *kurzv1alpha1.Link {
	s := strconv.Itoa(i)
	str := func(v string) *string { return &v }
	url := func(v string) *kurzv1alpha1.URL { u := kurzv1alpha1.URL(v); return &u }
	expires := metav1.NewTime(time.Now().Add(24 * time.Hour))
	return &kurzv1alpha1.Link{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "bench", Name: "link-" + s, Generation: 1,
			UID:               types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)),
			CreationTimestamp: metav1.NewTime(time.Unix(1_700_000_000, 0)),
		},
		Spec: kurzv1alpha1.LinkSpec{
			Domain:             kurzv1alpha1.Hostname(host),
			Key:                "k" + s,
			URL:                kurzv1alpha1.URL("https://www.example.com/products/item-" + s + "?ref=short"),
			IOS:                url("https://apps.apple.com/app/id" + s),
			Android:            url("https://play.google.com/store/apps/details?id=com.example.app" + s),
			UTM:                &kurzv1alpha1.LinkUTM{Source: str("kurz"), Medium: str("link"), Campaign: str("bench")},
			ExpiresAt:          &expires,
			ExpiredRedirectURL: url("https://www.example.com/expired"),
		},
	}
}
