package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleChain(t *testing.T) {
	// Shaped like 6.1's modules.dep: each line the full closure, what
	// loads first last.
	const dep = `kernel/fs/netfs/netfs.ko:
kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko
kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/fscache/fscache.ko kernel/fs/netfs/netfs.ko
kernel/net/9p/9pnet.ko:
kernel/net/9p/9pnet_virtio.ko.xz: kernel/net/9p/9pnet.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
kernel/fs/overlayfs/overlay.ko:
`
	const builtin = "kernel/drivers/block/loop.ko\nkernel/fs/ext4/ext4.ko\n"
	tests := []struct {
		name    string
		modules []string
		want    string
		wantErr bool
	}{
		{"no dependencies", []string{"overlay"}, "overlay", false},
		{"chain in load order", []string{"9p"}, "netfs fscache 9pnet 9p", false},
		{"shared dependencies once", []string{"virtio_pci", "9pnet_virtio", "9p", "overlay"},
			"virtio_ring virtio virtio_pci_modern_dev virtio_pci 9pnet 9pnet_virtio netfs fscache 9p overlay", false},
		{"dash is underscore", []string{"virtio-pci"}, "virtio_ring virtio virtio_pci_modern_dev virtio_pci", false},
		{"built in is skipped", []string{"loop", "overlay"}, "overlay", false},
		{"unknown module", []string{"nosuchfs"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := moduleChain(strings.NewReader(dep), strings.NewReader(builtin), tt.modules)
			if (err != nil) != tt.wantErr {
				t.Fatalf("moduleChain(%v) error = %v, want error %v", tt.modules, err, tt.wantErr)
			}
			var names []string
			for _, f := range files {
				names = append(names, moduleName(f))
			}
			if got := strings.Join(names, " "); got != tt.want {
				t.Errorf("moduleChain(%v) = %q, want %q", tt.modules, got, tt.want)
			}
		})
	}
}

// TestModuleChainRealKernels resolves rootModules against the installed
// kernel's (and the cached backports kernel's) modules.dep: every module
// must come after all of its dependencies.
func TestModuleChainRealKernels(t *testing.T) {
	var kernels []Kernel
	if k, err := installedKernel("/"); err == nil {
		kernels = append(kernels, k)
	} else {
		t.Skipf("no installed kernel: %v", err)
	}
	if k, err := installedKernel(backportsRoot("/var/cache/scidex-vmtest")); err == nil {
		kernels = append(kernels, k)
	}
	for _, k := range kernels {
		t.Run(k.Release, func(t *testing.T) {
			dep, err := os.ReadFile(filepath.Join(k.Modules, "modules.dep"))
			if err != nil {
				t.Fatal(err)
			}
			builtin, err := os.ReadFile(filepath.Join(k.Modules, "modules.builtin"))
			if err != nil {
				t.Fatal(err)
			}
			chain, err := moduleChain(strings.NewReader(string(dep)), strings.NewReader(string(builtin)), rootModules)
			if err != nil {
				t.Fatalf("moduleChain(%v) error = %v", rootModules, err)
			}
			pos := map[string]int{}
			for i, f := range chain {
				pos[f] = i
			}
			for _, line := range strings.Split(string(dep), "\n") {
				file, rest, _ := strings.Cut(line, ":")
				i, ok := pos[file]
				if !ok {
					continue
				}
				for _, d := range strings.Fields(rest) {
					if j, ok := pos[d]; !ok || j > i {
						t.Errorf("moduleChain() = %v: %s at %d, its dependency %s at %d", chain, file, i, d, j)
					}
				}
			}
			last := moduleName(chain[len(chain)-1])
			if last != "overlay" {
				t.Errorf("moduleChain() ends with %s, want overlay", last)
			}
			if _, err := readModule(filepath.Join(k.Modules, chain[0])); err != nil {
				t.Errorf("readModule(%s) error = %v", chain[0], err)
			}
		})
	}
}

func TestVersionLess(t *testing.T) {
	tests := []struct{ a, b string }{
		{"6.1.0-9-amd64", "6.1.0-10-amd64"},
		{"6.1.0-56-amd64", "6.12.95+deb12-amd64"},
		{"6.12.9+deb12-amd64", "6.12.95+deb12-amd64"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s<%s", tt.a, tt.b), func(t *testing.T) {
			if !versionLess(tt.a, tt.b) || versionLess(tt.b, tt.a) {
				t.Errorf("versionLess(%q, %q) = %v, versionLess(b, a) = %v, want true, false",
					tt.a, tt.b, versionLess(tt.a, tt.b), versionLess(tt.b, tt.a))
			}
		})
	}
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"PATH=/bin", "HOME=/root"}, []string{"HOME=/h", "A=1", "PATHX=2"})
	want := []string{"PATH=/bin", "HOME=/h", "A=1", "PATHX=2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mergeEnv() = %q, want %q", got, want)
	}
}
