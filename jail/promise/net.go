package promise

// NetMode is the run's network: none (an empty namespace), loopback (lo up
// in its own namespace) or host (the host's network, outbound TCP to the
// AllowTCP ports only).
type NetMode string

const (
	NetNone     NetMode = "none"
	NetLoopback NetMode = "loopback"
	NetHost     NetMode = "host"
)
