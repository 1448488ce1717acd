import Foundation
import ObjectStore

extension FetchedResultsController {
    /// Turns one set of context changes into a change batch for the delegate.
    ///
    /// Most changes are placed in memory, where each changed object now belongs (predicate,
    /// section and sort decided as SQLite would), touching only the changed objects and the
    /// few a binary search compares them with. Requests with a limit or offset, sections
    /// from their own entity, many changed objects at once (``placementLimit(objectCount:)``)
    /// and changes that may touch any object
    /// (``ObjectChanges/invalidatedAllObjects``) fetch the results again and take the difference.
    ///
    /// `mayPlaceInBackground`: the changes were saved elsewhere (merged), so many of them
    /// on a long list may be placed off the context's queue (``backgroundPlacementThreshold``).
    func process(_ changes: ObjectChanges, mayPlaceInBackground: Bool = false) {
        // While the first results are fetched, changes wait for them (see `finishLoading`).
        if loading != nil { return loading!.changes.formUnion(changes) }
        // While changes are placed in the background, the next wait for them.
        if placing != nil {
            placing!.held.formUnion(changes)
            placing!.heldMayPlaceInBackground = placing!.heldMayPlaceInBackground && mayPlaceInBackground
            return
        }
        let context = managedObjectContext
        var changed: [Int64: Set<String>?] = [:]   // row key -> changed keys (nil: inserted/deleted)
        var sectionsChanged = false
        for id in changes.inserted { note(id, keys: nil, into: &changed, sectionsChanged: &sectionsChanged) }
        for id in changes.deleted { note(id, keys: nil, into: &changed, sectionsChanged: &sectionsChanged) }
        for (id, keys) in changes.updated { note(id, keys: keys, into: &changed, sectionsChanged: &sectionsChanged) }
        guard !changed.isEmpty || sectionsChanged || changes.invalidatedAllObjects else { return }
        let updated = Set(changed.compactMap { key, keys in keys != nil ? ObjectID(entityName: entityName, rowKey: key) : nil })

        if sectionFetchRequest != nil || fetchRequest.fetchLimit > 0 || fetchRequest.fetchOffset > 0 || changes.invalidatedAllObjects
            || changed.count > placementLimit {
            let fresh: [Section]
            do {
                let onlyMany = sectionFetchRequest == nil && fetchRequest.fetchLimit == 0 && fetchRequest.fetchOffset == 0 && !changes.invalidatedAllObjects
                let deleted = Set(changes.deleted.filter { $0.entityName == entityName }.map(\.rowKey))
                fresh = try (onlyMany ? layoutFetchingSections(of: changed, deleted: deleted, context: context) : nil)
                    ?? fetchLayout(for: fetchRequest, useCache: false)
            } catch {
                return fail(error)
            }
            // Only the changed objects can have moved: the others keep their order.
            report(from: layout, to: fresh, updated: updated, changedKeys: changes.invalidatedAllObjects ? nil : Set(changed.keys))
            return
        }
        let deleted = Set(changes.deleted.filter { $0.entityName == entityName }.map(\.rowKey))
        placeInMemory(changed: changed, deleted: deleted, context: context,
                      inBackground: mayPlaceInBackground && numberOfObjects >= backgroundPlacementThreshold ? changes : nil)
    }

