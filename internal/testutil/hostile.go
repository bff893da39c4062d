package testutil

// HostileScripts are analyses (python3 -c) that leave a run directory
// hostile to the trusted side: the jail's end-to-end suite
// (cmd/scidex-jail/hostile_test.go) checks what the jail makes of each,
// and bench/ measures what each costs the supervisor. Sized to prove the
// bounds in seconds, not minutes.
var HostileScripts = map[string]string{
	// A file of 1 TiB apparent size that stores nothing.
	"sparse": `open("big.bin", "wb").truncate(1 << 40)
open("a.txt", "w").write("a")`,
	// 20,100 entries: 200 empty files in each of 100 directories.
	"many": `import os
for d in range(100):
    os.mkdir("d%d" % d)
    for i in range(200):
        open("d%d/f%d" % (d, i), "w").close()`,
	// A chain of 10,000 nested directories: its paths grow past PATH_MAX.
	"deep": `import os
fd = os.open(".", os.O_RDONLY)
for i in range(10000):
    os.mkdir("d", dir_fd=fd)
    nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd`,
	// 10,000 empty files under 100 nested directories of 255-byte names:
	// 25 KB paths.
	"longdirs": `import os
n = "n" * 255
for i in range(100):
    os.mkdir(n)
    os.chdir(n)
for i in range(10000):
    open("%s%04d" % ("f" * 250, i), "w").close()`,
	// Names that are not UTF-8 and one of 255 bytes, beside plain ones.
	"names": `import os
os.mkdir(b"d\xff")
open(b"d\xff/in", "w").write("in")
open("a.txt", "w").write("a")
open("z.txt", "w").write("z")
open("n" * 255, "w").write("n")`,
	// A FIFO, a socket, device-looking links and a device node if the
	// kernel lets one be made (it does not, in a user namespace).
	"specials": `import os, socket
os.mkfifo("fifo")
s = socket.socket(socket.AF_UNIX)
s.bind("sock")
os.symlink("/dev/null", "null")
os.symlink("/dev/zero", "zero")
try:
    os.mknod("dev", 0o600 | 0o020000, os.makedev(1, 5))
except OSError:
    pass
open("keep.txt", "w").write("keep")`,
	// A file and a directory no one may read, one that may not be entered.
	"unreadable": `import os
open("secret", "w").write("s")
os.chmod("secret", 0)
os.mkdir("locked")
open("locked/inner", "w").write("i")
os.chmod("locked", 0)
os.mkdir("noexec")
open("noexec/x", "w").write("x")
os.chmod("noexec", 0o600)
open("z.txt", "w").write("z")`,
	// A 32 MiB file and 200 hard links to it: 32 MiB stored, 6.4 GB at
	// apparent size.
	"links": `import os
with open("f", "wb") as f:
    f.write(os.urandom(1 << 20) * 32)
for i in range(200):
    os.link("f", "l%03d" % i)`,
	// 10,000 links whose 4,000-byte targets are control bytes, each
	// written \u0001 in JSON: 240 MB of report if targets were free.
	"longlinks": `import os
t = "\x01" * 4000
for i in range(10000):
    os.symlink(t, "l%05d" % i)`,
	// Links out of the run directory, to the host's secrets and root.
	"links_out": `import os
os.symlink("/etc/shadow", "shadow")
os.symlink("/", "root")
os.symlink("/proc/1/root", "p1")
open("keep.txt", "w").write("keep")`,
}
