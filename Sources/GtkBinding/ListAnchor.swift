import CGtk
import FetchedResults
import ObjectStore

/// Keeps the rows a list view shows where they are on screen while batches change the list.
///
/// GTK 4.8's list view keeps one row, its anchor, in place when the list changes: the row it
/// last scrolled to or gave the keyboard focus to. When a batch moves or deletes that row
/// (a +1 that moves its row up, the focused row deleted by another process), GTK keeps the
/// row that took its position in place instead, and everything on screen shifts by a row:
/// under a still pointer, the next click lands on another row, or on a section header.
///
/// Before each batch, this anchors the list at the first row wholly on screen that the batch
/// neither moves nor removes (nor its section), where that row is: the rows above the
/// changes stay still, and those below them move only by what the batch inserted or removed
/// among them. A batch that replaces the list, or changes more than
/// ``largestBatchFollowed`` rows and sections, is left to GTK.
///
/// ```swift
/// let anchor = ListAnchor(listView: listView, factory: factory)
/// ```
///
/// Keep it as long as the list view: it holds a reference to the list view (a list view
/// destroyed meanwhile is no longer mapped, and is left alone), and the factory weakly.
@MainActor
public final class ListAnchor<Result: ManagedObject> {
    /// The most changes (objects and sections) a batch may have for the list to be anchored
    /// before it: looking for the rows a batch moves reads all its changes.
    public static var largestBatchFollowed: Int { 10_000 }

    private weak var factory: ListItemFactory<Result>?
    private weak var rows: FetchedResultsListModel<Result>?
    private let listView: UnsafeMutablePointer<GtkWidget>

    /// Anchors `listView`, which shows `factory`'s rows, before each batch of the factory's
    /// list model.
    public init(listView: UnsafeMutablePointer<GtkWidget>, factory: ListItemFactory<Result>) {
        self.listView = listView
        self.factory = factory
        rows = factory.rows
        g_object_ref(UnsafeMutableRawPointer(listView))
        factory.rows?.willChange.append { [weak self] batch in self?.anchor(before: batch) }
    }

    isolated deinit { g_object_unref(UnsafeMutableRawPointer(listView)) }

    private func anchor(before batch: ChangeBatch) {
        guard !batch.isReload, batch.objectChanges.count + batch.sectionChanges.count <= Self.largestBatchFollowed,
              gtk_widget_get_mapped(listView) != 0, let factory, let rows else { return }
        let movedSections = Set(batch.sectionChanges.lazy.filter { $0.type == .delete || $0.type == .move }.map(\.index))
        let movedObjects = Set(batch.objectChanges.lazy.filter { $0.type == .delete || $0.type == .move }.map(\.objectID))
        var anchor: (y: Float, position: Int)?
        for listItem in factory.boundListItems {
            let position = Int(gtk_list_item_get_position(listItem))
            guard position != Int(GTK_INVALID_LIST_POSITION), let row = ListItemFactory<Result>.rowWidget(of: listItem),
                  let place = RowPlace(of: row, in: listView), place.isWhollyShown, place.top < anchor?.y ?? .infinity else { continue }
            switch rows.flattened.location(at: position) {
            case .header(let section):
                guard !movedSections.contains(section) else { continue }
            case .object(let indexPath):
                guard !movedSections.contains(indexPath.section),
                      factory.objectID(shownBy: listItem).map({ !movedObjects.contains($0) }) ?? false else { continue }
            case nil:
                continue
            }
            anchor = (place.top, position)
        }
        guard let anchor else { return }
        // GTK keeps a row it scrolls to where it is when the row is wholly in view.
        gtk_widget_activate_action_variant(listView, "list.scroll-to-item", g_variant_new_uint32(guint32(anchor.position)))
    }
}
