// Workload 12 (BENCHMARKS.md, "space"): how much the file grows when a snapshot taken before a
// long run of commits is held across them. Each commit updates one object, so without the
// snapshot the file need not grow at all (freed pages are reused); with it, pages the snapshot
// can reach stay put. The result is the growth in bytes with the snapshot held; the growth of
// the same commits without a snapshot is printed alongside.

import Foundation

/// An object engine that can hold a read snapshot across commits.
protocol SnapshotGrowthEngine: ObjectEngine {
    /// Takes a snapshot of the store (which holds `people`), then commits `commits`
    /// transactions, each changing the age of one object (`people[i % count]`, +1), while the
    /// snapshot is held when `holdingSnapshot`. Checks that the snapshot still reads the ages
    /// it started with. Returns the store's total file size in bytes before and after the
    /// commits (with the snapshot still held).
    func commitUnderSnapshot(_ people: [Person], commits: Int, holdingSnapshot: Bool) async throws -> (before: Int, after: Int)
}

/// Fills a fresh store with `data`, measures growth over `commits` updates with a snapshot
/// held, then (in the same store) the growth over as many updates without one.
func measureSpaceGrowth(_ store: any SnapshotGrowthEngine, data: ObjectDataset, commits: Int) async throws -> Double {
    try await store.insertAll(data.people)
    let held = try await store.commitUnderSnapshot(data.people, commits: commits, holdingSnapshot: true)
    let free = try await store.commitUnderSnapshot(data.people, commits: commits, holdingSnapshot: false)
    let name = type(of: store).name
    logProgress("    \(name) space-growth: \(formatBytes(held.before)) after inserting \(data.people.count) objects; "
        + "+\(formatBytes(held.after - held.before)) over \(commits) commits holding a snapshot; "
        + "then +\(formatBytes(free.after - free.before)) over \(commits) more without one")
    return Double(held.after - held.before)
}

/// The total size of the regular files in `directory` (a store's file and its companions).
func directorySize(_ directory: String) -> Int {
    let manager = FileManager.default
    guard let names = try? manager.contentsOfDirectory(atPath: directory) else { return 0 }
    var total = 0
    for name in names {
        let attributes = try? manager.attributesOfItem(atPath: directory + "/" + name)
        if attributes?[.type] as? FileAttributeType == .typeRegular {
            total += (attributes?[.size] as? NSNumber)?.intValue ?? 0
        }
    }
    return total
}
