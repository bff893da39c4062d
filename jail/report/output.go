package report

// Output is one entry left in the run directory (runfiles.Output, as the
// report gives it). A name that is not UTF-8 is in Path with U+FFFD for
// each bad byte and, exactly, base64-encoded in PathB64 (the same for
// link targets).
type Output struct {
	Path      string     `json:"path"` // relative to the run directory
	PathB64   string     `json:"path_b64,omitempty"`
	Type      OutputType `json:"type"`
	Size      int64      `json:"size"`
	SHA256    string     `json:"sha256,omitempty"`
	Target    string     `json:"link_target,omitempty"` // symlinks: never followed
	TargetB64 string     `json:"link_target_b64,omitempty"`
	// Skipped says why a file was not hashed or copied, or a directory
	// not listed (in full). Empty: it was.
	Skipped string `json:"skipped,omitempty"`
}

// OutputType is what an entry is, as the schema's output type enum names it.
type OutputType string

const (
	OutputFile    OutputType = "file"    // a regular file: sized, hashed
	OutputDir     OutputType = "dir"     // a directory: listed
	OutputSymlink OutputType = "symlink" // a symbolic link: its target named
	OutputOther   OutputType = "other"   // a FIFO, socket or device: named
)

// OutputFiles counts the regular files in outs, and of those the ones
// hashed (and, collected, copied) whole.
func OutputFiles(outs []Output) (files, whole int) {
	for _, o := range outs {
		if o.Type == OutputFile {
			files++
			if o.SHA256 != "" && o.Skipped == "" {
				whole++
			}
		}
	}
	return files, whole
}
