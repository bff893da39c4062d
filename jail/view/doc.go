// Package view is what a run sees of the host it runs on, looked at once
// before the run is planned: the system directories to bind and the links
// to recreate, the data dirs that exist, the readable /etc entries and
// device files (EtcReadable, DevicesRW), the caller's identity and the
// supplementary groups a rootless run keeps, and what the kernel offers
// the promises (its Landlock ABI). LookHost gathers it into a HostView, a
// plain value, so that planning a run is a pure function of the spec and
// the host and can be tested without root.
//
// It also makes the files the view shows in place of the host's: the
// analysis' own /etc/passwd and /etc/group (UserDB) and a /proc/meminfo of
// the run's limits (MeminfoView); and it holds the group rule: a path the
// view exposes that a kept group opens and others cannot refuses the run
// (CheckExposure, a *GroupExposureError with the finding and the fix).
//
// Usage (the package's Example, compiled with its tests):
//
//	h := view.LookHost(view.Wanted{Resolver: mode.Resolver, Root: root, DataDirs: dirs})
//	if err := view.CheckExposure(uid, gid, h.Groups, h.Exposed); err != nil { ... }
package view
