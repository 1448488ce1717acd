import CAdw
import CGtk
import GtkBinding
import Datasets
import Foundation
import ObjectStore
@testable import Viewer
import XCTest

/// Lists you can manage (To-Do, whose sections are List objects): New List… in the primary
/// menu, Rename… and Delete in each header's menu (an empty list's too) and in the primary
/// menu for the selected item's list; a list deleted takes its items, and one Undo brings
/// them all back. World Cup, whose zones are no objects, offers none of it.
final class SectionManagementTests: ViewerTestCase, @unchecked Sendable {
    @MainActor private func type(_ text: String, into widget: Widget) {
        gtk_editable_set_text(OpaquePointer(widget), text)
    }

    @MainActor private func headers(_ window: ViewerWindow) -> [String] {
        window.listLines.filter { $0.hasPrefix("[") }
    }

    /// The list's lines without the selection's marker.
    @MainActor private func unmarked(_ lines: [String]) -> [String] {
        lines.map { $0.hasPrefix("[") ? $0 : String($0.dropFirst(2)) }
    }

    @MainActor private func isEnabled(_ dialog: SectionTitleDialog, _ response: String) -> Bool {
        adw_message_dialog_get_response_enabled(dialog.window.cast(), response) != 0
    }

    /// The header's menu button of the list titled `title`, as GTK shows it now.
    @MainActor private func menuButton(ofHeader title: String, in window: ViewerWindow) throws -> Widget {
        let header = try XCTUnwrap(window.factory?.headerWidget(named: title), "the header of \(title) is shown")
        return try XCTUnwrap(header.descendants.first { gtk_widget_has_css_class($0, "section-menu") != 0 })
    }

    /// The actions and targets of a menu model's items.
    @MainActor private func items(of button: Widget) throws -> [String] {
        let model = try XCTUnwrap(gtk_menu_button_get_menu_model(button.opaque))
        return (0..<g_menu_model_get_n_items(model)).map { index in
            let action = g_menu_model_get_item_attribute_value(model, index, "action", nil).map { variant in
                defer { g_variant_unref(variant) }
                return String(cString: g_variant_get_string(variant, nil))
            } ?? ""
            let target = g_menu_model_get_item_attribute_value(model, index, "target", nil).map { variant in
                defer { g_variant_unref(variant) }
                return String(g_variant_get_int64(variant))
            } ?? ""
            return "\(action)(\(target))"
        }
    }

    func testANewListIsAddedEmptyRefusingATitleThereIsAndUndoRemovesIt() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        XCTAssertEqual(headers(window), ["[Groceries]", "[Home]", "[Someday] (nothing here yet)", "[Work]"])
        gtk_widget_activate_action_variant(window.listView, "win.new-section", nil)
        let dialog = try XCTUnwrap(window.sectionTitleDialog)
        XCTAssertFalse(isEnabled(dialog, "add"), "nothing typed yet")
        type("  home ", into: dialog.entry)
        XCTAssertFalse(isEnabled(dialog, "add"))
        XCTAssertEqual(labelText(dialog.message), "List “Home” is there already: choose another title.")
        XCTAssertTrue(dialog.message.isVisible)
        type("Garden", into: dialog.entry)
        XCTAssertTrue(isEnabled(dialog, "add"))
        XCTAssertFalse(dialog.message.isVisible)
        adw_message_dialog_response(dialog.window.cast(), "add")
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(headers(window), ["[Garden] (nothing here yet)", "[Groceries]", "[Home]", "[Someday] (nothing here yet)", "[Work]"])
        XCTAssertTrue(gtk_widget_get_sensitive(window.undoButton) != 0)

