import CFetchedResultsModel
import CGtk
import Datasets
import FetchedResults
import Foundation
import GtkBinding
import ObjectStore
import Viewer

/// The viewer's window on a million teams, driven as a person would: opened, searched,
/// sorted, paged through with Page Down held, scrolled to the end and back, and importing
/// 100,000 teams. Each step times the main loop's stalls with a 2 ms high-priority timer
/// (see ``MainLoopTiming``); the baselines are fetches of the same requests on a context of
/// their own, and the idle window.
struct ViewerMillionBenchmark {
    /// A copy of the million-team store, changed by the run (the import).
    let storeURL: URL
    let folder: URL
    let importRows: Int
    let seed: UInt64

    static let searchText = "ka"
    static let pageDownPresses = 2_000
    /// Page Down presses a second: a held key repeats about 30 times a second; these come faster.
    static let pressesPerSecond = 1_000.0

    struct Opening {
        /// From creating the window to its first frame (the header bar is in it), and to the first frame showing rows.
        var firstFrame: Double
        var rowsFrame: Double
        /// The fetch of the same request on a context of its own.
        var fetch: Double
    }

    struct Change {
        var stalls: [Double]
        /// From the last key or choice to the first frame showing the new rows.
        var shown: Double
        var freshFetch: Double
        var rows: Int
        var expectedRows: Int
    }

    struct PageDown {
        var stalls: [Double]
        var seconds: Double
        /// From the last press to the frame that shows its row selected, and the frames drawn until then.
        var settled: Double
        var settledFrames: Int
        /// The selected position before and after, and whether it still moved after the last press.
        var from: Int
        var to: Int
        var isShown: Bool
    }

    struct Figures {
        var uncachedOpening: Opening
        var cachedOpening: Opening
        var idleStall: Double
        var search: Change
        var clearSearch: Change
        var sort: Change
        var pageDown: PageDown
        var residentBefore: Int
        var residentAfter: Int
        var scrollFrames: Int
        var importStalls: [Double]
        var importSeconds: Double
        var rowsBefore: Int
        var rowsAfter: Int
    }

    @MainActor func run() throws -> Figures {
        try MainLoopTiming.startGTK()
        SectionCache.directory = folder.appendingPathComponent("cache")
        let dataset = try Dataset.load(named: "worldcup")
        // Opened once before anything is timed: the first open migrates the benchmark's store to the dataset's model.
        let store = try dataset.openStore(at: storeURL)
        let freshController = { (sortOption: Int, search: String, cached: Bool) in
            try Self.freshController(dataset: dataset, store: store, sortOption: sortOption, search: search, cached: cached)
        }
        let options = ViewerOptions(datasetName: "worldcup", storeURL: storeURL)

        print("  opening the window without a section cache, then with it...")
        let (_, freshFetch) = try freshController(0, "", false)
        var (window, uncached) = try open(options)
        uncached.fetch = freshFetch
        gtk_window_destroy(MainLoopTiming.gtkWindow(window))
        MainLoopTiming.spin(seconds: 0.2)
        let (_, cachedFetch) = try freshController(0, "", true)
        var cached: Opening
        (window, cached) = try open(options)
        cached.fetch = cachedFetch
        MainLoopTiming.spin(seconds: 0.5)
        let rowsBefore = window.listedObjectCount
        let idle = MainLoopTiming.gaps(MainLoopTiming.ticks { $0 < 1 }).max() ?? 0
        let widgets = try Widgets(window)

        print("  typing a search...")
        let (searched, searchFetch) = try freshController(0, Self.searchText, false)
        let search = try typeSearch(in: window, widgets, expecting: searched.numberOfObjects, freshFetch: searchFetch)
        let clearSearch = try change(window, widgets, freshFetch: freshFetch, expectedRows: rowsBefore, expectedFirstKey: nil) {
            gtk_editable_set_text(OpaquePointer(widgets.searchEntry), "")
        }

        print("  changing the sort...")
        let sort = try changeSort(window, widgets, rows: rowsBefore, freshFetch: freshFetch) { try freshController(1, "", false) }

        print("  holding Page Down...")
        let pageDown = holdPageDown(window, widgets)

        print("  scrolling to the end and back...")
        let residentBefore = Measure.residentBytes()
        let scrollFrames = scrollToEndAndBack(widgets)
        MainLoopTiming.spin(seconds: 0.5)
        let residentAfter = Measure.residentBytes()

        print("  importing \(importRows) teams into the open window...")
        let (importTicks, importSeconds) = try importTeams(into: window)
        MainLoopTiming.spin(seconds: 0.3)
        let figures = Figures(
            uncachedOpening: uncached, cachedOpening: cached, idleStall: idle, search: search, clearSearch: clearSearch, sort: sort,
            pageDown: pageDown, residentBefore: residentBefore, residentAfter: residentAfter, scrollFrames: scrollFrames,
            importStalls: MainLoopTiming.gaps(importTicks), importSeconds: importSeconds, rowsBefore: rowsBefore,
            rowsAfter: window.listedObjectCount)
        gtk_window_destroy(MainLoopTiming.gtkWindow(window))
        MainLoopTiming.spin(seconds: 0.1)
        return figures
    }

