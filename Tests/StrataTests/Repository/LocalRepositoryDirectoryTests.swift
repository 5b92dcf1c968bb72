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
    @Test("the drop-in's default directory is the XDG data folder of this process")
    func defaultInitUsesIt() {
        let expected = URL.localRepositoryDirectory(environment: ProcessInfo.processInfo.environment,
                                                    executableName: ProcessInfo.processInfo.processName)
        let repository = LocalRepository<Question>()
        #expect(repository.jsonFileURL.deletingLastPathComponent().standardizedFileURL.path == expected.standardizedFileURL.path)
        #expect(repository.jsonFileURL.lastPathComponent == "data.json")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: expected.path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }
    #endif
}
