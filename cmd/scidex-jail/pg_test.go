package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The PostgreSQL the network tests try to reach: Debian's server binaries,
// listening where a platform's database listens (TCP 127.0.0.1:5432 and the
// unix socket in /var/run/postgresql), which is exactly what an analysis
// must never reach.
const (
	pgBin     = "/usr/lib/postgresql/15/bin"
	pgPsql    = pgBin + "/psql" // not /usr/bin/psql: Debian's pg_wrapper is Perl and reads /etc/postgresql-common
	pgSockDir = "/var/run/postgresql"
	pgPort    = 5432
	pgTCPConn = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=5"
	pgSockDSN = "host=" + pgSockDir + " port=5432 user=postgres dbname=postgres connect_timeout=5"
)

// pgSocket is the server's pathname unix socket; pgTmpSocket is where
// servers built with upstream's default (unix_socket_directories=/tmp), and
// the throw-away cluster too, put another one.
var (
	pgSocket    = filepath.Join(pgSockDir, ".s.PGSQL."+strconv.Itoa(pgPort))
	pgTmpSocket = filepath.Join("/tmp", ".s.PGSQL."+strconv.Itoa(pgPort))
)

// pgStart makes sure a PostgreSQL server answers on 127.0.0.1:5432 and
// on its unix socket for the rest of the test. When one already listens
// there (a system cluster) and accepts `select 1` from the postgres user, it
// is used as it is; otherwise a throw-away cluster is initialised in a
// temporary directory and stopped in t.Cleanup. It returns the unix
// sockets the server listens on: pgSocket, and pgTmpSocket when present.
func pgStart(t *testing.T) []string {
	t.Helper()
	if pgInUse() {
		if out, err := pgPsqlOutside(pgTCPConn); err != nil {
			t.Fatalf("something already listens on 127.0.0.1:%d or %s, and it is not a PostgreSQL these tests can use (psql as postgres with trust auth: %v: %s); stop it or free the port", pgPort, pgSocket, err, out)
		}
		t.Logf("using the PostgreSQL already listening on 127.0.0.1:%d", pgPort)
		socks := []string{pgSocket}
		if c, err := net.DialTimeout("unix", pgTmpSocket, 5*time.Second); err == nil {
			c.Close()
			socks = append(socks, pgTmpSocket)
		}
		return socks
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("look up the postgres user (Debian's postgresql package creates it): %v", err)
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	// The socket directory is normally made by Debian's init scripts,
	// which never ran here.
	if err := os.MkdirAll(pgSockDir, 0o2775); err != nil {
		t.Fatalf("create %s: %v", pgSockDir, err)
	}
	if err := os.Chown(pgSockDir, uid, gid); err != nil {
		t.Fatalf("chown %s to postgres: %v", pgSockDir, err)
	}
	dir, err := os.MkdirTemp("", "sj-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatalf("chown %s to postgres: %v", dir, err)
	}
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "server.log")
	asPostgres := func(name string, args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(pgBin, name), args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C.UTF-8"}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %v: %w\n%s", name, args, err, out.Bytes())
		}
		return nil
	}
	if err := asPostgres("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		t.Fatal(err)
	}
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories=%s,/tmp -c fsync=off", pgPort, pgSockDir)
	if err := asPostgres("pg_ctl", "-D", data, "-l", logf, "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(logf)
		t.Fatalf("start PostgreSQL: %v\nserver log:\n%s", err, log)
	}
	t.Cleanup(func() {
		if err := asPostgres("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	t.Logf("started a throw-away PostgreSQL in %s", data)
	return []string{pgSocket, pgTmpSocket}
}

// pgInUse says whether anything accepts connections on 127.0.0.1:5432
// or on the unix socket.
func pgInUse() bool {
	for _, a := range [][2]string{{"tcp", "127.0.0.1:" + strconv.Itoa(pgPort)}, {"unix", pgSocket}} {
		if c, err := net.DialTimeout(a[0], a[1], 5*time.Second); err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// pgPsqlOutside runs `select 1` on the host, outside any jail, as the proof
// that the server the jailed client fails to reach is really there.
func pgPsqlOutside(conn string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, pgPsql, conn, "-X", "-Atc", "select 1").CombinedOutput()
	return string(out), err
}
