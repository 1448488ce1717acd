import Datasets
import FetchedResults
import Foundation
import GtkBinding
import ObjectStore

/// One dataset open in a window: its store, context, controller, list model and selection,
/// its ``edits``, and the edits a row makes (a counter tap, a check button, a delete).
final class DatasetSession {
    let dataset: Dataset
    let context: ObjectContext
    let controller: FetchedResultsController<ManagedObject>
    let rows: FetchedResultsListModel<ManagedObject>
    let selection: FetchedResultsSelection<ManagedObject>
    private(set) var sortOption = 0
    private(set) var searchText = ""
    /// Where every edit of the dataset is saved, undone, or kept while the store is busy.
    let edits: Edits
    /// Keeps the context following what other processes commit to the store.
    private var storeFollowing: ObservationToken?
    private let loadObserver = LoadObserver()
    /// The store's sharing through PostgreSQL, while it shares (see +Sharing).
    var sharing: DatasetSharing?

    /// Opens `dataset` on the store at `storeURL` (the dataset's default when nil). The rows
    /// come from the section cache when it is valid; otherwise the list starts empty
    /// (``isLoading``) and they are fetched off the main thread, so that the window shows at
    /// once (``didLoad`` tells when they are in).
    init(dataset: Dataset, storeURL: URL?, busyTimeout: TimeInterval = PersistentStore.defaultBusyTimeout) throws {
        self.dataset = dataset
        context = ObjectContext(store: try dataset.openStore(at: storeURL, busyTimeout: busyTimeout))
        controller = try dataset.makeController(context: context)
        controller.performFetch(completion: loadObserver.loaded)
        rows = try FetchedResultsListModel(controller: controller)
        // A short list that becomes long (a join, a narrow search cleared) reaches GTK's
        // list view a few dozen rows a turn, not ~200 new row widgets in one.
        rows.announcesGrowthInSteps = true
        selection = FetchedResultsSelection(rows: rows, allowsMultipleSelection: true)
        edits = Edits(context: context)
        // Changes from a script, another window, the sqlite3 shell or the sharing engine
        // show as they are committed, like local ones (the store's change feed tells).
        storeFollowing = try context.followStore()
    }

    var view: ViewConfiguration { dataset.view }

    /// Whether the first rows are still being fetched: the list is empty until then.
    var isLoading: Bool { controller.isLoading }

    /// Called once the first rows show (also when a search or sort chosen meanwhile showed
    /// its rows first), or with the error that stopped their fetch; never during `init`.
    var didLoad: ((Error?) -> Void)? {
        get { loadObserver.didLoad }
        set { loadObserver.didLoad = newValue }
    }

    /// Whether the section named `name` is in the list with no objects (sections from their
    /// own entity are listed even when empty).
    func isSectionEmpty(named name: String) -> Bool {
        controller.sections?.first { $0.name == name }?.numberOfObjects == 0
    }

    /// The object of a row (GtkBinding's `object(for:atPosition:)`: from the controller's
    /// batch when it holds the object at `position`).
    func object(for id: ObjectID, atPosition position: Int? = nil) -> ManagedObject? {
        rows.object(for: id, atPosition: position)
    }

    /// The object at a position of the list; nil for a header.
    func object(atPosition position: Int) -> ManagedObject? {
        rows.indexPath(at: position).map(controller.object(at:))
    }

    /// Adds 1 to the dataset's counter attribute (World Cup: a win) and saves.
    func incrementCounter(of object: ManagedObject) throws {
        guard let key = view.counter else { return }
        guard case .integer(let count) = object.attributeValue(forKey: key) else {
            return try change(object, key, to: 1)
        }
        try change(object, key, to: Int(count) + 1)
    }

    /// Sets the dataset's toggle attribute (to-do: done) and saves.
    func setToggle(of object: ManagedObject, to isOn: Bool) throws {
        guard let key = view.toggle, object.attributeValue(forKey: key) != .bool(isOn) else { return }
        try change(object, key, to: isOn)
    }

    /// With sections from their own entity: the to-one relationship from a row to its section.
    var sectionRelationshipKey: String? { controller.sectionRelationshipKeyPath }

    /// The Boolean attribute that shares a section object with every role on a shared
    /// server (to-do: a list's `shared`), when sections come from an entity with an owner.
    var sectionSharedKey: String? {
        guard let entity = view.sectionRequest?.entity, case .owner(_, let shared)? = context.model.entity(named: entity)?.ownership else { return nil }
        return shared
    }

    /// The section object of `object` (to-do: an item's list).
    func section(of object: ManagedObject) -> ManagedObject? {
        sectionRelationshipKey.flatMap { object.relatedObjects(forKey: $0).first as? ManagedObject }
    }

    /// Shares `object`'s section with every role, or stops sharing it, and saves; Undo sets it
    /// back. (The server refuses it unless this desktop's role owns the section.)
    func setSectionShared(of object: ManagedObject, to isShared: Bool) throws {
        guard let key = sectionSharedKey, let section = section(of: object) else { return }
        try change(section, key, to: isShared)
    }

