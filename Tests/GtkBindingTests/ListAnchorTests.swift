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
