import CFetchedResultsModel
import CGtk
import FetchedResults
import Foundation
@testable import GtkBinding
import ObjectStore
import XCTest

/// The list model behind a real GtkListView in a window: GTK asks only for the rows it shows,
/// and follows changes without a critical (the tests run with `G_DEBUG=fatal-criticals`).
/// Needs a display (scripts/test provides Xvfb); skipped without one.
final class GtkListViewTests: XCTestCase, @unchecked Sendable {
    /// Labels the rows: a header's name, an object's ID.
    private static let bind: @convention(c) (OpaquePointer?, OpaquePointer?, gpointer?) -> Void = { _, listItem, data in
        // GTK calls on the main thread; the pointers stay there.
        nonisolated(unsafe) let listItem = listItem, data = data
        MainActor.assumeIsolated {
            let rows = Unmanaged<FetchedResultsListModel<ManagedObject>>.fromOpaque(data!).takeUnretainedValue()
            let text: String
            switch gtk_list_item_get_item(listItem).flatMap({ rows.identity(ofItem: $0) }) {
            case .header(let name): text = "— \(name) —"
            case .object(let id): text = id.description
            case nil: text = ""
            }
            gtk_label_set_text(OpaquePointer(gtk_list_item_get_child(listItem)), text)
        }
    }

    private static let setup: @convention(c) (OpaquePointer?, OpaquePointer?, gpointer?) -> Void = { _, listItem, _ in
        gtk_list_item_set_child(listItem, gtk_label_new(nil))
    }

