package seccomp

// sysnums maps syscall names to their numbers on amd64 and arm64 (-1: the
// architecture has no such syscall). Printed once from libseccomp and checked
// against x/sys/unix's zsysnum_linux_{amd64,arm64}.go, which come from the
// kernel headers, so the tests do not depend on the generator's lookups.
var sysnums = map[string]struct{ amd64, arm64 int32 }{
	"_sysctl":           {156, -1},
	"acct":              {163, 89},
	"add_key":           {248, 217},
	"adjtimex":          {159, 171},
	"bpf":               {321, 280},
	"clock_adjtime":     {305, 266},
	"clock_settime":     {227, 112},
	"clone":             {56, 220},
	"clone3":            {435, 435},
	"connect":           {42, 203},
	"create_module":     {174, -1},
	"delete_module":     {176, 106},
	"epoll_pwait":       {281, 22},
	"execve":            {59, 221},
	"exit_group":        {231, 94},
	"fanotify_init":     {300, 262},
	"finit_module":      {313, 273},
	"fsconfig":          {431, 431},
	"fsmount":           {432, 432},
	"fsopen":            {430, 430},
	"fspick":            {433, 433},
	"futex":             {202, 98},
	"get_kernel_syms":   {177, -1},
	"get_mempolicy":     {239, 236},
	"getpid":            {39, 172},
	"init_module":       {175, 105},
	"io_uring_enter":    {426, 426},
	"io_uring_register": {427, 427},
	"io_uring_setup":    {425, 425},
	"ioctl":             {16, 29},
	"ioperm":            {173, -1},
	"iopl":              {172, -1},
	"kcmp":              {312, 272},
	"kexec_file_load":   {320, 294},
	"kexec_load":        {246, 104},
	"keyctl":            {250, 219},
	"kill":              {62, 129},
	"lookup_dcookie":    {212, 18},
	"mbind":             {237, 235},
	"migrate_pages":     {256, 238},
	"mmap":              {9, 222},
	"modify_ldt":        {154, -1},
	"mount":             {165, 40},
	"mount_setattr":     {442, 442},
	"move_mount":        {429, 429},
	"move_pages":        {279, 239},
	"name_to_handle_at": {303, 264},
	"nanosleep":         {35, 101},
	"nfsservctl":        {180, 42},
	"open_by_handle_at": {304, 265},
	"open_tree":         {428, 428},
	"openat":            {257, 56},
	"pciconfig_iobase":  {-1, -1},
	"pciconfig_read":    {-1, -1},
	"pciconfig_write":   {-1, -1},
	"perf_event_open":   {298, 241},
	"personality":       {135, 92},
	"pidfd_getfd":       {438, 438},
	"pidfd_open":        {434, 434},
	"pivot_root":        {155, 41},
	"prlimit64":         {302, 261},
	"process_madvise":   {440, 440},
	"process_vm_readv":  {310, 270},
	"process_vm_writev": {311, 271},
	"ptrace":            {101, 117},
	"query_module":      {178, -1},
	"quotactl":          {179, 60},
	"quotactl_fd":       {443, 443},
	"read":              {0, 63},
	"reboot":            {169, 142},
	"request_key":       {249, 218},
	"rt_sigaction":      {13, 134},
	"setns":             {308, 268},
	"settimeofday":      {164, 170},
	"socket":            {41, 198},
	"socketpair":        {53, 199},
	"stime":             {-1, -1},
	"swapoff":           {168, 225},
	"swapon":            {167, 224},
	"sysfs":             {139, -1},
	"syslog":            {103, 116},
	"umount":            {-1, -1},
	"umount2":           {166, 39},
	"unshare":           {272, 97},
	"uselib":            {134, -1},
	"userfaultfd":       {323, 282},
	"ustat":             {136, -1},
	"vhangup":           {153, 58},
	"wait4":             {61, 260},
	"waitid":            {247, 95},
	"write":             {1, 64},
}

// sysnum returns the number of syscall name on arch, or -1.
func sysnum(name, arch string) int32 {
	n, ok := sysnums[name]
	switch {
	case !ok:
		return -2
	case arch == "amd64":
		return n.amd64
	case arch == "arm64":
		return n.arm64
	}
	return -2
}
