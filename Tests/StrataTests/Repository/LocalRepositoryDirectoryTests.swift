import Foundation
import Testing
@testable import Strata

@Suite("LocalRepository's default directory")
struct LocalRepositoryDirectoryTests {
    @Test("XDG_DATA_HOME, when absolute, holds a folder named after the executable")
    func xdgDataHome() {
        let url = URL.localRepositoryDirectory(environment: ["XDG_DATA_HOME": "/data/home", "HOME": "/home/ann"], executableName: "QuestionsApp")
        #expect(url.path == "/data/home/QuestionsApp")
    }

    @Test("without XDG_DATA_HOME (or with a relative one) it is ~/.local/share/<executable>")
    func homeFallback() {
        #expect(URL.localRepositoryDirectory(environment: ["HOME": "/home/ann"], executableName: "QuestionsApp").path == "/home/ann/.local/share/QuestionsApp")
        #expect(URL.localRepositoryDirectory(environment: ["XDG_DATA_HOME": "relative/dir", "HOME": "/home/ann"], executableName: "QuestionsApp").path == "/home/ann/.local/share/QuestionsApp")
    }

    @Test("an empty executable name falls back to a fixed folder name")
    func emptyExecutableName() {
        #expect(URL.localRepositoryDirectory(environment: ["XDG_DATA_HOME": "/x"], executableName: "").path == "/x/strata")
    }

    #if !canImport(Darwin)
    @Test("the drop-in's default directory is the XDG data folder, created; resolved from the task's environment when set")
    func defaultInitUsesIt() throws {
        // A temporary XDG_DATA_HOME for this task only: the process's environment (which other
        // tests running at once read) is left alone, and nothing is created in the home folder.
        let folder = TemporaryFolder()
        let environment = ["XDG_DATA_HOME": folder.url.path, "HOME": "/nonexistent-home"]
        let repository = LocalRepositoryDirectory.$resolution.withValue((environment, "QuestionsApp")) {
            LocalRepository<Question>()
        }
        let expected = folder.url.appendingPathComponent("QuestionsApp")
        #expect(repository.jsonFileURL.deletingLastPathComponent().standardizedFileURL.path == expected.standardizedFileURL.path)
        #expect(repository.jsonFileURL.lastPathComponent == "data.json")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: expected.path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test("without a task's environment, the directory follows the process's environment and name")
    func processResolution() {
        #expect(LocalRepositoryDirectory.resolution == nil)
        let expected = URL.localRepositoryDirectory(environment: ProcessInfo.processInfo.environment,
                                                    executableName: ProcessInfo.processInfo.processName)
        // Resolved only (`localRepositoryDirectory` would create it in the user's data folder).
        #expect(expected.lastPathComponent == (ProcessInfo.processInfo.processName.isEmpty ? "strata" : ProcessInfo.processInfo.processName))
    }
    #endif
}
