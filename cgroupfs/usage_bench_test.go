package cgroupfs

import "testing"

// BenchmarkUsage is a leaf's Usage read again, as a served run's end reads
// its slot's leaf (the first read, which opens the files, is not timed).
func BenchmarkUsage(b *testing.B) {
	l, err := Create(Config{Name: testName(), Limits: Limits{MemoryKey: {N: 256 << 20}, PIDsKey: {N: 64}, CPUsKey: {CPUs: 1}}})
	if err != nil {
		b.Fatalf("Create() = %v, want nil", err)
	}
	b.Cleanup(func() { l.Remove() })
	if _, err := l.Usage(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := l.Usage(); err != nil {
			b.Fatal(err)
		}
	}
}
