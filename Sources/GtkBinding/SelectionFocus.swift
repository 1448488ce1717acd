import CGtk
import FetchedResults
import ObjectStore

/// Keeps the keyboard focus on the selected row of a list whose rows move.
///
/// GTK 4.8 drops the widget of a row that moved or went at the list's next layout. When that
/// widget had the keyboard focus (the row, or a button inside it that was just clicked),
/// GTK gives the focus to the first widget of the window that takes it: another row's
/// button, a header bar's button, where the next Enter would press that button instead of
/// activating the selected row. And when the selected row moves while the list has the
/// focus, the focus stays at the old place, on whichever row took it, so the arrows go on
/// from there.
///
/// This watches the window's focus and the selection (``FetchedResultsSelection``): a focus
/// lost with its row goes back to the selected row before the next key is handled (on the
/// main loop's next idle moment at `G_PRIORITY_HIGH`), and a focus left on another row when
/// the selected row moved follows it. A row off screen is not scrolled to: the list stays
/// where the person put it. ``repair`` replaces what happens when the focus was lost.
///
/// ```swift
/// let focus = SelectionFocus(listView: listView, selection: selection, factory: factory)
/// ```
///
/// Keep it as long as the window: it holds a reference to the list view, and the selection
/// and the factory weakly. ``RowClicks`` is its companion for clicks on rows that move under
/// a still pointer.
@MainActor
public final class SelectionFocus {
    /// Whether GTK took the focus out of the list with a dropped row's widget, and it has not
    /// been given back to the selected row yet (nor taken elsewhere by the person: a click, Tab).
    public var isLost = false
    /// What gives the focus back when it was lost with its row (called on the next idle
    /// moment, ``isLost`` then telling whether it still is); nil:
    /// ``focusSelectedRow(onScreenOnly:)`` for a row on screen.
    public var repair: (() -> Void)?
    private let listView: UnsafeMutablePointer<GtkWidget>
    private let selectedRowWidget: () -> UnsafeMutablePointer<GtkWidget>?
    /// The list's row that has the focus (or holds the widget that has it), referenced, to
    /// tell when GTK drops it.
    private var focusedRow: UnsafeMutablePointer<GtkWidget>?
    private var watchedWindow: UnsafeMutablePointer<GtkWidget>?

    /// Watches the focus of the window `listView` is in (once it is mapped); the selected
    /// row's widget is `selectedRowWidget()`, nil when none is bound. Call
    /// ``selectionMoved()`` after the selected row moved.
    public init(listView: UnsafeMutablePointer<GtkWidget>, selectedRowWidget: @escaping () -> UnsafeMutablePointer<GtkWidget>?) {
        self.listView = listView
        self.selectedRowWidget = selectedRowWidget
        g_object_ref(UnsafeMutableRawPointer(listView))
        Signal.connect(UnsafeMutableRawPointer(listView), "map") { [weak self] in self?.watchWindow() }
        if gtk_widget_get_mapped(listView) != 0 { watchWindow() }
    }

    /// Keeps the focus on `selection`'s row, found through `factory`; follows the selection.
    public convenience init<Result: ManagedObject>(listView: UnsafeMutablePointer<GtkWidget>, selection: FetchedResultsSelection<Result>,
                                                   factory: ListItemFactory<Result>) {
        self.init(listView: listView) { [weak selection, weak factory] in
            selection?.selectedObject.flatMap { factory?.rowWidget(showing: $0.objectID) }
        }
        selection.followers.append { [weak self] event in
            if case .selected = event { return }
            self?.selectionMoved()
        }
    }

    /// Gives the focus to the selected row when it is bound and mapped (`onScreenOnly`: and
    /// shows in the list's scrolled window); returns whether it did.
    @discardableResult
    public func focusSelectedRow(onScreenOnly: Bool = false) -> Bool {
        guard let row = selectedRowWidget(), gtk_widget_get_mapped(row) != 0, !onScreenOnly || isOnScreen(row) else { return false }
        gtk_widget_grab_focus(row)
        isLost = false
        return true
    }

    /// The selected row moved (or another was selected when it left): a focus lost with its
    /// row, or left on another row of the list, goes to it when it is on screen.
    public func selectionMoved() {
        guard let window = watchedWindow else { return }
        let focus = gtk_root_get_focus(OpaquePointer(window)).flatMap { gtk_widget_get_root($0) != nil ? $0 : nil }
        let inList = focus.map { $0 == listView || gtk_widget_is_ancestor($0, listView) != 0 } ?? false
        guard isLost || inList, let row = selectedRowWidget(), focus != row, !(focus.map { gtk_widget_is_ancestor($0, row) != 0 } ?? false) else { return }
        focusSelectedRow(onScreenOnly: true)
    }

    private func watchWindow() {
        guard let root = gtk_widget_get_root(listView) else { return }
        let window = UnsafeMutableRawPointer(root).assumingMemoryBound(to: GtkWidget.self)
        guard window != watchedWindow else { return }
        watchedWindow = window
        Signal.connect(UnsafeMutableRawPointer(window), "notify::focus-widget") { [weak self] (_: gpointer?) in
            self?.focusMoved(in: window)
        }
        Signal.connect(UnsafeMutableRawPointer(window), "destroy") { [weak self] in self?.release() }
    }

    private func focusMoved(in window: UnsafeMutablePointer<GtkWidget>) {
        let focus = gtk_root_get_focus(OpaquePointer(window))
        // The row widget that has the focus, or holds the widget that has it.
        var row = focus
        while let widget = row, gtk_widget_get_parent(widget) != listView { row = gtk_widget_get_parent(widget) }
        // Lost: from a row GTK took out of the list to a widget other than a row.
        let dropped = focusedRow.map { gtk_widget_get_root($0) == nil && focus != $0 } ?? false
        let lost = dropped && (focus == nil || row != focus)
        // Given back, or taken elsewhere by the person since: it stays there.
        isLost = lost
        if let previous = focusedRow { g_object_unref(UnsafeMutableRawPointer(previous)) }
        focusedRow = row.map { UnsafeMutablePointer(OpaquePointer(g_object_ref(UnsafeMutableRawPointer($0)))) }
        guard lost else { return }
        MainLoop.idle(priority: G_PRIORITY_HIGH) { [weak self] in
            guard let self else { return }
            if let repair = self.repair {
                repair()
            } else if self.isLost {
                self.focusSelectedRow(onScreenOnly: true)
            }
        }
    }

    private func release() {
        if let row = focusedRow { g_object_unref(UnsafeMutableRawPointer(row)) }
        focusedRow = nil
        watchedWindow = nil
    }

    isolated deinit {
        if let row = focusedRow { g_object_unref(UnsafeMutableRawPointer(row)) }
        g_object_unref(UnsafeMutableRawPointer(listView))
    }

    /// Whether some of `row` shows in the list's scrolled window (or the list's parent).
    package func isOnScreen(_ row: UnsafeMutablePointer<GtkWidget>) -> Bool {
        RowPlace(of: row, in: listView)?.isPartlyShown ?? false
    }
}
