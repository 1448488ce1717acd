import CGtk
import FetchedResults
import Foundation
@testable import GtkBinding
import ObjectStore
import XCTest

/// A real GtkListView, scrolled to the middle of a list, whose rows move under it: what is
/// on screen stays where it is (``ListAnchor``). Needs a display (scripts/test provides
/// Xvfb); skipped without one.
final class ListAnchorTests: XCTestCase, @unchecked Sendable {
    /// Seeded steps, each the worst case for GTK's own anchor: a row on screen gets the
    /// keyboard focus (GTK anchors the list at it), then a save moves it up or down, into
    /// another section, deletes it, or inserts a row beside it. The first row wholly on
    /// screen that the step left alone (a header, another player) stays at the same height.
    func testRowsOnScreenStayStillWhileTheFocusedRowMoves() throws { try MainActor.assumeIsolated {
        guard environmentNamesADisplay, gtk_init_check() != 0 else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        let context = try League.context(self)
        for i in 0..<300 {
            try League.insertPlayer(context, name: "P\(i)", zone: League.zones[i % 4], score: Int.random(in: 0..<50, using: &rng))
        }
        try context.save()
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let factory = ListItemFactory(rows: rows) { listItem, content in
            let text: String
            switch content {
            case .header(let name): text = "— \(name) —"
            case .object(let player): text = (try? player.value(forKey: "name") as? String) ?? ""
            }
            gtk_label_set_text(OpaquePointer(gtk_list_item_get_child(listItem)), text)
        }
        g_object_ref(UnsafeMutableRawPointer(rows.listModel))
        let listView = gtk_list_view_new(gtk_single_selection_new(rows.listModel), factory.factoryReference())!
        let anchor = ListAnchor(listView: listView, factory: factory)
        let window = presentInWindow(listView)
        defer { gtk_window_destroy(window) }
        let scrolled = try XCTUnwrap(gtk_widget_get_parent(listView))
        gtk_adjustment_set_value(gtk_scrolled_window_get_vadjustment(OpaquePointer(scrolled)), 2_000)
        MainLoop.iterate(for: 0.2)

        var checked = 0
        for step in 0..<40 {
            let shown = rowsWhollyOnScreen(of: factory, in: listView)
            let focused = try XCTUnwrap(shown.randomElement(using: &rng), "seed \(seed) step \(step): rows on screen")
            gtk_widget_grab_focus(ListItemFactory<ManagedObject>.rowWidget(of: focused.listItem))
            MainLoop.iterate(for: 0.05)
            let before = rowsWhollyOnScreen(of: factory, in: listView)
            guard let id = factory.objectID(shownBy: focused.listItem), let player = try? context.existingObject(with: id) else { continue }
            var touched: Set<String> = [focused.text]
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: try player.setValue(Int.random(in: 0..<50, using: &rng), forKey: "score")
            case 1: try player.setValue(League.zones[Int.random(in: 0..<4, using: &rng)], forKey: "zone")
            case 2: try context.delete(player)
            case 3:
                let name = "N\(step)"
                touched.insert(name)
                try League.insertPlayer(context, name: name, zone: try player.value(forKey: "zone") as? String,
                                        score: Int.random(in: 0..<50, using: &rng))
            default: try player.setValue((try player.value(forKey: "score") as? Int ?? 0) + 30, forKey: "score")
            }
            try context.save()
            MainLoop.iterate(for: 0.1)
            guard let still = before.first(where: { !touched.contains($0.text) }) else { continue }
            let after = rowsWhollyOnScreen(of: factory, in: listView).first { $0.text == still.text }
            XCTAssertEqual(after?.y, still.y, "seed \(seed) step \(step): \(still.text), the first row on screen the save left alone, moved")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 30, "seed \(seed): steps checked")
        withExtendedLifetime(anchor) {}
    } }

    /// A joining desktop's page: rows saved elsewhere spread among the ~200 rows GTK keeps,
    /// around the middle of the list, with two rows selected (a multiple selection) and a
    /// row focused. The list announces them in a few emissions, not one each (GTK binds every
    /// row it keeps again at each), and the rows between keep their widgets. Every row shows
    /// its item, the first row on screen stays still, and the selection and the focus stay.
    func testAPageSpreadAmongTheRowsGTKKeepsIsAFewEmissionsAndTheRowsStayPut() throws { try MainActor.assumeIsolated {
        guard environmentNamesADisplay, gtk_init_check() != 0 else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        let context = try League.context(self)
        for i in 0..<2_000 { try League.insertPlayer(context, name: String(format: "P%04d", i), zone: "Asia", score: 0) }
        try context.save()
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let selection = FetchedResultsSelection(rows: rows, allowsMultipleSelection: true)
        var binds = 0
        let factory = ListItemFactory(rows: rows) { listItem, content in
            binds += 1
            let text: String
            switch content {
            case .header(let name): text = "— \(name) —"
            case .object(let player): text = (try? player.value(forKey: "name") as? String) ?? ""
            }
            gtk_label_set_text(OpaquePointer(gtk_list_item_get_child(listItem)), text)
        }
        let listView = gtk_list_view_new(selection.selectionModelReference(), factory.factoryReference())!
        let anchor = ListAnchor(listView: listView, factory: factory)
        let window = presentInWindow(listView)
        defer { gtk_window_destroy(window) }
        let scrolled = try XCTUnwrap(gtk_widget_get_parent(listView))
        gtk_adjustment_set_value(gtk_scrolled_window_get_vadjustment(OpaquePointer(scrolled)), 20_000)
        MainLoop.iterate(for: 0.2)

        let shown = rowsWhollyOnScreen(of: factory, in: listView)
        XCTAssertGreaterThan(shown.count, 8, "rows on screen")
        let object = { (position: Int) in rows.indexPath(at: position).map(rows.controller.object(at:)) }
        let selected = try context.existingObject(with: XCTUnwrap(factory.objectID(shownBy: shown[2].listItem)))
        let alsoSelected = Int(gtk_list_item_get_position(shown[shown.count - 3].listItem))
        let focused = shown[shown.count / 2]
        selection.select(selected)
        gtk_selection_model_select_item(selection.selectionModel, guint(alsoSelected), 0)
        gtk_widget_grab_focus(ListItemFactory<ManagedObject>.rowWidget(of: focused.listItem))
        MainLoop.iterate(for: 0.1)
        let alsoSelectedID = try XCTUnwrap(object(alsoSelected)).objectID
        let before = rowsWhollyOnScreen(of: factory, in: listView)
        let firstName = before.first!.text, lastName = before.last!.text
        var emissions = 0
        let counter = Signal.connect(UnsafeMutableRawPointer(rows.listModel), "items-changed") { (_: guint, _: guint, _: guint) in emissions += 1 }
        defer { g_signal_handler_disconnect(UnsafeMutableRawPointer(rows.listModel), counter) }
        binds = 0

        // A page: 300 rows, named to fall between the rows GTK keeps (about 100 on each side
        // of the screen), one in two of them between rows on screen.
        let low = Int(firstName.dropFirst())! - 100, high = Int(lastName.dropFirst())! + 100
        for i in 0..<300 {
            try League.insertPlayer(context, name: String(format: "P%04d~%03d", Int.random(in: low...high, using: &rng), i), zone: "Asia", score: 0)
        }
        try context.save()
        MainLoop.iterate(for: 0.2)

        XCTAssertLessThanOrEqual(emissions, 6, "seed \(seed): emissions for 300 rows among the rows GTK keeps")
        XCTAssertLessThan(binds, 1_500, "seed \(seed): rows bound again (one emission each bound about 100 rows again)")
        XCTAssertEqual(items(of: rows.listModel) { rows.identity(ofItem: $0) }, flattened(rows.controller.snapshot, headers: true), "seed \(seed)")
        for listItem in factory.boundListItems {
            let position = Int(gtk_list_item_get_position(listItem))
            let expected = (try object(position)?.value(forKey: "name") as? String) ?? "— Asia —"
            XCTAssertEqual(String(cString: gtk_label_get_text(OpaquePointer(gtk_list_item_get_child(listItem)))), expected,
                           "seed \(seed): the row at \(position) shows its item")
        }
        let after = rowsWhollyOnScreen(of: factory, in: listView)
        XCTAssertEqual(after.first { $0.text == firstName }?.y, before.first?.y, "seed \(seed): the first row on screen stays where it was")
        XCTAssertTrue(selection.selectedObject === selected, "seed \(seed)")
        XCTAssertEqual(Set(selection.selectedObjects.map(\.objectID)), [selected.objectID, alsoSelectedID], "seed \(seed): both rows stay selected")
        let focusedRow = try XCTUnwrap(gtk_widget_get_focus_child(listView), "seed \(seed): a row has the focus")
        XCTAssertEqual(factory.boundListItems.first { ListItemFactory<ManagedObject>.rowWidget(of: $0) == focusedRow }
            .map { String(cString: gtk_label_get_text(OpaquePointer(gtk_list_item_get_child($0)))) }, focused.text,
                       "seed \(seed): the focus stays on its row")
        withExtendedLifetime(anchor) {}
    } }

    /// The rows of `listView` wholly inside its scrolled window, top first: their list items,
    /// texts and heights.
    @MainActor private func rowsWhollyOnScreen(of factory: ListItemFactory<ManagedObject>, in listView: UnsafeMutablePointer<GtkWidget>)
        -> [(listItem: OpaquePointer, text: String, y: Float)] {
        factory.boundListItems.compactMap { listItem -> (OpaquePointer, String, Float)? in
            guard let row = ListItemFactory<ManagedObject>.rowWidget(of: listItem), let place = RowPlace(of: row, in: listView), place.isWhollyShown else { return nil }
            return (listItem, String(cString: gtk_label_get_text(OpaquePointer(gtk_list_item_get_child(listItem)))), place.top)
        }.sorted { $0.2 < $1.2 }
    }
}
