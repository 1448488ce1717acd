import CFetchedResultsModel
import CGtk
import FetchedResults
import Foundation
import ObjectStore

/// What a list item shows: a section header or one of the controller's objects.
public enum ListItemContent<Result: ManagedObject> {
    /// A section header, with the section's name.
    case header(sectionName: String)
    /// An object row.
    case object(Result)
}

/// A `GtkListItemFactory` for a ``FetchedResultsListModel`` whose rows Swift closures make
/// and fill: no C callbacks, no `Unmanaged` boxes.
///
/// ```swift
/// let factory = ListItemFactory(rows: rows) { listItem, content in
///     let label = gtk_list_item_get_child(listItem)  // a GtkLabel, from the default setup
///     switch content {
///     case .header(let name): gtk_label_set_text(OpaquePointer(label), name)
///     case .object(let note): gtk_label_set_text(OpaquePointer(label), note.title)
///     }
/// }
/// let listView = gtk_list_view_new(selection.selectionModelReference(), factory.factoryReference())
/// ```
///
/// Header items are made neither selectable nor activatable. The factory holds the list
/// model weakly; keep both alive as long as the list view shows them.
///
/// ## Topics
/// - ``init(rows:setup:bind:)``
/// - ``factory``
/// - ``factoryReference()``
@MainActor
public final class ListItemFactory<Result: ManagedObject> {
    /// The `GtkListItemFactory *`, owned by this object.
    public let factory: OpaquePointer
    private weak var rows: FetchedResultsListModel<Result>?
    private let setup: (OpaquePointer) -> Void
    private let bind: (OpaquePointer, ListItemContent<Result>) -> Void

    /// A factory for the items of `rows`. `setup` makes a list item's child widget once
    /// (`gtk_list_item_set_child`; a `GtkLabel` by default); `bind` shows an item's content in
    /// it, each time GTK binds the item to a row.
    public init(rows: FetchedResultsListModel<Result>,
                setup: @escaping (_ listItem: OpaquePointer) -> Void = { gtk_list_item_set_child($0, gtk_label_new(nil)) },
                bind: @escaping (_ listItem: OpaquePointer, _ content: ListItemContent<Result>) -> Void) {
        self.rows = rows
        self.setup = setup
        self.bind = bind
        factory = gtk_signal_list_item_factory_new()
        let object = UnsafeMutableRawPointer(factory)
        Signal.connect(object, "setup") { [weak self] item in
            if let self, let item { self.setup(OpaquePointer(item)) }
        }
        Signal.connect(object, "bind") { [weak self] item in
            if let self, let item { self.bind(item: OpaquePointer(item)) }
        }
    }

    isolated deinit { g_object_unref(UnsafeMutableRawPointer(factory)) }

    /// A new reference to ``factory``, for a function that takes ownership of it
    /// (`gtk_list_view_new`).
    public func factoryReference() -> OpaquePointer {
        g_object_ref(UnsafeMutableRawPointer(factory))
        return factory
    }

    private func bind(item listItem: OpaquePointer) {
        guard let rows, let item = gtk_list_item_get_item(listItem), let identity = rows.identity(ofItem: item) else { return }
        switch identity {
        case .header(let name):
            gtk_list_item_set_selectable(listItem, 0)
            gtk_list_item_set_activatable(listItem, 0)
            bind(listItem, .header(sectionName: name))
        case .object(let id):
            gtk_list_item_set_selectable(listItem, 1)
            gtk_list_item_set_activatable(listItem, 1)
            guard let object = try? rows.controller.managedObjectContext.existingObject(with: id) as? Result else { return }
            bind(listItem, .object(object))
        }
    }
}
