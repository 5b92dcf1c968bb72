// The sync server: see docs/design/sync.md.
