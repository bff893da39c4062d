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

// The PostgreSQL the network tests try to reach. They start a server of
// their own, from Debian's server binaries, on a free port, with its unix
// sockets where a platform's database keeps its own (/var/run/postgresql)
// and where upstream's default puts one (/tmp). A host that runs the
// platform's database (Debian's cluster on 5432, peer authentication) keeps
// it: the tests never ask to stop it, and check that an analysis cannot
// reach it either (pgHostTargets).
const (
	pgBin     = "/usr/lib/postgresql/15/bin"
	pgPsql    = pgBin + "/psql" // not /usr/bin/psql: Debian's pg_wrapper is Perl and reads /etc/postgresql-common
	pgSockDir = "/var/run/postgresql"
	// pgPort is the platform's port: never reachable from a run, never
	// allowed by --allow-tcp.
	pgPort = 5432
)

// pgServer is a PostgreSQL a test started: its TCP port on 127.0.0.1 and
// its unix sockets.
type pgServer struct {
	port    int
	sockets []string
}

// tcpConn and sockConn are libpq connection strings to s as postgres.
func (s pgServer) tcpConn() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres connect_timeout=5", s.port)
}

func (s pgServer) sockConn() string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres connect_timeout=5", pgSockDir, s.port)
}

// pgSocketPath is the socket a server on port keeps in dir.
func pgSocketPath(dir string, port int) string {
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

// pgStart starts a throw-away PostgreSQL cluster in a temporary directory
// on a free port of 127.0.0.1, with trust authentication and sockets in
// pgSockDir and /tmp, and stops it in t.Cleanup. Whatever else listens on
// the machine (the host's own cluster on 5432) is left alone.
func pgStart(t *testing.T) pgServer {
	t.Helper()
	pg, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("look up the postgres user (Debian's postgresql package creates it): %v", err)
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	// The socket directory is made by Debian's init scripts when a
	// cluster of the host's runs (postgres's, 2775, as here); it may not
	// exist yet.
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
	// A free port can be taken between the probe and the server's bind
	// (other suites start servers too): a failed start tries another.
	var startErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := pgFreePort(t)
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories=%s,/tmp -c fsync=off", port, pgSockDir)
		if startErr = asPostgres("pg_ctl", "-D", data, "-l", logf, "-o", opts, "-w", "-t", "60", "start"); startErr != nil {
			continue
		}
		t.Cleanup(func() {
			if err := asPostgres("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); err != nil {
				t.Errorf("stop PostgreSQL: %v", err)
			}
		})
		t.Logf("started a throw-away PostgreSQL on 127.0.0.1:%d in %s", port, data)
		return pgServer{port, []string{pgSocketPath(pgSockDir, port), pgSocketPath("/tmp", port)}}
	}
	log, _ := os.ReadFile(logf)
	t.Fatalf("start PostgreSQL (3 free ports tried): %v\nserver log:\n%s", startErr, log)
	return pgServer{}
}

// pgFreePort is a TCP port of 127.0.0.1 nothing listens on and no server
// keeps a socket for in pgSockDir or /tmp.
func pgFreePort(t *testing.T) int {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("find a free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port == pgPort {
			continue
		}
		if _, err := os.Lstat(pgSocketPath(pgSockDir, port)); err == nil {
			continue
		}
		if _, err := os.Lstat(pgSocketPath("/tmp", port)); err == nil {
			continue
		}
		return port
	}
}

// pgHostTargets is what a database of the host's own (a platform's
// cluster on 5432, whatever its authentication) offers right now: whether
// 127.0.0.1:5432 accepts connections, and its unix sockets that do. An
// analysis must reach none of them; the tests never stop them.
func pgHostTargets() (tcp bool, sockets []string) {
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(pgPort), 5*time.Second); err == nil {
		c.Close()
		tcp = true
	}
	for _, s := range []string{pgSocketPath(pgSockDir, pgPort), pgSocketPath("/tmp", pgPort)} {
		if c, err := net.DialTimeout("unix", s, 5*time.Second); err == nil {
			c.Close()
			sockets = append(sockets, s)
		}
	}
	return tcp, sockets
}

// pgPsqlOutside runs `select 1` on the host, outside any jail, as the proof
// that the server the jailed client fails to reach is really there.
func pgPsqlOutside(conn string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, pgPsql, conn, "-X", "-Atc", "select 1").CombinedOutput()
	return string(out), err
}
