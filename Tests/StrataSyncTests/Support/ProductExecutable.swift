import Foundation

/// Executables built beside the test bundle (`StrataSyncChild`, `strata-sync-server`).
enum ProductExecutable {
    /// The path of the built product `name`, looked up from the test bundle's folder upwards; the
    /// environment variable `override` wins when set. Nil when it was not built.
    static func path(named name: String, override: String) -> String? {
        if let path = ProcessInfo.processInfo.environment[override] { return path }
        var starts: [URL] = Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        if let main = Bundle.main.executableURL { starts.append(main) }
        starts.append(URL(fileURLWithPath: CommandLine.arguments[0]))
        for start in starts {
            var directory = start.resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = directory.appendingPathComponent(name).path
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                directory.deleteLastPathComponent()
            }
        }
        return nil
    }

    /// The sync client child (STRATA_SYNC_CHILD overrides).
    static var syncChild: String? { path(named: "StrataSyncChild", override: "STRATA_SYNC_CHILD") }
    /// The sync server (STRATA_SYNC_SERVER overrides).
    static var syncServer: String? { path(named: "strata-sync-server", override: "STRATA_SYNC_SERVER") }
}
