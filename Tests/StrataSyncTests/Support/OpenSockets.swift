import Foundation

/// Counts this process's descriptors that are TCP sockets whose remote end is a given port:
/// the sockets a client still holds to a server, whatever other tests in the process open
/// meanwhile (Linux's `/proc`).
enum OpenSockets {
    /// How many of this process's descriptors are TCP sockets connected (or half-closed) to
    /// `port`.
    static func connected(toPort port: Int) throws -> Int {
        var inodes: Set<String> = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, let remotePort = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                      remotePort == port, fields[9] != "0" else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        var count = 0
        for descriptor in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
                  target.hasPrefix("socket:["), target.hasSuffix("]") else { continue }
            if inodes.contains(String(target.dropFirst("socket:[".count).dropLast())) { count += 1 }
        }
        return count
    }
}
