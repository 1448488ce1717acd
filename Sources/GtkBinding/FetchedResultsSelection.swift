import CGtk
import FetchedResults
import Foundation
import ObjectStore

/// A `GtkSingleSelection` over a ``FetchedResultsListModel`` that keeps the selected object
/// selected while the list changes.
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
/// ```swift
/// let selection = FetchedResultsSelection(rows: rows)
/// let listView = gtk_list_view_new(selection.selectionModelReference(), factory)
/// selection.didChange = { event in /* show the selected object */ }
/// ```
///
/// ## Topics
/// - ``selectionModel``
/// - ``selectedObject``
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
    /// The `GtkSingleSelection *` (a `GListModel` and `GtkSelectionModel`), owned by this
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
    private var restoreSource: guint = 0
    private var handlers: [(instance: gpointer, id: gulong)] = []

    /// A selection of `rows`, with nothing selected.
    public init(rows: FetchedResultsListModel<Result>) {
        self.rows = rows
        g_object_ref(UnsafeMutableRawPointer(rows.listModel))
        selectionModel = gtk_single_selection_new(rows.listModel)
        gtk_single_selection_set_autoselect(selectionModel, 0)
        gtk_single_selection_set_can_unselect(selectionModel, 1)
        // Autoselect was on while the model was set: it selected the first item, maybe a header.
        gtk_single_selection_set_selected(selectionModel, UInt32.max)
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

    /// The selected position; nil when nothing is selected.
    public var selectedPosition: Int? {
        let position = gtk_single_selection_get_selected(selectionModel)
        return position == UInt32.max ? nil : Int(position)
    }

    /// Selects `object` (nothing when nil or not in the list) and calls ``didChange``.
    public func select(_ object: Result?) {
        let position = object.flatMap { rows.controller.indexPath(for: $0) }.map(rows.position(for:))
        if position == selectedPosition {
            selectionChanged()  // GTK says nothing when nothing changes
        } else {
            gtk_single_selection_set_selected(selectionModel, position.map(guint.init) ?? UInt32.max)
        }
    }

    // MARK: Following the list

    private func selectionChanged() {
        guard !isRestoring else { return }
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
            setSelected(rows.position(for: indexPath))
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
        if !keepingLastPosition { lastPosition = position }
        guard selectedPosition != position else { return }
        isRestoring = true
        gtk_single_selection_set_selected(selectionModel, position.map(guint.init) ?? UInt32.max)
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