    /// A controller of the dataset's request on a context of its own, fetched; the fetch's time.
    static func freshController(dataset: Dataset, store: PersistentStore, sortOption: Int, search: String, cached: Bool) throws -> (FetchedResultsController<ManagedObject>, Double) {
        let context = ObjectContext(store: store)
        let controller: FetchedResultsController<ManagedObject>
        if cached {
            controller = try dataset.makeController(context: context, sortOption: sortOption, search: search)
        } else {
            controller = FetchedResultsController(fetchRequest: try dataset.view.makeFetchRequest(sortOption: sortOption, search: search),
                                                  managedObjectContext: context, sectionNameKeyPath: dataset.view.fetchRequest.sectionKeyPath)
        }
        let seconds = try Measure.seconds { try controller.performFetch() }
        return (controller, seconds)
    }

    /// Imports `importRows` teams into the open window; the main loop's ticks meanwhile and the import's time.
    @MainActor private func importTeams(into window: ViewerWindow) throws -> ([Double], Double) {
        let csv = folder.appendingPathComponent("teams.csv")
        try MainLoopTiming.writeTeams(importRows, zones: WorldCupStore.zones, seed: seed, to: csv)
        let started = Date()
        window.startImport(file: csv)
        let importTicks = MainLoopTiming.ticks { _ in window.isImporting }
        let importSeconds = Date().timeIntervalSince(started)
        print("  longest stalls while importing: " + MainLoopTiming.longestGaps(importTicks))
        return (importTicks, importSeconds)
    }

    /// The sort by name, against a fresh fetch of it, then back.
    @MainActor private func changeSort(_ window: ViewerWindow, _ widgets: Widgets, rows: Int, freshFetch: Double,
                                       sortedByNameController: () throws -> (FetchedResultsController<ManagedObject>, Double)) throws -> Change {
        let (sortedByName, sortFetch) = try sortedByNameController()
        let sort = try change(window, widgets, freshFetch: sortFetch, expectedRows: rows,
                              expectedFirstKey: sortedByName.objectID(at: IndexPath(item: 0, section: 0)).rowKey) {
            widgets.sort(1)
        }
        _ = try change(window, widgets, freshFetch: freshFetch, expectedRows: rows, expectedFirstKey: nil) {
            widgets.sort(0)
        }
        return sort
    }

    // MARK: The steps

    /// Creates and presents a window; returns it with the times to its first frame and to its first frame with rows.
    @MainActor private func open(_ options: ViewerOptions) throws -> (ViewerWindow, Opening) {
        let start = Date()
        let window = try ViewerWindow(application: nil, options: options)
        let frames = Frames(window)
        gtk_window_present(MainLoopTiming.gtkWindow(window))
        var rowsFrame: Double?
        frames.onFrame = { if rowsFrame == nil && !window.layoutDump.isEmpty { rowsFrame = Date().timeIntervalSince(start) } }
        let deadline = Date().addingTimeInterval(30)
        while rowsFrame == nil && Date() < deadline { g_main_context_iteration(nil, 1) }
        let firstFrame = frames.times.first.map { $0.timeIntervalSince(start) } ?? .infinity
        frames.stop()
        return (window, Opening(firstFrame: firstFrame, rowsFrame: rowsFrame ?? .infinity, fetch: 0))
    }

    /// Types the search text one key at a time, 150 ms apart, into the window's search entry.
    @MainActor private func typeSearch(in window: ViewerWindow, _ widgets: Widgets, expecting rows: Int, freshFetch: Double) throws -> Change {
        var typed = 0
        let text = Array(Self.searchText)
        return try change(window, widgets, freshFetch: freshFetch, expectedRows: rows, expectedFirstKey: nil, lastStepAt: Double(text.count - 1) * 0.15) { elapsed in
            while typed < text.count && elapsed >= Double(typed) * 0.15 {
                typed += 1
                gtk_editable_set_text(OpaquePointer(widgets.searchEntry), String(text.prefix(typed)))
            }
        }
    }

