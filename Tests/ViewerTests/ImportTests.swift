import CGtk
import CViewer
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// The window's Import: a CSV file imported in the background, chunk by chunk, with a
/// progress bar, Cancel, a bad record, and resuming.
final class ImportTests: ViewerTestCase, @unchecked Sendable {
    /// A CSV file of `count` new teams ("Team 0", "Team 1"...); `badLine` (a file line, the
    /// header being line 1) gets wins that are not a number.
    @MainActor private func teamsFile(_ count: Int, badLine: Int? = nil, name: String = "teams.csv") throws -> URL {
        let zones = ["Africa", "Asia", "Europe", "Oceania"]
        var text = "teamName,qualifyingZone,wins\n"
        for row in 0..<count {
            let wins = row + 2 == badLine ? "lots" : "\(row % 50)"
            text += "Team \(row),\(zones[row % zones.count]),\(wins)\n"
        }
        let url = storeFolder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// Runs the main loop until the import ends; returns the list counts seen on the way.
    @MainActor private func waitForImport(_ window: ViewerWindow, cancelAfterFirstChunk: Bool = false) -> [Int] {
        var counts: [Int] = []
        window.didUpdate = {
            if counts.last != window.listedObjectCount { counts.append(window.listedObjectCount) }
            if cancelAfterFirstChunk && counts.count == 1 { window.importBar.cancel() }
        }
        XCTAssertTrue(MainLoop.iterate(until: { !window.isImporting }, timeout: 60), "the import ends")
        MainLoop.iterate(for: 0.1)
        window.didUpdate = nil
        return counts
    }

    func testImportShowsProgressAndTheRowsOfEachChunkAsItCommits() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let file = try teamsFile(2_500)
        window.startImport(file: file, chunkSize: 1_000)
        XCTAssertTrue(window.isImporting)
        XCTAssertTrue(window.importBar.widget.isVisible && window.importBar.progressBar.isVisible && window.importBar.cancelButton.isVisible)
        XCTAssertFalse(Action.isEnabled(window.importAction), "one import at a time")
        let counts = waitForImport(window)
        // A chunk's batch may come a turn after its progress (fetched off the main queue):
        // the window's own 32 teams can be seen first.
        XCTAssertEqual(Array(counts.drop(while: { $0 == 32 })), [1_032, 2_032, 2_532], "the list grows by each committed chunk")
        XCTAssertEqual(window.listedObjectCount, 2_532)
        XCTAssertFalse(window.importBar.progressBar.isVisible)
        XCTAssertEqual(labelText(window.importBar.message), "Imported 2,500 records from teams.csv.")
        XCTAssertTrue(Action.isEnabled(window.importAction))
        XCTAssertTrue(window.rows(inSection: "Oceania").contains("  Team 3 · Wins: 3"), "a new section from the imported rows")

        // What the window shows equals a fresh window on the store.
        let fresh = try openWindow()
        XCTAssertEqual(fresh.listedObjectCount, 2_532)
        XCTAssertEqual(window.rows(inSection: "Oceania").map { $0.replacingOccurrences(of: ">", with: " ") },
                       fresh.rows(inSection: "Oceania").map { $0.replacingOccurrences(of: ">", with: " ") })

        // The file again: refused, it would add every row twice.
        window.startImport(file: file)
        XCTAssertTrue(MainLoop.iterate(until: { !window.isImporting }))
        XCTAssertTrue(window.importBar.widget.hasClass("import-error"), labelText(window.importBar.message))
        XCTAssertTrue(labelText(window.importBar.message).contains("already imported into Team completely"), labelText(window.importBar.message))
        XCTAssertEqual(window.listedObjectCount, 2_532)
    } }

    /// A CSV file dropped on the window (as a file manager drops it) is imported; a file of
    /// another kind is refused with a toast that says which files are taken.
    func testAFileDroppedOnTheWindowIsImported() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let target = try XCTUnwrap(window.fileDrop)
        let picture = storeFolder.appendingPathComponent("holiday.png")
        try Data([0x89, 0x50]).write(to: picture)
        XCTAssertEqual(fr_drop_target_drop_file(target, picture.path), 0, "not taken")
        XCTAssertEqual(window.shownToast, "holiday.png is not a CSV or JSON-lines file: drop a .csv, .jsonl or .json file to import it")
        XCTAssertEqual(window.listedObjectCount, 32)

        let file = try teamsFile(100, name: "dropped.csv")
        XCTAssertEqual(fr_drop_target_drop_file(target, file.path), 1, "taken")
        _ = waitForImport(window)
        XCTAssertEqual(window.listedObjectCount, 132, "the dropped file's 100 teams are in the list")
    } }

    func testABadRecordStopsTheImportKeepingWhatCameBeforeAndTheFixedFileResumes() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let file = try teamsFile(2_500, badLine: 1_503)
        window.startImport(file: file, chunkSize: 1_000)
        _ = waitForImport(window)
        let message = labelText(window.importBar.message)
        XCTAssertTrue(window.importBar.widget.hasClass("import-error"))
        XCTAssertTrue(message.contains("teams.csv:1503") && message.contains("wins") && message.contains("lots"), message)
        XCTAssertEqual(window.listedObjectCount, 32 + 1_501, "the 1,501 records before the bad line stay")

        _ = try teamsFile(2_500)  // fixed
        window.startImport(file: file, chunkSize: 1_000)
        _ = waitForImport(window)
        XCTAssertFalse(window.importBar.widget.hasClass("import-error"), labelText(window.importBar.message))
        XCTAssertEqual(labelText(window.importBar.message), "Imported 999 records from teams.csv. It resumed at line 1503 (2,500 records in all).")
        XCTAssertEqual(window.listedObjectCount, 2_532, "every record once")
    } }

    func testCancelKeepsTheCommittedChunksAndImportingAgainResumes() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let file = try teamsFile(20_000)
        window.startImport(file: file, chunkSize: 500)
        let counts = waitForImport(window, cancelAfterFirstChunk: true)
        let message = labelText(window.importBar.message)
        XCTAssertTrue(message.contains("cancelled at line"), message)
        let kept = window.listedObjectCount
        XCTAssertGreaterThanOrEqual(kept, 532, "\(counts)")
        XCTAssertLessThan(kept, 20_032, "cancelled before the end: \(counts)")

        window.startImport(file: file, chunkSize: 5_000)
        _ = waitForImport(window)
        XCTAssertTrue(labelText(window.importBar.message).contains("It resumed at line"), labelText(window.importBar.message))
        XCTAssertEqual(window.listedObjectCount, 20_032, "no record twice, none missing")
    } }

    func testAFileThatIsNotCSVSaysWhatIsWrongAndChangesNothing() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let file = storeFolder.appendingPathComponent("teams.csv")
        try "name;zone\nGhana;Africa\n".write(to: file, atomically: true, encoding: .utf8)
        window.startImport(file: file)
        XCTAssertTrue(MainLoop.iterate(until: { !window.isImporting }))
        let message = labelText(window.importBar.message)
        XCTAssertTrue(window.importBar.widget.hasClass("import-error"))
        XCTAssertTrue(message.contains("teams.csv") && message.contains("name;zone"), message)
        XCTAssertEqual(window.listedObjectCount, 32)
    } }
}

extension Widget {
    @MainActor func hasClass(_ name: String) -> Bool { gtk_widget_has_css_class(self, name) != 0 }
}
