// The LoadResults module; see docs/ARCHITECTURE.md for its job and contracts.
