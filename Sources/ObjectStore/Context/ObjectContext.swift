import Dispatch
import Foundation
import GRDB

/// A scratch pad of objects over a ``PersistentStore``: fetch, insert, change and delete
/// objects, then save them all in one SQLite transaction, or roll back.
///
/// A context holds one object per row (uniquing), tracks every change with the old value,
/// and tells observers what changed (``ContextEvent``). Like Core Data's contexts, a context
/// is used from one queue at a time: its ``queue`` (the main queue by default). Use
/// ``perform(_:)`` to work with a context of another queue.
///
/// ## Topics
/// ### Objects
/// - ``insert(entityName:)``
/// - ``delete(_:)``
/// - ``object(with:)``
/// - ``existingObject(with:)``
/// - ``registeredObjects``
/// ### Fetching
/// - ``fetch(_:)``
/// - ``count(for:)``
/// ### Changes
/// - ``hasChanges``
/// - ``insertedObjects``
/// - ``updatedObjects``
/// - ``deletedObjects``
/// - ``processPendingChanges()``
/// - ``save()``
/// - ``save(mergePolicy:)``
/// - ``mergePolicy``
/// - ``rollback()``
/// - ``refresh(_:mergeChanges:)``
/// - ``refreshAllObjects()``
/// ### Observing
/// - ``addObserver(_:)``
/// - ``mergeChanges(fromContextDidSave:)``
/// - ``automaticallyMergesChangesFromStore``
/// - ``followStore(interval:)``
public final class ObjectContext: @unchecked Sendable {
    /// The store the context reads from and saves to.
    public let store: PersistentStore
    /// The queue the context is used on; observers and merges are delivered there.
    public let queue: DispatchQueue
    /// Whether saves of other contexts on the same store are merged into this one (on
    /// ``queue``) as they happen. On by default.
    public var automaticallyMergesChangesFromStore = true
    /// What ``save()`` does when an object it updates was changed elsewhere since its edit
    /// began (another process, another store on the same file): ``MergePolicy/error`` by
    /// default, which refuses the save and keeps the edits.
    public var mergePolicy: MergePolicy = .error

    public var model: Model { store.model }

    /// Every object the context holds, by ID: changed ones strongly, others while someone
    /// holds them (``ObjectRegistry``).
    var registry = ObjectRegistry()
    /// The permanent IDs of saved objects, by the temporary IDs they had.
    var permanentIDs = RecentIDMap(capacity: 10_000)
    /// Objects with unsaved changes (inserted, updated or deleted).
    var changedObjects: Set<ManagedObject> = []
    /// Changes made since observers were last told.
    var unprocessed = UnprocessedChanges()
    /// Objects with unsaved changes that observers were told of.
    var toldChangedObjects: Set<ManagedObject> = []
    /// How many blocks that process pending changes are queued on ``queue`` and have not run
    /// yet: at most one. A program that keeps its queue busy (`apply` reads its input on the
    /// main thread and never returns to the main queue) would otherwise pile up one block per
    /// edit, each of which finds nothing left to do once a save processed the changes.
    private(set) var queuedProcessingBlocks = 0
    private var observers: [Int: (ContextEvent) -> Void] = [:]
    private var nextObserverKey = 0
    /// The context's subscription to the store's change feed, the one route by which
    /// changes made elsewhere enter it (``takeStoreChanges()``).
    var storeSubscription: StoreChangeFeed.Subscription?
    /// How far the context took the store's changes, and whether it follows every commit.
    var storeFollowing = StoreFollowing()
    /// How this context read the history of changes made elsewhere (for tests).
    package internal(set) var historyReads = HistoryReads()
    /// How many changes recorded elsewhere, at least, the context reads on a reader of the
    /// store rather than on its queue, when the change feed tells it of them (500; lower in
    /// tests, to mix both ways).
    package var historyReadAheadMinimum: Int64 = 500

