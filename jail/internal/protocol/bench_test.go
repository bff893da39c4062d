package protocol

import (
	"os"
	"testing"
)

// The lines of one run of `scidex-jail run -- /usr/bin/true` on a
// Debian host, as they crossed the socket (testdata/*.json): what a run
// encodes and decodes on each side. Each benchmark reports the bytes of
// its line; go test -bench . -benchmem ./jail/internal/protocol gives the
// cost per run (the codec builds nothing on first use: a fresh process
// pays the same).

func testLine(tb testing.TB, name string) []byte {
	tb.Helper()
	line, err := os.ReadFile("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	return line
}

// BenchmarkConfig: the supervisor encodes the config, the init decodes it.
func BenchmarkConfig(b *testing.B) {
	line := testLine(b, "config.json")
	cfg, err := DecodeConfig(line)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			EncodeConfig(cfg)
		}
		b.ReportMetric(float64(len(line)), "bytes/line")
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeConfig(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The run's part, which a slot's init decodes at the request (its
	// view was decoded ahead): the command, environment, names and the
	// run's /proc/meminfo, whose newlines are escapes.
	part := RunPart(cfg)
	part.ViewSum = "0123456789abcdef0123456789abcdef"
	partLine := EncodeConfig(&part)
	b.Run("decode-run-part", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeConfig(partLine); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(partLine)), "bytes/line")
	})
}

// BenchmarkInitMsg: the init encodes each of its messages of a run, the
// supervisor decodes them (DecodeInitMsg).
func BenchmarkInitMsg(b *testing.B) {
	for _, name := range []string{"started.json", "exited.json"} {
		line := testLine(b, name)
		m, err := DecodeInitMsg(line)
		if err != nil {
			b.Fatalf("DecodeInitMsg(%s) = %v", name, err)
		}
		b.Run(string(m.Kind())+"/encode", func(b *testing.B) {
			for b.Loop() {
				if _, err := EncodeInitMsg(m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(line)), "bytes/line")
		})
		b.Run(string(m.Kind())+"/decode", func(b *testing.B) {
			for b.Loop() {
				if _, err := DecodeInitMsg(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("hello/decode", func(b *testing.B) {
		line := HelloLine("0~git20261125.3be00d1")
		for b.Loop() {
			if _, err := DecodeInitMsg(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSupervisorMsg: "go", the one message of every run.
func BenchmarkSupervisorMsg(b *testing.B) {
	for b.Loop() {
		line, _ := EncodeSupervisorMsg(Go{})
		if _, err := DecodeSupervisorMsg(line); err != nil {
			b.Fatal(err)
		}
	}
}
