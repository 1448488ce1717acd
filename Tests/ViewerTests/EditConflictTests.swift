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

    /// The stored row of `team`, read by the sqlite3 shell.
    @MainActor private func storedRow(_ team: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [storeURL.path, "SELECT teamName, wins FROM Team WHERE teamName = '\(team)'"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    /// The Edit dialog on Ghana, and then the shell sets Ghana's wins to 7 (the window shows it).
    @MainActor private func editGhanaWhileTheShellChangesIt() throws -> (ViewerWindow, ObjectDialog) {
        let window = try openWindow()
        window.session!.selection.select(window.object(titled: "Ghana"))
        window.showEditDialog()
        let dialog = try XCTUnwrap(window.dialog)
        iterateMainLoop(for: 0.1)
        try sqlite3("UPDATE Team SET wins = 7 WHERE teamName = 'Ghana'")
        XCTAssertTrue(iterateMainLoop(until: { window.rows(inSection: "Africa").first == "> Ghana · Wins: 7" }),
                      "the window follows the shell:\n\(window.listLines.joined(separator: "\n"))")
        XCTAssertEqual(dialog.editors[2].text, "0", "the dialog keeps what the person started from")
        return (window, dialog)
    }

    func testSavingOverAChangeMadeElsewhereAsksAndOverwriteSavesTheEdit() throws { try MainActor.assumeIsolated {
        let (window, dialog) = try editGhanaWhileTheShellChangesIt()
        dialog.editors[2].text = "3"
        dialog.save()
        iterateMainLoop(for: 0.1)
        XCTAssertTrue(dialog.isOpen)
        XCTAssertEqual(labelText(dialog.message), "This team was changed elsewhere while you were editing it: Wins is now 7 (it was 0 when you opened this; yours: 3). Reload to see the saved values, or Overwrite to save yours over them.")
        XCTAssertTrue(dialog.conflictButtons.isVisible)
        XCTAssertEqual(try storedRow("Ghana"), "Ghana|7", "nothing was overwritten")
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Ghana · Wins: 7")

        gtk_widget_activate(dialog.overwriteButton)
        XCTAssertTrue(iterateMainLoop(until: { !dialog.isOpen }), labelText(dialog.message))
        XCTAssertEqual(try storedRow("Ghana"), "Ghana|3")
        XCTAssertTrue(iterateMainLoop(until: { window.rows(inSection: "Africa").contains("> Ghana · Wins: 3") }),
                      window.listLines.joined(separator: "\n"))
    } }

    func testReloadShowsTheSavedValuesAndThenSavesWithoutConflict() throws { try MainActor.assumeIsolated {
        let (window, dialog) = try editGhanaWhileTheShellChangesIt()
        dialog.editors[2].text = "3"
        dialog.save()
        iterateMainLoop(for: 0.1)
        // A button's activation clicks it after showing it pressed for a moment.
        gtk_widget_activate(dialog.reloadButton)
        XCTAssertTrue(iterateMainLoop(until: { !dialog.conflictButtons.isVisible }))
        XCTAssertEqual(dialog.editors[2].text, "7", "Reload shows the stored wins")
        XCTAssertFalse(dialog.conflictButtons.isVisible)
        XCTAssertFalse(dialog.message.isVisible)
        gtk_editable_set_text(OpaquePointer(dialog.editors[0].widget), "Ghana Black Stars")
        dialog.save()
        XCTAssertTrue(iterateMainLoop(until: { !dialog.isOpen }), labelText(dialog.message))
        XCTAssertEqual(try storedRow("Ghana Black Stars"), "Ghana Black Stars|7")
        XCTAssertTrue(iterateMainLoop(until: { window.rows(inSection: "Africa").first == "> Ghana Black Stars · Wins: 7" }),
                      window.listLines.joined(separator: "\n"))
    } }

    func testEditingAnotherFieldKeepsBothChangesWithoutAsking() throws { try MainActor.assumeIsolated {
        let (window, dialog) = try editGhanaWhileTheShellChangesIt()
        gtk_editable_set_text(OpaquePointer(dialog.editors[0].widget), "Ghana Black Stars")
        dialog.save()
        XCTAssertTrue(iterateMainLoop(until: { !dialog.isOpen }), "no conflict: \(labelText(dialog.message))")
        XCTAssertEqual(try storedRow("Ghana Black Stars"), "Ghana Black Stars|7", "the shell's wins and the person's name both stay")
        XCTAssertTrue(iterateMainLoop(until: { window.rows(inSection: "Africa").first == "> Ghana Black Stars · Wins: 7" }),
                      window.listLines.joined(separator: "\n"))

        window.undo()
        XCTAssertTrue(iterateMainLoop(until: { window.rows(inSection: "Africa").first == "> Ghana · Wins: 7" }),
                      "Undo restores the name only:\n\(window.listLines.joined(separator: "\n"))")
    } }

    func testAnObjectDeletedElsewhereCannotBeSavedAndTheDialogSaysSo() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.session!.selection.select(window.object(titled: "Ghana"))
        window.showEditDialog()
        let dialog = try XCTUnwrap(window.dialog)
        try sqlite3("DELETE FROM Team WHERE teamName = 'Ghana'")
        XCTAssertTrue(iterateMainLoop(until: { window.position(ofRowTitled: "Ghana") == nil }))
        dialog.editors[2].text = "3"
        dialog.save()
        iterateMainLoop(for: 0.1)
        XCTAssertTrue(dialog.isOpen)
        XCTAssertEqual(labelText(dialog.message), "This team was deleted elsewhere while you were editing it, so your changes cannot be saved. Cancel to close.")
        XCTAssertFalse(dialog.conflictButtons.isVisible, "neither reload nor overwrite can bring it back")
        XCTAssertEqual(try storedRow("Ghana"), "", "still deleted")
    } }
}
