package report

import "github.com/scidex/scidex-jail/jail/promise"

// HostGroup is one supplementary group of the caller that the run keeps.
type HostGroup struct {
	GID       int    `json:"gid"`        // on the host
	Name      string `json:"name"`       // "" when the host's group database names none
	InsideGID int    `json:"inside_gid"` // as the analysis sees it: the overflow gid
}

// IdentityReport is the report's enforced.identity: the groups the
// analysis holds besides its own gid, why, and what keeps what they could
// open out of its reach.
type IdentityReport struct {
	// HostIDs says where host_uid and host_gid came from: "leased from
	// FIRST-LAST" (the run's own, as root: docs/security.md), "fixed by
	// --uid and --gid", or "the caller's (rootless)".
	HostIDs        string          `json:"host_ids,omitempty"`
	HostGroupsKept []HostGroup     `json:"host_groups_kept"` // []: none (root runs clear them)
	Why            string          `json:"why,omitempty"`
	HeldBy         []promise.Layer `json:"held_by,omitempty"` // the layers that hold the filesystem promises against them
}
