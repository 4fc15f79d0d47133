package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/kurz-dev/kurz/internal/freeport"
)

// RequirePostgresEnv, set to 1 (.ci/run does), makes a machine without
// PostgreSQL fail the tests that need it instead of skipping them.
const RequirePostgresEnv = "KURZ_REQUIRE_POSTGRES"

// PostgresBinEnv names a directory holding initdb and postgres, to use
// instead of Debian's /usr/lib/postgresql/*/bin (the newest there).
const PostgresBinEnv = "KURZ_POSTGRES_BIN"

// shared is the test binary's one cluster, started by the first Postgres
// call and stopped by Main after the tests.
var shared struct {
	once sync.Once
	srv  *PostgresServer
	err  error
	dbs  atomic.Int64
}

// mainRunning is set while Main runs the tests: the shared cluster is
// stopped there, so Postgres refuses to start one without it.
var mainRunning atomic.Bool

// Postgres returns the URL of a new, empty database in the test binary's
// throwaway PostgreSQL cluster (started on the first call, as an
// unprivileged user, on a free loopback port; stopped by Main after the
// tests). Each call is a database of its own, so tests do not see each
// other's tables. Without PostgreSQL's binaries it skips t saying why, or
// fails it when KURZ_REQUIRE_POSTGRES=1; under -short it skips t.
func Postgres(t testing.TB) string {
	t.Helper()
	needPostgres(t)
	if !mainRunning.Load() {
		t.Fatal("testenv.Postgres: the package's TestMain must be testenv.Main, which stops the cluster after the tests")
	}
	shared.once.Do(func() {
		shared.srv, shared.err = startPostgres()
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv.CreateDatabase(t)
}

// NewPostgres starts a PostgreSQL cluster of t's own, which t can stop and
// start (a database restarted under a running store); it is stopped and
// removed when t ends. It skips or fails t as Postgres does.
func NewPostgres(t testing.TB) *PostgresServer {
	t.Helper()
	needPostgres(t)
	srv, err := startPostgres()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Remove(); err != nil {
			t.Error(err)
		}
	})
	return srv
}

func needPostgres(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL: runs in `make test`, not under -short")
	}
	if _, err := postgresBin(); err != nil {
		if os.Getenv(RequirePostgresEnv) == "1" {
			t.Fatalf("%v (%s=1 makes this a failure)", err, RequirePostgresEnv)
		}
		t.Skip(err)
	}
}

// stopSharedPostgres stops the shared cluster, if one started (Main).
func stopSharedPostgres() error {
	if shared.srv == nil {
		return nil
	}
	return shared.srv.Remove()
}

// postgresBin is the directory of initdb and postgres.
func postgresBin() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv(PostgresBinEnv); dir != "" {
		if has(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("%s=%s holds no initdb and postgres", PostgresBinEnv, dir)
	}
	// Debian's layout: /usr/lib/postgresql/<major>/bin; the newest major.
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		return majorOf(b) - majorOf(a)
	})
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL is not installed (no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH): " +
		"install it (Debian: apt-get install postgresql; .ci/run does) or set " + PostgresBinEnv)
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// PostgresServer is a throwaway PostgreSQL cluster: a data directory in a
// temporary directory owned by the user it runs as, its socket there, and
// a loopback TCP port that stays the same across Stop and Start.
type PostgresServer struct {
	bin, dir string
	port     int
	cred     *syscall.Credential // nil: run as this process's user

	mu   sync.Mutex
	proc *os.Process
	done chan struct{}
	// dbs names the databases CreateDatabase made.
	dbs atomic.Int64
}

// Port is the server's TCP port on 127.0.0.1.
func (s *PostgresServer) Port() int { return s.port }

// Pid is the postmaster's process id (0 when stopped).
func (s *PostgresServer) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Pid
}