    /// Makes a change of the shown rows (`step`, once), then runs the main loop until the
    /// window shows `expectedRows` rows, the first object being `expectedFirstKey` when given.
    @MainActor private func change(_ window: ViewerWindow, _ widgets: Widgets, freshFetch: Double, expectedRows: Int, expectedFirstKey: Int64?,
                                   _ step: @escaping () -> Void) throws -> Change {
        var done = false
        return try change(window, widgets, freshFetch: freshFetch, expectedRows: expectedRows, expectedFirstKey: expectedFirstKey, lastStepAt: 0) { _ in
            if !done { done = true; step() }
        }
    }

    /// `steps(seconds since start)` is called at every turn of the main loop; the last step is
    /// taken `lastStepAt` seconds after the start.
    @MainActor private func change(_ window: ViewerWindow, _ widgets: Widgets, freshFetch: Double, expectedRows: Int, expectedFirstKey: Int64?,
                                   lastStepAt: Double, steps: @escaping (Double) -> Void) throws -> Change {
        let frames = Frames(window)
        defer { frames.stop() }
        var shownAt: Double?
        func isShown() -> Bool {
            guard window.listedObjectCount == expectedRows else { return false }
            guard let expectedFirstKey else { return true }
            return widgets.firstObjectKey() == expectedFirstKey
        }
        var start = Date()
        frames.onFrame = { if shownAt == nil && isShown() { shownAt = Date().timeIntervalSince(start) } }
        start = Date()
        let ticks = MainLoopTiming.ticks { elapsed in
            steps(elapsed)
            return elapsed < lastStepAt || (shownAt == nil && elapsed < 30)
        }
        MainLoopTiming.spin(seconds: 0.3)
        return Change(stalls: MainLoopTiming.gaps(ticks), shown: (shownAt ?? .infinity) - lastStepAt, freshFetch: freshFetch,
                      rows: window.listedObjectCount, expectedRows: expectedRows)
    }

    /// Presses Page Down `pageDownPresses` times, up to `pressesPerSecond` and one a turn of
    /// the main loop, through the list's key controllers (as GTK delivers a key press to
    /// them); then waits until the selection stops.
    @MainActor private func holdPageDown(_ window: ViewerWindow, _ widgets: Widgets) -> PageDown {
        gtk_widget_grab_focus(widgets.listView)
        MainLoopTiming.spin(seconds: 0.3)
        let from = widgets.selectedPosition ?? -1
        let frames = Frames(window)
        defer { frames.stop() }
        var pressed = 0
        var lastPress = Date.distantFuture
        // After the last press: when each frame was drawn, and the selection it showed.
        var after: [(time: Date, position: Int?, shown: Bool)] = []
        frames.onFrame = { if pressed == Self.pageDownPresses { after.append((Date(), widgets.selectedPosition, widgets.selectedRowIsShown())) } }
        let ticks = MainLoopTiming.ticks { elapsed in
            // One press a turn of the main loop, as GTK takes key events (one an event
            // source's dispatch): a press that falls behind waits for the next turn rather
            // than joining a burst of presses in one turn, which no keyboard sends.
            let due = min(Self.pageDownPresses, Int(elapsed * Self.pressesPerSecond))
            if pressed < due {
                widgets.press(GDK_KEY_Page_Down)
                pressed += 1
                if pressed == Self.pageDownPresses { lastPress = Date() }
            }
            // Until nothing was drawn for half a second after the last press (or 30 s).
            let quiet = Date().timeIntervalSince(after.last?.time ?? lastPress)
            return pressed < Self.pageDownPresses || (quiet < 0.5 && Date().timeIntervalSince(lastPress) < 30)
        }
        let final = widgets.selectedPosition
        // The first frame from which the final selection is shown and stays.
        let settledIndex = after.indices.last { $0 == 0 || !(after[$0 - 1].position == final && after[$0 - 1].shown) }
        let settled = settledIndex.map { after[$0] }.flatMap { $0.position == final && $0.shown ? $0 : nil }
        return PageDown(stalls: MainLoopTiming.gaps(ticks), seconds: lastPress.timeIntervalSince(Date(timeIntervalSinceReferenceDate: ticks.first ?? 0)),
                        settled: settled.map { $0.time.timeIntervalSince(lastPress) } ?? .infinity,
                        settledFrames: settledIndex.map { $0 + 1 } ?? 0, from: from, to: final ?? -1, isShown: settled != nil)
    }

    /// Scrolls the list to its end and back by its vertical adjustment, 100 steps each way,
    /// each drawn; returns the frames drawn.
    @MainActor private func scrollToEndAndBack(_ widgets: Widgets) -> Int {
        let adjustment = gtk_scrollable_get_vadjustment(OpaquePointer(widgets.listView))
        var frames = 0
        let clock = gtk_widget_get_frame_clock(widgets.listView)
        let handler = Signal.connect(UnsafeMutableRawPointer(clock!), "after-paint") { frames += 1 }
        defer { g_signal_handler_disconnect(UnsafeMutableRawPointer(clock!), handler) }
        func scroll(to fraction: Double) {
            let end = gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)
            let drawn = frames
            gtk_adjustment_set_value(adjustment, end * fraction)
            let deadline = Date().addingTimeInterval(1)
            while frames == drawn && Date() < deadline { g_main_context_iteration(nil, 1) }
        }
        for step in 1...100 { scroll(to: Double(step) / 100) }
        // The list's height is estimated from the rows measured so far: at the end, the end may have moved.
        for _ in 0..<5 { scroll(to: 1) }
        for step in (0..<100).reversed() { scroll(to: Double(step) / 100) }
        return frames
    }
}

