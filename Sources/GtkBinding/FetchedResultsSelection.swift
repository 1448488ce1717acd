import CGtk
import FetchedResults
import Foundation
import ObjectStore

/// A `GtkSingleSelection` (or `GtkMultiSelection`) over a ``FetchedResultsListModel`` that
/// keeps the selected object selected while the list changes.
///
/// `GtkSingleSelection` follows positions, and every item the list model announces is a new
/// `FrRow`, so on its own it drops the selection of a row that moved or was updated. This
/// remembers the selected object instead, and after the list changed selects it again at its
/// new position. When the object leaves the list (deleted, or no longer matching the fetch
/// request) a neighbour is selected: the row that took its place, else the one before it.
///
/// The selection is restored once the list is done changing, on the main loop's next idle
/// moment at `G_PRIORITY_HIGH_IDLE`: after every items-changed emission of the batch, before
/// GTK lays out and draws. ``didChange`` then tells what happened. Before a reload (a new
/// order of a long list, one emission replacing every item) GTK's selection is dropped
/// quietly: `GtkSingleSelection` would otherwise look for its item among every new item,
/// asking the list model for each (a million new items for a million rows).
///
/// With `allowsMultipleSelection` it is a `GtkMultiSelection`: Ctrl-click, Shift-click and
/// Ctrl+A select several rows. ``selectedObject`` is then the one the selection started
/// from, followed as above; the other rows selected move with the list as GTK moves them,
/// and a reload (a new order) leaves only ``selectedObject`` selected.
///
/// ```swift
/// let selection = FetchedResultsSelection(rows: rows)
/// let listView = gtk_list_view_new(selection.selectionModelReference(), factory)
/// selection.didChange = { event in /* show the selected object */ }
/// ```
///
/// ## Topics
/// - ``selectionModel``
/// - ``selectedObject``
/// - ``selectedObjects``
/// - ``selectedCount``
/// - ``allowsMultipleSelection``
/// - ``select(_:)``
/// - ``didChange``
/// - ``Event``
@MainActor
public final class FetchedResultsSelection<Result: ManagedObject> {
    /// What changed the selection.
    public enum Event {
        /// The selection was set through GTK (a click, the keyboard) or ``select(_:)``.
        case selected(Result?)
        /// The list changed and the selected object is still in it, selected at its position
        /// now; it may have moved or changed.
        case followed(Result)
        /// The selected object left the list; `neighbour` is selected now (nil when the list
        /// has no object left).
        case removed(Result, neighbour: Result?)
    }

    /// The list model the selection shows.
    public let rows: FetchedResultsListModel<Result>
    /// The `GtkSingleSelection *` or `GtkMultiSelection *` (a `GListModel` and `GtkSelectionModel`), owned by this
    /// object: take a reference before handing it to a function that takes ownership, such as
    /// `gtk_list_view_new` (``selectionModelReference()`` does).
    public let selectionModel: OpaquePointer
    /// The selected object; nil when nothing is selected.
    public private(set) var selectedObject: Result?
    /// Called after the selection changed, through GTK or by following the list.
    public var didChange: ((Event) -> Void)?
    /// Told of each event before ``didChange``: the kit's own followers (``SelectionFocus``).
    var followers: [(Event) -> Void] = []

    /// The position of ``selectedObject`` when it was last seen there.
    private var lastPosition: Int?
    /// Where ``selectedObject`` is in the list, carried through each batch
    /// (`ChangeBatch.indexPath(of:from:)`), so that the selection is restored without asking
    /// the controller, whose index of places a batch that shifts many rows makes stale.
    private var selectedIndexPath: IndexPath?
    private var isRestoring = false
    /// Whether other rows were selected with ``selectedObject`` before the batch being
    /// followed: they stay selected when it is selected again.
    private var keepsOthers = false
    private var restoreSource: guint = 0
    private var handlers: [(instance: gpointer, id: gulong)] = []

    /// Whether several rows may be selected (a `GtkMultiSelection`: Ctrl-click adds a row,
    /// Shift-click a range, Ctrl+A every row); ``selectedObject`` is then the one the
    /// selection started from, and ``selectedObjects`` are all of them.
    public let allowsMultipleSelection: Bool