    func testAListViewMakesOnlyTheRowsItShowsAndFollowsChanges() throws { try MainActor.assumeIsolated {
        guard environmentNamesADisplay, gtk_init_check() != 0 else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let context = try League.context(self)
        var players: [ManagedObject] = []
        for i in 0..<5_000 {
            players.append(try League.insertPlayer(context, name: "P\(i)", zone: League.zones[i % 4], score: i % 50))
        }
        try context.save()
        var rows: FetchedResultsListModel? = try FetchedResultsListModel(controller: League.byZone(context))
        let modelPointer = UnsafeMutablePointer<gpointer?>.allocate(capacity: 1)
        defer { modelPointer.deallocate() }
        modelPointer.pointee = UnsafeMutableRawPointer(rows!.listModel)
        g_object_add_weak_pointer(fr_cast_object(modelPointer.pointee), modelPointer)

        let factory = gtk_signal_list_item_factory_new()
        connect(factory, "setup", Self.setup, nil)
        connect(factory, "bind", Self.bind, Unmanaged.passUnretained(rows!).toOpaque())
        g_object_ref(UnsafeMutableRawPointer(rows!.listModel))
        let selection = gtk_single_selection_new(rows!.listModel)
        let listView = gtk_list_view_new(selection, factory)
        let scrolled = gtk_scrolled_window_new()
        gtk_scrolled_window_set_child(OpaquePointer(scrolled), listView)
        let window = gtk_window_new()
        let asWindow = UnsafeMutableRawPointer(window!).assumingMemoryBound(to: GtkWindow.self)
        gtk_window_set_default_size(asWindow, 320, 400)
        gtk_window_set_child(asWindow, scrolled)
        gtk_window_present(asWindow)
        iterateMainLoop()

        // GTK 4.8 keeps about 200 row widgets around the visible rows, whatever the list's
        // length (about 400 items made here for 1,000 rows as for 20,000).
        let shown = rows!.flattened.itemsMade
        XCTAssertGreaterThan(shown, 5, "the list view shows rows")
        XCTAssertLessThan(shown, 1_000, "the list view asked for rows far from the visible ones")

        // Moves within and across sections, a new section at the top, deletes, updates.
        for (i, player) in players.prefix(40).enumerated() {
            try player.setValue(i % 3 == 0 ? "Africa" : League.zones[(i + 1) % 4], forKey: "zone")
            try player.setValue((i * 7) % 60, forKey: "score")
            if i % 5 == 0 { try context.delete(player) }
            if i % 4 == 0 { try context.save(); iterateMainLoop() }
        }
        try context.save()
        iterateMainLoop()
        XCTAssertEqual(Int(g_list_model_get_n_items(rows!.listModel)), rows!.controller.numberOfObjects + rows!.controller.sections!.count)
        XCTAssertLessThan(rows!.flattened.itemsMade, shown + 1_000, "changes made the list view ask for every row")
        let firstSection = rows!.controller.snapshot[0]
        let labels = Set(texts(under: listView))
        XCTAssertTrue(labels.isSuperset(of: ["— \(firstSection.name) —", firstSection.objectIDs[0].description]),
                      "the list view shows the first header and object after the changes: \(labels.sorted().prefix(5))")

        // A new order reloads the list: GTK makes the items it shows, not one for every row
        // (one emission that removed and added them all made it look for its anchor, its
        // focus and its selected item among every added item).
        let beforeReload = rows!.flattened.itemsMade
        rows!.controller.reloadThreshold = 1
        var request = rows!.controller.fetchRequest
        request.sortDescriptors = [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "name", ascending: false)]
        let reloaded = expectation(description: "reloaded")
        rows!.controller.setFetchRequest(request) { error in
            XCTAssertNil(error)
            reloaded.fulfill()
        }
        wait(for: [reloaded], timeout: 10)
        iterateMainLoop()
        XCTAssertLessThan(rows!.flattened.itemsMade - beforeReload, 1_000, "items made to show the reloaded list of \(rows!.count)")
        XCTAssertEqual(Int(g_list_model_get_n_items(rows!.listModel)), rows!.controller.numberOfObjects + rows!.controller.sections!.count)

        gtk_window_destroy(asWindow)
        iterateMainLoop()
        rows = nil
        XCTAssertNil(modelPointer.pointee, "the window, its list view and the list model are all finalized")
    } }

    /// An import's chunk, rows spread through a long list: a few emissions (changes among
    /// the rows GTK shows one by one, the others joined with the rows between them), not one
    /// for each new row; the list view follows, its selection kept.
    func testAChunkSpreadThroughALongListIsAFewEmissions() throws { try MainActor.assumeIsolated {
        guard environmentNamesADisplay, gtk_init_check() != 0 else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        let context = try League.context(self)
        for i in 0..<4_000 { try League.insertPlayer(context, name: "P\(i)", zone: League.zones[i % 4], score: i % 50) }
        try context.save()
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let selection = FetchedResultsSelection(rows: rows)
        let factory = gtk_signal_list_item_factory_new()
        connect(factory, "setup", Self.setup, nil)
        connect(factory, "bind", Self.bind, Unmanaged.passUnretained(rows).toOpaque())
        let listView = gtk_list_view_new(selection.selectionModelReference(), factory)
        let scrolled = gtk_scrolled_window_new()
        gtk_scrolled_window_set_child(OpaquePointer(scrolled), listView)
        let window = UnsafeMutableRawPointer(gtk_window_new()!).assumingMemoryBound(to: GtkWindow.self)
        defer { gtk_window_destroy(window) }
        gtk_window_set_default_size(window, 320, 400)
        gtk_window_set_child(window, scrolled)
        gtk_window_present(window)
        iterateMainLoop()
        let selected = rows.controller.object(at: IndexPath(item: 5, section: 0))
        selection.select(selected)
        iterateMainLoop()
        var emissions = 0
        let counter = Signal.connect(UnsafeMutableRawPointer(rows.listModel), "items-changed") { (_: guint, _: guint, _: guint) in emissions += 1 }
        defer { g_signal_handler_disconnect(UnsafeMutableRawPointer(rows.listModel), counter) }
        let made = rows.flattened.itemsMade

        let chunk = 500
        for i in 0..<chunk {
            try League.insertPlayer(context, name: "N\(i)", zone: League.zones[Int.random(in: 0..<4, using: &rng)], score: Int.random(in: 0..<50, using: &rng))
        }
        try context.save()
        iterateMainLoop()
        XCTAssertLessThan(emissions, chunk / 5, "seed \(seed): emissions for \(chunk) new rows")
        XCTAssertLessThan(rows.flattened.itemsMade - made, 1_000, "seed \(seed): items made to follow the chunk")
        XCTAssertEqual(items(of: rows.listModel) { rows.identity(ofItem: $0) }, flattened(rows.controller.snapshot, headers: true), "seed \(seed)")
        XCTAssertTrue(selection.selectedObject === selected, "seed \(seed)")
        XCTAssertEqual(selection.selectedPosition, rows.controller.indexPath(for: selected).map(rows.position(for:)), "seed \(seed)")
        let first = rows.controller.snapshot[0]
        XCTAssertTrue(Set(texts(under: listView)).isSuperset(of: ["— \(first.name) —", first.objectIDs[0].description]),
                      "seed \(seed): the list view shows the first header and object after the chunk")
    } }

    @MainActor private func connect(_ instance: OpaquePointer?, _ signal: String,
                         _ handler: @convention(c) (OpaquePointer?, OpaquePointer?, gpointer?) -> Void, _ data: gpointer?) {
        g_signal_connect_data(UnsafeMutableRawPointer(instance), signal, unsafeBitCast(handler, to: GCallback.self), data, nil,
                              GConnectFlags(rawValue: 0))
    }

    /// The texts of the labels in `widget`'s tree.
    @MainActor private func texts(under widget: UnsafeMutablePointer<GtkWidget>?) -> [String] {
        var texts: [String] = []
        if let widget, g_type_check_instance_is_a(UnsafeMutableRawPointer(widget).assumingMemoryBound(to: GTypeInstance.self),
                                                  gtk_label_get_type()) != 0 {
            texts.append(String(cString: gtk_label_get_text(OpaquePointer(widget))))
        }
        var child = gtk_widget_get_first_child(widget)
        while let current = child {
            texts += self.texts(under: current)
            child = gtk_widget_get_next_sibling(current)
        }
        return texts
    }
}
