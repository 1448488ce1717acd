import GtkBinding
import CFetchedResultsModel
import CGtk
import FetchedResults
import Foundation
import Synchronization
@testable import GtkBinding
import ObjectStore
import XCTest

/// The list model's layout, its emissions for single changes, laziness and ownership.
/// Needs GObject and GIO only (no display).
final class ListModelTests: XCTestCase, @unchecked Sendable {
    private var context: ObjectContext!
    private var ana: ManagedObject!

    override func setUpWithError() throws { try MainActor.assumeIsolated {
        context = try League.context(self)
        ana = try League.insertPlayer(context, name: "Ana", zone: "Asia", score: 3)
        try League.insertPlayer(context, name: "Bo", zone: "Asia", score: 1)
        try League.insertPlayer(context, name: "Cy", zone: "Europe", score: 2)
        try context.save()
    } }

    @MainActor private func identities(_ rows: FetchedResultsListModel<ManagedObject>) -> [ListItemIdentity?] {
        items(of: rows.listModel) { rows.identity(ofItem: $0) }
    }

    func testEachSectionStartsWithItsHeader() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let ids = rows.controller.snapshot.flatMap(\.objectIDs)
        XCTAssertEqual(identities(rows), [.header(sectionName: "Asia"), .object(ids[0]), .object(ids[1]),
                                          .header(sectionName: "Europe"), .object(ids[2])])
        XCTAssertEqual((0..<rows.count).map(rows.item(at:)), [
            .header(sectionIndex: 0), .object(ids[0], IndexPath(item: 0, section: 0)), .object(ids[1], IndexPath(item: 1, section: 0)),
            .header(sectionIndex: 1), .object(ids[2], IndexPath(item: 0, section: 1)),
        ])
        XCTAssertEqual(rows.position(forSectionHeader: 1), 3)
        XCTAssertEqual(rows.position(for: IndexPath(item: 0, section: 1)), 4)
        XCTAssertEqual(rows.indexPath(at: 2), IndexPath(item: 1, section: 0))
        XCTAssertNil(rows.indexPath(at: 3))
        XCTAssertNil(g_list_model_get_item(rows.listModel, 5), "past the end")
        XCTAssertEqual(g_list_model_get_item_type(rows.listModel), fr_row_get_type())
    } }

    func testAControllerWithoutSectionsShowsNoHeader() throws { try MainActor.assumeIsolated {
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest(entityName: "Player", sortDescriptors: [FetchSortDescriptor(key: "name")]), managedObjectContext: context)
        let rows = try FetchedResultsListModel(controller: controller)
        XCTAssertFalse(rows.showsSectionHeaders)
        XCTAssertEqual(identities(rows), controller.snapshot[0].objectIDs.map { .object($0) })
        XCTAssertNil(rows.position(forSectionHeader: 0))
        XCTAssertEqual(rows.position(for: IndexPath(item: 2, section: 0)), 2)
    } }

    func testAnUpdateReplacesItsRowOnly() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let recorder = ItemsChangedRecorder(rows.listModel) { rows.identity(ofItem: $0) }
        try ana.setValue("fast", forKey: "note")
        try context.save()
        XCTAssertEqual(recorder.emissions.map { [$0.position, $0.removed, $0.added] }, [[1, 1, 1]])
    } }

    func testABatchThatDoesNotFitReloadsTheListAndWarnsInsteadOfCrashing() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let recorder = ItemsChangedRecorder(rows.listModel) { rows.identity(ofItem: $0) }
        let warnings = Mutex<[String]>([])
        let previous = FetchedResultsDiagnostics.warningHandler
        FetchedResultsDiagnostics.warningHandler = { message in warnings.withLock { $0.append(message) } }
        defer { FetchedResultsDiagnostics.warningHandler = previous }
        let expected = identities(rows)
        let ids = rows.controller.snapshot.flatMap(\.objectIDs)
        let stranger = ObjectID(entityName: "Player", rowKey: 999)
        // Each names a place the list does not have: a call by hand, not the controller's.
        let misfits = [
            ChangeBatch(objectChanges: [ObjectChange(type: .delete, objectID: ids[0], indexPath: IndexPath(item: 7, section: 0), newIndexPath: nil)]),
            ChangeBatch(objectChanges: [ObjectChange(type: .insert, objectID: stranger, indexPath: nil, newIndexPath: IndexPath(item: 5, section: 1))]),
            ChangeBatch(sectionChanges: [SectionChange(type: .delete, index: 0, name: "Asia")]),
            ChangeBatch(sectionChanges: [SectionChange(type: .insert, index: 9, name: "Mars")]),
            ChangeBatch(objectChanges: [ObjectChange(type: .update, objectID: ids[2], indexPath: IndexPath(item: 0, section: 4), newIndexPath: IndexPath(item: 0, section: 4))]),
            // Fits its first step (Bo leaves), not its second: what was announced stands.
            ChangeBatch(objectChanges: [ObjectChange(type: .delete, objectID: ids[1], indexPath: IndexPath(item: 1, section: 0), newIndexPath: nil),
                                        ObjectChange(type: .insert, objectID: stranger, indexPath: nil, newIndexPath: IndexPath(item: 3, section: 1))]),
        ]
        for (n, batch) in misfits.enumerated() {
            rows.controller(rows.controller, didChangeContentWith: batch)
            XCTAssertEqual(identities(rows), expected, "batch \(n): the list is the controller's again")
            XCTAssertEqual(recorder.replica, expected, "batch \(n): the emissions say so")
            XCTAssertEqual(warnings.withLock { $0.count }, n + 1, "batch \(n) is reported")
        }
        XCTAssertTrue(warnings.withLock { $0[0] }.contains("does not fit"))
    } }

    func testANewSortOfALongListIsAReloadThatKeepsTheSelection() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let selection = FetchedResultsSelection(rows: rows)
        let bo = try XCTUnwrap(rows.controller.fetchedObjects?.first { ((try? $0.value(forKey: "name")) as? String) == "Bo" })
        selection.select(bo)
        let builds = rows.controller.positionIndexBuilds
        let recorder = ItemsChangedRecorder(rows.listModel) { rows.identity(ofItem: $0) }
        let count = rows.count
        rows.controller.reloadThreshold = 1
        var request = rows.controller.fetchRequest
        request.sortDescriptors = [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "name", ascending: false)]
        let shown = expectation(description: "shown")
        rows.controller.setFetchRequest(request) { error in
            XCTAssertNil(error)
            shown.fulfill()
        }
        wait(for: [shown], timeout: 10)
        XCTAssertEqual(recorder.emissions.map { [$0.position, $0.removed, $0.added] }, [[0, count, count]],
                       "nobody holds an item: every item replaced at once (see FlattenedSections' reload step)")
        XCTAssertEqual(recorder.replica, identities(rows))
        XCTAssertEqual(identities(rows).compactMap { $0 }, flattened(rows.controller.snapshot, headers: true))
        // The selection is restored when GLib is next idle.
        MainLoop.iterate()
        XCTAssertTrue(selection.selectedObject === bo, "the selected object stays selected")
        XCTAssertEqual(rows.controller.positionIndexBuilds, builds, "found in the list, not by making the controller's index again")
        XCTAssertEqual(selection.selectedPosition, rows.position(for: try XCTUnwrap(rows.controller.indexPath(for: bo))))
    } }

    /// Reloads (random new orders and searches) while random items are held, as GTK holds
    /// the rows it shows: after every emission the list is what the emissions said (the
    /// positions not announced yet still show the old rows); each held item still in the
    /// list keeps its position and takes its new contents, with a new revision; and each
    /// run of held items is announced replaced by the same items.
    func testAReloadKeepsTheHeldItemsAndEveryEmissionFits() throws { try MainActor.assumeIsolated {
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        let controller = try Reloads.controller(ofPlayers: 300, in: context, using: &rng)
        let rows = try FetchedResultsListModel(controller: controller)
        let recorder = ItemsChangedRecorder(rows.listModel) { rows.identity(ofItem: $0) }
        var held: [(position: Int, item: UnsafeMutableRawPointer)] = []
        defer { for entry in held { g_object_unref(entry.item) } }
        for step in 0..<40 {
            // Held: runs and single items anywhere, as a list view's rows and its selection.
            for entry in held { g_object_unref(entry.item) }
            held = []
            var positions = Set<Int>()
            for _ in 0..<Int.random(in: 0...3, using: &rng) where rows.count > 0 {
                let start = Int.random(in: 0..<rows.count, using: &rng)
                positions.formUnion(start..<min(rows.count, start + Int.random(in: 1...40, using: &rng)))
            }
            held = positions.sorted().map { ($0, g_list_model_get_item(rows.listModel, guint($0))!) }
            let revisions = held.map { fr_row_get_revision(fr_row_from_item($0.item)) }
            let emissionsBefore = recorder.emissions.count
            let sortBefore = controller.fetchRequest.sortDescriptors
            let objectsBefore = Set(controller.snapshot.flatMap(\.objectIDs))

            var request = controller.fetchRequest
            request.sortDescriptors = Reloads.sorts.randomElement(using: &rng)!
            let search = Reloads.searches.randomElement(using: &rng)!
            request.predicate = try search.map { try FetchPredicate(format: $0) }
            let shown = expectation(description: "shown")
            controller.setFetchRequest(request) { error in
                XCTAssertNil(error)
                shown.fulfill()
            }
            wait(for: [shown], timeout: 10)
            let what = "seed \(seed), step \(step) (\(search ?? "all"), \(request.sortDescriptors.map(\.key)))"

            XCTAssertEqual(recorder.replica, flattened(controller.snapshot, headers: true), what)
            let emissions = recorder.emissions[emissionsBefore...]
            // A new order reloads; so do more changes than the threshold (1). Else nothing is reassigned.
            let reloaded = request.sortDescriptors != sortBefore
                || objectsBefore.symmetricDifference(controller.snapshot.flatMap(\.objectIDs)).count > 1
            for (entry, revision) in zip(held, revisions) where reloaded && entry.position < rows.count {
                XCTAssertEqual(rows.identity(ofItem: entry.item), recorder.replica[entry.position], "\(what): the held item at \(entry.position)")
                let again = g_list_model_get_item(rows.listModel, guint(entry.position))!
                XCTAssertEqual(again, entry.item, "\(what): the held item stays at \(entry.position)")
                g_object_unref(again)
                XCTAssertGreaterThan(fr_row_get_revision(fr_row_from_item(entry.item)), revision, "\(what): a new revision")
                XCTAssertTrue(emissions.contains { $0.removed == $0.added && ($0.position..<$0.position + $0.added).contains(entry.position) },
                              "\(what): the held item at \(entry.position) is announced replaced")
            }
        }
    } }

    /// GtkSingleSelection looks for its selected item among every item a change adds when
    /// the change removes it: a reload of a million rows would make a million items. The
    /// selection drops GTK's before a reload and selects the object again after it.
    func testAReloadKeepsTheSelectionWithoutAnItemForEveryRow() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let selection = FetchedResultsSelection(rows: rows)
        let bo = try XCTUnwrap(rows.controller.fetchedObjects?.first { ((try? $0.value(forKey: "name")) as? String) == "Bo" })
        selection.select(bo)
        rows.controller.reloadThreshold = 1
        let made = rows.flattened.itemsMade
        var request = rows.controller.fetchRequest
        request.sortDescriptors = [FetchSortDescriptor(key: "zone"), FetchSortDescriptor(key: "name", ascending: false)]
        let shown = expectation(description: "shown")
        rows.controller.setFetchRequest(request) { _ in shown.fulfill() }
        wait(for: [shown], timeout: 10)
        MainLoop.iterate()
        XCTAssertTrue(selection.selectedObject === bo, "the selected object stays selected")
        XCTAssertGreaterThan(rows.count, 4)
        XCTAssertLessThanOrEqual(rows.flattened.itemsMade - made, 1, "items made to follow the reload: the selected row's only")
    } }

    /// An import's chunk shifts the selected row by hundreds: the selection follows it
    /// through the batch, without the controller making its index of places again (a pass
    /// over every row key, a million in the viewer).
    func testAChunkBeforeTheSelectedRowKeepsItSelectedWithoutRemakingTheIndexOfPlaces() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let selection = FetchedResultsSelection(rows: rows)
        let bo = try XCTUnwrap(rows.controller.fetchedObjects?.first { ((try? $0.value(forKey: "name")) as? String) == "Bo" })
        selection.select(bo)
        let builds = rows.controller.positionIndexBuilds
        XCTAssertGreaterThan(builds, 0, "selecting asked the index")
        // Better scores than Bo's in Asia (before it), a new section before Asia, rows after it.
        let chunk = ObjectContext(store: context.store)
        for i in 0..<300 {
            try League.insertPlayer(chunk, name: "N\(i)", zone: ["Asia", "Africa", "Europe"][i % 3], score: 2 + i % 7)
        }
        try chunk.save()
        XCTAssertTrue(MainLoop.iterate(until: { rows.controller.numberOfObjects == 303 }), "the chunk is merged")
        MainLoop.iterate(for: 0.05)
        XCTAssertTrue(selection.selectedObject === bo, "the selected object stays selected")
        XCTAssertEqual(rows.controller.positionIndexBuilds, builds, "the selection did not ask the controller where Bo went")
        XCTAssertEqual(selection.selectedPosition, rows.position(for: try XCTUnwrap(rows.controller.indexPath(for: bo))))
        XCTAssertEqual(rows.controller.indexPath(for: bo), IndexPath(item: 101, section: 1), "after Ana and Asia’s 100 new players")
    } }

    /// After a batch every section holds the controller's own array of row keys: the list
    /// copies no section's keys (170,000 a section in the viewer) to put rows in or take
    /// them out.
    func testEverySectionSharesTheControllersKeysAfterABatch() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let recorder = ItemsChangedRecorder(rows.listModel) { rows.identity(ofItem: $0) }
        @MainActor func assertShared(_ message: String) {
            for s in rows.flattened.sections.indices {
                let list = rows.flattened.sections[s].keys, controller = rows.controller.rowKeys(inSection: s)
                XCTAssertEqual(list, controller, message)
                XCTAssertEqual(list.withUnsafeBufferPointer(\.baseAddress), controller.withUnsafeBufferPointer(\.baseAddress),
                               "\(message): section \(s) is a copy")
            }
            XCTAssertEqual(recorder.replica.compactMap { $0 }, flattened(rows.controller.snapshot, headers: true), message)
        }
        assertShared("at first")
        // Placed in memory: rows into Asia, Cy out of Europe, a new section.
        try League.insertPlayer(context, name: "Di", zone: "Asia", score: 2)
        try League.insertPlayer(context, name: "Ed", zone: "Africa", score: 2)
        try context.delete(try XCTUnwrap(rows.controller.fetchedObjects?.first { ((try? $0.value(forKey: "name")) as? String) == "Cy" }))
        try context.save()
        assertShared("after rows in and out")
        // Fetched again: more changes than are placed in memory.
        for i in 0..<20 { try League.insertPlayer(context, name: "F\(i)", zone: ["Asia", "Oceania"][i % 2], score: i) }
        try context.save()
        assertShared("after a refetch")
    } }

    func testAMoveToANewSectionRemovesThenInsertsTheHeaderAndTheRow() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let recorder = ItemsChangedRecorder(rows.listModel) { rows.identity(ofItem: $0) }
        // Asia: Ana (1), Bo (2); Europe: Cy (4), whose item is held (GTK shows its row).
        let cy = try XCTUnwrap(g_list_model_get_item(rows.listModel, 4))
        try ana.setValue("Oceania", forKey: "zone")
        try context.save()
        // Ana leaves Asia (position 1), the Oceania section arrives with its header at the end,
        // then Ana arrives in it.
        XCTAssertEqual(recorder.emissions.map { [$0.position, $0.removed, $0.added] }, [[1, 1, 0], [4, 0, 2]])
        XCTAssertEqual(recorder.replica.last, .object(ana.objectID))

        // Back to Asia, nothing held: one emission, the rows between announced again with the changes.
        g_object_unref(cy)
        try ana.setValue("Asia", forKey: "zone")
        try context.save()
        XCTAssertEqual(recorder.emissions.dropFirst(2).map { [$0.position, $0.removed, $0.added] }, [[1, 5, 4]])
        XCTAssertEqual(recorder.replica.compactMap { $0 }, flattened(rows.controller.snapshot, headers: true))
    } }

    func testAFirstSaveReplacesTheRowThatHadTheTemporaryID() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let recorder = ItemsChangedRecorder(rows.listModel) { rows.identity(ofItem: $0) }
        let dee = try League.insertPlayer(context, name: "Dee", zone: "Europe", score: 0)
        context.processPendingChanges()
        XCTAssertEqual(recorder.replica.last, .object(dee.objectID))
        XCTAssertTrue(dee.objectID.isTemporaryID)
        try context.save()
        XCTAssertEqual(recorder.emissions.map { [$0.position, $0.removed, $0.added] }, [[5, 0, 1], [5, 1, 1]])
        XCTAssertFalse(dee.objectID.isTemporaryID)
        XCTAssertEqual(identities(rows).last, .object(dee.objectID))
    } }

    func testItemsAreMadeOnlyForThePositionsAskedFor() throws { try MainActor.assumeIsolated {
        for i in 0..<3_000 { try League.insertPlayer(context, name: "P\(i)", zone: League.zones[i % 4], score: i % 7) }
        try context.save()
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        XCTAssertEqual(Int(g_list_model_get_n_items(rows.listModel)), 3_003 + 4)
        try League.insertPlayer(context, name: "Zed", zone: "Africa", score: 9)
        try ana.setValue(0, forKey: "score")
        try context.save()
        XCTAssertEqual(rows.flattened.itemsMade, 0, "creating the model and emitting changes made items")
        g_object_unref(g_list_model_get_item(rows.listModel, 1))
        XCTAssertEqual(rows.flattened.itemsMade, 1)
    } }

    /// While GTK holds an item, a row that only shifted (changes before it) is the same item
    /// at its new position, so a factory can skip binding it again; a row announced as changed
    /// is a new item. Items GTK let go are not kept.
    func testAHeldItemStaysTheSameUntilItsRowIsAnnounced() throws { try MainActor.assumeIsolated {
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        // Asia: Ana (1), Bo (2); Europe: Cy (4).
        let cy = try XCTUnwrap(g_list_model_get_item(rows.listModel, 4))
        let bo = try XCTUnwrap(g_list_model_get_item(rows.listModel, 2))
        defer { g_object_unref(cy); g_object_unref(bo) }
        try League.insertPlayer(context, name: "Al", zone: "Africa", score: 0)   // a section and a row before them
        try context.save()
        let cyNow = try XCTUnwrap(g_list_model_get_item(rows.listModel, 6))
        XCTAssertEqual(cyNow, cy, "a row that only shifted is the same item")
        g_object_unref(cyNow)
        XCTAssertEqual(rows.identity(ofItem: cy), .object(rows.controller.snapshot[2].objectIDs[0]))

        let boID = rows.controller.snapshot[1].objectIDs[1]
        XCTAssertEqual(rows.identity(ofItem: bo), .object(boID))
        try context.existingObject(with: boID).setValue("late", forKey: "note")   // an update: Bo's row (position 4) is announced
        try context.save()
        let boNow = try XCTUnwrap(g_list_model_get_item(rows.listModel, 4))
        XCTAssertNotEqual(boNow, bo, "an announced row is a new item")
        XCTAssertEqual(rows.identity(ofItem: boNow), .object(boID))
        g_object_unref(boNow)

        let made = rows.flattened.itemsMade
        g_object_unref(try XCTUnwrap(g_list_model_get_item(rows.listModel, 0)))   // made and let go
        g_object_unref(try XCTUnwrap(g_list_model_get_item(rows.listModel, 0)))
        XCTAssertEqual(rows.flattened.itemsMade, made + 2, "an item GTK let go is made again")
    } }

    func testTheGListModelOutlivesItsOwnerAndReleasesEverythingWhenFinalized() throws { try MainActor.assumeIsolated {
        let controller = League.byZone(context)
        var rows: FetchedResultsListModel? = try FetchedResultsListModel(controller: controller)
        let listModel = rows!.listModel
        weak let state = rows!.flattened
        g_object_ref(UnsafeMutableRawPointer(listModel))  // as gtk_single_selection_new would
        let modelPointer = UnsafeMutablePointer<gpointer?>.allocate(capacity: 1)
        let itemPointer = UnsafeMutablePointer<gpointer?>.allocate(capacity: 1)
        defer { modelPointer.deallocate(); itemPointer.deallocate() }
        modelPointer.pointee = UnsafeMutableRawPointer(listModel)
        g_object_add_weak_pointer(fr_cast_object(modelPointer.pointee), modelPointer)
        itemPointer.pointee = g_list_model_get_item(listModel, 1)
        g_object_add_weak_pointer(fr_cast_object(itemPointer.pointee), itemPointer)

        rows = nil
        XCTAssertNil(controller.delegate, "the list model stopped following the controller")
        XCTAssertNotNil(state, "GTK still holds the GListModel")
        try ana.setValue("Europe", forKey: "zone")
        try context.save()
        XCTAssertEqual(g_list_model_get_n_items(listModel), 5, "it keeps showing the last state")

        g_object_unref(itemPointer.pointee)
        XCTAssertNil(itemPointer.pointee, "the item is finalized with its last reference")
        g_object_unref(modelPointer.pointee)
        XCTAssertNil(modelPointer.pointee, "the GListModel is finalized with its last reference")
        XCTAssertNil(state, "the Swift state is released when the GListModel is finalized")
    } }
}
