package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/redirect"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18081", "listen address")
	host := flag.String("host", "bench.kurz.test", "served hostname")
	n := flag.Int("links", 10000, "number of links")
	pwLinks := flag.Int("password-links", 0, "number of password-protected links (cost 12)")
	load := flag.String("load", "", `run a load scenario against a child server: "idle-conns" or "password"`)
	conns := flag.Int("conns", 20000, "idle-conns: connections to open")
	attackers := flag.Int("attackers", 50, "password: clients posting wrong passwords, each from its own loopback address")
	duration := flag.Duration("duration", 10*time.Second, "password: length of each measured phase")
	clients := flag.Int("clients", 8, "password: clients fetching redirects")
	rate := flag.Int("rate", 0, "password: redirects per second over all -clients, on a fixed schedule (latency counted from when each was due); 0: each client as fast as it can")
	serverSession := flag.Bool("server-session", false, "-load: start the server in a session (autogroup) of its own, apart from the load generator's threads")
	serverBin := flag.String("server-bin", "", "-load: the server's binary, e.g. a redirect-bench built from another tree (default: this one)")
	serverCPUs := flag.String("server-cpus", "", "-load: pin the server to these CPUs (taskset -c list; its GOMAXPROCS follows), e.g. 0 with the load generator on 1")
	pwConcurrency := flag.Int("password-concurrency", 0, "the server's --redirect-password-concurrency (0: its default)")
	analyticsStore := flag.String("analytics", "", "capture click analytics into this SQLite file (the real ring, consumer and store writer, as --analytics does); SIGUSR1 prints its counts")
	analyticsPace := flag.Bool("analytics-pace", true, "-analytics: pause between a batch's rows (sqlite.Options.PaceWrites); false to compare")
	pprofAddr := flag.String("pprof", "", "serve net/http/pprof on this address (e.g. 127.0.0.1:6060) to profile the server under load")
	freePorts := flag.Int("free-ports", 0, "print this many free loopback ports, one a line, and exit (hack/bench-redirect.sh picks its listeners with it)")
	flag.Parse()
	if *freePorts > 0 {
		if err := printFreePorts(*freePorts); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if *load != "" {
		if err := runLoad(*load, loadConfig{addr: *addr, host: *host, links: *n, conns: *conns, attackers: *attackers, duration: *duration,
			clients: *clients, rate: *rate, passwordConcurrency: *pwConcurrency, serverSession: *serverSession, serverCPUs: *serverCPUs, serverBin: *serverBin}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	raiseFileLimit()
	if *pprofAddr != "" {
		go servePprof(*pprofAddr)
	}

	before := heap()
	ix := redirect.NewIndex()
	ix.UpsertDomain(&kurzv1alpha1.Domain{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "bench", UID: "domain-uid", Generation: 1},
		Spec:       kurzv1alpha1.DomainSpec{Domain: kurzv1alpha1.Hostname(*host)},
	})
	for i := range *n {
		ix.UpsertLink(benchLink(*host, i))
	}
	if *pwLinks > 0 {
		hash, err := bcrypt.GenerateFromPassword([]byte("the right password"), 12)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for i := range *pwLinks {
			l := benchLink(*host, i)
			l.Name, l.Spec.Key = "pw-"+strconv.Itoa(i), "p"+strconv.Itoa(i)
			l.UID = types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", i))
			l.Spec.PasswordHash = ptr(string(hash))
			ix.UpsertLink(l)
		}
	}
	after := heap()
	fmt.Printf("links in index: %d\n", ix.Len())
	fmt.Printf("index memory per link: %d bytes\n", (after-before)/uint64(*n))

	o := redirect.DefaultOptions()
	o.BindAddress = *addr
	if *pwConcurrency > 0 {
		o.PasswordConcurrency = *pwConcurrency
	}
	var consumers []redirect.ClickConsumer
	if *analyticsStore != "" {
		a, err := startAnalytics(*analyticsStore, *analyticsPace)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		o.Analytics = a
		consumers = append(consumers, a.Consumer)
	}
	srv, err := redirect.NewServer(o, ix, consumers...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go collectOnSignal()
	go reportRuntimeOnSignal()
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

func ptr[T any](v T) *T { return &v }

// collectOnSignal runs a full GC and returns freed memory to the OS on
// SIGUSR1, then prints the runtime's memory figures: the state a server
// reaches at rest (the runtime forces a GC every two minutes, and the
// scavenger returns free pages in the background).
func collectOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	for range ch {
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Printf("after GC: goroutines %d, heap in use %d KiB, stacks %d KiB\n",
			runtime.NumGoroutine(), m.HeapInuse>>10, m.StackInuse>>10)
		printAnalytics()
	}
}

// printFreePorts prints n distinct free loopback ports: each from a
// listener on port 0, all held until the last is picked.
func printFreePorts(n int) error {
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer func() { _ = l.Close() }()
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
	}
	return nil
}
