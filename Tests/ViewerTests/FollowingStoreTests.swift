import GtkBinding
import CGtk
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// The window follows changes another process commits to its store: here the `sqlite3`
/// shell, a second real process that knows nothing of ours.
final class FollowingStoreTests: ViewerTestCase, @unchecked Sendable {
    /// The list lines without the selection mark, which a fresh window puts elsewhere.
    @MainActor private func unmarked(_ lines: [String]) -> [String] {
        lines.map { $0.hasPrefix(">") ? " " + $0.dropFirst() : $0 }
    }

    /// A window closed while its store goes on changing: what the store tells afterwards
    /// (another program's change) touches nothing of the closed window (with
    /// `G_DEBUG=fatal-criticals`, a critical would end the run). It crashed the benchmark
    /// when a window closed while its million rows were still being fetched.
    func testAChangeAfterTheWindowClosedTouchesNothingOfIt() throws { try MainActor.assumeIsolated {
        let window = try ViewerWindow(application: Self.application!.application,
                                      options: ViewerOptions(datasetName: "worldcup", storeFolder: storeFolder))
        gtk_window_present(window.window.cast())
        XCTAssertTrue(MainLoop.iterate(until: { !window.isLoading && !window.listLines.isEmpty }))
        gtk_window_destroy(window.window.cast())
        XCTAssertNil(window.session, "the closed window let its session go")
        try sqlite3(storeFolder.appendingPathComponent("worldcup.sqlite"), "UPDATE Team SET wins = 7 WHERE teamName = 'Ghana'")
        MainLoop.iterate(for: 1)
        withExtendedLifetime(window) {}
    } }

    func testChangesFromTheSqliteShellShowInTheListAndDetailPane() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let storeURL = storeFolder.appendingPathComponent("worldcup.sqlite")
        let session = try XCTUnwrap(window.session)
        session.selection.select(window.object(titled: "Ghana"))
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Africa").first, "  Algeria · Wins: 0")

        // An update that moves the selected row to the top of its section.
        var started = Date()
        try sqlite3(storeURL, "UPDATE Team SET wins = 42 WHERE teamName = 'Ghana'")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "> Ghana · Wins: 42" }),
                      "the update shows, and Ghana stays selected:\n\(window.listLines.joined(separator: "\n"))")
        print("sqlite3 update shown after \(Int(Date().timeIntervalSince(started) * 1000)) ms (including the sqlite3 process)")
        XCTAssertEqual(window.detailLines.suffix(2), ["Wins", "42"], "the detail pane follows")

        // An insert into a new section, and a delete that empties one.
        started = Date()
        try sqlite3(storeURL, """
            BEGIN;
            INSERT INTO Team (teamName, qualifyingZone, wins) VALUES ('Atlantis', 'Oceania', 3);
            DELETE FROM Team WHERE qualifyingZone = 'Asia';
            COMMIT;
            """)
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines.contains("[Oceania]") && !window.listLines.contains("[Asia]") }),
                      "a new section appears and an emptied one goes:\n\(window.listLines.joined(separator: "\n"))")
        print("sqlite3 insert + deletes shown after \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        XCTAssertEqual(window.rows(inSection: "Oceania"), ["  Atlantis · Wins: 3"])

        // What the window shows equals a fresh window on the same store.
        let fresh = try openWindow()
        XCTAssertEqual(unmarked(window.listLines), unmarked(fresh.listLines))
        XCTAssertFalse(session.context.hasChanges, "following changes nothing in the context")
    } }

    func testAWindowDeletedFromOutsideNoticesItsSelectionWentAndLocalEditsStillWork() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let storeURL = storeFolder.appendingPathComponent("worldcup.sqlite")
        let session = try XCTUnwrap(window.session)
        session.selection.select(window.object(titled: "Japan"))
        MainLoop.iterate(for: 0.1)
        try sqlite3(storeURL, "DELETE FROM Team WHERE teamName = 'Japan'")
        // (Process.waitUntilExit runs the main queue, so the merge may already have happened.)
        XCTAssertTrue(MainLoop.iterate(until: { window.shownToast == "“Japan” was deleted" }), window.shownToast ?? "no toast")
        XCTAssertNil(window.position(ofRowTitled: "Japan"))
        XCTAssertEqual(window.rows(inSection: "Asia"), ["  Australia · Wins: 0", "  Iran · Wins: 0", "> South Korea · Wins: 0"],
                       "the row that took its place is selected")

        // The window's own taps still save, and are not shown twice.
        window.activateRow(titled: "Australia")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Asia").first == "> Australia · Wins: 1" }),
                      window.listLines.joined(separator: "\n"))
        MainLoop.iterate(for: 0.3)  // the follower's next looks see the tap in the history and skip it
        XCTAssertEqual(window.rows(inSection: "Asia").filter { $0.contains("Australia") }.count, 1)
    } }
}
