import Foundation
import ObjectStore
import Synchronization

/// Keeps the result of a fetch request, split into sections, in step with its context, and
/// tells its delegate exactly what changed: Core Data's `NSFetchedResultsController` for
/// ObjectStore.
///
/// ```swift
/// let controller = FetchedResultsController(
///     fetchRequest: FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "qualifyingZone"),
///                                                        FetchSortDescriptor(key: "wins", ascending: false)]),
///     managedObjectContext: context, sectionNameKeyPath: "qualifyingZone")
/// controller.delegate = self
/// try controller.performFetch()
/// let team = controller.object(at: IndexPath(item: 0, section: 0))
/// ```
///
/// Past Core Data: every change batch is valid under table-view rules (``ChangeBatch``);
/// changes to related objects that a sort, section or predicate key path reads move the
/// affected rows; `fetchLimit` and `fetchOffset` hold through changes; sections can come
/// from their own entity, empty ones included (``init(fetchRequest:sectionFetchRequest:sectionRelationshipKeyPath:sectionNameKey:managedObjectContext:)``);
/// a new request can be applied as an animated batch (``setFetchRequest(_:)``).
///
/// ## Topics
/// ### Fetching
/// - ``performFetch()``
/// - ``performFetch(completion:)``
/// - ``isLoading``
/// - ``fetchedObjects``
/// - ``sections``
/// ### Index paths
/// - ``object(at:)``
/// - ``indexPath(for:)``
/// - ``sectionIndexTitles``
/// - ``section(forSectionIndexTitle:at:)``
/// ### Changes
/// - ``delegate``
/// - ``changeReporting``
/// - ``changeBatches``
/// - ``setFetchRequest(_:)``
/// ### Cache
/// - ``deleteCache(withName:)``
public final class FetchedResultsController<Result: ManagedObject> {
    /// The request whose results the controller keeps.
    public internal(set) var fetchRequest: FetchRequest<Result>
    public let managedObjectContext: ObjectContext
    /// The key path whose value names each object's section; nil for one section.
    public let sectionNameKeyPath: String?
    /// The name under which the section layout is cached between launches; nil for none.
    public let cacheName: String?
    /// With sections from their own entity: the request for the section objects.
    public let sectionFetchRequest: FetchRequest<ManagedObject>?
    /// With sections from their own entity: the to-one key path from a result object to its section object.
    public let sectionRelationshipKeyPath: String?
    /// With sections from their own entity: the section object's attribute that names it.
    public let sectionNameKey: String?
    /// How changes are reported to the delegate: chosen from what the delegate conforms to
    /// unless set (see ``ChangeReporting``). Setting a mode the delegate does not implement
    /// (``ChangeReporting/snapshot`` for a delegate that is no ``FetchedResultsSnapshotDelegate``)
    /// is reported by ``FetchedResultsDiagnostics``.
    public var changeReporting: ChangeReporting {
        get { explicitReporting ?? automaticReporting }
        set {
            explicitReporting = newValue
            checkWiring()
        }
    }
    private var explicitReporting: ChangeReporting?

    /// Told of every change. Without a delegate (or a subscriber to ``changeBatches``), the
    /// controller does not track changes (and costs nothing while the context changes); set
    /// one before or after performFetch.
    public weak var delegate: (any FetchedResultsControllerDelegate<Result>)? {
        didSet {
            checkWiring()
            updateObservation()
        }
    }

    /// Every change batch from now on, as an asynchronous sequence, whatever the delegate's
    /// reporting mode; ends when the task iterating it is cancelled. Batches are delivered on
    /// the context's queue and buffered until read.
    ///
    /// ```swift
    /// for await batch in controller.changeBatches { rows = try batch.applied(to: rows) }
    /// ```
    public var changeBatches: AsyncStream<ChangeBatch> {
        let stream = subscribers.subscribe()
        updateObservation()
        return stream
    }
    private let subscribers = BatchSubscribers()

    /// One section: its name and the row keys of its objects, in order.
    struct Section: Equatable, FetchedResultsControllerLayoutSection {
        var name: String
        var keys: [Int64]
        var sectionObjectKey: Int64? = nil
    }

