// A child process for the cross-process tests: it opens a database file through Strata, as
// another app process would, and commits.
//
//   StrataCommitChild PATH NAME                    add one Dog named NAME to the database at PATH
//                                                  (Tests/StrataTests/Concurrency/RefreshTests.swift)
//   StrataCommitChild --question PATH ID OWNER     save one Question with id ID and owner OWNER
//                                                  through a Repository
//                                                  (Tests/StrataTests/Repository/RepositoryChangesAcrossProcessesTests.swift)
//
// Each prints "committed" once its commit is durable. Failures print "error: ..." to stderr
// and exit 1; a wrong command line exits 2.

import Foundation
import Strata

/// The same model as the tests' `Dog` (same name and properties, so the same table).
final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

/// The same shape as the tests' `Question` (same name and properties, so the same table).
struct Question: Codable, Identifiable, Sendable {
    enum Priority: String, Codable, CaseIterable, Sendable { case low, high }
    var id: String
    var title: String
    var owner: String
    var done: Bool
    var created: Date
    var priority: Priority
}

/// The configuration the tests use: much less address space than the default reservation
/// (sanitizers).
func configuration(path: String) -> Database.Configuration {
    var configuration = Database.Configuration(fileURL: URL(fileURLWithPath: path))
    configuration.maximumFileSize = 1 << 30
    return configuration
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
    exit(status)
}

let arguments = CommandLine.arguments
switch arguments.count {
case 3:
    do {
        let database = try Database(configuration: configuration(path: arguments[1]))
        try database.write {
            database.add(Dog(value: ["name": arguments[2], "age": 1]))
        }
        print("committed")
    } catch {
        fail("error: \(error)", status: 1)
    }
case 5 where arguments[1] == "--question":
    do throws(RepositoryError) {
        let repository = try Repository(Question.self, in: configuration(path: arguments[2]))
        try await repository.save(Question(id: arguments[3], title: "Title \(arguments[3])", owner: arguments[4], done: false,
                                           created: Date(timeIntervalSinceReferenceDate: 1_000), priority: .low))
        print("committed")
    } catch {
        fail("error: \(error)", status: 1)
    }
default:
    fail("usage: StrataCommitChild PATH NAME | StrataCommitChild --question PATH ID OWNER", status: 2)
}
