import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// What the Add and Edit dialogs refuse and offer: trimmed text fields, a required field
/// highlighted, one label a key everywhere, and the section choice of sections from their
/// own entity.
final class DialogFieldTests: ViewerTestCase, @unchecked Sendable {
    @MainActor private func type(_ text: String, into widget: Widget) {
        gtk_editable_set_text(OpaquePointer(widget), text)
    }

    @MainActor private func text(of widget: Widget) -> String {
        String(cString: gtk_editable_get_text(OpaquePointer(widget)))
    }

    func testANameOfOnlySpacesIsRefusedWithTheFieldHighlightedAndWhatWasTypedKept() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        MainLoop.iterate(for: 0.1)
        let name = dialog.editors[0].widget, zone = dialog.editors[1].widget
        type("   ", into: name)
        type("Oceania", into: zone)
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(dialog.isOpen, "refused")
        XCTAssertEqual(labelText(dialog.message), "Team name must not be empty.")
        XCTAssertEqual(gtk_widget_has_css_class(name, "error"), 1, "the field is highlighted")
        XCTAssertEqual(gtk_widget_has_css_class(zone, "error"), 0)
        let focus = gtk_root_get_focus(OpaquePointer(dialog.window))
        XCTAssertTrue(focus == name || gtk_widget_is_ancestor(focus, name) != 0, "the focus is on the field to correct")
        XCTAssertEqual(text(of: name), "   ", "what was typed stays")
        XCTAssertEqual(text(of: zone), "Oceania")
        XCTAssertFalse(window.session!.context.hasChanges, "nothing is saved")
        XCTAssertFalse(window.listLines.contains("[Oceania]"))

        type("  Atlantis ", into: name)
        XCTAssertEqual(gtk_widget_has_css_class(name, "error"), 0, "typing clears the highlight")
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(window.rows(inSection: "Oceania"), ["> Atlantis · Wins: 0"], "saved trimmed")
    } }

    func testAKeyHasViewJSONsLabelInBothDialogsAndTheDetailPane() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let session = try XCTUnwrap(window.session)
        session.selection.select(window.object(titled: "Ghana"))
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(Array(window.detailLines.prefix(5)), ["Ghana", "Team name", "Ghana", "Qualifying zone", "Africa"])
        window.showAddDialog()
        var dialog = try XCTUnwrap(window.dialog)
        XCTAssertEqual(dialog.editors.map(\.title), ["Team name", "Qualifying zone"])
        XCTAssertEqual(dialog.editors.map { labelText($0.label) }, ["Team name", "Qualifying zone"])
        gtk_window_destroy(dialog.window.cast())
        window.showEditDialog()
        dialog = try XCTUnwrap(window.dialog)
        XCTAssertEqual(dialog.editors.map(\.title), ["Team name", "Qualifying zone", "Wins"], "the Edit dialog says the same")
        gtk_window_destroy(dialog.window.cast())
        XCTAssertEqual(session.view.counterAction, "Add a win", "the counter's label from view.json")
    } }

    func testAnItemGoesIntoAnEmptyListAndMovesToAnotherWithTheListChoice() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        let session = try XCTUnwrap(window.session)
        XCTAssertEqual(window.rows(inSection: "Someday"), [], "an empty list")
        window.showAddDialog()
        var dialog = try XCTUnwrap(window.dialog)
        var choice = try XCTUnwrap(dialog.sectionChoice, "sections from their own entity: a List choice")
        XCTAssertEqual(choice.title, "List")
        XCTAssertEqual(labelText(choice.label), "List")
        let titles = { (choice: SectionChoice) in
            choice.sectionIDs.map { ViewConfiguration.text(of: try! session.context.existingObject(with: $0), keyPath: "title") }
        }
        XCTAssertEqual(titles(choice), ["Groceries", "Home", "Someday", "Work"], "every list, in the list's order")
        let selectedList = try XCTUnwrap(session.selection.selectedObject?.relatedObjects(forKey: "list").first as? ManagedObject)
        XCTAssertEqual(choice.selectedID, selectedList.objectID, "starts at the selected row's list")
        let someday = try XCTUnwrap(titles(choice).firstIndex(of: "Someday"))
        gtk_drop_down_set_selected(choice.widget.opaque, guint(someday))
        type("Plant a tree", into: dialog.editors[0].widget)
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(window.rows(inSection: "Someday"), ["> [ ] Plant a tree"])

        // Edit moves it to another list; Undo brings it back.
        window.showEditDialog()
        dialog = try XCTUnwrap(window.dialog)
        choice = try XCTUnwrap(dialog.sectionChoice)
        XCTAssertEqual(choice.sectionIDs[Int(gtk_drop_down_get_selected(choice.widget.opaque))], choice.sectionIDs[someday], "shows its list")
        let home = try XCTUnwrap(titles(choice).firstIndex(of: "Home"))
        gtk_drop_down_set_selected(choice.widget.opaque, guint(home))
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(window.rows(inSection: "Someday"), [])
        XCTAssertTrue(window.rows(inSection: "Home").contains("> [ ] Plant a tree"), "\(window.rows(inSection: "Home"))")
        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Someday"), ["> [ ] Plant a tree"])
    } }
}
