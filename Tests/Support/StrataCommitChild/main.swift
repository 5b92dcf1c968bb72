// A child process for the cross-process refresh tests (Tests/StrataTests/Concurrency/RefreshTests.swift):
// it opens a database file through Strata, as another app process would, and commits.
//
//   StrataCommitChild PATH NAME     add one Dog named NAME to the database at PATH, print "committed"
//
// Failures print "error: ..." to stderr and exit 1.

import Foundation
import Strata

/// The same model as the tests' `Dog` (same name and properties, so the same table).
final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: StrataCommitChild PATH NAME\n".utf8))
    exit(2)
}
do {
    var configuration = Database.Configuration(fileURL: URL(fileURLWithPath: arguments[1]))
    // As in the tests: much less address space than the default reservation (sanitizers).
    configuration.maximumFileSize = 1 << 30
    let database = try Database(configuration: configuration)
    try database.write {
        database.add(Dog(value: ["name": arguments[2], "age": 1]))
    }
    print("committed")
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
