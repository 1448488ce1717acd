import CGtk
import FetchedResults
import Foundation
import GtkBinding
import ObjectStore
import XCTest
@_exported import FetchedResultsTestSupport
@_exported import TestSupport

/// What the reload tests choose from: orders of players in zone sections, and searches
/// (nil: none) that keep many, a few or none of players named P0…P2999 scored 0..<50.
enum Reloads {
    static let sorts = [League.playersByZone().sortDescriptors,
                        [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "name", ascending: false)],
                        [FetchSortDescriptor(key: "zone", ascending: false), FetchSortDescriptor(key: "score"), FetchSortDescriptor(key: "name")]]
    static let searches: [String?] = [nil, nil, "score > 40", "name BEGINSWITH 'P1'", "score < 0", "score < 25"]

    /// A controller of `count` players saved in `context` (random scores), in zone sections,
    /// that reloads for every new request (`reloadThreshold` 1).
    @MainActor static func controller(ofPlayers count: Int, in context: ObjectContext,
                                      using rng: inout SeededGenerator) throws -> FetchedResultsController<ManagedObject> {
        for i in 0..<count {
            try League.insertPlayer(context, name: "P\(i)", zone: League.zones[i % League.zones.count], score: Int.random(in: 0..<50, using: &rng))
        }
        try context.save()
        let controller = League.byZone(context)
        controller.reloadThreshold = 1
        return controller
    }
}

/// The items a list model of `sections` must show.
@MainActor func flattened(_ sections: [SectionSnapshot], headers: Bool) -> [ListItemIdentity] {
    sections.flatMap { section in
        (headers ? [.header(sectionName: section.name)] : []) + section.objectIDs.map { .object($0) }
    }
}

/// Every item of a GListModel, read through `g_list_model_get_item` as GTK reads them.
@MainActor func items(of listModel: OpaquePointer, range: Range<Int>? = nil,
           identity: @MainActor (UnsafeMutableRawPointer) -> ListItemIdentity?) -> [ListItemIdentity?] {
    (range ?? 0..<Int(g_list_model_get_n_items(listModel))).map { position in
        guard let item = g_list_model_get_item(listModel, guint(position)) else { return nil }
        defer { g_object_unref(item) }
        return identity(item)
    }
}

/// Listens to a GListModel's real `items-changed` signal and replays every emission on a
/// plain array of the items, checking that the emission fits the list as it was and that
/// afterwards the model shows exactly the replayed array (what GTK assumes: nothing outside
/// the announced range changed). Each item remembers the ``generation`` in which it was read.
@MainActor final class ItemsChangedRecorder {
    let listModel: OpaquePointer
    let identity: @MainActor (UnsafeMutableRawPointer) -> ListItemIdentity?
    private(set) var replica: [ListItemIdentity?]
    /// When each item of ``replica`` was read; bump it to tell items read later apart.
    private(set) var readIn: [Int]
    var generation = 0
    private(set) var emissions: [(position: Int, removed: Int, added: Int)] = []
    private var handler: gulong = 0

    init(_ listModel: OpaquePointer, identity: @escaping @MainActor (UnsafeMutableRawPointer) -> ListItemIdentity?) {
        self.listModel = listModel
        self.identity = identity
        g_object_ref(UnsafeMutableRawPointer(listModel))
        replica = items(of: listModel, identity: identity)
        readIn = replica.map { _ in -1 }
        let itemsChanged: @convention(c) (OpaquePointer?, guint, guint, guint, gpointer?) -> Void = { _, position, removed, added, data in
            MainActor.assumeIsolated {
                Unmanaged<ItemsChangedRecorder>.fromOpaque(data!).takeUnretainedValue()
                    .itemsChanged(position: Int(position), removed: Int(removed), added: Int(added))
            }
        }
        // g_signal_connect is a macro; the handler is unretained and disconnected in deinit.
        handler = g_signal_connect_data(UnsafeMutableRawPointer(listModel), "items-changed",
                                        unsafeBitCast(itemsChanged, to: GCallback.self),
                                        Unmanaged.passUnretained(self).toOpaque(), nil, GConnectFlags(rawValue: 0))
    }

    isolated deinit {
        g_signal_handler_disconnect(UnsafeMutableRawPointer(listModel), handler)
        g_object_unref(UnsafeMutableRawPointer(listModel))
    }

    @MainActor private func itemsChanged(position: Int, removed: Int, added: Int) {
        emissions.append((position, removed, added))
        guard position + removed <= replica.count else {
            return XCTFail("items-changed(\(position), \(removed), \(added)) past the end of \(replica.count) items")
        }
        replica.replaceSubrange(position..<position + removed,
                                with: items(of: listModel, range: position..<position + added, identity: identity))
        readIn.replaceSubrange(position..<position + removed, with: repeatElement(generation, count: added))
        let now = items(of: listModel, identity: identity)
        XCTAssertEqual(now, replica, "after items-changed(\(position), \(removed), \(added)) the model differs outside the announced range")
        if now != replica { replica = now }
    }
}

/// A 320 × 400 window showing `listView` in a scrolled window, drawn.
@MainActor func presentInWindow(_ listView: UnsafeMutablePointer<GtkWidget>?) -> UnsafeMutablePointer<GtkWindow> {
    let scrolled = gtk_scrolled_window_new()
    gtk_scrolled_window_set_child(OpaquePointer(scrolled), listView)
    let window = UnsafeMutableRawPointer(gtk_window_new()!).assumingMemoryBound(to: GtkWindow.self)
    gtk_window_set_default_size(window, 320, 400)
    gtk_window_set_child(window, scrolled)
    gtk_window_present(window)
    MainLoop.iterate()
    return window
}