    /// The section object of the selected row, or of the first section: where Add puts a new
    /// row when sections come from their own entity.
    func sectionObjectForNewRow() -> ManagedObject? {
        guard sectionRelationshipKey != nil else { return nil }
        if let selected = selection.selectedObject { return section(of: selected) }
        guard let first = controller.snapshot.first?.sectionObjectID else { return nil }
        return try? context.existingObject(with: first)
    }

    /// Deletes `object` (and what its delete rules take with it) and saves; Undo inserts it again.
    func delete(_ object: ManagedObject) throws {
        let deleted = UndoEntry.DeletedObject(object)
        try edits.save(undoneBy: { _ in .reinsert(deleted) }) { try context.delete(object) }
    }

    /// Deletes `objects` in one save; one Undo inserts them all again.
    func delete(_ objects: [ManagedObject]) throws {
        let deleted = objects.map { UndoEntry.DeletedObject($0) }
        try edits.save(undoneBy: { _ in .reinsertAll(deleted) }) {
            for object in objects { try context.delete(object) }
        }
    }

    /// How the list's objects are called, for `count` of them: "team", "teams".
    func rowNoun(_ count: Int) -> String {
        let noun = ViewConfiguration.words(controller.fetchRequest.entityName).lowercased()
        return count == 1 || noun.hasSuffix("info") ? noun : noun + "s"
    }

    // MARK: Section objects (to-do: lists)

    /// The section objects in the list's order, each with its header's text: when sections
    /// come from their own entity (to-do: its lists), else none.
    var sectionObjects: [(id: ObjectID, title: String)] {
        controller.snapshot.compactMap { section in
            section.sectionObjectID.map { (id: $0, title: view.sectionTitle(forSectionName: section.name)) }
        }
    }

    /// The section object of the section named `name` (its header's text, unless view.json
    /// gives it another); nil when sections are no objects.
    func sectionObjectID(named name: String) -> ObjectID? {
        controller.sections?.first { $0.name == name }?.sectionObjectID
    }

    /// The section object whose row key is `rowKey`; nil when there is none.
    func sectionObject(rowKey: Int64) -> ManagedObject? {
        guard let entity = view.sectionRequest?.entity else { return nil }
        return try? context.existingObject(with: ObjectID(entityName: entity, rowKey: rowKey))
    }

    /// Adds a section object titled `title` and saves; Undo removes it.
    @discardableResult
    func addSection(titled title: String) throws -> ManagedObject? {
        guard let request = view.sectionRequest else { return nil }
        return try edits.save(undoneBy: { $0.map { .remove($0.objectID) } }) {
            let section = try context.insert(entityName: request.entity)
            try section.setValue(title, forKey: request.titleKey)
            return section
        }
    }

    /// Gives a section object another title and saves; Undo gives it back its title.
    func renameSection(_ section: ManagedObject, to title: String) throws {
        guard let key = view.sectionRequest?.titleKey else { return }
        try change(section, key, to: title)
    }

    /// Deletes a section object and its rows (its delete rule) and saves; Undo inserts them
    /// again. Returns how many rows went with it.
    @discardableResult
    func deleteSection(_ section: ManagedObject) throws -> Int {
        let deleted = UndoEntry.DeletedObject(section)
        try edits.save(undoneBy: { _ in .reinsert(deleted) }) { try context.delete(section) }
        return deleted.cascadedMany.values.reduce(0) { $0 + $1.objects.count }
    }

    /// Shows the rows in another order and filtered by another search text: fetched off the
    /// main loop, then shown as one batch (a reload for a new order of a long list). A newer
    /// call supersedes one still fetching. `shown` is called once the rows are shown, or with
    /// the error that stopped the fetch.
    func apply(sortOption: Int? = nil, searchText: String? = nil, shown: @escaping (Error?) -> Void = { _ in }) throws {
        let request = try view.makeFetchRequest(sortOption: sortOption ?? self.sortOption, search: searchText ?? self.searchText)
        self.sortOption = sortOption ?? self.sortOption
        self.searchText = searchText ?? self.searchText
        controller.setFetchRequest(request, completion: shown)
    }

    /// Sets one value and saves (see ``Edits`` for what a failed save leaves); Undo sets the
    /// value it had.
    private func change(_ object: ManagedObject, _ key: String, to value: Any) throws {
        try edits.save(undoneBy: { $0 }) {
            let restore = UndoEntry.restoring([key], of: object)
            try object.setValue(value, forKey: key)
            return restore.counting(changesOf: object)
        }
    }
}

/// Where the end of a session's first fetch is told: made before the session itself, which
/// starts the fetch while it is being initialized.
private final class LoadObserver {
    var didLoad: ((Error?) -> Void)?

    func loaded(_ error: Error?) { didLoad?(error) }
}
