// strata-sync-server: see docs/design/sync.md.
print("strata-sync-server: not built yet")
