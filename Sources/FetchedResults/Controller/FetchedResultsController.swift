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
    var explicitReporting: ChangeReporting?

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
    let subscribers = BatchSubscribers()

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
    var positions = PositionIndex()
    /// How many times ``indexPath(forObjectID:)`` made its index of places anew (one pass
    /// over every row key): tests check what does not need it.
    package var positionIndexBuilds: Int { positions.builds }
    /// What the controller is doing (loading, making a batch in the background) and what it
    /// holds meanwhile: it decides, the controller carries out its actions (``ControllerStateMachine``).
    var machine = Machine()
    typealias Machine = ControllerStateMachine<(Error?) -> Void, BackgroundBatch>
    /// A batch being made in the background, which the state machine carries while it runs.
    enum BackgroundBatch {
        /// Changed objects placed by searches on a reader (`Placement/PlacingInBackground.swift`).
        case placing(Placing)
        /// The results fetched again on a reader (`Loading/RefetchingInBackground.swift`).
        case refetching(Refetching)
    }
    /// How many background fetches of a batch in a row found the store moved on under them:
    /// at the third, the batch is made at once.
    var backgroundRefetchMisses = 0
    /// Whether ``performFetch()`` (or ``performFetch(completion:)``) ran.
    var hasFetched: Bool { machine.hasFetched }
    /// Whether the first results are still being fetched in the background
    /// (``performFetch(completion:)``): until they show, ``sections`` is empty, and the
    /// context's changes are held, to be placed on the results.
    public var isLoading: Bool { machine.isLoading }
    /// The thresholds that choose how a batch is made (tests lower them so that small stores
    /// take every way).
    package var policy = BatchPolicy()
    /// How many rows make a list long enough for a new sort order set by
    /// ``setFetchRequest(_:completion:)`` to reload it (``ChangeBatch/reloadedSections``)
    /// rather than name a move for nearly every object. 20,000 unless set.
    public var reloadThreshold: Int {
        get { policy.reloadThreshold }
        set { policy.reloadThreshold = newValue }
    }
    /// What the controller did, counted for tests: which ways its batches took.
    package var counts = Counts()
    /// Whether a batch is being made in the background: changed objects placed, or the
    /// results fetched again (for tests).
    package var isMakingBatchInBackground: Bool { machine.isMakingBatch }
    /// How many background fetches a newer request interrupted before they ended (for tests).
    package var interruptedFetches: Int { backgroundFetches.interrupted }
    /// Counts the requests set: a background fetch whose count is no longer the last is
    /// superseded.
    let backgroundFetches = RequestGenerations()
    var observation: ObservationToken?

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
        // The fetch saw every change held while the first results were being fetched.
        let finished = machine.fetchedAtOnce()
        updateObservation()
        run(finished)
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
        run(machine.fetchedAtOnce())
    }

    /// All fetched objects, in section order (nil before ``performFetch()``).
    public var fetchedObjects: [Result]? {
        guard hasFetched else { return nil }
        return layout.indices.flatMap { s in layout[s].keys.indices.map { object(at: IndexPath(item: $0, section: s)) } }
    }

    /// The number of sections, without making their ``SectionInfo``s (a list binding asks it
    /// for every row it binds).
    package var numberOfSections: Int { layout.count }

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

    /// Which ways a controller's batches took, counted for tests.
    package struct Counts {
        /// Placements whose searches ran in the background.
        package var backgroundPlacements = 0
        /// Batches made by fetching the results again in the background.
        package var backgroundRefetches = 0
        /// Of those, the ones that showed changes held while they fetched in the same batch.
        package var backgroundRefetchesWithHeldChanges = 0
        /// Background fetches whose results were not shown: the context was past them, held
        /// unsaved changes, or the list changed.
        package var backgroundRefetchesNotShown = 0
        /// Batches of many changed objects made by fetching again only the sections they
        /// left or entered.
        package var partialRefetches = 0
        /// New requests fetched in two halves at once.
        package var splitFetches = 0
        /// Batches of updates of keys the request does not read, made without a search or a
        /// fetch (``rowsUpdatedInPlace(_:changes:sectionsChanged:)``).
        package var updatesInPlace = 0
    }
}
