import CGtk
import ObjectStore

/// A `GtkListView` of a selection's rows made by a factory, with what a list whose rows
/// move needs on by default: each click reaches the row under the still pointer
/// (``RowClicks``), the rows on screen stay where they are while a batch moves others
/// (``ListAnchor``), and the keyboard focus stays on the selected row when a tap moves it
/// (``SelectionFocus``), so that Enter after a tap edits the row instead of tapping again.
/// Its list model announces a big growth of a short list in steps
/// (``FetchedResultsListModel/announcesGrowthInSteps``), so that GTK does not make and
/// measure its 200 row widgets in one turn.
///
/// ```swift
/// let list = FetchedResultsListView(selection: selection, factory: factory)
/// gtk_scrolled_window_set_child(scrolled.opaque, list.widget)
/// ```
///
/// Keep the value as long as the list shows: the anchor and the focus repair live in it.
///
/// ## Topics
/// - ``init(selection:factory:)``
/// - ``widget``
/// - ``anchor``
/// - ``focus``
@MainActor
public final class FetchedResultsListView<Result: ManagedObject> {
    /// The `GtkListView`.
    public let widget: UnsafeMutablePointer<GtkWidget>
    /// The rows it shows and their selection.
    public let selection: FetchedResultsSelection<Result>
    /// What makes its rows.
    public let factory: ListItemFactory<Result>
    /// Keeps the rows on screen where they are while a batch moves others.
    public let anchor: ListAnchor<Result>
    /// Keeps the keyboard focus on the selected row when it moves; tell it with
    /// ``SelectionFocus/selectionMoved()`` after an edit of the selected object.
    public let focus: SelectionFocus

    /// A list view of `selection`'s rows, each made by `factory`, with clicks, the anchor,
    /// the focus repair and growth in steps on.
    public init(selection: FetchedResultsSelection<Result>, factory: ListItemFactory<Result>) {
        self.selection = selection
        self.factory = factory
        selection.rows.announcesGrowthInSteps = true
        widget = gtk_list_view_new(selection.selectionModelReference(), factory.factoryReference())
        RowClicks.retargetClicks(in: widget)
        anchor = ListAnchor(listView: widget, factory: factory)
        focus = SelectionFocus(listView: widget, selection: selection, factory: factory)
    }
}
