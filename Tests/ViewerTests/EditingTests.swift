import CGtk
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// The Add and Edit dialogs, Delete and Undo.
final class EditingTests: ViewerTestCase {
    private func type(_ text: String, into editor: FieldEditor) {
        gtk_editable_set_text(OpaquePointer(editor.widget), text)
    }

    func testAddingATeamInANewZoneMakesANewSectionAndSelectsIt() throws {
        let window = try openWindow()
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        iterateMainLoop(for: 0.1)
        XCTAssertEqual(String(cString: gtk_window_get_title(dialog.window.cast())), "Add Team")
        XCTAssertEqual(dialog.editors.map(\.title), ["Team Name", "Qualifying Zone"])
        type("Atlantis", into: dialog.editors[0])
        type("Oceania", into: dialog.editors[1])
        dialog.save()
        iterateMainLoop(for: 0.1)
        XCTAssertFalse(dialog.isOpen, "the dialog closes once saved")
        XCTAssertEqual(window.listLines.filter { $0.hasPrefix("[") },
                       ["[Africa]", "[Asia]", "[Europe]", "[North/Central America]", "[Oceania]", "[South America]"])
        XCTAssertEqual(window.rows(inSection: "Oceania"), ["> Atlantis · Wins: 0"])

        window.undo()
        iterateMainLoop(for: 0.1)
        XCTAssertFalse(window.listLines.contains("[Oceania]"), "Undo removes the team and its section")
    }

    func testARefusedSaveKeepsTheDialogOpenWithTheMessageAndWhatWasTyped() throws {
        let window = try openWindow()
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        type("Oceania", into: dialog.editors[1])
        dialog.save()
        iterateMainLoop(for: 0.1)
        XCTAssertTrue(dialog.isOpen)
        XCTAssertTrue(dialog.message.isVisible)
        XCTAssertEqual(labelText(dialog.message), "Team Name must not be empty.")
        XCTAssertEqual(String(cString: gtk_editable_get_text(OpaquePointer(dialog.editors[1].widget))), "Oceania")
        XCTAssertEqual(window.listLines.count, 37, "nothing was added")
        XCTAssertFalse(window.session!.context.hasChanges)

        type("Atlantis", into: dialog.editors[0])
        dialog.save()
        iterateMainLoop(for: 0.1)
        XCTAssertFalse(dialog.isOpen, "fixed, it saves")
    }

    func testEditingRenamesTheSelectedTeamAndUndoRestoresIt() throws {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        session.selection.select(window.object(titled: "Ghana"))
        window.showEditDialog()
        let dialog = try XCTUnwrap(window.dialog)
        XCTAssertEqual(dialog.editors.map(\.title), ["Name", "Zone", "Wins"])
        XCTAssertEqual(String(cString: gtk_editable_get_text(OpaquePointer(dialog.editors[0].widget))), "Ghana")
        type("Black Stars", into: dialog.editors[0])
        gtk_spin_button_set_value(dialog.editors[2].widget.opaque, 4)
        dialog.save()
        iterateMainLoop(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Black Stars · Wins: 4")
        XCTAssertEqual(window.detailLines.first, "Black Stars")

        window.undo()
        iterateMainLoop(for: 0.1)
        XCTAssertTrue(window.rows(inSection: "Africa").contains("> Ghana · Wins: 0"), "\(window.rows(inSection: "Africa"))")
    }

    func testAToDoItemNeedsANameAndIsAddedToTheSelectedList() throws {
        let window = try openWindow("todo")
        let session = try XCTUnwrap(window.session)
        let selected = try XCTUnwrap(session.selection.selectedObject)
        let list = try XCTUnwrap(selected.relatedObjects(forKey: "list").first as? ManagedObject)
        let title = ViewConfiguration.text(of: list, keyPath: "title")
        let before = window.rows(inSection: title).count
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        dialog.save()
        XCTAssertEqual(labelText(dialog.message), "Name must not be empty.")
        type("Water the plants", into: dialog.editors[0])
        dialog.save()
        iterateMainLoop(for: 0.1)
        XCTAssertEqual(window.rows(inSection: title).count, before + 1)
        XCTAssertTrue(window.rows(inSection: title).contains("> [ ] Water the plants"), "\(window.rows(inSection: title))")
    }

    func testDeletingAndUndoingAFailedBankBringsBackItsDetails() throws {
        let window = try openWindow("failedbanks")
        let first = try XCTUnwrap(window.listLines.first)
        let detailBefore = window.detailLines
        window.deleteSelection()
        iterateMainLoop(for: 0.1)
        XCTAssertEqual(window.listLines.count, 533)
        XCTAssertTrue(window.listLines[0].hasPrefix(">"), "the next bank is selected")
        XCTAssertTrue(window.detailLines[0].hasSuffix("was deleted."), "\(window.detailLines)")

        window.undo()
        iterateMainLoop(for: 0.1)
        XCTAssertEqual(window.listLines.count, 534)
        XCTAssertFalse(window.banner.isVisible, labelText(window.banner))
        XCTAssertEqual(window.listLines[0], first, "back in its place, selected")
        XCTAssertEqual(window.detailLines, detailBefore, "with its details (deleted with it, inserted again)")
    }

    func testUndoTakesBackATap() throws {
        let window = try openWindow()
        window.activateRow(titled: "Nigeria")
        XCTAssertEqual(window.rows(inSection: "Africa").first, "> Nigeria · Wins: 1")
        window.undo()
        iterateMainLoop(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Africa").last, "> Nigeria · Wins: 0")
        XCTAssertEqual(gtk_widget_get_sensitive(window.undoButton), 0, "nothing left to undo")
    }
}
