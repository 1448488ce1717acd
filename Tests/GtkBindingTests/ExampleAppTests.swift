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
        let (process, output) = try launchNotes(path, ["--demo"], in: folder)
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

    /// The Notes example's ★ moves a note to the top of its folder. A person clicks the note,
    /// taps its ★ (the row moves up, and GTK 4.8 drops the row widget that had the keyboard
    /// focus), then presses Enter: GtkBinding's `SelectionFocus` has given the focus back to
    /// the note's row, so Enter edits that note; without it the focus is in the title entry
    /// and Enter does nothing. No code of the example's own keeps the focus.
    func testEnterAfterATapThatMovesTheRowEditsTheNote() throws { try MainActor.assumeIsolated {
        guard let path = ProcessInfo.processInfo.environment["NOTES_EXAMPLE"] else {
            throw XCTSkip("set NOTES_EXAMPLE to the built Examples/Notes binary (scripts/test does)")
        }
        guard environmentNamesADisplay else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let folder = try temporaryFolder(self)
        let (process, output) = try launchNotes(path, [], in: folder)
        defer { if process.isRunning { process.terminate() } }
        let said = Said(output.fileHandleForReading)
        // The window shows at the display's top left, 360 × 420: the entry, then
        // [Home] | Buy milk | Fix the tap | [Work] | Write the report, each row about 38 pixels.
        // Clicked once the window shows (a first launch in a fresh clone can take longer than
        // a fixed wait: the tap then selected nothing, and Enter had no row to edit).
        try run("/usr/bin/timeout", ["20", "/usr/bin/xdotool", "search", "--sync", "--onlyvisible", "--pid", String(process.processIdentifier)])
        Thread.sleep(forTimeInterval: 1.0)
        let screenshot = folder.appendingPathComponent("notes-tap.png")
        defer { try? run("/usr/bin/import", ["-window", "root", screenshot.path]) }
        try run("/usr/bin/xdotool", ["mousemove", "100", "117", "click", "1"])   // Fix the tap: selected, its row focused
        Thread.sleep(forTimeInterval: 0.5)
        try run("/usr/bin/xdotool", ["mousemove", "333", "117", "click", "1"])   // its ★: the row moves above Buy milk
        XCTAssertTrue(said.wait(for: "starred: Fix the tap"), "the tap starred the note: \(said.text), see \(screenshot.path)")
        Thread.sleep(forTimeInterval: 0.5)
        try run("/usr/bin/xdotool", ["key", "Return"])
        XCTAssertTrue(said.wait(for: "editing: Fix the tap"), "Enter edits the tapped note: \(said.text), see \(screenshot.path)")
        XCTAssertEqual(said.text.components(separatedBy: "starred").count, 2, "one tap, not two: \(said.text)")
        XCTAssertTrue(process.isRunning, "the app is still alive (G_DEBUG=fatal-criticals)")
    } }

    /// What a child process printed, read as it comes.
    private final class Said: @unchecked Sendable {
        private let lock = NSLock()
        private var collected = ""
        init(_ handle: FileHandle) {
            handle.readabilityHandler = { [weak self] handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                self?.lock.withLock { self?.collected += text }
            }
        }
        var text: String { lock.withLock { collected } }
        func wait(for line: String, timeout: TimeInterval = 5) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while !text.contains(line) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            return text.contains(line)
        }
    }

    /// Starts the Notes app on a store in `folder`, with G_DEBUG=fatal-criticals; its output.
    private func launchNotes(_ path: String, _ arguments: [String], in folder: URL) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments + ["--store", folder.appendingPathComponent("notes.sqlite").path]
        var environment = ProcessInfo.processInfo.environment
        environment["G_DEBUG"] = "fatal-criticals"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

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