    var layout: [Section] = [] {
        didSet { positions.listChanged() }
    }
    /// Where each object was last seen: ``indexPath(forObjectID:)`` without a scan.
    private var positions = PositionIndex()
    /// How many times ``indexPath(forObjectID:)`` made its index of places anew (one pass
    /// over every row key): tests check what does not need it.
    package var positionIndexBuilds: Int { positions.builds }
    var hasFetched = false
    /// While the first results are fetched in the background (``performFetch(completion:)``).
    var loading: Loading?
    /// Whether the first results are still being fetched in the background
    /// (``performFetch(completion:)``): until they show, ``sections`` is empty, and the
    /// context's changes are held, to be placed on the results.
    public var isLoading: Bool { loading != nil }
    /// How many rows make a list long enough for a new sort order set by
    /// ``setFetchRequest(_:completion:)`` to reload it (``ChangeBatch/reloadedSections``)
    /// rather than name a move for nearly every object.
    public var reloadThreshold = 20_000
    /// Tests' own limits for placing changed objects one by one and together (see
    /// `placementLimit`), so that small stores take every path.
    package var placementOverride: (oneByOne: Int, together: Int)?
    /// How long a list must be for many changed objects saved elsewhere (an import's chunk)
    /// to be placed off the context's queue: their searches read the store on one of its
    /// readers, and the list takes them on a later turn (tests lower it).
    package var backgroundPlacementThreshold = 50_000
    /// How many placements ran in the background (for tests).
    package var backgroundPlacements = 0
    /// A placement whose searches run in the background, with the changes that came since.
    var placing: Placing?
    /// Whether changed objects are being placed in the background (for tests).
    package var isPlacingInBackground: Bool { placing != nil }
    /// How many times many changed objects were followed by fetching only the sections
    /// they left or entered again (for tests).
    package var partialRefetches = 0
    /// How long a list must be for a new request to be fetched in two halves at once
    /// (`SplitRowKeysQuery`); tests lower it.
    package var splitFetchThreshold = 50_000
    /// How many new requests were fetched in two halves (for tests).
    package var splitFetches = 0
    /// How many background fetches a newer request interrupted before they ended (for tests).
    package var interruptedFetches: Int { backgroundFetches.interrupted }
    /// Counts the requests set: a background fetch whose count is no longer the last is
    /// superseded.
    let backgroundFetches = RequestGenerations()
    private var observation: ObservationToken?

    var entityName: String { fetchRequest.entityName }
    var sectionEntityName: String? { sectionFetchRequest?.entityName }

