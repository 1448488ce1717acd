/// A context's identity map: one object per ID for as long as anyone holds the object.
///
/// Objects with unsaved changes are held by the context itself (its changed and unprocessed
/// objects); the registry holds the others weakly, plus the most recently registered ones
/// strongly (``recentCapacity``), so that a batch of faults loaded together survives until it
/// is read. Scrolling a million rows therefore keeps memory flat: an unchanged object nobody
/// holds is released, and made again (as a fault) when asked for again.
struct ObjectRegistry {
    /// How many recently registered objects are kept alive whoever holds them: many batches
    /// of faults (``FetchRequest/fetchBatchSize``), a screenful of rows several times over.
    static let recentCapacity = 2_048

    private struct Entry {
        weak var object: ManagedObject?
    }

    private var entries: [ObjectID: Entry] = [:]
    private var recent: [ManagedObject?] = Array(repeating: nil, count: ObjectRegistry.recentCapacity)
    private var nextRecent = 0
    /// The entry count at which released objects' entries are swept out.
    private var sweepAt = 2 * ObjectRegistry.recentCapacity

    /// The object registered for `id`, while it is alive.
    subscript(id: ObjectID) -> ManagedObject? {
        get { entries[id]?.object }
        set {
            guard let object = newValue else {
                entries[id] = nil
                return
            }
            entries[id] = Entry(object: object)
            recent[nextRecent] = object
            nextRecent = (nextRecent + 1) % recent.count
            if entries.count >= sweepAt { sweep() }
        }
    }

    /// The live objects.
    var objects: [ManagedObject] { entries.values.compactMap(\.object) }

    /// The live objects with their IDs.
    var all: [(id: ObjectID, object: ManagedObject)] {
        entries.compactMap { id, entry in entry.object.map { (id, $0) } }
    }

    /// How many IDs have an entry, released objects' included until the next sweep.
    var entryCount: Int { entries.count }

    /// Removes the entries of released objects; sweeps again when the live ones have doubled.
    private mutating func sweep() {
        entries = entries.filter { $0.value.object != nil }
        sweepAt = max(2 * ObjectRegistry.recentCapacity, 2 * entries.count)
    }
}
