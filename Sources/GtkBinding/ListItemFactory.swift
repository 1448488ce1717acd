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
/// Header items are made neither selectable nor activatable. The factory knows which row
/// shows which object and which header now (``rowWidget(showing:)``,
/// ``headerWidget(named:)``): what a window needs to give the keyboard focus to a row that
/// moved (``SelectionFocus``) or to bring a row into view. The factory holds the list
/// model weakly; keep both alive as long as the list view shows them.
///
/// ## Topics
/// - ``init(rows:setup:bind:unbind:)``
/// - ``factory``
/// - ``factoryReference()``
/// - ``rowWidget(showing:)``
/// - ``headerWidget(named:)``
/// - ``boundHeaders``
@MainActor
public final class ListItemFactory<Result: ManagedObject> {
    /// The `GtkListItemFactory *`, owned by this object.
    public let factory: OpaquePointer
    private(set) weak var rows: FetchedResultsListModel<Result>?
    private let setup: (OpaquePointer) -> Void
    private let bind: (OpaquePointer, ListItemContent<Result>) -> Void
    private let unbind: ((OpaquePointer) -> Void)?
    /// The list items bound to objects now, by object, and to headers, by section name.
    private var objectItems: [ObjectID: OpaquePointer] = [:]
    private var headerItems: [String: OpaquePointer] = [:]
    /// The object each list item was bound to last.
    private var shownObjects: [OpaquePointer: ObjectID] = [:]
    /// The item each list item was bound to last (held, so that a new item cannot take its
    /// address) and that item's revision (`fr_row_get_revision`: a reload gives an item new
    /// contents).
    private var boundItems: [OpaquePointer: (item: gpointer, revision: guint)] = [:]
    /// The list item GTK is unbinding to bind it again, whose unbind is not passed on yet.
    /// GTK 4.8 unbinds and binds again every row whose position changed, with the same item:
    /// about 200 rows for each insertion near the top. The list model's item stays the same
    /// until its row is announced as changed, so such a pair changes nothing and is passed
    /// over.
    private var rebinding: OpaquePointer?

    /// A factory for the items of `rows`. `setup` makes a list item's child widget once
    /// (`gtk_list_item_set_child`; a `GtkLabel` by default); `bind` shows an item's content in
    /// it when GTK gives the list item another item, or its row was announced as changed;
    /// `unbind`, when given, is told when GTK takes the item off its row for good.
    ///
    /// GTK 4.8 unbinds and binds again every row whose position changed (all the rows it
    /// holds after an insertion). Such a row shows the same item, unchanged: `unbind` and
    /// `bind` are not called for it, so that they may do real work.
    public init(rows: FetchedResultsListModel<Result>,
                setup: @escaping (_ listItem: OpaquePointer) -> Void = { gtk_list_item_set_child($0, gtk_label_new(nil)) },
                bind: @escaping (_ listItem: OpaquePointer, _ content: ListItemContent<Result>) -> Void,
                unbind: ((_ listItem: OpaquePointer) -> Void)? = nil) {
        self.rows = rows
        self.setup = setup
        self.bind = bind
        self.unbind = unbind
        factory = gtk_signal_list_item_factory_new()
        let object = UnsafeMutableRawPointer(factory)
        Signal.connect(object, "setup") { [weak self] item in
            if let self, let item { self.setup(OpaquePointer(item)) }
        }
        Signal.connect(object, "bind") { [weak self] item in
            if let self, let item { self.bind(item: OpaquePointer(item)) }
        }
        Signal.connect(object, "unbind") { [weak self] item in
            if let self, let item { self.unbind(item: OpaquePointer(item)) }
        }
        Signal.connect(object, "teardown") { [weak self] item in
            if let self, let item { self.tearDown(OpaquePointer(item)) }
        }
    }

    isolated deinit {
        for bound in boundItems.values { g_object_unref(bound.item) }
        g_object_unref(UnsafeMutableRawPointer(factory))
    }

    /// A new reference to ``factory``, for a function that takes ownership of it
    /// (`gtk_list_view_new`).
    public func factoryReference() -> OpaquePointer {
        g_object_ref(UnsafeMutableRawPointer(factory))
        return factory
    }

    /// The row widget GTK shows the object `id` in (the parent of the list item's child,
    /// which takes the keyboard focus), when a row is bound to it now.
    public func rowWidget(showing id: ObjectID) -> UnsafeMutablePointer<GtkWidget>? {
        objectItems[id].flatMap(Self.rowWidget(of:))
    }

