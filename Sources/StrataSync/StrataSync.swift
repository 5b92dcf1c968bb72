// The sync client: see docs/design/sync.md.
