package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Kernel is one bootable kernel: its bzImage and its module tree.
type Kernel struct {
	Flavour string // "backports" or "6.1": what -kernel asked for
	Release string // uname -r, e.g. "6.12.95+deb12-amd64"
	Vmlinuz string // the bzImage
	Modules string // the module tree, holding modules.dep
}

// Kernel choices of -kernel.
const (
	KernelAuto      = "auto"      // backports if obtainable, else the installed one
	KernelBackports = "backports" // Debian bookworm-backports (6.12: Landlock ABI 6)
	KernelInstalled = "6.1"       // Debian's installed kernel (6.1: Landlock ABI 2)
)

// errNoKernel is wrapped when a kernel is neither installed nor cached.
var errNoKernel = errors.New("kernel not available")

// findKernel resolves -kernel to a kernel on disk. With KernelAuto it fetches
// the backports kernel when it is not cached yet and falls back to the
// installed kernel, logging why, when the fetch fails.
func findKernel(choice, cache, mirror string, logf func(string, ...any)) (Kernel, error) {
	switch choice {
	case KernelInstalled:
		return installedKernel("/")
	case KernelBackports:
		if k, err := installedKernel(backportsRoot(cache)); err == nil {
			k.Flavour = KernelBackports
			return k, nil
		}
		return fetchBackports(cache, mirror, logf)
	case KernelAuto:
		k, err := findKernel(KernelBackports, cache, mirror, logf)
		if err == nil {
			return k, nil
		}
		logf("backports kernel not obtainable, using the installed one: %v", err)
		return installedKernel("/")
	}
	return Kernel{}, fmt.Errorf("-kernel %q: want %s, %s or %s", choice, KernelAuto, KernelBackports, KernelInstalled)
}

func backportsRoot(cache string) string { return filepath.Join(cache, "backports") }

// installedKernel finds the newest generic amd64 kernel below root (a
// filesystem root: "/" or an unpacked .deb). The -cloud- flavour is skipped:
// it has no 9p.
func installedKernel(root string) (Kernel, error) {
	images, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*-amd64"))
	var releases []string
	for _, img := range images {
		rel := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		if strings.Contains(rel, "-cloud-") || strings.Contains(rel, "-rt-") {
			continue
		}
		releases = append(releases, rel)
	}
	if len(releases) == 0 {
		return Kernel{}, fmt.Errorf("find kernel in %s/boot: %w (install linux-image-amd64, or run vmtest -prepare for the backports kernel)", root, errNoKernel)
	}
	sort.Slice(releases, func(i, j int) bool { return versionLess(releases[i], releases[j]) })
	rel := releases[len(releases)-1]
	k := Kernel{Flavour: KernelInstalled, Release: rel, Vmlinuz: filepath.Join(root, "boot", "vmlinuz-"+rel)}
	// Debian moved modules to /usr/lib/modules with merged /usr; the
	// unpacked .deb has whichever its packaging used.
	for _, dir := range []string{"lib/modules", "usr/lib/modules"} {
		p := filepath.Join(root, dir, rel)
		if _, err := os.Stat(filepath.Join(p, "modules.dep")); err == nil {
			k.Modules = p
			return k, nil
		}
	}
	return Kernel{}, fmt.Errorf("find modules.dep of kernel %s under %s: %w", rel, root, errNoKernel)
}

var numRun = regexp.MustCompile(`[0-9]+|[^0-9]+`)

// versionLess orders kernel releases numerically: 6.1.0-9 before 6.1.0-10.
func versionLess(a, b string) bool {
	pa, pb := numRun.FindAllString(a, -1), numRun.FindAllString(b, -1)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		na, ea := parseUint(pa[i])
		nb, eb := parseUint(pb[i])
		if ea && eb {
			return na < nb
		}
		return pa[i] < pb[i]
	}
	return len(pa) < len(pb)
}

func parseUint(s string) (uint64, bool) {
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, s != ""
}

// fetchBackports downloads Debian's bookworm-backports kernel with a private
// apt configuration under cache/apt (the system's sources, lists and
// preferences stay untouched) and unpacks it to cache/backports.
func fetchBackports(cache, mirror string, logf func(string, ...any)) (Kernel, error) {
	logf("fetching the bookworm-backports kernel from %s into %s", mirror, cache)
	apt, err := newPrivateApt(cache, mirror)
	if err != nil {
		return Kernel{}, err
	}
	image, metas, err := apt.currentImage()
	if err != nil {
		return Kernel{}, err
	}
	logf("downloading %s", image)
	pkgs, err := apt.download(image)
	if err != nil {
		return Kernel{}, err
	}
	root := backportsRoot(cache)
	if err := unpackKernel(pkgs[0], image, root); err != nil {
		return Kernel{}, err
	}
	for _, p := range append(metas, pkgs...) {
		_ = os.Remove(p) // the unpacked tree is the cache; the .debs are 100 MB of nothing
	}
	k, err := installedKernel(root)
	k.Flavour = KernelBackports
	return k, err
}