    /// A selection of `rows`, with nothing selected; of several rows at once when
    /// `allowsMultipleSelection`.
    public init(rows: FetchedResultsListModel<Result>, allowsMultipleSelection: Bool = false) {
        self.rows = rows
        self.allowsMultipleSelection = allowsMultipleSelection
        g_object_ref(UnsafeMutableRawPointer(rows.listModel))
        if allowsMultipleSelection {
            selectionModel = gtk_multi_selection_new(rows.listModel)
        } else {
            selectionModel = gtk_single_selection_new(rows.listModel)
            gtk_single_selection_set_autoselect(selectionModel, 0)
            gtk_single_selection_set_can_unselect(selectionModel, 1)
            // Autoselect was on while the model was set: it selected the first item, maybe a header.
            gtk_single_selection_set_selected(selectionModel, UInt32.max)
        }
        let selection = UnsafeMutableRawPointer(selectionModel), list = UnsafeMutableRawPointer(rows.listModel)
        handlers.append((selection, Signal.connect(selection, "selection-changed") { [weak self] (_: guint, _: guint) in
            self?.selectionChanged()
        }))
        // Connected after the selection model's own handler, so it runs once that one has dropped the selection.
        handlers.append((list, Signal.connect(list, "items-changed") { [weak self] (_: guint, _: guint, _: guint) in
            self?.scheduleRestore()
        }))
        rows.willChange.append { [weak self] batch in
            guard let self, let object = self.selectedObject else { return }
            // Rows selected with it stay selected as GTK moves them; its own row, moved by the
            // batch, is selected again beside them.
            self.keepsOthers = allowsMultipleSelection && self.selectedObjectPositions(limit: 2).count > 1
            self.selectedIndexPath = self.selectedIndexPath.flatMap { batch.indexPath(of: object.objectID, from: $0) }
            if batch.isReload { self.setSelected(nil, keepingLastPosition: true) }
        }
    }

    isolated deinit {
        for (instance, id) in handlers { g_signal_handler_disconnect(instance, id) }
        if restoreSource != 0 { g_source_remove(restoreSource) }
        g_object_unref(UnsafeMutableRawPointer(selectionModel))
    }

    /// A new reference to ``selectionModel``, for a function that takes ownership.
    public func selectionModelReference() -> OpaquePointer {
        g_object_ref(UnsafeMutableRawPointer(selectionModel))
        return selectionModel
    }

    /// The selected position (of ``selectedObject``); nil when nothing is selected.
    public var selectedPosition: Int? {
        guard allowsMultipleSelection else {
            let position = gtk_single_selection_get_selected(selectionModel)
            return position == UInt32.max ? nil : Int(position)
        }
        // The position the selection started from while it is selected, else the first
        // object row selected.
        if let lastPosition, isSelected(lastPosition), rows.indexPath(at: lastPosition) != nil { return lastPosition }
        return selectedObjectPositions(limit: 1).first
    }

    /// Every selected object, in the list's order: ``selectedObject`` alone unless
    /// ``allowsMultipleSelection``. Headers a range or Ctrl+A took in are left out.
    public var selectedObjects: [Result] {
        guard allowsMultipleSelection else { return selectedObject.map { [$0] } ?? [] }
        return selectedObjectPositions().compactMap { rows.indexPath(at: $0).map(rows.controller.object(at:)) }
    }

    /// How many objects are selected (a count of GTK's ranges, not a walk through a
    /// million rows: headers are never left selected).
    public var selectedCount: Int {
        guard allowsMultipleSelection else { return selectedObject == nil ? 0 : 1 }
        let bitset = gtk_selection_model_get_selection(selectionModel)
        defer { gtk_bitset_unref(bitset) }
        return Int(gtk_bitset_get_size(bitset))
    }

    /// Unselects the section headers a Shift-click range or Ctrl+A took in: they are no
    /// objects, and must not look selected.
    private func unselectHeaders() {
        guard allowsMultipleSelection, rows.showsSectionHeaders else { return }
        let bitset = gtk_selection_model_get_selection(selectionModel)
        defer { gtk_bitset_unref(bitset) }
        guard gtk_bitset_is_empty(bitset) == 0 else { return }
        let headers = (0..<(rows.controller.sections?.count ?? 0)).compactMap(rows.position(forSectionHeader:))
            .filter { gtk_bitset_contains(bitset, guint($0)) != 0 }
        guard !headers.isEmpty else { return }
        isRestoring = true
        for header in headers { gtk_selection_model_unselect_item(selectionModel, guint(header)) }
        isRestoring = false
    }

    /// Selects `object` alone (nothing when nil or not in the list) and calls ``didChange``.
    public func select(_ object: Result?) {
        let position = object.flatMap { rows.controller.indexPath(for: $0) }.map(rows.position(for:))
        if position == selectedPosition && selectedCount <= 1 {
            selectionChanged()  // GTK says nothing when nothing changes
        } else {
            lastPosition = position
            selectInGTK(position, alone: true)
        }
    }

