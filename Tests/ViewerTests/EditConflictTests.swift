import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// The Edit dialog when another process (the `sqlite3` shell) changes or deletes the object
/// while the dialog is open: the save never silently overwrites that change.
final class EditConflictTests: ViewerTestCase, @unchecked Sendable {
    private var storeURL: URL { storeFolder.appendingPathComponent("worldcup.sqlite") }

    @MainActor private func sqlite3(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try ViewerTests.sqlite3(storeURL, sql, file: file, line: line)
    }

    /// The stored row of `team` (name, zone, wins), read by the sqlite3 shell.
    @MainActor private func storedRow(_ team: String) throws -> String {
        try ViewerTests.sqlite3(storeURL, "SELECT teamName, qualifyingZone, wins FROM Team WHERE teamName = '\(team)'")
    }

    /// The Edit dialog on Ghana, and then the shell runs `change`; the window shows `row`
    /// in `section`.
    @MainActor private func editGhana(whileTheShellRuns change: String, showing row: String, in section: String) throws -> (ViewerWindow, ObjectDialog) {
        let window = try openWindow()
        window.session!.selection.select(window.object(titled: "Ghana"))
        window.showEditDialog()
        let dialog = try XCTUnwrap(window.dialog)
        MainLoop.iterate(for: 0.1)
        try sqlite3(change)
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: section).contains(row) }),
                      "the window follows the shell:\n\(window.listLines.joined(separator: "\n"))")
        XCTAssertEqual(dialog.editors.map(\.text), ["Ghana", "Africa", "0"], "the dialog keeps what the person started from")
        return (window, dialog)
    }

    /// The shell moves Ghana to Asia while the dialog is open.
    @MainActor private func editGhanaWhileTheShellMovesIt() throws -> (ViewerWindow, ObjectDialog) {
        try editGhana(whileTheShellRuns: "UPDATE Team SET qualifyingZone = 'Asia' WHERE teamName = 'Ghana'", showing: "> Ghana · Wins: 0", in: "Asia")
    }

    func testSavingOverAChangeMadeElsewhereAsksAndOverwriteSavesTheEdit() throws { try MainActor.assumeIsolated {
        let (window, dialog) = try editGhanaWhileTheShellMovesIt()
        dialog.editors[1].text = "Europe"
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(dialog.isOpen)
        XCTAssertEqual(labelText(dialog.message), "This team was changed elsewhere while you were editing it: Qualifying zone is now “Asia” (it was “Africa” when you opened this; yours: “Europe”). Reload to see the saved values, or Overwrite to save yours over them.")
        XCTAssertTrue(dialog.conflictButtons.isVisible)
        XCTAssertEqual(try storedRow("Ghana"), "Ghana|Asia|0", "nothing was overwritten")

        gtk_widget_activate(dialog.overwriteButton)
        XCTAssertTrue(MainLoop.iterate(until: { !dialog.isOpen }), labelText(dialog.message))
        XCTAssertEqual(try storedRow("Ghana"), "Ghana|Europe|0")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Europe").contains("> Ghana · Wins: 0") }),
                      window.listLines.joined(separator: "\n"))
    } }

    func testReloadShowsTheSavedValuesAndThenSavesWithoutConflict() throws { try MainActor.assumeIsolated {
        let (window, dialog) = try editGhanaWhileTheShellMovesIt()
        dialog.editors[1].text = "Europe"
        dialog.save()
        MainLoop.iterate(for: 0.1)
        // A button's activation clicks it after showing it pressed for a moment.
        gtk_widget_activate(dialog.reloadButton)
        XCTAssertTrue(MainLoop.iterate(until: { !dialog.conflictButtons.isVisible }))
        XCTAssertEqual(dialog.editors[1].text, "Asia", "Reload shows the stored zone")
        XCTAssertFalse(dialog.conflictButtons.isVisible)
        XCTAssertFalse(dialog.message.isVisible)
        dialog.editors[0].text = "Ghana Black Stars"
        dialog.save()
        XCTAssertTrue(MainLoop.iterate(until: { !dialog.isOpen }), labelText(dialog.message))
        XCTAssertEqual(try storedRow("Ghana Black Stars"), "Ghana Black Stars|Asia|0")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Asia").contains("> Ghana Black Stars · Wins: 0") }),
                      window.listLines.joined(separator: "\n"))
    } }

    func testEditingAnotherFieldKeepsBothChangesWithoutAsking() throws { try MainActor.assumeIsolated {
        let (window, dialog) = try editGhana(whileTheShellRuns: "UPDATE Team SET wins = 7 WHERE teamName = 'Ghana'", showing: "> Ghana · Wins: 7", in: "Africa")
        dialog.editors[0].text = "Ghana Black Stars"
        dialog.save()
        XCTAssertTrue(MainLoop.iterate(until: { !dialog.isOpen }), "no conflict: \(labelText(dialog.message))")
        XCTAssertEqual(try storedRow("Ghana Black Stars"), "Ghana Black Stars|Africa|7", "the shell's wins and the person's name both stay")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "> Ghana Black Stars · Wins: 7" }),
                      window.listLines.joined(separator: "\n"))

        window.undo()
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "> Ghana · Wins: 7" }),
                      "Undo restores the name only:\n\(window.listLines.joined(separator: "\n"))")
    } }

    /// Wins are a counter: the dialog's change of them adds to what another process added
    /// meanwhile, without a conflict, and its Undo takes back only what it added.
    func testChangingACounterAddsToWhatWasAddedElsewhere() throws { try MainActor.assumeIsolated {
        let (window, dialog) = try editGhana(whileTheShellRuns: "UPDATE Team SET wins = wins + 7 WHERE teamName = 'Ghana'", showing: "> Ghana · Wins: 7", in: "Africa")
        dialog.editors[2].text = "3"
        dialog.save()
        XCTAssertTrue(MainLoop.iterate(until: { !dialog.isOpen }), "no conflict: \(labelText(dialog.message))")
        XCTAssertEqual(try storedRow("Ghana"), "Ghana|Africa|10", "the 3 the person added and the 7 added elsewhere")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "> Ghana · Wins: 10" }),
                      window.listLines.joined(separator: "\n"))
        try sqlite3("UPDATE Team SET wins = wins + 1 WHERE teamName = 'Ghana'")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Africa").first == "> Ghana · Wins: 11" }))
        window.undo()
        XCTAssertTrue(MainLoop.iterate(until: { (try? self.storedRow("Ghana")) == "Ghana|Africa|8" }),
                      "Undo takes back the 3 only: \((try? storedRow("Ghana")) ?? "")")
    } }

    func testAnObjectDeletedElsewhereCannotBeSavedAndTheDialogSaysSo() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.session!.selection.select(window.object(titled: "Ghana"))
        window.showEditDialog()
        let dialog = try XCTUnwrap(window.dialog)
        try sqlite3("DELETE FROM Team WHERE teamName = 'Ghana'")
        XCTAssertTrue(MainLoop.iterate(until: { window.position(ofRowTitled: "Ghana") == nil }))
        dialog.editors[2].text = "3"
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(dialog.isOpen)
        XCTAssertEqual(labelText(dialog.message), "This team was deleted elsewhere while you were editing it, so your changes cannot be saved. Cancel to close.")
        XCTAssertFalse(dialog.conflictButtons.isVisible, "neither reload nor overwrite can bring it back")
        XCTAssertEqual(try storedRow("Ghana"), "", "still deleted")
    } }
}