    /// The row widget GTK shows the header of the section `name` in, when bound now.
    public func headerWidget(named name: String) -> UnsafeMutablePointer<GtkWidget>? {
        headerItems[name].flatMap(Self.rowWidget(of:))
    }

    /// The list items bound to section headers now, by section name (a header is not bound
    /// again when its section empties or fills).
    public var boundHeaders: [String: OpaquePointer] { headerItems }

    /// The list items bound to rows now, objects' and headers'.
    package var boundListItems: [OpaquePointer] { Array(shownObjects.keys) + Array(headerItems.values) }

    /// The object `listItem` is bound to now; nil for a header or an item not bound.
    func objectID(shownBy listItem: OpaquePointer) -> ObjectID? { shownObjects[listItem] }

    package static func rowWidget(of listItem: OpaquePointer) -> UnsafeMutablePointer<GtkWidget>? {
        gtk_list_item_get_child(listItem).flatMap(gtk_widget_get_parent)
    }

    private func bind(item listItem: OpaquePointer) {
        guard let rows, let item = gtk_list_item_get_item(listItem) else { return }
        let revision = fr_row_from_item(item).map(fr_row_get_revision) ?? 0
        if rebinding == listItem {
            rebinding = nil
            // Bound again at a new position: nothing to do when it is the same item, unchanged.
            if let bound = boundItems[listItem], bound.item == item, bound.revision == revision { return }
            passOnUnbind(listItem)
        }
        guard let identity = rows.identity(ofItem: item) else { return }
        g_object_ref(item)
        if let old = boundItems.updateValue((item, revision), forKey: listItem) { g_object_unref(old.item) }
        switch identity {
        case .header(let name):
            gtk_list_item_set_selectable(listItem, 0)
            gtk_list_item_set_activatable(listItem, 0)
            headerItems[name] = listItem
            bind(listItem, .header(sectionName: name))
        case .object(let id):
            gtk_list_item_set_selectable(listItem, 1)
            gtk_list_item_set_activatable(listItem, 1)
            // GTK 4.8 can bind a header's item to an object without unbinding it first.
            forgetHeader(of: listItem)
            objectItems[id] = listItem
            shownObjects[listItem] = id
            guard let object = rows.object(for: id, atPosition: Int(gtk_list_item_get_position(listItem))) else {
                // Gone meanwhile, not shown: the next bind of the item tries again.
                if let bound = boundItems.removeValue(forKey: listItem) { g_object_unref(bound.item) }
                return
            }
            bind(listItem, .object(object))
        }
    }

    /// GTK unbinds `listItem`: passed on, unless GTK binds it again at once to the same item.
    private func unbind(item listItem: OpaquePointer) {
        if let earlier = rebinding, earlier != listItem { passOnUnbind(earlier) }
        rebinding = nil
        // GTK 4.8 unbinds a row it shows (realized) only to bind it again at once
        // (`gtk_list_item_widget_update`); it tears a row down once the row is unrealized,
        // as the row leaves the window (`gtk_list_item_widget_unroot`), and then unbinds it
        // for good, its child still there.
        if let row = Self.rowWidget(of: listItem), gtk_widget_get_realized(row) != 0 {
            rebinding = listItem
        } else {
            passOnUnbind(listItem)
        }
    }

    private func passOnUnbind(_ listItem: OpaquePointer) {
        forget(listItem)
        unbind?(listItem)
    }

    private func forget(_ listItem: OpaquePointer) {
        if let id = shownObjects.removeValue(forKey: listItem), objectItems[id] == listItem { objectItems[id] = nil }
        forgetHeader(of: listItem)
        if let bound = boundItems.removeValue(forKey: listItem) { g_object_unref(bound.item) }
    }

    /// GTK tore `listItem` down: its child is gone, and its unbind was passed on (unless
    /// its factory was replaced while it was shown, which GTK 4.8 tears down realized).
    private func tearDown(_ listItem: OpaquePointer) {
        if rebinding == listItem { rebinding = nil }
        forget(listItem)
    }

    private func forgetHeader(of listItem: OpaquePointer) {
        if let name = headerItems.first(where: { $0.value == listItem })?.key { headerItems[name] = nil }
    }
}