// URL is the URL of database db (user postgres, trusted on loopback).
func (s *PostgresServer) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// CreateDatabase creates a new, empty database and returns its URL.
func (s *PostgresServer) CreateDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("test_%d", s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("connect to the test cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return s.URL(name)
}

// StartPostgres starts a throwaway cluster outside a test (make
// bench-analytics -postgres), as Postgres does; the caller Removes it.
func StartPostgres() (*PostgresServer, error) { return startPostgres() }

// CreateDB creates a new, empty database named name and returns its URL.
func (s *PostgresServer) CreateDB(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return s.URL(name), nil
}

// startPostgres creates a cluster and starts it.
func startPostgres() (*PostgresServer, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	s := &PostgresServer{bin: bin}
	// initdb and postgres refuse to run as root: as root, run them as nobody.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			return nil, fmt.Errorf("PostgreSQL refuses to run as root and there is no user nobody to run it as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
	}
	if s.dir, err = os.MkdirTemp("", "kurz-postgres-"); err != nil {
		return nil, err
	}
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			s.removeDir()
			return nil, err
		}
		if err := reachable(s.dir); err != nil {
			s.removeDir()
			return nil, err
		}
	}
	if s.port, err = freeport.Port(); err != nil {
		s.removeDir()
		return nil, err
	}
	if out, err := s.command(filepath.Join(bin, "initdb"), "-D", s.data(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		s.removeDir()
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if err := s.Start(); err != nil {
		s.removeDir()
		return nil, err
	}
	return s, nil
}

func (s *PostgresServer) data() string { return filepath.Join(s.dir, "data") }
func (s *PostgresServer) log() string  { return filepath.Join(s.dir, "postgres.log") }

// reachable checks that nobody can reach dir: every parent searchable by
// others (a TMPDIR under /root is not).
func reachable(dir string) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("PostgreSQL runs as nobody, who cannot enter %s (mode %s): set TMPDIR to a directory everyone can enter, such as /tmp", d, st.Mode().Perm())
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

func (s *PostgresServer) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C", "HOME=" + s.dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	return cmd
}

// Start starts the server (again) and waits until it accepts connections.
func (s *PostgresServer) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		select {
		case <-s.done:
		default:
			return errors.New("postgres is running")
		}
	}
	logf, err := os.OpenFile(s.log(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := s.command(filepath.Join(s.bin, "postgres"), "-D", s.data(), "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1",
		// A throwaway cluster: durability buys nothing, speed does.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=64MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies without stopping it, the kernel sends
	// postgres SIGQUIT (immediate shutdown): see launch.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	if err := launch(cmd); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.proc, s.done = cmd.Process, make(chan struct{})
	done := s.done
	go func() { _ = cmd.Wait(); close(done) }()
	return s.waitReady(done)
}

func (s *PostgresServer) waitReady(done <-chan struct{}) error {
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		select {
		case <-done:
			return fmt.Errorf("postgres exited at start: %s", s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres does not accept connections after a minute: %v; %s", err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *PostgresServer) logTail() string {
	b, _ := os.ReadFile(s.log())
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "its log ends:\n" + strings.TrimSpace(string(b))
}

// Stop stops the server (fast shutdown: open sessions are ended), keeping
// its data for Start.
func (s *PostgresServer) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return nil
	}
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.proc.Signal(syscall.SIGINT)
	select {
	case <-s.done:
		return nil
	case <-time.After(30 * time.Second):
	}
	_ = s.proc.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.proc.Kill()
		<-s.done
	}
	return fmt.Errorf("postgres did not stop within 30 s of SIGINT; %s", s.logTail())
}

// Remove stops the server and removes its directory.
func (s *PostgresServer) Remove() error {
	err := s.Stop()
	s.removeDir()
	return err
}

func (s *PostgresServer) removeDir() { _ = os.RemoveAll(s.dir) }

// launcher starts processes from one OS thread that never exits: a
// process's Pdeathsig fires when the thread that started it ends, and Go
// may end other threads, so a postgres started from one could be killed
// mid-test. From this thread, it fires only when the test binary dies.
var launcher struct {
	once sync.Once
	reqs chan launchReq
}

type launchReq struct {
	cmd *exec.Cmd
	err chan error
}

func launch(cmd *exec.Cmd) error {
	launcher.once.Do(func() {
		launcher.reqs = make(chan launchReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the process
			for r := range launcher.reqs {
				r.err <- r.cmd.Start()
			}
		}()
	})
	r := launchReq{cmd: cmd, err: make(chan error)}
	launcher.reqs <- r
	return <-r.err
}