    /// The results after many changed objects, fetching again only the sections they left or
    /// entered: when sections are named by a text attribute of the fetched entity that the
    /// results are sorted by first (as stored, no case or diacritic folding), every other section keeps its rows and their order (only
    /// changed objects move). Nil when that does not hold, or when a changed object enters a
    /// section not shown yet or one named "" (no value, or an empty text), or when the changed
    /// objects touch more than half the rows: then everything is fetched again.
    ///
    /// A bulk save of 10,000 teams of one zone among a million fetches that zone's rows (a
    /// sixth) rather than all of them.
    private func layoutFetchingSections(of changed: [Int64: Set<String>?], deleted: Set<Int64>, context: ObjectContext) throws -> [Section]? {
        // Sorted first by the exact text (sections by a case- or diacritic-folded order may interleave).
        guard let keyPath = sectionNameKeyPath, !keyPath.contains("."), let first = fetchRequest.sortDescriptors.first,
              first.key == keyPath, first.options.isEmpty,
              context.store.model.entity(named: entityName)?.attribute(named: keyPath)?.type == .string else { return nil }
        // The sections the changed objects were in: one pass, a bitmap look-up a row.
        let changedKeys = KeyMembership(Set(changed.keys))
        var names = Set<String>(), listed = Set<Int64>()
        for section in layout {
            for key in section.keys where changedKeys.contains(key) {
                names.insert(section.name)
                listed.insert(key)
            }
        }
        // The sections they are in now (those the predicate keeps). An object listed before
        // whose section's attribute did not change stays in its section or leaves the
        // results: its section is named already, and its values need not be read (a bulk
        // update of another attribute reads none).
        let moving = changed.filter { key, keys in !listed.contains(key) || keys.map { $0.contains(keyPath) } ?? true }
        names.formUnion(members(of: moving, deleted: deleted, context: context).map(\.section))
        let shown = Set(layout.map(\.name))
        guard shown.count == layout.count else { return nil }
        let rows = layout.reduce(0) { $0 + (names.contains($1.name) ? $1.keys.count : 0) }
        guard !names.contains(""), names.isSubset(of: shown), rows <= numberOfObjects / 2 else { return nil }
        var request = fetchRequest
        let inSections = try FetchPredicate(format: "%K IN %@", keyPath, Array(names))
        request.predicate = request.predicate.map { $0 && inSections } ?? inSections
        let fetched = Dictionary(Self.sections(of: try context.fetchRowKeys(request, sectionNameKeyPath: keyPath)).map { ($0.name, $0.keys) }) { first, _ in first }
        guard fetched.keys.allSatisfy(names.contains) else { return nil }
        partialRefetches += 1
        return layout.compactMap { section in
            guard names.contains(section.name) else { return section }
            guard let keys = fetched[section.name] else { return nil }  // emptied
            var refetched = section
            refetched.keys = keys
            return refetched
        }
    }

    /// How many changed objects are placed in memory when each needs a search of its own (a
    /// sort across a relationship); more are cheaper to fetch again. A placement is a binary
    /// search reading about log2(n) rows, each
    /// about 55 µs (0.36 ms among 100 objects, 1 ms among 100,000), where fetching the row
    /// keys again reads about 4 rows a µs (25 ms for 100,000) and the batch of the refetch
    /// names the same moves: so place up to n / (220 log2 n) objects (27 among 100,000, 227
    /// among a million), and always a few (a person's edits, with unsaved changes a fetch
    /// would have to write into a rolled-back transaction).
    static func placementLimit(objectCount n: Int) -> Int {
        let log2n = Double(Int.bitWidth - max(n, 2).leadingZeroBitCount)
        return max(8, Int(Double(n) / (220 * log2n)))
    }

    /// How many changed objects are placed in memory before fetching again is cheaper:
    /// ``placementLimit(objectCount:)``; when the sort keys are the objects' own attributes,
    /// more, since they are placed together (their searches in step, about 60 µs an
    /// object when this was set, against 0.18 µs a row for a refetch: up to n / 330, 3,000
    /// among a million; an inserted object costs about a third of that since the searches
    /// read only the sort columns, updates were not measured again).
    var placementLimit: Int {
        if let placementOverride { return placementOverride.together }
        let n = numberOfObjects
        let oneByOne = Self.placementLimit(objectCount: n)
        guard fetchRequest.sortDescriptors.allSatisfy({ !$0.key.contains(".") }) else { return oneByOne }
        return max(oneByOne, n / 330)
    }

    /// How many changed objects are placed by a search each (a person's edits); more are
    /// placed together when the sort keys are the objects' own attributes: one query a step
    /// of their searches for all of them, and each section's keys merged in one pass rather
    /// than moved for each insertion. Beyond a few dozen objects that costs a fraction of
    /// their searches one by one (an import's chunk of 200 new rows among a million: a
    /// quarter), so a chunk of any size stalls the window about as long as its size says.
    static var placedOneByOne: Int { 16 }

