import Foundation
import XCTest

/// The Notes example (`Examples/Notes`), built against the library products only, run as a
/// person runs it: its window shows an unsaved edit and a background context's save with no
/// code of its own for either.
///
/// `scripts/test` builds the example and sets `NOTES_EXAMPLE` to its binary; without it the
/// test is skipped.
final class ExampleAppTests: XCTestCase, @unchecked Sendable {
    func testTheNotesWindowShowsAnUnsavedEditAndABackgroundSave() throws { try MainActor.assumeIsolated {
        guard let path = ProcessInfo.processInfo.environment["NOTES_EXAMPLE"] else {
            throw XCTSkip("set NOTES_EXAMPLE to the built Examples/Notes binary (scripts/test does)")
        }
        guard environmentNamesADisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: path), "\(path) was not built")
        let folder = try temporaryFolder(self)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--demo", "--store", folder.appendingPathComponent("notes.sqlite").path]
        var environment = ProcessInfo.processInfo.environment
        environment["G_DEBUG"] = "fatal-criticals"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var shown = ""
        let deadline = Date().addingTimeInterval(20)
        while !shown.contains("\n"), process.isRunning, Date() < deadline {
            shown += String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        }
        XCTAssertEqual(shown.trimmingCharacters(in: .whitespacesAndNewlines),
                       "shown: [Home] | Buy milk | Fix the tap | Unsaved draft | [Shared] | Saved in the background | [Work] | Write the report")

        // What a person sees: the window drawn with its rows (many colours, not a blank screen).
        let screenshot = folder.appendingPathComponent("notes.png")
        try run("/usr/bin/import", ["-window", "root", screenshot.path])
        let colours = try run("/usr/bin/convert", [screenshot.path, "-format", "%k", "info:"])
        XCTAssertGreaterThan(Int(colours) ?? 0, 20, "the screenshot \(screenshot.path) looks blank")
        XCTAssertTrue(process.isRunning, "the app is still alive (G_DEBUG=fatal-criticals)")
    } }

    @discardableResult
    @MainActor private func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(tool) \(arguments)")
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
