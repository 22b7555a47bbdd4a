// The XMPPCore module; see docs/ARCHITECTURE.md for its job and contracts.
