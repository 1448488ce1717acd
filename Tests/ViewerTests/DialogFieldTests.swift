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
        let name = dialog.editors[0].widget, zone = dialog.editors[1]
        type("   ", into: name)
        zone.text = "Oceania"  // a new zone
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(dialog.isOpen, "refused")
        XCTAssertEqual(labelText(dialog.message), "Team name must not be empty.")
        XCTAssertEqual(gtk_widget_has_css_class(name, "error"), 1, "the field is highlighted")
        XCTAssertEqual(gtk_widget_has_css_class(zone.widget, "error"), 0)
        let focus = gtk_root_get_focus(OpaquePointer(dialog.window))
        XCTAssertTrue(focus == name || gtk_widget_is_ancestor(focus, name) != 0, "the focus is on the field to correct")
        XCTAssertEqual(text(of: name), "   ", "what was typed stays")
        XCTAssertEqual(zone.text, "Oceania")
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
        gtk_drop_down_set_selected(choice.dropDown.opaque, guint(someday))
        type("Plant a tree", into: dialog.editors[0].widget)
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(window.rows(inSection: "Someday"), ["> [ ] Plant a tree"])

        // Edit moves it to another list; Undo brings it back.
        window.showEditDialog()
        dialog = try XCTUnwrap(window.dialog)
        choice = try XCTUnwrap(dialog.sectionChoice)
        XCTAssertEqual(choice.sectionIDs[Int(gtk_drop_down_get_selected(choice.dropDown.opaque))], choice.sectionIDs[someday], "shows its list")
        let home = try XCTUnwrap(titles(choice).firstIndex(of: "Home"))
        gtk_drop_down_set_selected(choice.dropDown.opaque, guint(home))
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(window.rows(inSection: "Someday"), [])
        XCTAssertTrue(window.rows(inSection: "Home").contains("> [ ] Plant a tree"), "\(window.rows(inSection: "Home"))")
        window.undo()
        MainLoop.iterate(for: 0.1)
        XCTAssertEqual(window.rows(inSection: "Someday"), ["> [ ] Plant a tree"])
    } }
    /// World Cup's zone is a choice of the zones there are (all of them, not only those a
    /// search shows), and "New Qualifying zone…" apart: a zone typed as a new one that is
    /// there already but for case ("africa") is refused, instead of making a seventh section.
    func testTheZoneIsChosenAmongTheZonesOrGivenAsANewOne() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "cro")
        XCTAssertTrue(MainLoop.iterate(until: { window.listLines == ["[Europe]", "> Croatia · Wins: 0"] }), window.listLines.joined(separator: "\n"))
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        let zone = dialog.editors[1]
        let choice = try XCTUnwrap(zone.choice, "the zone field offers the zones")
        XCTAssertEqual(zone.text, "Europe", "it starts at the selected team's zone")
        XCTAssertEqual(strings(of: choice.dropDown),
                       ["Africa", "Asia", "Europe", "North/Central America", "South America", "New Qualifying zone…"])
        XCTAssertFalse(choice.entry.isVisible, "no entry until a new zone is asked for")
        type("Atlantis", into: dialog.editors[0].widget)
        gtk_drop_down_set_selected(choice.dropDown.opaque, 5)
        XCTAssertTrue(choice.entry.isVisible, "New shows the entry of the new zone")
        type("  africa ", into: choice.entry)
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(dialog.isOpen, "refused")
        XCTAssertEqual(labelText(dialog.message), "Qualifying zone “Africa” is there already: choose it in the list instead of typing a new one.")
        gtk_drop_down_set_selected(choice.dropDown.opaque, 1)
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertFalse(dialog.isOpen)
        gtk_editable_set_text(OpaquePointer(window.searchEntry), "")
        XCTAssertTrue(MainLoop.iterate(until: { window.rows(inSection: "Asia").contains { $0.hasSuffix("Atlantis · Wins: 0") } }), window.listLines.joined(separator: "\n"))
        XCTAssertFalse(window.listLines.contains("[africa]"))
    } }

    /// To-Do's list choice ends with "New List…": the item goes into a list made as it is
    /// saved; a new title that is a list's but for case is refused.
    func testNewListMakesTheListTheItemGoesInto() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        window.showAddDialog()
        let dialog = try XCTUnwrap(window.dialog)
        let choice = try XCTUnwrap(dialog.sectionChoice)
        XCTAssertEqual(strings(of: choice.dropDown), ["Groceries", "Home", "Someday", "Work", "New List…"])
        type("Dig a pond", into: dialog.editors[0].widget)
        gtk_drop_down_set_selected(choice.dropDown.opaque, 4)
        type("HOME", into: choice.newTitleEntry)
        dialog.save()
        MainLoop.iterate(for: 0.1)
        XCTAssertTrue(dialog.isOpen, "refused")
        XCTAssertEqual(labelText(dialog.message), "List “Home” is there already: choose it in the list instead of typing a new one.")
        type("Garden", into: choice.newTitleEntry)
        dialog.save()
        MainLoop.iterate(for: 0.2)
        XCTAssertFalse(dialog.isOpen)
        XCTAssertEqual(window.rows(inSection: "Garden"), ["> [ ] Dig a pond"], window.listLines.joined(separator: "\n"))
        XCTAssertEqual(window.listLines.filter { $0.hasPrefix("[") }, ["[Garden]", "[Groceries]", "[Home]", "[Someday] (nothing here yet)", "[Work]"])
    } }

    /// The primary menu's "List Shared With Everyone" shows and sets whether the selected
    /// item's list is shared (to-do: lists have an owner, see Ownership); Undo sets it back.
    /// World Cup, whose zones are no objects, has nothing to share.
    func testTheSelectedItemsListIsSharedOrNotFromTheMenuWithUndo() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        let session = try XCTUnwrap(window.session)
        let action = try XCTUnwrap(window.sectionSharingAction)
        let isOn = { () -> Bool in
            let state = g_action_get_state(action)!
            defer { g_variant_unref(state) }
            return g_variant_get_boolean(state) != 0
        }
        let groceriesShared = { () -> Value? in
            let list = try? session.context.fetch(FetchRequest<ManagedObject>(entityName: "List", predicate: try FetchPredicate(format: "title == 'Groceries'"))).first
            return list?.attributeValue(forKey: "shared")
        }
        session.selection.select(window.object(titled: "Milk"))
        MainLoop.iterate(for: 0.2)
        XCTAssertTrue(Action.isEnabled(action))
        XCTAssertTrue(isOn(), "Groceries is shared in the seed")
        gtk_widget_activate_action_variant(window.window, "win.share-section", nil)
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(groceriesShared(), .bool(false))
        XCTAssertFalse(isOn())
        gtk_widget_activate_action_variant(window.window, "win.undo", nil)
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(groceriesShared(), .bool(true), "Undo shares it again")
        XCTAssertTrue(isOn())

        let worldCup = try openWindow()
        XCTAssertFalse(Action.isEnabled(try XCTUnwrap(worldCup.sectionSharingAction)), "zones are no objects to share")
    } }

    /// The strings a drop-down offers.
    @MainActor private func strings(of dropDown: Widget) -> [String] {
        let model = gtk_drop_down_get_model(dropDown.opaque)!
        return (0..<g_list_model_get_n_items(model)).map { String(cString: gtk_string_list_get_string(model, $0)) }
    }
}
