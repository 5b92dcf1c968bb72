import Foundation

struct Result {
    let workload: Workload
    let engine: String
    let runs: [Double]

    var median: Double {
        let sorted = runs.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
    var unit: String { workload.unit }
}

/// How many times faster Strata is than `other` on the same workload: strata/other for
/// ops/s (higher is better), other/strata for ns/op, ms and bytes (lower is better). So > 1 always means
/// Strata is faster, < 1 that it is slower.
func strataSpeedup(_ strata: Result, over other: Result) -> Double {
    switch strata.workload.unit {
    case "ops/s": return strata.median / other.median
    default: return other.median / strata.median
    }
}

func formatNumber(_ x: Double) -> String {
    if x >= 100 { return String(format: "%.0f", x) }
    if x >= 10 { return String(format: "%.1f", x) }
    return String(format: "%.2f", x)
}

/// One row per result; the speedup column only when Strata has a result in the table.
func renderTable(_ results: [Result]) -> String {
    let withStrata = results.contains { $0.engine == StrataEngineName }
    var rows: [[String]] = [["workload", "engine", "median", "unit", "min", "max"] + (withStrata ? ["strata speedup"] : [])]
    for r in results {
        var row = [
            r.workload.rawValue, r.engine, formatNumber(r.median), r.unit,
            formatNumber(r.runs.min() ?? 0), formatNumber(r.runs.max() ?? 0),
        ]
        if withStrata {
            let strata = results.first { $0.workload == r.workload && $0.engine == StrataEngineName }
            row.append(strata.map { String(format: "%.2fx", strataSpeedup($0, over: r)) } ?? "-")
        }
        rows.append(row)
    }
    let widths = (0..<rows[0].count).map { c in rows.map { $0[c].count }.max() ?? 0 }
    var out = ""
    for (i, row) in rows.enumerated() {
        let cells = row.enumerated().map { c, cell in
            let pad = String(repeating: " ", count: widths[c] - cell.count)
            return c < 2 || c == 3 ? cell + pad : pad + cell   // text left, numbers right
        }
        out += cells.joined(separator: "  ") + "\n"
        if i == 0 { out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n" }
    }
    return out
}

let StrataEngineName = "strata"

// MARK: - JSON

func jsonString(_ s: String) -> String {
    var out = "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func jsonNumber(_ x: Double) -> String { x.isFinite ? "\(x)" : "null" }

/// `{"machine": ..., "date": ..., "results": [{"workload", "engine", "median", "unit", "runs"}]}`
func renderJSON(machine: String, date: String, results: [Result]) -> String {
    let items = results.map { r in
        "    {\"workload\": \(jsonString(r.workload.rawValue)), \"engine\": \(jsonString(r.engine)), "
            + "\"median\": \(jsonNumber(r.median)), \"unit\": \(jsonString(r.unit)), "
            + "\"runs\": [\(r.runs.map(jsonNumber).joined(separator: ", "))]}"
    }
    return "{\n  \"machine\": \(jsonString(machine)),\n  \"date\": \(jsonString(date)),\n  \"results\": [\n"
        + items.joined(separator: ",\n") + "\n  ]\n}\n"
}

// MARK: - Machine

func machineDescription() -> String {
    var host = [CChar](repeating: 0, count: 256)
    gethostname(&host, host.count - 1)
    var names = utsname()
    uname(&names)
    let arch = withUnsafeBytes(of: &names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    var cpu = "unknown CPU"
    if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
       let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
       let colon = line.firstIndex(of: ":") {
        cpu = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let hostname = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return "\(hostname) \(arch) \(cpu), \(cores) cores"
}
