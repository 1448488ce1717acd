import Foundation
import GRDB

/// Where many objects belong among lists of row keys (a controller's sections), searched
/// together: their binary searches advance in step, one query a step for the rows all of
/// them probe (about 20 queries among a million rows, whatever the number of objects or
/// lists), reading only the sort columns. Made on the context's queue
/// (``ObjectContext/insertionSearch(of:in:entityName:sortedBy:)``), with the values of the
/// objects and of the context's unsaved changes taken then; it reads nothing of the context
/// afterwards, so it can run on a reader of the store, off the context's queue
/// (``run()``), while the queue goes on.
package struct InsertionSearch: Sendable {
    /// The objects searched among one list of row keys.
    package struct Group: Sendable {
        /// The row keys, in the order of the sort descriptors (ties by ID).
        package var keys: [Int64]
        /// The objects' values of the sort keys, and their IDs (for ties).
        package var values: [SortValues]
        package var objectIDs: [ObjectID]
    }

    package var groups: [Group]
    let store: PersistentStore
    let entity: EntityDescription
    let sortDescriptors: [FetchSortDescriptor]
    let types: [AttributeType?]
    /// Rows whose objects have unsaved changes in the context: they compare by those.
    let edited: [Int64: SortValues]

    /// For each group, the index in its keys where each of its objects belongs: that of the
    /// first row it does not follow; and the rows the searches read (a change to one of them
    /// while they ran may have misled them). Nil when a probed row is gone (search another way).
    package func run(in db: Database) throws -> (positions: [[Int]], probed: Set<Int64>)? {
        let columns = sortDescriptors.map { "t0.\($0.key.quotedDatabaseIdentifier)" }.joined(separator: ", ")
        var low = groups.map { [Int](repeating: 0, count: $0.values.count) }
        var high = groups.map { group in [Int](repeating: group.keys.count, count: group.values.count) }
        var probes: [Int64: SortValues] = [:]
        while true {
            var needed: [Int64] = []
            var searching = false
            for (g, group) in groups.enumerated() {
                for i in group.values.indices where low[g][i] < high[g][i] {
                    searching = true
                    let key = group.keys[(low[g][i] + high[g][i]) / 2]
                    if probes[key] == nil, needed.last != key { needed.append(key) }
                }
            }
            if !searching { return (low, Set(probes.keys)) }
            try ObjectContext.forEachRow(of: entity, keys: needed, columns: columns, in: db) { row in
                let key: Int64 = row[0]
                probes[key] = edited[key] ?? SortValues(row: row, types: types, sortedBy: sortDescriptors)
            }
            for (g, group) in groups.enumerated() {
                for i in group.values.indices where low[g][i] < high[g][i] {
                    let mid = (low[g][i] + high[g][i]) / 2
                    guard let other = probes[group.keys[mid]] else { return nil }   // the row is gone
                    let precedes: Bool
                    switch sortDescriptors.compare(other, group.values[i]) {
                    case .orderedAscending: precedes = true
                    case .orderedDescending: precedes = false
                    case .orderedSame: precedes = ObjectID(entityName: entity.name, sqlKey: group.keys[mid]) < group.objectIDs[i]
                    }
                    if precedes { low[g][i] = mid + 1 } else { high[g][i] = mid }
                }
            }
        }
    }

    /// ``run(in:)`` in a read transaction of its own: on a reader of the store, beside its
    /// writer, when the store has readers.
    package func run() async throws -> (positions: [[Int]], probed: Set<Int64>)? {
        try await store.database.read { db in try run(in: db) }
    }
}

extension ObjectContext {
    /// A search of where each group's objects belong among its row keys (of `entityName`, in
    /// the order of `sortDescriptors`, ties by ID), with the objects' values read now
    /// (`values`, when the caller has them, in the order of `groups`' objects). Nil when a
    /// descriptor sorts by a key path across relationships.
    package func insertionSearch(of groups: [(keys: [Int64], objects: [ManagedObject], values: [SortValues]?)], entityName: String,
                                 sortedBy sortDescriptors: [FetchSortDescriptor]) throws -> InsertionSearch? {
        guard sortDescriptors.allSatisfy({ !$0.key.contains(".") }) else { return nil }
        try fulfillFaults(groups.flatMap { $0.objects.filter(\.isFault) })
        let entity = try model.existingEntity(named: entityName)
        // Rows whose objects have unsaved changes compare by those: usually none.
        let edited = Dictionary(changedObjects.filter { $0.entity.name == entityName && !$0.isInserted && !$0.isDeleted }
            .map { ($0.objectID.sqlKey, SortValues(of: $0, sortedBy: sortDescriptors)) }) { a, _ in a }
        return InsertionSearch(
            groups: groups.map { group in
                InsertionSearch.Group(keys: group.keys,
                                      values: group.values ?? group.objects.map { SortValues(of: $0, sortedBy: sortDescriptors) },
                                      objectIDs: group.objects.map(\.objectID))
            },
            store: store, entity: entity, sortDescriptors: sortDescriptors,
            types: sortDescriptors.map { entity.attribute(named: $0.key)?.type }, edited: edited)
    }
}
