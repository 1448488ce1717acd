import Foundation
import ObjectStore

extension FetchedResultsController {
    /// The results after many changed objects, fetching again only the sections they left or
    /// entered: when sections are named by a text attribute of the fetched entity that the
    /// results are sorted by first (as stored, no case or diacritic folding), every other section keeps its rows and their order (only
    /// changed objects move). Nil when that does not hold, or when a changed object enters a
    /// section not shown yet or one named "" (no value, or an empty text), or when the changed
    /// objects touch more than half the rows: then everything is fetched again.
    ///
    /// A bulk save of 10,000 teams of one zone among a million fetches that zone's rows (a
    /// sixth) rather than all of them.
    func layoutFetchingSections(of changed: [Int64: Set<String>?], deleted: Set<Int64>, context: ObjectContext) throws -> [Section]? {
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
        counts.partialRefetches += 1
        return layout.compactMap { section in
            guard names.contains(section.name) else { return section }
            guard let keys = fetched[section.name] else { return nil }  // emptied
            var refetched = section
            refetched.keys = keys
            return refetched
        }
    }
}