/// The widgets of a viewer window the benchmark drives, found in its widget tree.
@MainActor private struct Widgets {
    let listView: Widget
    let searchEntry: Widget
    let window: Widget

    init(_ window: ViewerWindow) throws {
        let all = window.window.descendants
        // The search bar's entry: a drop-down has a list view and a search entry of its own in its popover.
        guard let listView = all.first(where: { $0.isA(gtk_list_view_get_type()) && gtk_widget_has_css_class($0, "rich-list") != 0 }),
              let searchEntry = all.first(where: { entry in
                  entry.isA(gtk_search_entry_get_type()) && gtk_widget_get_ancestor(entry, gtk_search_bar_get_type()) != nil
              }) else {
            throw OptionsError("the viewer's window has no list or search entry")
        }
        self.listView = listView
        self.searchEntry = searchEntry
        self.window = window.window
    }

    /// Picks sort order `index`, as the primary menu's radio items do (`win.sort`).
    func sort(_ index: Int32) {
        gtk_widget_activate_action_variant(window, "win.sort", g_variant_new_int32(index))
    }

    private var selection: OpaquePointer { gtk_list_view_get_model(listView.opaque) }

    /// The first selected position (the window's selection is a `GtkMultiSelection`).
    var selectedPosition: Int? {
        let selected = gtk_selection_model_get_selection(selection)
        defer { gtk_bitset_unref(selected) }
        return gtk_bitset_is_empty(selected) != 0 ? nil : Int(gtk_bitset_get_minimum(selected))
    }

    /// The row key of the list's first object (after the first section's header).
    func firstObjectKey() -> Int64? {
        guard let item = g_list_model_get_item(selection, 1) else { return nil }
        defer { g_object_unref(item) }
        return fr_row_from_item(item).map { Int64(fr_row_get_row_key($0)) }
    }

    /// Whether a row GTK shows selected is in view.
    func selectedRowIsShown() -> Bool {
        guard let viewport = gtk_widget_get_parent(listView) else { return false }
        let height = Float(gtk_widget_get_height(viewport))
        return listView.descendants.contains { row in
            guard gtk_widget_get_mapped(row) != 0, gtk_widget_get_state_flags(row).rawValue & GTK_STATE_FLAG_SELECTED.rawValue != 0 else { return false }
            var bounds = graphene_rect_t()
            guard gtk_widget_compute_bounds(row, viewport, &bounds) != 0 else { return false }
            return bounds.origin.y >= 0 && bounds.origin.y + bounds.size.height <= height
        }
    }

    /// Emits GtkEventControllerKey's `key-pressed` on the list's key controllers in turn, as GTK
    /// does for a key press, until one takes it (`g_signal_emit_by_name` is variadic: `g_signal_emitv`).
    func press(_ keyval: Int32) {
        let controllers = gtk_widget_observe_controllers(listView)!
        defer { g_object_unref(UnsafeMutableRawPointer(controllers)) }
        for index in 0..<g_list_model_get_n_items(controllers) {
            let controller = g_list_model_get_item(controllers, index)!
            defer { g_object_unref(controller) }
            guard g_type_check_instance_is_a(controller.assumingMemoryBound(to: GTypeInstance.self), gtk_event_controller_key_get_type()) != 0 else { continue }
            let uintType = GType(7 << 2), booleanType = GType(5 << 2)  // G_TYPE_UINT, G_TYPE_BOOLEAN
            var values = [GValue](repeating: GValue(), count: 4)
            g_value_init(&values[0], gtk_event_controller_key_get_type())
            g_value_set_object(&values[0], controller)
            g_value_init(&values[1], uintType)
            g_value_set_uint(&values[1], guint(keyval))
            g_value_init(&values[2], uintType)
            g_value_init(&values[3], gdk_modifier_type_get_type())
            var result = GValue()
            g_value_init(&result, booleanType)
            g_signal_emitv(values, g_signal_lookup("key-pressed", gtk_event_controller_key_get_type()), 0, &result)
            let handled = g_value_get_boolean(&result) != 0
            for index in values.indices { g_value_unset(&values[index]) }
            if handled { return }
        }
    }
}