// privateApt is apt-get with a state of its own under cache/apt: its own
// source list (the mirror's bookworm-backports), preferences, lists and
// archives, so that the system's stay untouched. It downloads into debs.
type privateApt struct {
	opts []string
	debs string
}

func newPrivateApt(cache, mirror string) (privateApt, error) {
	aptDir := filepath.Join(cache, "apt")
	for _, d := range []string{"lists/partial", "cache/archives/partial", "etc/sources.list.d", "etc/preferences.d", "debs"} {
		if err := os.MkdirAll(filepath.Join(aptDir, d), 0o755); err != nil {
			return privateApt{}, fmt.Errorf("create apt cache dir: %w", err)
		}
	}
	list := filepath.Join(aptDir, "etc", "sources.list")
	line := fmt.Sprintf("deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s bookworm-backports main\n", mirror)
	if err := os.WriteFile(list, []byte(line), 0o644); err != nil {
		return privateApt{}, fmt.Errorf("write private apt source list: %w", err)
	}
	opts := []string{
		"-o", "Dir::Etc::SourceList=" + list,
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(aptDir, "etc", "sources.list.d"),
		"-o", "Dir::Etc::Preferences=" + filepath.Join(aptDir, "etc", "preferences"),
		"-o", "Dir::Etc::PreferencesParts=" + filepath.Join(aptDir, "etc", "preferences.d"),
		"-o", "Dir::State::Lists=" + filepath.Join(aptDir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(aptDir, "cache"),
		"-o", "APT::Get::List-Cleanup=0",
		"-q",
	}
	return privateApt{opts: opts, debs: filepath.Join(aptDir, "debs")}, nil
}

func (a privateApt) get(args ...string) error {
	cmd := exec.Command("apt-get", append(append([]string{}, a.opts...), args...)...)
	cmd.Dir = a.debs
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// currentImage updates the lists and returns the image package that the
// backports metapackage depends on, with the metapackage's downloaded .debs.
func (a privateApt) currentImage() (image string, metas []string, err error) {
	if err := a.get("update"); err != nil {
		return "", nil, err
	}
	// The metapackage names the current image package in its Depends.
	metas, err = a.download("linux-image-amd64/bookworm-backports")
	if err != nil {
		return "", nil, err
	}
	sort.Slice(metas, func(i, j int) bool { return versionLess(metas[i], metas[j]) })
	deps, err := exec.Command("dpkg-deb", "-f", metas[len(metas)-1], "Depends").Output()
	if err != nil {
		return "", nil, fmt.Errorf("dpkg-deb -f %s Depends: %w", metas[len(metas)-1], err)
	}
	image = regexp.MustCompile(`linux-image-[0-9][^ ,()]*-amd64`).FindString(string(deps))
	if image == "" {
		return "", nil, fmt.Errorf("metapackage %s depends on no linux-image: %q", metas[len(metas)-1], deps)
	}
	return image, metas, nil
}

// download fetches pkg (a name, or name/release) and returns the .debs
// of that name in debs: at least one.
func (a privateApt) download(pkg string) ([]string, error) {
	if err := a.get("download", pkg); err != nil {
		return nil, err
	}
	name, _, _ := strings.Cut(pkg, "/")
	debs, _ := filepath.Glob(filepath.Join(a.debs, name+"_*.deb"))
	if len(debs) == 0 {
		return nil, fmt.Errorf("apt-get download %s: no .deb in %s", name, a.debs)
	}
	return debs, nil
}

// unpackKernel unpacks the image package deb into root, replacing what was
// there, with the modules.dep its postinst would have made.
func unpackKernel(deb, image, root string) error {
	tmp := root + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove stale %s: %w", tmp, err)
	}
	if out, err := exec.Command("dpkg-deb", "-x", deb, tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-deb -x %s: %w\n%s", deb, err, out)
	}
	// The package ships no modules.dep: its postinst runs depmod. Run it on
	// the unpacked tree (-b) so that the initramfs builder finds the chain.
	rel := strings.TrimPrefix(image, "linux-image-")
	if out, err := exec.Command("depmod", "-b", tmp, rel).CombinedOutput(); err != nil {
		return fmt.Errorf("depmod -b %s %s (package kmod): %w\n%s", tmp, rel, err, out)
	}
	_ = os.RemoveAll(root)
	if err := os.Rename(tmp, root); err != nil {
		return fmt.Errorf("install unpacked kernel: %w", err)
	}
	return nil
}