    private func isSelected(_ position: Int) -> Bool {
        gtk_selection_model_is_selected(selectionModel, guint(position)) != 0
    }

    /// The selected positions of object rows, first first (at most `limit`).
    private func selectedObjectPositions(limit: Int = .max) -> [Int] {
        let bitset = gtk_selection_model_get_selection(selectionModel)
        defer { gtk_bitset_unref(bitset) }
        var positions: [Int] = []
        var iterator = GtkBitsetIter()
        var value: guint = 0
        var more = gtk_bitset_iter_init_first(&iterator, bitset, &value) != 0
        while more, positions.count < limit {
            if rows.indexPath(at: Int(value)) != nil { positions.append(Int(value)) }
            more = gtk_bitset_iter_next(&iterator, &value) != 0
        }
        return positions
    }

    /// Selects `position` in GTK (nothing when nil): `alone`, or added to the rows selected.
    private func selectInGTK(_ position: Int?, alone: Bool) {
        if !allowsMultipleSelection {
            gtk_single_selection_set_selected(selectionModel, position.map(guint.init) ?? UInt32.max)
        } else if let position {
            gtk_selection_model_select_item(selectionModel, guint(position), alone ? 1 : 0)
        } else {
            gtk_selection_model_unselect_all(selectionModel)
        }
    }

    // MARK: Following the list

    private func selectionChanged() {
        guard !isRestoring else { return }
        unselectHeaders()
        lastPosition = selectedPosition
        selectedIndexPath = lastPosition.flatMap(rows.indexPath(at:))
        selectedObject = selectedIndexPath.map(rows.controller.object(at:))
        tell(.selected(selectedObject))
    }

    private func tell(_ event: Event) {
        for follower in followers { follower(event) }
        didChange?(event)
    }

    private func scheduleRestore() {
        guard restoreSource == 0, selectedObject != nil else { return }
        restoreSource = MainLoop.idle { [weak self] in self?.restore() }
    }

    private func restore() {
        restoreSource = 0
        guard let object = selectedObject else { return }
        // Unknown after a reload: looked for in the list's keys (a pass that reads them),
        // not asked of the controller, whose index of places a reload makes stale (a pass
        // that writes a slot for each).
        selectedIndexPath = selectedIndexPath.flatMap { rows.shows(object.objectID, at: $0) ? $0 : nil }
            ?? rows.indexPath(of: object.objectID)
        if let indexPath = selectedIndexPath {
            // Where a growth announced in steps has not reached yet: selected once a step
            // (an items-changed emission) reaches it, without announcing the rest at once.
            let position = rows.flattened.position(of: indexPath)
            guard position < rows.count else { return }
            setSelected(position)
            tell(.followed(object))
        } else {
            let neighbour = lastPosition.flatMap(neighbourPosition(near:))
            setSelected(neighbour)
            selectedIndexPath = neighbour.flatMap(rows.indexPath(at:))
            selectedObject = selectedIndexPath.map(rows.controller.object(at:))
            tell(.removed(object, neighbour: selectedObject))
        }
    }

    /// Selects `position` in GTK without telling ``didChange``; `keepingLastPosition` keeps
    /// where the selected object was last seen (to find a neighbour if it leaves).
    private func setSelected(_ position: Int?, keepingLastPosition: Bool = false) {
        // Several rows selected: the others stay (GTK moved them with the list).
        let alone = position == nil || !keepsOthers
        if !keepingLastPosition { lastPosition = position }
        guard selectedPosition != position || (position.map { !isSelected($0) } ?? false) else { return }
        isRestoring = true
        selectInGTK(position, alone: alone)
        isRestoring = false
    }

    /// The object row that took the place of a row that left `position`: the row now there,
    /// else the one before it (the end of its section), else the nearest after, else before.
    private func neighbourPosition(near position: Int) -> Int? {
        guard rows.count > 0 else { return nil }
        let start = min(position, rows.count - 1)
        // Walked, not listed: the first object row is a step or two away (past a header).
        func isObject(_ position: Int) -> Bool { position >= 0 && rows.indexPath(at: position) != nil }
        if isObject(start) { return start }
        if isObject(start - 1) { return start - 1 }
        return (start + 1 ..< rows.count).first(where: isObject) ?? (0 ..< max(start - 1, 0)).reversed().first(where: isObject)
    }
}
