package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// rootModules are the modules /init needs, in the order it needs them: the
// PCI transport (virtio-9p-pci devices appear when it probes), the 9p
// transport and file system, overlayfs. Their dependencies come from
// modules.dep; built-in ones (modules.builtin) are skipped.
var rootModules = []string{"virtio_pci", "9pnet_virtio", "9p", "overlay"}

// moduleChain returns the module files (relative to the module tree) to load,
// in load order, for the named modules. modules.dep lists each module's full
// dependency closure with the ones to load first at the end, as modprobe
// reads it.
func moduleChain(dep, builtin io.Reader, names []string) ([]string, error) {
	deps := map[string][]string{} // module name -> its line: file, then dependency files
	sc := bufio.NewScanner(dep)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		file, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		deps[moduleName(file)] = append([]string{file}, strings.Fields(rest)...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read modules.dep: %w", err)
	}
	built := map[string]bool{}
	sc = bufio.NewScanner(builtin)
	for sc.Scan() {
		built[moduleName(sc.Text())] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read modules.builtin: %w", err)
	}
	var order []string
	seen := map[string]bool{}
	for _, name := range names {
		name = moduleName(name)
		line, ok := deps[name]
		if !ok {
			if built[name] {
				continue
			}
			return nil, fmt.Errorf("module %s: neither in modules.dep nor built in", name)
		}
		for i := len(line) - 1; i >= 1; i-- {
			if !seen[line[i]] {
				seen[line[i]] = true
				order = append(order, line[i])
			}
		}
		if !seen[line[0]] {
			seen[line[0]] = true
			order = append(order, line[0])
		}
	}
	return order, nil
}

// moduleName maps "kernel/fs/9p/9p.ko.xz" to "9p"; '-' and '_' are the same
// in module names.
func moduleName(file string) string {
	base := filepath.Base(strings.TrimSpace(file))
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}

// readModule returns a module file uncompressed: /init loads it with a plain
// finit_module, which 6.1 cannot do for compressed modules.
func readModule(path string) ([]byte, error) {
	var tool []string
	switch {
	case strings.HasSuffix(path, ".ko"):
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read module: %w", err)
		}
		return b, nil
	case strings.HasSuffix(path, ".ko.gz"):
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read module: %w", err)
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("decompress module %s: %w", path, err)
		}
		return io.ReadAll(zr)
	case strings.HasSuffix(path, ".ko.xz"):
		tool = []string{"xz", "-dc", path}
	case strings.HasSuffix(path, ".ko.zst"):
		tool = []string{"zstd", "-dcq", path}
	default:
		return nil, fmt.Errorf("module %s: unknown compression", path)
	}
	out, err := exec.Command(tool[0], tool[1:]...).Output()
	if err != nil {
		return nil, fmt.Errorf("decompress module with %v: %w", tool, err)
	}
	return out, nil
}

// buildInitramfs writes the cpio archive: /init, /modules (the load order)
// and /lib/modules/<file>.ko for each module of the chain.
func buildInitramfs(k Kernel, initBin []byte) ([]byte, error) {
	dep, err := os.Open(filepath.Join(k.Modules, "modules.dep"))
	if err != nil {
		return nil, fmt.Errorf("open module list: %w", err)
	}
	defer dep.Close()
	builtin, err := os.Open(filepath.Join(k.Modules, "modules.builtin"))
	if err != nil {
		return nil, fmt.Errorf("open built-in module list: %w", err)
	}
	defer builtin.Close()
	chain, err := moduleChain(dep, builtin, rootModules)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Release, err)
	}
	var buf bytes.Buffer
	w := newCPIOWriter(&buf)
	w.CharDev("dev/console", 0o600, 5, 1) // the kernel opens it as init's stdio
	w.Dir("root", 0o700)
	w.File("init", 0o755, initBin)
	var list strings.Builder
	for _, file := range chain {
		b, err := readModule(filepath.Join(k.Modules, file))
		if err != nil {
			return nil, err
		}
		name := moduleName(file) + ".ko"
		w.File("lib/modules/"+name, 0o644, b)
		list.WriteString(name + "\n")
	}
	w.File("modules", 0o644, []byte(list.String()))
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// cachedInitramfs returns the path of the initramfs for k and this init,
// building it when the cache has none. The name carries a hash of the init
// binary, so a changed init never meets a stale archive.
func cachedInitramfs(k Kernel, cache string, initBin []byte) (string, error) {
	sum := sha256.Sum256(initBin)
	dir := filepath.Join(cache, k.Release)
	out := filepath.Join(dir, "initramfs-"+hex.EncodeToString(sum[:8])+".cpio")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	img, err := buildInitramfs(k, initBin)
	if err != nil {
		return "", err
	}
	if err := writeAtomic(out, img, 0o644); err != nil {
		return "", err
	}
	// Archives of earlier inits pile up while /init is developed; a day
	// is long past any runner still booting one.
	old, _ := filepath.Glob(filepath.Join(dir, "initramfs-*.cpio"))
	for _, p := range old {
		if fi, err := os.Stat(p); err == nil && p != out && time.Since(fi.ModTime()) > 24*time.Hour {
			_ = os.Remove(p)
		}
	}
	return out, nil
}

// initBinary returns the static /init: the file given by -init, or a fresh
// build of cmd/vmtest-init (go's build cache makes a rebuild cheap). The
// source is found next to this file's own source, or through `go list` from
// the working directory when the runner was built with -trimpath.
func initBinary(prebuilt, cache string) ([]byte, error) {
	if prebuilt != "" {
		b, err := os.ReadFile(prebuilt)
		if err != nil {
			return nil, fmt.Errorf("read -init binary: %w", err)
		}
		return b, nil
	}
	const pkg = "github.com/scidex/scidex-jail/cmd/vmtest-init"
	dir := ""
	if _, self, _, ok := runtime.Caller(0); ok && filepath.IsAbs(self) {
		d := filepath.Join(filepath.Dir(self), "..", "vmtest-init")
		if _, err := os.Stat(filepath.Join(d, "main.go")); err == nil {
			dir = d
		}
	}
	if dir == "" {
		out, err := exec.Command("go", "list", "-f", "{{.Dir}}", pkg).Output()
		if err != nil {
			return nil, fmt.Errorf("find %s (run from the module, or pass -init): %w", pkg, err)
		}
		dir = strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("create cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(cache, ".init-*")
	if err != nil {
		return nil, fmt.Errorf("create temp file for init: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command("go", "build", "-o", tmp.Name(), ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %w\n%s", pkg, err, out)
	}
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		return nil, fmt.Errorf("read built init: %w", err)
	}
	return b, nil
}
