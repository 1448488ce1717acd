import GtkBinding
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
        MainLoop.iterate()

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
            if i % 4 == 0 { try context.save(); MainLoop.iterate() }
        }
        try context.save()
        MainLoop.iterate()
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
        MainLoop.iterate()
        XCTAssertLessThan(rows!.flattened.itemsMade - beforeReload, 1_000, "items made to show the reloaded list of \(rows!.count)")
        XCTAssertEqual(Int(g_list_model_get_n_items(rows!.listModel)), rows!.controller.numberOfObjects + rows!.controller.sections!.count)

        gtk_window_destroy(asWindow)
        MainLoop.iterate()
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
        let window = presentInWindow(listView)
        defer { gtk_window_destroy(window) }
        let selected = rows.controller.object(at: IndexPath(item: 5, section: 0))
        selection.select(selected)
        MainLoop.iterate()
        var emissions = 0
        let counter = Signal.connect(UnsafeMutableRawPointer(rows.listModel), "items-changed") { (_: guint, _: guint, _: guint) in emissions += 1 }
        defer { g_signal_handler_disconnect(UnsafeMutableRawPointer(rows.listModel), counter) }
        let made = rows.flattened.itemsMade

        let chunk = 500
        for i in 0..<chunk {
            try League.insertPlayer(context, name: "N\(i)", zone: League.zones[Int.random(in: 0..<4, using: &rng)], score: Int.random(in: 0..<50, using: &rng))
        }
        try context.save()
        MainLoop.iterate()
        XCTAssertLessThan(emissions, chunk / 5, "seed \(seed): emissions for \(chunk) new rows")
        XCTAssertLessThan(rows.flattened.itemsMade - made, 1_000, "seed \(seed): items made to follow the chunk")
        XCTAssertEqual(items(of: rows.listModel) { rows.identity(ofItem: $0) }, flattened(rows.controller.snapshot, headers: true), "seed \(seed)")
        XCTAssertTrue(selection.selectedObject === selected, "seed \(seed)")
        XCTAssertEqual(selection.selectedPosition, rows.controller.indexPath(for: selected).map(rows.position(for:)), "seed \(seed)")
        let first = rows.controller.snapshot[0]
        XCTAssertTrue(Set(texts(under: listView)).isSuperset(of: ["— \(first.name) —", first.objectIDs[0].description]),
                      "seed \(seed): the list view shows the first header and object after the chunk")
    } }

    /// Counts the row widgets the factory makes.
    nonisolated(unsafe) private static var setups = 0
    private static let countingSetup: @convention(c) (OpaquePointer?, OpaquePointer?, gpointer?) -> Void = { _, listItem, _ in
        setups += 1
        gtk_list_item_set_child(listItem, gtk_label_new(nil))
    }

    /// A window showing `selection`'s rows in a list view whose factory counts the row
    /// widgets it makes (`setups`).
    @MainActor private func presentCountingRowWidgets(_ selection: FetchedResultsSelection<ManagedObject>) -> UnsafeMutablePointer<GtkWindow> {
        let factory = gtk_signal_list_item_factory_new()
        connect(factory, "setup", Self.countingSetup, nil)
        connect(factory, "bind", Self.bind, Unmanaged.passUnretained(selection.rows).toOpaque())
        return presentInWindow(gtk_list_view_new(selection.selectionModelReference(), factory))
    }

    /// Each items-changed emission of a list model from now on: the row widgets made during
    /// it (the handler runs after the list view's), and how many items GTK knows after it.
    @MainActor private final class EmissionRecorder {
        private(set) var emissions: [(made: Int, known: Int)] = []
        private var setupsBefore = GtkListViewTests.setups
        private let listModel: UnsafeMutableRawPointer
        private var handler: gulong = 0

        init(_ rows: FetchedResultsListModel<ManagedObject>) {
            listModel = UnsafeMutableRawPointer(rows.listModel)
            handler = Signal.connect(listModel, "items-changed") { [unowned self] (_: guint, _: guint, _: guint) in
                self.emissions.append((GtkListViewTests.setups - self.setupsBefore, Int(g_list_model_get_n_items(OpaquePointer(self.listModel)))))
                self.setupsBefore = GtkListViewTests.setups
            }
        }

        isolated deinit { g_signal_handler_disconnect(listModel, handler) }

        /// Forgets the emissions recorded so far.
        func restart() {
            emissions = []
            setupsBefore = GtkListViewTests.setups
        }
    }

    /// A short list that becomes thousands of rows in one batch (a narrow search cleared),
    /// with `announcesGrowthInSteps`: GTK hears of a few dozen more items in the batch and
    /// in each turn after it, so that it makes a few dozen row widgets at a time, not 200;
    /// the steps end with every row in GTK's list, and the selected object, which the steps
    /// reach last, selected again where it is now. Without the steps the factory makes
    /// about 140 row widgets in one emission (GTK keeps the short list's ~60 for rows it
    /// still has; checked last, on the same list).
    func testAShortListThatGrowsALotReachesGTKAFewDozenRowsATurn() throws { try MainActor.assumeIsolated {
        guard environmentNamesADisplay, gtk_init_check() != 0 else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let context = try League.context(self)
        for i in 0..<3_000 { try League.insertPlayer(context, name: "P\(i)", zone: League.zones[i % 4], score: i % 50) }
        try context.save()
        let narrow = League.playersByZone(try FetchPredicate(format: "score == 49"))
        let controller = FetchedResultsController(fetchRequest: narrow, managedObjectContext: context, sectionNameKeyPath: "zone")
        controller.reloadThreshold = 1
        let rows = try FetchedResultsListModel(controller: controller)
        rows.announcesGrowthInSteps = true
        let selection = FetchedResultsSelection(rows: rows)
        let window = presentCountingRowWidgets(selection)
        defer { gtk_window_destroy(window) }
        let short = rows.count
        XCTAssertEqual(short, 60 + 2, "60 players scored 49, in 2 zones (odd numbers)")
        // The last player of the last zone: far down the long list.
        let last = controller.sections!.count - 1
        let selected = controller.object(at: IndexPath(item: controller.sections![last].numberOfObjects - 1, section: last))
        selection.select(selected)
        MainLoop.iterate()

        let recorder = EmissionRecorder(rows)
        var request = controller.fetchRequest
        request.predicate = nil
        var reloaded = false
        controller.setFetchRequest(request) { error in
            XCTAssertNil(error)
            reloaded = true
        }
        XCTAssertTrue(MainLoop.iterate(until: { reloaded && rows.count == 3_004 }, timeout: 20), "the steps end with every item: \(rows.count)")
        MainLoop.iterate()

        XCTAssertEqual(items(of: rows.listModel) { rows.identity(ofItem: $0) }, flattened(controller.snapshot, headers: true))
        XCTAssertGreaterThan(recorder.emissions.count, 3, "the growth came in steps: \(recorder.emissions)")
        XCTAssertGreaterThan(recorder.emissions.map(\.made).reduce(0, +), 100, "GTK made its row widgets for the long list: \(recorder.emissions)")
        XCTAssertLessThanOrEqual(recorder.emissions.map(\.made).max() ?? 0, 2 * ListGrowth.step + 8,
                                 "row widgets made in one emission: \(recorder.emissions)")
        var known = short
        for emission in recorder.emissions where known < ListGrowth.widgetBound {
            XCTAssertLessThanOrEqual(emission.known, max(known, ListGrowth.step) + ListGrowth.step, "a step too far: \(recorder.emissions)")
            known = emission.known
        }
        XCTAssertTrue(selection.selectedObject === selected)
        XCTAssertEqual(selection.selectedPosition, controller.indexPath(for: selected).map(rows.position(for:)), "selected where it is now")

        // The same growth at once, without the steps: about 200 row widgets in one emission.
        controller.setFetchRequest(narrow) { _ in reloaded = false }
        XCTAssertTrue(MainLoop.iterate(until: { !reloaded }, timeout: 20))
        MainLoop.iterate()
        rows.announcesGrowthInSteps = false
        recorder.restart()
        controller.setFetchRequest(request) { _ in reloaded = true }
        XCTAssertTrue(MainLoop.iterate(until: { reloaded && rows.count == 3_004 }, timeout: 20))
        XCTAssertGreaterThan(recorder.emissions.map(\.made).max() ?? 0, 100, "without the steps: \(recorder.emissions)")
    } }

    /// Thousands of rows saved among a short list's rows in one batch (a desktop joining a
    /// shared list), with `announcesGrowthInSteps`: a few dozen row widgets an emission, the
    /// steps end with the whole list in GTK's, and the selected row, which stays near the
    /// top, stays selected throughout.
    func testThousandsOfRowsSavedAmongAShortListsRowsReachGTKAFewDozenATurn() throws { try MainActor.assumeIsolated {
        guard environmentNamesADisplay, gtk_init_check() != 0 else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        let context = try League.context(self)
        for i in 0..<32 { try League.insertPlayer(context, name: "P\(i)", zone: League.zones[i % 4], score: i) }
        try context.save()
        let controller = League.byZone(context)
        let rows = try FetchedResultsListModel(controller: controller)
        rows.announcesGrowthInSteps = true
        let selection = FetchedResultsSelection(rows: rows)
        let window = presentCountingRowWidgets(selection)
        defer { gtk_window_destroy(window) }
        let selected = controller.object(at: IndexPath(item: 0, section: 0))
        selection.select(selected)
        MainLoop.iterate()

        let recorder = EmissionRecorder(rows)
        // Scores above the selected player's (0): every new one sorts after it in its zone.
        for i in 0..<3_000 {
            try League.insertPlayer(context, name: "N\(i)", zone: League.zones[Int.random(in: 0..<4, using: &rng)], score: Int.random(in: 1..<50, using: &rng))
        }
        try context.save()
        let total = controller.numberOfObjects + controller.sections!.count
        XCTAssertTrue(MainLoop.iterate(until: { rows.count == total }, timeout: 20), "seed \(seed): the steps end with every item: \(rows.count) of \(total)")
        MainLoop.iterate()

        XCTAssertEqual(items(of: rows.listModel) { rows.identity(ofItem: $0) }, flattened(controller.snapshot, headers: true), "seed \(seed)")
        XCTAssertGreaterThan(recorder.emissions.count, 3, "seed \(seed): the growth came in steps: \(recorder.emissions)")
        XCTAssertLessThanOrEqual(recorder.emissions.map(\.made).max() ?? 0, 2 * ListGrowth.step + 8, "seed \(seed): row widgets made in one emission: \(recorder.emissions)")
        XCTAssertTrue(selection.selectedObject === selected, "seed \(seed)")
        XCTAssertEqual(selection.selectedPosition, controller.indexPath(for: selected).map(rows.position(for:)), "seed \(seed)")
    } }

    /// Random new orders and searches, each a reload (`reloadThreshold` 1), with the list
    /// scrolled to random places and an object selected: GTK keeps its row widgets (the
    /// factory makes none when the new list still has their positions), every row shows the item at
    /// its position, each emission fits the list (`ItemsChangedRecorder`), and the
    /// selected object stays selected when the new rows have it.
    func testAReloadKeepsTheRowWidgetsAndEveryRowShowsItsItem() throws { try MainActor.assumeIsolated {
        guard environmentNamesADisplay, gtk_init_check() != 0 else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        let context = try League.context(self)
        let controller = try Reloads.controller(ofPlayers: 3_000, in: context, using: &rng)
        let rows = try FetchedResultsListModel(controller: controller)
        let selection = FetchedResultsSelection(rows: rows)
        func text(_ identity: ListItemIdentity?) -> String {
            switch identity {
            case .header(let name)?: return "— \(name) —"
            case .object(let id)?: return id.description
            case nil: return ""
            }
        }
        var listItems: Set<OpaquePointer> = [], setups = 0
        let factory = ListItemFactory(rows: rows, setup: { listItem in
            setups += 1
            listItems.insert(listItem)
            gtk_list_item_set_child(listItem, gtk_label_new(nil))
        }, bind: { listItem, content in
            let shown: String
            switch content {
            case .header(let name): shown = "— \(name) —"
            case .object(let player): shown = player.objectID.description
            }
            gtk_label_set_text(OpaquePointer(gtk_list_item_get_child(listItem)), shown)
        })
        Signal.connect(UnsafeMutableRawPointer(factory.factory), "teardown") { (listItem: gpointer?) in
            _ = listItem.map { listItems.remove(OpaquePointer($0)) }
        }
        let listView = gtk_list_view_new(selection.selectionModelReference(), factory.factoryReference())
        let window = presentInWindow(listView)
        defer { gtk_window_destroy(window) }
        let recorder = ItemsChangedRecorder(rows.listModel) { rows.identity(ofItem: $0) }

        var keptWidgets = 0
        for step in 0..<14 {
            // Scrolled somewhere, an object selected (sometimes none).
            let adjustment = gtk_scrollable_get_vadjustment(OpaquePointer(listView))
            let end = gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)
            gtk_adjustment_set_value(adjustment, end * Double.random(in: 0...1, using: &rng))
            let objects = controller.fetchedObjects ?? []
            let selected = objects.isEmpty || Bool.random(using: &rng) ? nil : objects.randomElement(using: &rng)
            selection.select(selected)
            MainLoop.iterate(for: 0.1)

            var request = controller.fetchRequest
            request.sortDescriptors = Reloads.sorts.randomElement(using: &rng)!
            let search = Reloads.searches.randomElement(using: &rng)!
            request.predicate = try search.map { try FetchPredicate(format: $0) }
            // The rows GTK keeps are all still in the new list: it needs no new one.
            let lastKept = listItems.filter { gtk_list_item_get_item($0) != nil }.map { Int(gtk_list_item_get_position($0)) }.max()
            let setupsBefore = setups
            recorder.generation = step
            let reloaded = expectation(description: "reloaded")
            controller.setFetchRequest(request) { error in
                XCTAssertNil(error)
                reloaded.fulfill()
            }
            wait(for: [reloaded], timeout: 10)
            MainLoop.iterate(for: 0.1)
            let what = "seed \(seed), step \(step) (\(search ?? "all"), \(request.sortDescriptors.map(\.key)))"

            XCTAssertEqual(recorder.replica, flattened(controller.snapshot, headers: true), what)
            for listItem in listItems {
                guard let item = gtk_list_item_get_item(listItem) else { continue }
                let position = Int(gtk_list_item_get_position(listItem))
                let expected = items(of: rows.listModel, range: position..<position + 1) { rows.identity(ofItem: $0) }.first ?? nil
                XCTAssertEqual(rows.identity(ofItem: item), expected, "\(what): the item of the row at \(position)")
                let label = String(cString: gtk_label_get_text(OpaquePointer(gtk_list_item_get_child(listItem))))
                XCTAssertEqual(label, text(expected), "\(what): the row at \(position) shows its item")
            }
            if let lastKept, rows.count > lastKept + 1 {
                XCTAssertEqual(setups, setupsBefore, "\(what): row widgets made by a reload of a long list")
                keptWidgets += 1
            }
            if let selected, let indexPath = controller.indexPath(for: selected) {
                XCTAssertTrue(selection.selectedObject === selected, "\(what): the selected object stays selected")
                XCTAssertEqual(selection.selectedPosition, rows.position(for: indexPath), what)
            }
        }
        XCTAssertGreaterThan(keptWidgets, 3, "seed \(seed): reloads that keep every row checked")
    } }

    /// Random saves of a long list (rows inserted near the top and elsewhere, renamed,
    /// rescored so that they move, deleted): GTK 4.8 unbinds and binds again every row it
    /// holds after each insertion, and `ListItemFactory` passes that over. After each save,
    /// every row shows its object as it is now (a renamed row too), the factory's `bind` ran
    /// only for rows with new contents (not for the ~200 rows that shifted), and each list
    /// item was told `unbind` for each earlier `bind`, before GTK let its widget go.
    func testRowsThatOnlyShiftedAreNotBoundAgainAndEveryRowShowsItsObject() throws { try MainActor.assumeIsolated {
        guard environmentNamesADisplay, gtk_init_check() != 0 else { throw XCTSkip("no display: run under Xvfb (scripts/test does)") }
        let seed = SeededGenerator.seed()
        print("seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        let context = try League.context(self)
        for i in 0..<2_000 { try League.insertPlayer(context, name: "P\(i)", zone: League.zones[i % 4], score: i % 50) }
        try context.save()
        let rows = try FetchedResultsListModel(controller: League.byZone(context))
        let selection = FetchedResultsSelection(rows: rows)
        func text(_ player: ManagedObject) -> String {
            "\(player.objectID) \(player.attributeValue(forKey: "name")) \(player.attributeValue(forKey: "score"))"
        }
        // What each list item shows by the factory's calls: bound (and not unbound since).
        var bound: [OpaquePointer: String] = [:], binds = 0, problems: [String] = []
        let factory = ListItemFactory(rows: rows, bind: { listItem, content in
            binds += 1
            if bound[listItem] != nil { problems.append("bound twice without an unbind between") }
            let shown: String
            switch content {
            case .header(let name): shown = "— \(name) —"
            case .object(let player): shown = text(player)
            }
            bound[listItem] = shown
            gtk_label_set_text(OpaquePointer(gtk_list_item_get_child(listItem)), shown)
        }, unbind: { listItem in
            if bound.removeValue(forKey: listItem) == nil { problems.append("unbound without a bind") }
            if gtk_list_item_get_child(listItem) == nil { problems.append("unbound after its widget went") }
        })
        let listView = gtk_list_view_new(selection.selectionModelReference(), factory.factoryReference())
        let window = presentInWindow(listView)
        MainLoop.iterate()
        var nextName = 0
        for step in 0..<30 {
            let players = try context.fetch(League.playersByZone())
            let before = binds
            var announced = 0
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:
                // New players at the top of the first zone (the rows GTK holds shift).
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    try League.insertPlayer(context, name: "N\(nextName)", zone: "Africa", score: 99)
                    nextName += 1
                    announced += 1
                }
            case 1:
                for player in (0..<Int.random(in: 1...3, using: &rng)).map({ _ in players.randomElement(using: &rng)! }) {
                    try player.setValue("R\(nextName)", forKey: "name")
                    nextName += 1
                    announced += 1
                }
            case 2:
                for player in (0..<Int.random(in: 1...3, using: &rng)).map({ _ in players.randomElement(using: &rng)! }) {
                    try player.setValue(Int.random(in: 0..<100, using: &rng), forKey: "score")
                    announced += 1
                }
            default:
                for player in players.prefix(40).shuffled(using: &rng).prefix(2) { try context.delete(player) }
            }
            try context.save()
            MainLoop.iterate(for: 0.1)
            let what = "seed \(seed), step \(step)"
            // Shifted rows are not bound again: only announced rows, and rows coming into
            // GTK's ~200 at their end (a delete or a move pulls one in for each row gone).
            XCTAssertLessThanOrEqual(binds - before, 2 * announced + 6, "\(what): binds")
            var checked = 0
            for (listItem, shown) in bound {
                guard let item = gtk_list_item_get_item(listItem) else { problems.append("\(what): a list item with no item is still bound"); continue }
                let expected: String
                switch rows.identity(ofItem: item) {
                case .header(let name)?: expected = "— \(name) —"
                case .object(let id)?: expected = try text(context.existingObject(with: id))
                case nil: expected = ""
                }
                XCTAssertEqual(shown, expected, "\(what): the row at \(gtk_list_item_get_position(listItem))")
                checked += 1
            }
            XCTAssertGreaterThan(checked, 20, what)
        }
        gtk_window_destroy(window)
        MainLoop.iterate()
        XCTAssertEqual(problems, [], "seed \(seed)")
        XCTAssertEqual(bound.count, 0, "seed \(seed): every bind was undone when the window went")
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