    /// Records `id`'s change when it can change the results: an object of the fetched
    /// entity, or a related object a key path reads (then the objects of the fetched entity
    /// it leads back to), or a section object.
    private func note(_ id: ObjectID, keys: Set<String>?, into changed: inout [Int64: Set<String>?], sectionsChanged: inout Bool) {
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

    /// The key paths whose values decide membership, section and order.
    var watchedKeyPaths: [[String]] {
        var paths = fetchRequest.sortDescriptors.map(\.key) + (fetchRequest.predicate?.keyPaths ?? [])
        if let sectionNameKeyPath { paths.append(sectionNameKeyPath) }
        return paths.map { $0.split(separator: ".").map(String.init) }.filter { $0.count > 1 }
    }

    /// The row keys of fetched-entity objects that reach `object` along a watched key path
    /// whose value `changedKeys` (nil: all) may change.
    private func relatedRoots(of object: ManagedObject, changedKeys: Set<String>?) -> Set<Int64> {
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

    // MARK: Placing changes in memory

    struct Location {
        var section: Int
        var item: Int
    }

    /// A changed object that belongs to the results, with its section's name and, when
    /// many are placed, its sort values.
    struct Member {
        var key: Int64
        var object: ManagedObject
        var section: String
        var values: SortValues? = nil
    }

    /// The changed objects that belong to the results now (not deleted, the predicate
    /// evaluated in memory), their values read in one query, with their sections' names.
    private func members(of changed: [Int64: Set<String>?], deleted: Set<Int64>, context: ObjectContext) -> [Member] {
        let candidates = changed.keys.filter { !deleted.contains($0) }.compactMap { key in
            (try? context.object(with: ObjectID(entityName: entityName, rowKey: key))).map { (key: key, object: $0) }
        }
        try? context.fulfillFaults(candidates.map(\.object))
        let sectionName = sectionNameKeyPath.map { context.sectionNamer(forKeyPath: $0, entityName: entityName) }
        return candidates.compactMap { key, object in
            guard object.managedObjectContext != nil, !object.isDeleted,
                  fetchRequest.predicate?.evaluate(with: object) ?? true else { return nil }
            return Member(key: key, object: object, section: sectionName?(object) ?? "")
        }
    }

    /// Steps 1–3 of a placement: the list less the changed objects (`layout` now), and what
    /// the batch needs of where they were.
    struct Placement {
        var oldLayout: [Section]
        var oldLocations: [Int64: Location] = [:]
        /// Each changed object's place among the unchanged objects of its old section.
        var oldGaps: [Int64: Int] = [:]
        /// The changed objects that belong to the results, in result order.
        var members: [Member] = []
        /// A section whose objects all changed is empty now: its first member stands for it.
        var firstMembers: [String: ManagedObject] = [:]
    }

    /// A placement whose searches run on a reader of the store (``backgroundPlacementThreshold``),
    /// and the changes that came meanwhile, placed once it is shown.
    struct Placing {
        var changes: ObjectChanges
        var placement: Placement
        /// The list with the changed objects taken out and the sections they enter made.
        var prepared: [Section]
        var sectionNames: [String]
        var held = ObjectChanges()
        var heldMayPlaceInBackground = true
    }

    /// Places the changed objects in the list, then tells the delegate. With `inBackground`
    /// (the changes, merged from a save elsewhere, on a long list), the searches of many
    /// objects placed together run on a reader of the store, off the context's queue: the
    /// list and the delegate take them on a later turn of the queue, and changes that come
    /// meanwhile wait for them.
    private func placeInMemory(changed: [Int64: Set<String>?], deleted: Set<Int64>, context: ObjectContext, inBackground: ObjectChanges?) {
        let placement = takeOut(changed: changed, deleted: deleted, context: context)
        let members = placement.members, sorts = fetchRequest.sortDescriptors
        // 4. Put each one in its place: its section (made when new), then a search.
        var placed: (items: [Int64: Int], gaps: [Int64: Int])?
        if members.count > (placementOverride?.oneByOne ?? Self.placedOneByOne),
           let (names, search) = prepareTogether(members, firstMembers: placement.firstMembers, sorts: sorts, context: context) {
            if let inBackground {
                return placeInBackground(Placing(changes: inBackground, placement: placement, prepared: layout, sectionNames: names), search: search)
            }
            placed = (try? context.store.database.read { db in try search.run(in: db) }).flatMap { mergeTogether(members, names: names, at: $0.positions) }
        }
        finish(placement, placed: placed ?? placeOneByOne(members, firstMembers: placement.firstMembers, sorts: sorts, context: context))
    }

    /// Steps 1–3: finds where each changed object was, takes it out of `layout`, and
    /// lists those that belong to the results now, in result order.
    private func takeOut(changed: [Int64: Set<String>?], deleted: Set<Int64>, context: ObjectContext) -> Placement {
        var placement = Placement(oldLayout: layout)
        // 1. Where each changed object was: first in the section its values name now (a
        // change seldom moves an object to another section), then in the others.
        var oldLocations: [Int64: Location] = [:]
        if changed.count <= 16 {
            for key in changed.keys {
                let likely = sectionNameKeyPath.flatMap { keyPath in
                    (try? context.object(with: ObjectID(entityName: entityName, rowKey: key))).flatMap { object in
                        layout.firstIndex { $0.name == context.sectionName(forKeyPath: keyPath, of: object) }
                    }
                }
                for s in (likely.map { [$0] } ?? []) + layout.indices.filter({ $0 != likely }) {
                    if let i = layout[s].keys.firstIndex(of: key) { oldLocations[key] = Location(section: s, item: i); break }
                }
            }
        } else {
            // A bitmap look-up a row; hashing only the changed ones.
            let changedKeys = KeyMembership(Set(changed.keys))
            for (s, section) in layout.enumerated() {
                for (i, key) in section.keys.enumerated() where changedKeys.contains(key) { oldLocations[key] = Location(section: s, item: i) }
            }
        }
        placement.oldLocations = oldLocations
        // 2. Take them out; remember their gap among the unchanged objects of their section.
        for s in layout.indices {
            let mine = oldLocations.filter { $0.value.section == s }.sorted { $0.value.item < $1.value.item }
            for (n, entry) in mine.enumerated() { placement.oldGaps[entry.key] = entry.value.item - n }
            if mine.count > 8 {
                // One pass, not a move of the section's tail for each.
                let leaving = Set(mine.map(\.value.item))
                layout[s].keys = layout[s].keys.enumerated().compactMap { leaving.contains($0.offset) ? nil : $0.element }
            } else {
                for entry in mine.reversed() { layout[s].keys.remove(at: entry.value.item) }
            }
        }
        // 3. Which changed objects belong to the results now, in result order. Those not
        // in memory (merged from another context's save) are read in one query, not one each.
        var members = self.members(of: changed, deleted: deleted, context: context)
        let sorts = fetchRequest.sortDescriptors
        if members.count > 16, sorts.allSatisfy({ !$0.key.contains(".") }) {
            // Many: each object's sort values read once, not at every comparison.
            // Their indexes are sorted: moving the members themselves costs more than comparing them.
            let values = members.map { SortValues(of: $0.object, sortedBy: sorts) }
            let order = members.indices.sorted { a, b in
                switch sorts.compare(values[a], values[b]) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return members[a].object.objectID < members[b].object.objectID
                }
            }
            members = order.map { i in
                var member = members[i]
                member.values = values[i]
                return member
            }
        } else {
            members.sort { a, b in Self.precedes(a.object, b.object, sorts) }
        }
        placement.members = members
        for member in members where placement.firstMembers[member.section] == nil { placement.firstMembers[member.section] = member.object }
        return placement
    }

    /// Step 4 for a few members: each placed by a search of its own, its section made when new.
    private func placeOneByOne(_ members: [Member], firstMembers: [String: ManagedObject], sorts: [FetchSortDescriptor],
                               context: ObjectContext) -> (items: [Int64: Int], gaps: [Int64: Int]) {
        var items: [Int64: Int] = [:], gaps: [Int64: Int] = [:]
        var insertedHere: [String: Int] = [:]
        for member in members {
            let s = sectionIndex(named: member.section, for: member.object, firstMembers: firstMembers, sorts: sorts, context: context)
            let low = insertionIndex(of: member.object, inSection: s, sorts: sorts, context: context)
            layout[s].keys.insert(member.key, at: low)
            items[member.key] = low
            gaps[member.key] = low - insertedHere[member.section, default: 0]
            insertedHere[member.section, default: 0] += 1
        }
        return (items, gaps)
    }

    /// Steps 5–6: sections left empty go, and the delegate is told, by the one
    /// classification: the changed objects, where they were and are, with their gaps among
    /// the unchanged objects, which stay.
    private func finish(_ placement: Placement, placed: (items: [Int64: Int], gaps: [Int64: Int])) {
        // 5. Sections left empty go.
        layout.removeAll { $0.keys.isEmpty }

        // 6. The batch.
        let oldNames = placement.oldLayout.map(\.name)
        let sectionsOnly = { (names: [String]) in names.map { SectionSnapshot(name: $0, objectIDs: []) } }
        var batch = ChangeBatch(sectionChanges: ChangeBatch.sectionChanges(from: sectionsOnly(oldNames), to: sectionsOnly(layout.map(\.name))))
        let newIndexByName = Dictionary(layout.enumerated().map { ($1.name, $0) }) { a, _ in a }
        var oldPlaces = ObjectPlacements<Int64>(capacity: placement.oldLocations.count)
        for (key, old) in placement.oldLocations.sorted(by: { ($0.value.section, $0.value.item) < ($1.value.section, $1.value.item) }) {
            oldPlaces.append(key, at: IndexPath(item: old.item, section: old.section), gap: placement.oldGaps[key]!)
        }
        var newPlaces = ObjectPlacements<Int64>(capacity: placement.members.count)
        // Members went in in result order: a later one never moved an earlier one.
        for member in placement.members {
            newPlaces.append(member.key, at: IndexPath(item: placed.items[member.key]!, section: newIndexByName[member.section]!),
                             gap: placed.gaps[member.key]!)
        }
        batch.objectChanges = ChangeBatch.objectChanges(
            from: oldPlaces, to: newPlaces, sameSection: { oldNames[$0] == self.layout[$1].name },
            isUpdated: { _ in true }, objectID: { ObjectID(entityName: self.entityName, rowKey: $0) })
        deliver(batch, from: placement.oldLayout)
    }

    /// Step 4 for many members, before their searches: every section they enter made (making
    /// one moves the indexes of those after it), and one search for all of them, each
    /// section's members among its keys (``InsertionSearch``). Returns the sections' names,
    /// in the search's order; nil when the searches cannot be made together (the caller
    /// places the members one by one).
    private func prepareTogether(_ members: [Member], firstMembers: [String: ManagedObject], sorts: [FetchSortDescriptor],
                                 context: ObjectContext) -> (names: [String], search: InsertionSearch)? {
        guard sorts.allSatisfy({ !$0.key.contains(".") }) else { return nil }
        var names: [String] = [], groups: [String: [Member]] = [:]
        for member in members {
            if groups[member.section] == nil { names.append(member.section) }
            groups[member.section, default: []].append(member)
        }
        for name in names {
            _ = sectionIndex(named: name, for: groups[name]![0].object, firstMembers: firstMembers, sorts: sorts, context: context)
        }
        let sectionIndexes = Dictionary(layout.enumerated().map { ($1.name, $0) }) { a, _ in a }
        let searched = names.map { name in
            let group = groups[name]!
            return (keys: layout[sectionIndexes[name]!].keys, objects: group.map(\.object),
                    values: group.allSatisfy { $0.values != nil } ? group.map { $0.values! } : nil)
        }
        guard let search = try? context.insertionSearch(of: searched, entityName: entityName, sortedBy: sorts) else { return nil }
        return (names, search)
    }

    /// Step 4 for many members, after their searches: each section's keys and its members
    /// (in result order) merged in one pass at the places found (`positions`, by section as
    /// in `names`). Returns each member's index and gap (its place among the objects that
    /// did not change); nil, with no member placed, when the places are out of order (a
    /// probed row changed under the search: the caller places them one by one).
    private func mergeTogether(_ members: [Member], names: [String], at positions: [[Int]]) -> (items: [Int64: Int], gaps: [Int64: Int])? {
        var groups: [String: [Member]] = [:]
        for member in members { groups[member.section, default: []].append(member) }
        guard positions.count == names.count,
              positions.allSatisfy({ found in zip(found, found.dropFirst()).allSatisfy { $0 <= $1 } }) else { return nil }
        var items: [Int64: Int] = [:], gaps: [Int64: Int] = [:]
        for (name, found) in zip(names, positions) {
            let s = layout.firstIndex { $0.name == name }!
            let keys = layout[s].keys, group = groups[name]!
            var merged: [Int64] = []
            merged.reserveCapacity(keys.count + group.count)
            var next = 0
            for (member, position) in zip(group, found) {
                merged.append(contentsOf: keys[next..<position])
                next = position
                items[member.key] = merged.count
                gaps[member.key] = position
                merged.append(member.key)
            }
            merged.append(contentsOf: keys[next...])
            layout[s].keys = merged
        }
        return (items, gaps)
    }

    /// Starts `placing`'s searches on a reader of the store; the list stays as it was (the
    /// one the delegate knows) until ``finishPlacingInBackground(at:)`` takes the result on the
    /// context's queue.
    private func placeInBackground(_ placing: Placing, search: InsertionSearch) {
        layout = placing.placement.oldLayout
        self.placing = placing
        backgroundPlacements += 1
        let controller = Unchecked(self)
        Task.detached(priority: .userInitiated) {
            let found = (try? await search.run()) ?? nil
            controller.value.managedObjectContext.perform {
                controller.value.finishPlacingInBackground(at: found?.positions, probed: found?.probed ?? [])
            }
        }
    }

    /// Shows a placement whose searches ran in the background (nil `positions`: a probed row
    /// was gone), then places the changes that came meanwhile. When the list changed under
    /// it (a new request, a fetch), its changes are placed on the new list instead; when a
    /// change that came meanwhile touched a row the searches read (`probed`: they may have
    /// read its new values at its old place), both are placed again together.
    private func finishPlacingInBackground(at positions: [[Int]]?, probed: Set<Int64>) {
        guard let placing else { return }
        self.placing = nil
        let context = managedObjectContext
        let placeHeld = {
            guard !placing.held.isEmpty else { return }
            self.process(placing.held.namingSavedObjects(in: context), mayPlaceInBackground: placing.heldMayPlaceInBackground)
        }
        guard layout == placing.placement.oldLayout else {
            process(placing.changes)
            return placeHeld()
        }
        let touched = placing.held.updated.keys.lazy.map { $0 } + placing.held.deleted
        var all = placing.changes
        all.formUnion(placing.held)
        if touched.contains(where: { $0.entityName == entityName && probed.contains($0.rowKey) }) {
            return process(all.namingSavedObjects(in: context), mayPlaceInBackground: placing.heldMayPlaceInBackground)
        }
        if let positions {
            layout = placing.prepared
            if let placed = mergeTogether(placing.placement.members, names: placing.sectionNames, at: positions) {
                finish(placing.placement, placed: placed)
                return placeHeld()
            }
            layout = placing.placement.oldLayout
        }
        // A probed row was gone, or changed under the searches: every change placed again
        // at once, from the current values (a held change may have edited a member).
        process(all.namingSavedObjects(in: context))
    }

    /// Where `object` goes among the objects of section `s`. The context's search reads one
    /// row a probe in one transaction (about 1 ms among 170,000 objects); sorts across
    /// relationships use the binary search below, which faults a batch around each probe,
    /// each in a query of its own (about 3 ms).
    private func insertionIndex(of object: ManagedObject, inSection s: Int, sorts: [FetchSortDescriptor], context: ObjectContext) -> Int {
        if let index = try? context.insertionIndex(of: object, in: layout[s].keys, entityName: entityName, sortedBy: sorts) {
            return index
        }
        let keys = layout[s].keys
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            let other = context.object(at: mid, ofRowKeys: keys, entityName: entityName, batchSize: max(fetchRequest.fetchBatchSize, 0))
            if Self.precedes(other, object, sorts) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The index of the section named `name`, inserting it (empty) in section order when new.
    /// A section emptied by this change is placed by its first member in `firstMembers`
    /// (one without members goes once the members are placed).
    private func sectionIndex(named name: String, for object: ManagedObject, firstMembers: [String: ManagedObject],
                              sorts: [FetchSortDescriptor], context: ObjectContext) -> Int {
        if let index = layout.firstIndex(where: { $0.name == name }) { return index }
        // Sections are in the order of the first sort descriptor, which sorts by the section key.
        let first = Array(sorts.prefix(1))
        let index = layout.firstIndex { section in
            let other = section.keys.first.flatMap { try? context.object(with: ObjectID(entityName: entityName, rowKey: $0)) }
                ?? firstMembers[section.name]
            guard let other else { return false }
            return first.compare(object, other) == .orderedAscending
        } ?? layout.count
        layout.insert(Section(name: name, keys: []), at: index)
        return index
    }

    /// Whether `a` comes before `b`: by the sort descriptors, then by object ID, as SQL orders ties.
    static func precedes(_ a: ManagedObject, _ b: ManagedObject, _ sorts: [FetchSortDescriptor]) -> Bool {
        switch sorts.compare(a, b) {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame: return a.objectID < b.objectID
        }
    }
}