    /// A controller of `fetchRequest`'s results, split into sections by `sectionNameKeyPath`.
    ///
    /// The request needs sort descriptors, and with a section key path its first sort
    /// descriptor must sort by that key path; ``performFetch()`` says how to fix it otherwise.
    public init(fetchRequest: FetchRequest<Result>, managedObjectContext: ObjectContext,
                sectionNameKeyPath: String? = nil, cacheName: String? = nil) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        self.cacheName = cacheName
        self.sectionFetchRequest = nil
        self.sectionRelationshipKeyPath = nil
        self.sectionNameKey = nil
    }

    /// A controller whose sections are the objects of `sectionFetchRequest`, in its order,
    /// empty ones included; each result object belongs to the section its
    /// `sectionRelationshipKeyPath` (a to-one relationship) names, and is sorted within it by
    /// `fetchRequest`'s sort descriptors. Sections are named by their `sectionNameKey`
    /// attribute; inserted, deleted, renamed and moved sections are all reported.
    public init(fetchRequest: FetchRequest<Result>, sectionFetchRequest: FetchRequest<ManagedObject>,
                sectionRelationshipKeyPath: String, sectionNameKey: String, managedObjectContext: ObjectContext) {
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = nil
        self.cacheName = nil
        self.sectionFetchRequest = sectionFetchRequest
        self.sectionRelationshipKeyPath = sectionRelationshipKeyPath
        self.sectionNameKey = sectionNameKey
    }

    // MARK: Fetching

    /// Fetches the results and computes the sections (or reads them from the cache).
    public func performFetch() throws {
        backgroundFetches.next()
        try validate(fetchRequest)
        layout = try fetchLayout(for: fetchRequest, useCache: true)
        hasFetched = true
        updateObservation()
        // The fetch saw every change held while the first results were being fetched.
        finishLoading(nil, placingHeldChanges: false)
    }

    /// Replaces the request and fetches again, reporting the difference to the delegate as
    /// one animated change batch (a new predicate from a search field, another sort order).
    public func setFetchRequest(_ request: FetchRequest<Result>) throws {
        backgroundFetches.next()
        try validate(request)
        let newLayout = try fetchLayout(for: request, useCache: false)
        fetchRequest = request
        guard hasFetched else {
            layout = newLayout
            return
        }
        report(from: layout, to: newLayout, updated: [])
        finishLoading(nil, placingHeldChanges: false)
    }

    /// All fetched objects, in section order (nil before ``performFetch()``).
    public var fetchedObjects: [Result]? {
        guard hasFetched else { return nil }
        return layout.indices.flatMap { s in layout[s].keys.indices.map { object(at: IndexPath(item: $0, section: s)) } }
    }

    /// The number of fetched objects, without making them.
    public var numberOfObjects: Int { layout.reduce(0) { $0 + $1.keys.count } }

    /// The sections (nil before ``performFetch()``).
    public var sections: [SectionInfo<Result>]? {
        guard hasFetched else { return nil }
        return layout.indices.map { SectionInfo(controller: self, index: $0) }
    }

    /// The object at `indexPath`; faults load `fetchBatchSize` at a time.
    public func object(at indexPath: IndexPath) -> Result {
        let keys = layout[indexPath.section].keys
        return managedObjectContext.object(at: indexPath.item, ofRowKeys: keys, entityName: entityName,
                                           batchSize: max(fetchRequest.fetchBatchSize, 0)) as! Result
    }

    /// The `ObjectStore/ObjectID/rowKey`s of a section's objects, in order: the cheapest
    /// way to read a whole section (a list binding keeps its own copy).
    public func rowKeys(inSection section: Int) -> [Int64] {
        layout[section].keys
    }

    /// The ID of the object at `indexPath`, without making the object.
    public func objectID(at indexPath: IndexPath) -> ObjectID {
        ObjectID(entityName: entityName, rowKey: layout[indexPath.section].keys[indexPath.item])
    }

    /// Where `object` is, or nil when it is not in the results.
    public func indexPath(for object: ManagedObject) -> IndexPath? {
        indexPath(forObjectID: object.objectID)
    }

    /// Where the object with `objectID` is, or nil.
    ///
    /// Answered from an index of the objects' places, checked against the list: a few
    /// microseconds at any position of a million rows.
    public func indexPath(forObjectID objectID: ObjectID) -> IndexPath? {
        guard objectID.entityName == entityName else { return nil }
        return positions.indexPath(of: objectID.rowKey, in: layout)
    }

    /// The sections as names and object IDs.
    public var snapshot: [SectionSnapshot] {
        Self.snapshot(of: layout, entityName: entityName, sectionEntityName: sectionEntityName)
    }

    /// `layout` as a reload's sections (``ChangeBatch/reloadedSections``): the row keys
    /// shared, not copied; the snapshots made only if someone reads them.
    static func reloaded(_ layout: [Section], entityName: String, sectionEntityName: String? = nil) -> ReloadedSections {
        ReloadedSections(layout.map { ReloadedSections.Keyed(name: $0.name, keys: $0.keys, sectionObjectKey: $0.sectionObjectKey) },
                         entityName: entityName, sectionEntityName: sectionEntityName)
    }

    /// `layout` as names and object IDs (on any thread).
    static func snapshot(of layout: [Section], entityName: String, sectionEntityName: String? = nil) -> [SectionSnapshot] {
        layout.map { section in
            SectionSnapshot(name: section.name, objectIDs: section.keys.map { ObjectID(entityName: entityName, rowKey: $0) },
                            sectionObjectID: section.sectionObjectKey.map { ObjectID(entityName: sectionEntityName!, rowKey: $0) })
        }
    }

    // MARK: Section index

    /// The section index titles, one per distinct title, in section order.
    public var sectionIndexTitles: [String] {
        var titles: [String] = []
        for section in layout {
            if let title = sectionIndexTitle(forSectionName: section.name), !titles.contains(title) { titles.append(title) }
        }
        return titles
    }

    /// The delegate's title for a section name, else its first letter capitalized.
    public func sectionIndexTitle(forSectionName sectionName: String) -> String? {
        if let title = delegate?.controller(self, sectionIndexTitleForSectionName: sectionName) { return title }
        return sectionName.first.map { String($0).uppercased() }
    }

    /// The index of the first section whose index title is `title`; else the section at
    /// `index` of ``sectionIndexTitles``' order, clamped to the sections there are.
    public func section(forSectionIndexTitle title: String, at index: Int) -> Int {
        if let found = layout.firstIndex(where: { sectionIndexTitle(forSectionName: $0.name) == title }) { return found }
        return max(0, min(index, layout.count - 1))
    }

    // MARK: Internals

    func validate(_ request: FetchRequest<Result>) throws {
        let context = managedObjectContext
        let entity = try context.model.existingEntity(named: request.entityName)
        if sectionFetchRequest == nil && request.sortDescriptors.isEmpty {
            throw FetchedResultsError(message: "the fetch request for \(entity.name) has no sort descriptors; a controller needs a defined order: add at least one, e.g. FetchSortDescriptor(key: \"\(entity.attributes.first?.name ?? "name")\")")
        }
        if let keyPath = sectionNameKeyPath {
            try context.validateKeyPath(keyPath, for: entity)
            guard let first = request.sortDescriptors.first, first.key == keyPath else {
                throw FetchedResultsError(message: "the first sort descriptor must sort by the section key path '\(keyPath)' so that each section's objects are together; put FetchSortDescriptor(key: \"\(keyPath)\") first")
            }
            guard first.options.isEmpty else {
                throw FetchedResultsError(message: "the sort descriptor of the section key path '\(keyPath)' has options \(first.options); sections group equal values, so sort that key without case or diacritic options")
            }
        }
        if let sectionRequest = sectionFetchRequest, let keyPath = sectionRelationshipKeyPath, let nameKey = sectionNameKey {
            let sectionEntity = try context.model.existingEntity(named: sectionRequest.entityName)
            guard let relationship = entity.relationship(named: keyPath), !relationship.isToMany,
                  relationship.destinationEntity == sectionEntity.name else {
                throw FetchedResultsError(message: "'\(keyPath)' must be a to-one relationship of \(entity.name) to \(sectionEntity.name), the section entity")
            }
            guard sectionEntity.attribute(named: nameKey) != nil else {
                throw FetchedResultsError(message: "the section entity \(sectionEntity.name) has no attribute '\(nameKey)' to name sections")
            }
        }
        // Checked here, without a query: a fetch from the cache does not check them again.
        let objectClass = entity.objectClass ?? ManagedObject.self
        guard objectClass is Result.Type else {
            throw FetchedResultsError(message: "\(entity.name) objects are \(objectClass), not \(Result.self); use FetchedResultsController<\(objectClass)> or <ManagedObject>")
        }
        try request.predicate?.validate(for: entity, in: context.model)
        for descriptor in request.sortDescriptors { try descriptor.validate(for: entity, in: context.model) }
    }

    func fetchLayout(for request: FetchRequest<Result>, useCache: Bool) throws -> [Section] {
        if let sectionRequest = sectionFetchRequest {
            return try fetchSectionEntityLayout(request, sectionRequest: sectionRequest)
        }
        let context = managedObjectContext
        // Read before the fetch: a commit in between makes the cache look stale, never fresh.
        let dependencies = useCache && cacheName != nil
            ? SectionCache.dependencies(request: request, sectionNameKeyPath: sectionNameKeyPath, context: context) : nil
        if let cacheName, let dependencies, let cached: [Section] = SectionCache.read(name: cacheName, dependencies: dependencies) {
            return cached
        }
        let sections = Self.sections(of: try context.fetchRowKeys(request, sectionNameKeyPath: sectionNameKeyPath))
        if let cacheName, let dependencies {
            SectionCache.write(sections, name: cacheName, dependencies: dependencies)
        }
        return sections
    }

    private func fetchSectionEntityLayout(_ request: FetchRequest<Result>, sectionRequest: FetchRequest<ManagedObject>) throws -> [Section] {
        let context = managedObjectContext
        let sectionObjects = try context.fetch(sectionRequest)
        var sections: [Section] = []
        var indexByKey: [Int64: Int] = [:]
        for object in sectionObjects {
            indexByKey[object.objectID.rowKey] = sections.count
            sections.append(Section(name: Self.text(object.attributeValue(forKey: sectionNameKey!)), keys: [], sectionObjectKey: object.objectID.rowKey))
        }
        for object in try context.fetch(request) {
            guard let section = object.relatedObjects(forKey: sectionRelationshipKeyPath!).first as? ManagedObject,
                  let index = indexByKey[section.objectID.rowKey] else { continue }
            sections[index].keys.append(object.objectID.rowKey)
        }
        return sections
    }

    static func text(_ value: Value) -> String {
        switch value {
        case .null: return ""
        case .string(let s): return s
        default: return value.description
        }
    }

    // MARK: Change tracking

    func updateObservation() {
        if (delegate != nil || subscribers.hasSubscribers) && hasFetched {
            if observation == nil {
                observation = managedObjectContext.addObserver { [weak self] event in self?.contextDidChange(event) }
            }
        } else {
            observation = nil
        }
    }

    private func contextDidChange(_ event: ContextEvent) {
        switch event {
        case .objectsDidChange(let changes):
            process(changes, mayPlaceInBackground: managedObjectContext.isMergingChanges)
        case .didSave(let changes):
            // Unsaved objects got their saved keys: same places, new IDs.
            renameSavedObjects(changes)
        }
    }

    /// Tells the delegate how `old` became `new`. `changedKeys`, when known, holds every
    /// object that may have moved: the others kept their order.
    func report(from old: [Section], to new: [Section], updated: Set<ObjectID>, changedKeys: Set<Int64>? = nil) {
        if let batch = knownChangesBatch(from: old, to: new, changedKeys: changedKeys) {
            layout = new
            return deliver(batch, from: old)
        }
        let oldSnapshot = snapshot
        layout = new
        let batch = ChangeBatch.difference(from: oldSnapshot, to: snapshot, updated: updated)
        deliver(batch, from: old)
    }

    /// Tells the delegate (and the ``changeBatches`` subscribers) about `batch`, which turned
    /// the sections `old` into the current ones.
    func deliver(_ batch: ChangeBatch, from old: [Section]) {
        guard !batch.isEmpty else { return }
        positions.follow(batch)
        subscribers.yield(batch)
        guard let delegate else { return }
        switch changeReporting {
        case .changes where batch.sectionChanges.isEmpty && batch.objectChanges.isEmpty:
            // Renames only: nothing for the classic callbacks to say.
            delegate.controller(self, didChangeContentWith: batch)
        case .changes:
            delegate.controllerWillChangeContent(self)
            for change in batch.sectionChanges {
                delegate.controller(self, didChange: change)
                // Core Data's: a deleted section as it was, the others as they are now.
                let index = change.type == .insert || change.type == .update ? change.newIndex ?? change.index : change.index
                let info = change.type == .delete ? SectionInfo(controller: self, index: change.index, frozen: old[change.index])
                    : SectionInfo(controller: self, index: change.newIndex ?? change.index, frozen: layout[change.newIndex ?? change.index])
                delegate.controller(self, didChange: info, atSectionIndex: index, for: change.type)
            }
            for change in batch.objectChanges {
                guard let object = try? managedObjectContext.object(with: change.objectID) as? Result else { continue }
                delegate.controller(self, didChange: object, at: change.indexPath, for: change.type, newIndexPath: change.newIndexPath)
                delegate.controller(self, didChange: object as Any, at: change.indexPath, for: change.type, newIndexPath: change.newIndexPath)
            }
            delegate.controllerDidChangeContent(self)
            delegate.controller(self, didChangeContentWith: batch)
        case .batches:
            delegate.controller(self, didChangeContentWith: batch)
        case .snapshot:
            guard let delegate = delegate as? any FetchedResultsSnapshotDelegate<Result> else { return }
            let reloaded = Set(batch.objectChanges.filter { $0.type == .update || $0.type == .move }.map(\.objectID))
            delegate.controller(self, didChangeContentWith: FetchedSnapshot(sections: snapshot, reloadedObjectIDs: reloaded))
        case .difference:
            guard let delegate = delegate as? any FetchedResultsDifferenceDelegate<Result> else { return }
            // Offsets in the list of all objects, sections one after another.
            let before = old.flatMap(\.keys).map { ObjectID(entityName: entityName, rowKey: $0) }
            let after = layout.flatMap(\.keys).map { ObjectID(entityName: entityName, rowKey: $0) }
            delegate.controller(self, didChangeContentWith: after.difference(from: before).inferringMoves())
        }
    }

    /// The reporting mode a delegate that sets none gets, from what it conforms to.
    private var automaticReporting: ChangeReporting {
        let snapshots = delegate is any FetchedResultsSnapshotDelegate<Result>
        let differences = delegate is any FetchedResultsDifferenceDelegate<Result>
        if snapshots && !differences { return .snapshot }
        if differences && !snapshots { return .difference }
        return .changes
    }

    /// Warns when the reporting mode set calls a method the delegate does not have.
    private func checkWiring() {
        guard let delegate, let explicitReporting else { return }
        let name = String(describing: type(of: delegate))
        switch explicitReporting {
        case .snapshot where !(delegate is any FetchedResultsSnapshotDelegate<Result>):
            FetchedResultsDiagnostics.warn("changeReporting is .snapshot, but \(name) is no FetchedResultsSnapshotDelegate: it would never be told of a change; conform it to FetchedResultsSnapshotDelegate")
        case .difference where !(delegate is any FetchedResultsDifferenceDelegate<Result>):
            FetchedResultsDiagnostics.warn("changeReporting is .difference, but \(name) is no FetchedResultsDifferenceDelegate: it would never be told of a change; conform it to FetchedResultsDifferenceDelegate")
        default:
            break
        }
    }

    /// Tells the delegate that a change could not be followed.
    func fail(_ error: any Error) {
        delegate?.controller(self, didFailWith: error)
    }

    /// Objects the delegate knows by temporary IDs were saved: the same rows take their
    /// permanent IDs, reported as a batch of renames (``ChangeBatch/renamedObjectIDs``).
    private func renameSavedObjects(_ changes: ObjectChanges) {
        var renamed: [ObjectID: ObjectID] = [:]
        for id in changes.inserted where id.entityName == entityName || id.entityName == sectionEntityName {
            guard let object = try? managedObjectContext.object(with: id), let temporary = object.temporaryObjectID else { continue }
            renamed[temporary] = id
        }
        guard !renamed.isEmpty else { return }
        let old = layout
        // The renames of objects the list shows, found as they are renamed: no set of every
        // row key made to ask.
        var shownRenamed: [ObjectID: ObjectID] = [:]
        for s in layout.indices {
            if let key = layout[s].sectionObjectKey, case let temporary = ObjectID(entityName: sectionEntityName ?? "", rowKey: key),
               let id = renamed[temporary] {
                layout[s].sectionObjectKey = id.rowKey
                shownRenamed[temporary] = id
            }
            // Unsaved objects have negative keys: most sections hold none (one pass, not
            // an access of the layout for each key).
            guard layout[s].keys.contains(where: { $0 < 0 }) else { continue }
            for i in layout[s].keys.indices where layout[s].keys[i] < 0 {
                let temporary = ObjectID(entityName: entityName, rowKey: layout[s].keys[i])
                if let id = renamed[temporary] {
                    layout[s].keys[i] = id.rowKey
                    shownRenamed[temporary] = id
                }
            }
        }
        guard !shownRenamed.isEmpty else { return }
        deliver(ChangeBatch(renamedObjectIDs: shownRenamed), from: old)
    }
}