    struct UnprocessedChanges {
        var inserted: Set<ManagedObject> = []
        var deleted: Set<ManagedObject> = []
        var updatedKeys: [ManagedObject: Set<String>] = [:]
        var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && updatedKeys.isEmpty }
    }

    /// Whether ``queue`` is the main queue.
    private let isMainQueue: Bool

    /// A context on `store`, used on `queue`.
    ///
    /// In debug builds the context checks that it is used on its queue: a call from another
    /// thread stops the program there, naming the call and the queue (Core Data needs
    /// `-com.apple.CoreData.ConcurrencyDebug 1` for that).
    public init(store: PersistentStore, queue: DispatchQueue = .main) {
        self.store = store
        self.queue = queue
        // Each `DispatchQueue.main` is a new wrapper of the one main queue: told by its label.
        isMainQueue = queue.label == DispatchQueue.main.label
        if queue.getSpecific(key: queueMarkKey) == nil {
            queue.setSpecific(key: queueMarkKey, value: QueueMark(queue))
        }
        subscribeToStore()
    }

    deinit {
        // A context let go while it held the store's changes back keeps no history.
        store.keepHistoryInProcess(after: nil, for: ObjectIdentifier(self))
    }

    /// Runs `block` on the context's queue, later.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
    }

    /// Runs `block` on the context's queue and waits for it (runs it at once when already there).
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        if isOnQueue { return try block() }
        return try queue.sync(execute: block)
    }

    /// Whether the calling code runs on the context's queue (the main thread for the main queue).
    var isOnQueue: Bool {
        // The main queue runs on the main thread, or on a worker thread after dispatchMain().
        if isMainQueue { return Thread.isMainThread || DispatchQueue.getSpecific(key: queueMarkKey)?.isMain == true }
        return DispatchQueue.getSpecific(key: queueMarkKey)?.queue === queue
    }

    /// In debug builds, stops a call made off the context's queue: the reads (a fetch, an
    /// object by its ID), which release builds leave unchecked.
    @inline(__always)
    func assertOnQueue(_ function: StaticString = #function) {
        assert(isOnQueue, "ObjectContext.\(function) called off the context's queue (\(queue.label)); use the context inside perform { } or performAndWait { }")
    }

    /// In every build, stops a call made off the context's queue where it would corrupt the
    /// context's state, as GRDB's `SchedulingWatchdog` does for its databases: an insert, a
    /// delete, a value set, pending changes told to observers, a save, a rollback. Two threads
    /// changing one context at once would lose changes or tell observers of changes that
    /// were never made; a crash that names the call is better. (A look-up of the queue's
    /// mark, tens of nanoseconds.)
    @inline(__always)
    func preconditionOnQueue(_ function: StaticString = #function) {
        precondition(isOnQueue, "ObjectContext.\(function) called off the context's queue (\(queue.label)); use the context inside perform { } or performAndWait { }")
    }

    /// Whether the changes observers are being told about were saved elsewhere (merged by
    /// ``mergeChanges(fromContextDidSave:)``): they arrived on a later turn of the queue
    /// anyway, so a list may take a little longer to show them (placing them off the queue),
    /// where a change made here shows before the call that made it returns.
    package internal(set) var isMergingChanges = false

    // MARK: Objects

    /// The objects the context holds.
    public var registeredObjects: Set<ManagedObject> { Set(registry.objects) }
    /// Objects inserted and not saved yet.
    public var insertedObjects: Set<ManagedObject> { changedObjects.filter(\.isInserted) }
    /// Objects with unsaved changes to their properties.
    public var updatedObjects: Set<ManagedObject> { changedObjects.filter(\.isUpdated) }
    /// Objects deleted and not saved yet.
    public var deletedObjects: Set<ManagedObject> { changedObjects.filter { $0.isDeleted && !$0.isInserted } }
    /// Whether some inserted object is not saved yet.
    var hasUnsavedInserts: Bool { changedObjects.contains { $0.isInserted && !$0.isDeleted } }

    /// Whether anything would be saved.
    public var hasChanges: Bool { !changedObjects.isEmpty }

    /// Inserts a new object of the entity `entityName`, with the attributes' default values.
    @discardableResult
    public func insert(entityName: String) throws -> ManagedObject {
        preconditionOnQueue()
        let entity = try model.existingEntity(named: entityName)
        let object = (entity.objectClass ?? ManagedObject.self).init(
            entity: entity, objectID: .makeTemporary(entityName: entity.name), context: self)
        register(inserted: object)
        return object
    }

    /// Inserts a new object of a ``ManagedObject`` subclass that the model maps to an entity.
    ///
    /// Throws ``ContextError`` when the model has no entity for the class.
    public func insert<T: ManagedObject>(_ type: T.Type) throws -> T {
        preconditionOnQueue()
        let entity = try entity(for: T.self)
        let object = T(entity: entity, objectID: .makeTemporary(entityName: entity.name), context: self)
        register(inserted: object)
        return object
    }

    func register(inserted object: ManagedObject) {
        object.isInserted = true
        for attribute in object.entity.attributes {
            object.changes[attribute.name] = .attribute(attribute.defaultValue)
        }
        registry[object.objectID] = object
        changedObjects.insert(object)
        unprocessed.inserted.insert(object)
        scheduleProcessing()
    }

    /// The entity whose objects are made of `type`: the one naming it as its class, or the
    /// one named ``ManagedObject/entityName``.
    func entity(for type: ManagedObject.Type) throws -> EntityDescription {
        if let entity = model.entities.first(where: { $0.objectClass == type }) { return entity }
        guard let entity = model.entity(named: type.entityName) else {
            throw ContextError(.unknownObject, "The model has no entity for class \(type) (its entities are \(model.entities.map(\.name).joined(separator: ", "))); set objectClass on its EntityDescription, or override entityName to name one")
        }
        return entity
    }

    /// The object `id` names: the registered one, or a fault whose values load on first
    /// access. The temporary ID of an object this context saved still names it. Throws when the model has no such entity; does not check that the row exists
    /// (``existingObject(with:)`` does).
    public func object(with id: ObjectID) throws -> ManagedObject {
        assertOnQueue()
        return try registeredObject(with: id)
    }

    /// ``object(with:)`` for the context's own code, which may run inside a database access
    /// (on a queue of GRDB's, called synchronously from the context's queue).
    func registeredObject(with id: ObjectID) throws -> ManagedObject {
        if let object = registry[id] { return object }
        if let saved = permanentIDs[id] { return try registeredObject(with: saved) }
        let entity = try model.existingEntity(named: id.entityName)
        guard !id.isTemporaryID else {
            throw ContextError(.unknownObject, objectID: id, "\(id) is a temporary ID of another context; save that context and use the permanent ID")
        }
        let object = (entity.objectClass ?? ManagedObject.self).init(entity: entity, objectID: id, context: self)
        registry[id] = object
        return object
    }

    /// The object `id` names, with its values loaded; throws when no such row exists.
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        assertOnQueue()
        let object = try registeredObject(with: id)
        if object.isFault { try fulfillFaults([object]) }
        if object.isFault {
            registry[id] = nil
            throw ContextError(.unknownObject, objectID: id, "no object \(id) in the store; it may have been deleted")
        }
        return object
    }

    /// Marks `object` deleted, applying its relationships' delete rules now (cascade deletes
    /// related objects, nullify clears their inverse); `deny` is checked at save.
    public func delete(_ object: ManagedObject) throws {
        preconditionOnQueue()
        guard object.managedObjectContext === self else {
            throw ContextError(.unavailableObject, objectID: object.objectID, "\(object.objectID) does not belong to this context")
        }
        if object.isDeleted { return }
        if object.isFault { try fulfillFaults([object]) }
        for relationship in object.entity.relationships where relationship.deleteRule != .deny {
            let related = try relatedObjects(of: object, relationship: relationship)
            if relationship.deleteRule == .cascade {
                object.isDeleted = true  // so a cycle back to it stops here
                for target in related { try delete(target) }
            } else if !model.storesForeignKey(relationship, of: object.entity) {
                let inverse = model.inverse(of: relationship)
                for target in related where !target.isDeleted {
                    try setStored(.object(nil), of: target, key: inverse.name)
                }
            }
        }
        object.isDeleted = true
        if object.isInserted && unprocessed.inserted.contains(object) {
            // Never seen by observers: it simply never existed.
            unprocessed.inserted.remove(object)
            unprocessed.updatedKeys[object] = nil
            changedObjects.remove(object)
            registry[object.objectID] = nil
            object.managedObjectContext = nil
        } else {
            changedObjects.insert(object)
            unprocessed.deleted.insert(object)
            unprocessed.updatedKeys[object] = nil
        }
        scheduleProcessing()
    }

    // MARK: Observing

    /// Calls `handler` with every ``ContextEvent`` of this context, on its queue, until the
    /// returned token is released or cancelled.
    public func addObserver(_ handler: @escaping (ContextEvent) -> Void) -> ObservationToken {
        let key = nextObserverKey
        nextObserverKey += 1
        observers[key] = handler
        return ObservationToken { [weak self] in self?.observers[key] = nil }
    }

    func post(_ event: ContextEvent) {
        for key in observers.keys.sorted() {
            observers[key]?(event)
        }
    }

    func scheduleProcessing() {
        // A queued block processes whatever is pending when it runs, changes made after a
        // save or fetch processed the earlier ones included: one is enough.
        guard queuedProcessingBlocks == 0 else { return }
        queuedProcessingBlocks += 1
        queue.async { [weak self] in
            guard let self else { return }
            queuedProcessingBlocks -= 1
            processPendingChanges()
        }
    }

    /// Tells observers about the changes made since they were last told
    /// (``ContextEvent/objectsDidChange(_:)``). Runs by itself on the context's queue after
    /// changes, and before a save, fetch or rollback.
    public func processPendingChanges() {
        // Every read calls it: with nothing pending, only debug builds check the queue.
        guard !unprocessed.isEmpty else { return assertOnQueue() }
        preconditionOnQueue()
        post(.objectsDidChange(takeUnprocessedChanges()))
    }

    /// The changes observers were not told yet, by the objects' IDs now; they are then told none.
    func takeUnprocessedChanges() -> ObjectChanges {
        let pending = unprocessed
        unprocessed = UnprocessedChanges()
        toldChangedObjects.formUnion(pending.updatedKeys.keys.filter { changedObjects.contains($0) })
        var changes = ObjectChanges()
        changes.inserted = Set(pending.inserted.map(\.objectID))
        changes.deleted = Set(pending.deleted.map(\.objectID))
        for (object, keys) in pending.updatedKeys where !object.isDeleted && !pending.inserted.contains(object) {
            changes.updated[object.objectID] = keys
        }
        return changes
    }
}

/// What marks a context's queue, so that a context can tell whether code runs on it.
private let queueMarkKey = DispatchSpecificKey<QueueMark>()

private final class QueueMark: Sendable {
    let queue: DispatchQueue
    let isMain: Bool
    init(_ queue: DispatchQueue) {
        self.queue = queue
        isMain = queue.label == DispatchQueue.main.label
    }
}

/// The permanent IDs of the objects a context saved most recently, by their temporary IDs:
/// a temporary ID kept by the code that inserted an object still names it after the save,
/// for the last `capacity` saved objects. Bounded, so that a long-running process that
/// inserts (an `apply` fed for hours) does not grow without end.
struct RecentIDMap {
    private var map: [ObjectID: ObjectID] = [:]
    private var order: [ObjectID] = []
    private var next = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    subscript(temporary: ObjectID) -> ObjectID? {
        get { map[temporary] }
        set {
            guard let newValue else { map[temporary] = nil; return }
            if map.updateValue(newValue, forKey: temporary) != nil { return }
            if order.count < capacity {
                order.append(temporary)
            } else {
                map[order[next]] = nil
                order[next] = temporary
                next = (next + 1) % capacity
            }
        }
    }

    var count: Int { map.count }
}
