package jail

import "testing"

func TestIDMapped(t *testing.T) {
	for _, tc := range []struct {
		name  string
		idMap string
		id    int
		want  bool
	}{
		{"the initial namespace", "         0          0 4294967295\n", 65534, true},
		{"a container mapping only its root", "         0     100000          1\n", 65534, false},
		{"its root itself", "         0     100000          1\n", 0, true},
		{"a pod user namespace of 65536", "         0 1879048192      65536\n", 65534, true},
		{"just past the range", "0 100000 65534\n", 65534, false},
		{"the last id of the range", "0 100000 65535\n", 65534, true},
		{"two ranges", "0 1000 1\n1 100000 65536\n", 65534, true},
		{"garbage", "x y z\n\n", 1, false},
	} {
		if got := idMapped(tc.idMap, tc.id); got != tc.want {
			t.Errorf("%s: idMapped(%q, %d) = %v, want %v", tc.name, tc.idMap, tc.id, got, tc.want)
		}
	}
}

func FuzzIDMapped(f *testing.F) {
	for _, s := range []string{"0 0 4294967295\n", "0 100000 1\n", "1 2\n", "0 4294967295 4294967295"} {
		f.Add(s, 65534)
	}
	f.Fuzz(func(t *testing.T, idMap string, id int) {
		if id < 0 {
			return
		}
		idMapped(idMap, id) // must not panic
	})
}