        window.undo()
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(headers(window), ["[Groceries]", "[Home]", "[Someday] (nothing here yet)", "[Work]"])
        let lists = try window.session!.context.count(for: FetchRequest<ManagedObject>(entityName: "List"))
        XCTAssertEqual(lists, 4, "Undo removed the list from the store")
    } }

    /// Each header has a menu naming its list (for screen readers too) whose items act on
    /// that list: Rename… renames it, its items stay in it, and Undo gives the old title back.
    func testTheHeadersMenuRenamesItsListAndUndoGivesTheTitleBack() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        let groceries = unmarked(window.rows(inSection: "Groceries"))
        let button = try menuButton(ofHeader: "Groceries", in: window)
        let key = try XCTUnwrap(window.session?.sectionObjectID(named: "Groceries")?.rowKey)
        XCTAssertEqual(try items(of: button), ["win.rename-section(\(key))", "win.delete-section(\(key))"])
        XCTAssertEqual(gtk_widget_get_tooltip_text(button).map { String(cString: $0) }, "List Menu")
        let someday = try XCTUnwrap(window.session?.sectionObjectID(named: "Someday")?.rowKey)
        XCTAssertEqual(try items(of: try menuButton(ofHeader: "Someday", in: window)).first, "win.rename-section(\(someday))", "an empty list has one too")

        gtk_widget_activate_action_variant(button, "win.rename-section", g_variant_new_int64(gint64(key)))
        let dialog = try XCTUnwrap(window.sectionTitleDialog)
        XCTAssertEqual(String(cString: gtk_editable_get_text(OpaquePointer(dialog.entry))), "Groceries")
        XCTAssertFalse(isEnabled(dialog, "rename"), "the title unchanged")
        type("WORK", into: dialog.entry)
        XCTAssertFalse(isEnabled(dialog, "rename"))
        type("Shopping", into: dialog.entry)
        adw_message_dialog_response(dialog.window.cast(), "rename")
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(headers(window), ["[Home]", "[Shopping]", "[Someday] (nothing here yet)", "[Work]"])
        XCTAssertEqual(unmarked(window.rows(inSection: "Shopping")), groceries)

        window.undo()
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(headers(window), ["[Groceries]", "[Home]", "[Someday] (nothing here yet)", "[Work]"])
        XCTAssertEqual(unmarked(window.rows(inSection: "Groceries")), groceries)
    } }

    /// Delete List (the primary menu's, on the selected item's list) deletes the list with
    /// its items, says so in one toast with Undo, and Undo brings the list back with every
    /// item as it was (ticked or not).
    func testDeletingAListTakesItsItemsAndOneUndoBringsThemAllBack() throws { try MainActor.assumeIsolated {
        let window = try openWindow("todo")
        let session = try XCTUnwrap(window.session)
        let before = unmarked(window.listLines)
        let home = window.rows(inSection: "Home")
        XCTAssertGreaterThan(home.count, 1)
        let item = try XCTUnwrap(window.object(titled: "Clean the gutters"), "\(home)")
        session.selection.select(item)
        window.updateButtons()
        XCTAssertTrue(Action.isEnabled(window.sectionActions.deleteSelected))
        gtk_widget_activate_action_variant(window.listView, "win.delete-selected-section", nil)
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(headers(window), ["[Groceries]", "[Someday] (nothing here yet)", "[Work]"])
        XCTAssertEqual(window.shownToast, "List “Home” deleted with its \(home.count) items")
        let items = try session.context.count(for: FetchRequest<ManagedObject>(entityName: "Item", predicate: try FetchPredicate(format: "list == nil")))
        XCTAssertEqual(items, 0, "no item is left without its list")

        window.undo()
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(unmarked(window.listLines), before, "the list and its items, ticked as they were")

        // An empty list, from its header's menu.
        let someday = try XCTUnwrap(session.sectionObjectID(named: "Someday")?.rowKey)
        gtk_widget_activate_action_variant(try menuButton(ofHeader: "Someday", in: window), "win.delete-section", g_variant_new_int64(gint64(someday)))
        MainLoop.iterate(for: 0.2)
        XCTAssertEqual(headers(window), ["[Groceries]", "[Home]", "[Work]"])
        XCTAssertEqual(window.shownToast, "List “Someday” deleted")
    } }

    /// World Cup's zones are no objects: no header menus, no list items in the primary menu.
    func testSectionsThatAreNoObjectsHaveNoMenus() throws { try MainActor.assumeIsolated {
        let window = try openWindow()
        let header = try XCTUnwrap(window.factory?.headerWidget(named: "Africa"))
        XCTAssertFalse(header.descendants.contains { gtk_widget_has_css_class($0, "section-menu") != 0 })
        XCTAssertNil(window.sectionWord)
    } }
}
