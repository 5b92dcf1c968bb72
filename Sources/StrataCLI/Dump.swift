// `strata dump FILE [--type T] [--json]`: every object of the file (or of one type) with all
// its properties, read through the store's generic accessors, so any file can be dumped
// without its model classes.

import Foundation
import StrataStore

/// What `strata dump` was asked for.
struct DumpRequest {
    var path: String
    var type: String?
    var json = false

    init(parsing arguments: [String]) throws(CommandFailure) {
        var path: String?
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--json":
                json = true
            case "--type":
                guard let name = remaining.popFirst() else { throw .usage("--type needs an object type name") }
                type = name
            case _ where argument.hasPrefix("--type="):
                type = String(argument.dropFirst("--type=".count))
            case _ where argument.hasPrefix("-") && argument != "-":
                throw .usage("dump has no option \(argument)")
            default:
                guard path == nil else { throw .usage("dump takes one file, not \(path!) and \(argument)") }
                path = argument
            }
        }
        guard let path else { throw .usage("dump needs a file: strata dump FILE [--type T] [--json]") }
        self.path = path
    }
}

func dump(_ request: DumpRequest) throws(CommandFailure) {
    let path = request.path
    let file = try OpenedFile(path)
    defer { file.close() }
    guard let session = try file.makeSession() else {
        throw CommandFailure(path: path, "holds no object schema (a plain engine file); strata inspect lists its trees")
    }
    defer { session.close() }
    var tables = session.tables
    if let type = request.type {
        guard let table = session.table(named: type) else {
            let names = tables.map(\.schema.name)
            throw CommandFailure(path: path, "no object type '\(type)' (it has \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
        }
        tables = [table]
    }
    let format: DumpFormat = request.json ? .json : .text
    do {
        if format == .json { print("{") }
        for (position, table) in tables.enumerated() {
            try dump(table, format: format, isLast: position == tables.count - 1)
        }
        if format == .json { print("}") }
    } catch {
        throw CommandFailure(path: path, error)
    }
}

/// Prints one table: in text, a heading and one line per object; in JSON, one member of the
/// document's object, an array with one object per line.
private func dump(_ table: TableAccess, format: DumpFormat, isLast: Bool) throws {
    let schema = table.schema
    let count = try table.count
    switch format {
    case .text: print("\(schema.name): \(count) object\(plural(count))")
    case .json: print("  \(DumpFormat.quoted(schema.name)): [", terminator: count == 0 ? "" : "\n")
    }
    var first = true
    try table.forEachCluster { cluster in
        for row in 0..<cluster.count {
            let key = cluster.key(at: row)
            var fields: [String] = []
            fields.reserveCapacity(schema.properties.count + 1)
            if format == .json { fields.append("\"_key\": \(key.rawValue)") }
            for (index, property) in schema.properties.enumerated() {
                let value = property.isMap
                    ? format.render(map: try table.mapEntries(key, property: index), of: property, in: table)
                    : property.isList
                    ? format.render(list: try table.list(key, property: index), of: property, in: table)
                    : format.render(try cluster.column(index).value(row, kind: property.kind), of: property, in: table)
                fields.append(format == .json ? "\(DumpFormat.quoted(property.name)): \(value)" : "\(property.name): \(value)")
            }
            switch format {
            case .text:
                print("  \(schema.name)#\(key.rawValue) { \(fields.joined(separator: ", ")) }")
            case .json:
                if !first { print(",") }
                print("    {\(fields.joined(separator: ", "))}", terminator: "")
            }
            first = false
        }
        return true
    }
    if format == .json { print(count == 0 ? "]" : "\n  ]", terminator: isLast ? "\n" : ",\n") }
}
