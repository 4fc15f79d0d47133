package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m, Options{}, nil) }

// TestPostgres: each call is a database of its own in one cluster, which
// runs as an unprivileged user.
func TestPostgres(t *testing.T) {
	ctx := context.Background()
	a, b := Postgres(t), Postgres(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 't'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("database b sees a's table (%d, %v)", n, err)
	}
	var super bool
	if err := ca.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil || !super {
		t.Fatalf("the test user is not a superuser (%v, %v)", super, err)
	}
	if os.Geteuid() == 0 {
		var dir string
		if err := ca.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if owner := statUID(st); owner == 0 {
			t.Fatalf("the data directory %s belongs to root: postgres must run unprivileged", dir)
		}
	}
}

// TestPostgresRestart: a server of the test's own stops and starts on the
// same port with its data.
func TestPostgresRestart(t *testing.T) {
	ctx := context.Background()
	srv := NewPostgres(t)
	url := srv.CreateDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := conn.Ping(short); err == nil {
		t.Fatal("a stopped server answers")
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	conn2, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close(ctx)
	var x int
	if err := conn2.QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil || x != 7 {
		t.Fatalf("after a restart: %d, %v", x, err)
	}
}
