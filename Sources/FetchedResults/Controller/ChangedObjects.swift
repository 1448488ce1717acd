import Foundation
import ObjectStore

extension FetchedResultsController {
    /// The rows of the fetched entity `changes` may have moved, with the keys that changed
    /// (nil: inserted or deleted, or every key), and whether a section object changed.
    func changedRows(_ changes: ObjectChanges) -> (changed: [Int64: Set<String>?], sectionsChanged: Bool) {
        var changed: [Int64: Set<String>?] = [:]
        var sectionsChanged = false
        for id in changes.inserted { note(id, keys: nil, into: &changed, sectionsChanged: &sectionsChanged) }
        for id in changes.deleted { note(id, keys: nil, into: &changed, sectionsChanged: &sectionsChanged) }
        for (id, keys) in changes.updated { note(id, keys: keys, into: &changed, sectionsChanged: &sectionsChanged) }
        return (changed, sectionsChanged)
    }

    /// The objects of `changed` that were updated (neither inserted nor deleted).
    func updatedObjects(_ changed: [Int64: Set<String>?]) -> Set<ObjectID> {
        Set(changed.compactMap { key, keys in keys != nil ? ObjectID(entityName: entityName, rowKey: key) : nil })
    }

    /// Records `id`'s change when it can change the results: an object of the fetched
    /// entity, or a related object a key path reads (then the objects of the fetched entity
    /// it leads back to), or a section object.
    func note(_ id: ObjectID, keys: Set<String>?, into changed: inout [Int64: Set<String>?], sectionsChanged: inout Bool) {
        if id.entityName == entityName {
            // Spelled out: `changed[key] = existing.map { … }` with `existing` nil removed the
            // entry (an object inserted and updated in one set of changes was dropped).
            switch changed[id.rowKey] {
            case .none:
                changed[id.rowKey] = .some(keys)
            case .some(.some(let existing)):
                changed[id.rowKey] = .some(keys.map { existing.union($0) })
            case .some(.none):
                break   // every key already
            }
            return
        }
        if id.entityName == sectionEntityName { sectionsChanged = true }
        guard let object = try? managedObjectContext.object(with: id) else { return }
        for root in relatedRoots(of: object, changedKeys: keys) where changed[root] == nil {
            changed[root] = .some(["\(id.entityName)"])
        }
    }

    /// The key paths whose values decide membership, section and order, each as its components.
    private var keyPathsRead: [[String]] {
        var paths = fetchRequest.sortDescriptors.map(\.key) + (fetchRequest.predicate?.keyPaths ?? [])
        if let sectionNameKeyPath { paths.append(sectionNameKeyPath) }
        return paths.map { $0.split(separator: ".").map(String.init) }
    }

    /// Those key paths that cross a relationship.
    var watchedKeyPaths: [[String]] {
        keyPathsRead.filter { $0.count > 1 }
    }

    /// The rows of `changed` when every change is an update of keys of the fetched entity
    /// that neither the sort, the sections (their name or relationship) nor the predicate
    /// read (no insert or delete, no section object, nothing a key path follows to another
    /// entity): each object stays where it is, in the list or out of it. Nil otherwise, or
    /// when the keys are not known.
    ///
    /// Core Data's controller reports such a change as an update where the object is; a
    /// page of another desktop's edits of a detail field comes this way, thousands at once.
    func rowsUpdatedInPlace(_ changed: [Int64: Set<String>?], changes: ObjectChanges, sectionsChanged: Bool) -> [Int64: Set<String>?]? {
        guard !changes.invalidatedAllObjects, !sectionsChanged, !changed.isEmpty else { return nil }
        // Sections from their own entity: an object's section is the one its relationship names.
        let paths = keyPathsRead + (sectionRelationshipKeyPath.map { [$0.split(separator: ".").map(String.init)] } ?? [])
        // Another entity's change reaches the list only along a key path across a relationship.
        if paths.contains(where: { $0.count > 1 }),
           [changes.inserted, changes.deleted, Set(changes.updated.keys)].contains(where: { $0.contains { $0.entityName != entityName } }) {
            return nil
        }
        let read = Set(paths.compactMap(\.first))
        for keys in changed.values {
            guard let keys, keys.isDisjoint(with: read) else { return nil }
        }
        return changed
    }

    /// The row keys of fetched-entity objects that reach `object` along a watched key path
    /// whose value `changedKeys` (nil: all) may change.
    func relatedRoots(of object: ManagedObject, changedKeys: Set<String>?) -> Set<Int64> {
        let model = managedObjectContext.model
        var roots: Set<Int64> = []
        for path in watchedKeyPaths {
            // The relationships of the path, from the fetched entity.
            var hops: [RelationshipDescription] = []
            var entity = model.entity(named: entityName)
            for component in path.dropLast() {
                guard let relationship = entity?.relationship(named: component) else { break }
                hops.append(relationship)
                entity = model.entity(named: relationship.destinationEntity)
            }
            for depth in hops.indices where hops[depth].destinationEntity == object.entity.name {
                let next = depth + 1 < hops.count ? hops[depth + 1].name : path[depth + 1]
                let inverse = model.inverse(of: hops[depth])
                guard changedKeys.map({ $0.contains(next) || $0.contains(inverse.name) }) ?? true else { continue }
                var level: [ManagedObject] = [object]
                // A membership change of a first hop: the result object the changed object
                // belonged to before is affected too.
                if depth == 0, let old = object.committedValues(forKeys: [inverse.name])[inverse.name] as? ObjectID {
                    roots.insert(old.rowKey)
                }
                for hop in hops[0...depth].reversed() {
                    let back = model.inverse(of: hop)
                    level = level.flatMap { $0.relatedObjects(forKey: back.name).compactMap { $0 as? ManagedObject } }
                }
                roots.formUnion(level.filter { $0.entity.name == entityName }.map(\.objectID.rowKey))
            }
        }
        return roots
    }
}
