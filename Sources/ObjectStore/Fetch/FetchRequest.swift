/// A description of the objects to fetch: an entity, which of its objects (a
/// ``FetchPredicate``), in what order (``FetchSortDescriptor``s), and how many.
///
/// A value type: copy it, change it, and fetch again.
///
/// ```swift
/// var request = FetchRequest<Team>(entityName: "Team")
/// request.predicate = try FetchPredicate(format: "qualifyingZone == %@", "Europe")
/// request.sortDescriptors = [FetchSortDescriptor(key: "wins", ascending: false)]
/// let teams = try context.fetch(request)
/// ```
///
/// ### The name
///
/// Core Data's name (`NSFetchRequest`, and `FetchRequest` in SwiftUI), which is what a
/// Swift developer who knows the pattern looks for; Foundation on Linux has no type of that
/// name. GRDB has a `FetchRequest` protocol, so a file that imports both modules names ours
/// `ObjectStore.FetchRequest`, or imports it alone with `import struct
/// ObjectStore.FetchRequest` (this package's own files that use GRDB do so). Renaming it
/// (`ObjectFetchRequest`, SwiftData's `FetchDescriptor`) would spare those files one line
/// and cost every other reader the name they know, so it keeps Core Data's.
///
/// ## Topics
/// - ``predicate``
/// - ``sortDescriptors``
/// - ``fetchLimit``
/// - ``fetchOffset``
/// - ``fetchBatchSize``
/// - ``includesPendingChanges``
public struct FetchRequest<Result: ManagedObject>: Sendable, Hashable {
    /// The entity whose objects are fetched.
    public var entityName: String
    /// Which objects; all of them when nil.
    public var predicate: FetchPredicate?
    /// The order; ties (and a request with none) are ordered by primary key.
    public var sortDescriptors: [FetchSortDescriptor]
    /// At most this many objects; 0 for no limit.
    public var fetchLimit: Int = 0
    /// Skips this many objects first.
    public var fetchOffset: Int = 0
    /// With a size above 0, the fetch reads only the IDs of the matching rows, and the values
    /// of objects load this many at a time as they are touched. 0 loads all values at once.
    public var fetchBatchSize: Int = 0
    /// Whether the context's unsaved inserts, updates and deletes count (the default).
    public var includesPendingChanges = true

    public init(entityName: String, predicate: FetchPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// A request for the entity named after `Result` (``ManagedObject/entityName``).
    public init(predicate: FetchPredicate? = nil, sortDescriptors: [FetchSortDescriptor] = []) {
        self.init(entityName: Result.entityName, predicate: predicate, sortDescriptors: sortDescriptors)
    }
}

/// The objects a fetch found, in order. With a batch size, objects are made (as faults) when
/// read, and their values load a batch at a time.
public struct FetchedObjects<Result: ManagedObject>: RandomAccessCollection {
    let context: ObjectContext
    /// The entity of the objects.
    public let entityName: String
    /// The ``ObjectID/rowKey`` of each object, in order.
    public let rowKeys: [Int64]
    let batchSize: Int
    /// The objects, when the fetch loaded their values (no batch size): held here, as Core
    /// Data's result array holds them, so that the context can let go of unchanged objects
    /// nobody holds.
    let loadedObjects: [ManagedObject]?

    /// The IDs of the objects, in order.
    public var objectIDs: [ObjectID] { rowKeys.map { ObjectID(entityName: entityName, rowKey: $0) } }

    public var startIndex: Int { rowKeys.startIndex }
    public var endIndex: Int { rowKeys.endIndex }

    public subscript(position: Int) -> Result {
        // The entity's class was checked against Result when fetching.
        (loadedObjects?[position] ?? context.fetchedObject(at: position, of: self)) as! Result
    }
}
