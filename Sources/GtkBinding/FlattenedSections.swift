import FetchedResults
import Foundation
import ObjectStore

/// The list exactly as GTK sees it at every moment: a copy of a controller's sections (names
/// and row keys) flattened into one list, optionally with a header before each section.
///
/// The controller already holds its new sections when it reports a batch, but GTK reads items
/// while each items-changed emission is delivered, so this copy walks from the old sections
/// to the new ones one step at a time, announcing each step only once it has been taken.
///
/// A step costs O(log n), and no section's keys are copied: rows a batch removes are hidden
/// (announced gone, still in the keys), a section that gains rows takes its new keys at once
/// with those rows hidden until each is announced, and once the batch is followed every
/// section holds the controller's own key arrays (shared until either side changes them),
/// not a copy rewritten for each section a batch touches.
final class FlattenedSections {
    struct Section: Equatable {
        var name: String
        var keys: [Int64]
        /// Indexes into `keys` of rows the list does not show, ascending: removed, or
        /// inserted and not announced yet, by the batch being followed.
        var hidden: ArraySlice<Int> = []

        /// The number of objects shown.
        var count: Int { keys.count - hidden.count }

        /// The keys of the objects shown.
        var shownKeys: [Int64] { hidden.isEmpty ? keys : keys.removing(sortedIndexes: Array(hidden)) }
    }

    /// What stands at one position.
    enum Location: Equatable {
        case header(section: Int)
        case object(IndexPath)
    }

    /// Whether each section starts with a header item.
    let showsHeaders: Bool
    fileprivate(set) var sections: [Section]
    /// The number of items: objects, plus headers when shown.
    fileprivate(set) var count: Int
    /// How many items GTK asked for so far; items are made only for positions asked for.
    private(set) var itemsMade = 0

    fileprivate var headerCount: Int { showsHeaders ? 1 : 0 }

    /// The items `sections` make: their objects, and a header each when headers are shown.
    private static func itemCount(of sections: [Section], showsHeaders: Bool) -> Int {
        sections.reduce(0) { $0 + $1.count + (showsHeaders ? 1 : 0) }
    }

    /// Replaces the whole list by `new`; returns how many items were there and are now.
    fileprivate func replaceAll(by new: [Section]) -> (removed: Int, added: Int) {
        let removed = count
        sections = new
        count = Self.itemCount(of: new, showsHeaders: showsHeaders)
        return (removed, count)
    }

    init(sections: [Section], showsHeaders: Bool) {
        self.sections = sections
        self.showsHeaders = showsHeaders
        self.count = Self.itemCount(of: sections, showsHeaders: showsHeaders)
    }

    // MARK: Positions

    /// The number of objects section `index` shows.
    func numberOfObjects(inSection index: Int) -> Int {
        sections[index].count
    }

    /// The position of section `index`'s first item (its header when shown); `count` for
    /// the end of the list.
    func start(ofSection index: Int) -> Int {
        (0..<index).reduce(0) { $0 + numberOfObjects(inSection: $1) + headerCount }
    }

    func position(of indexPath: IndexPath) -> Int {
        start(ofSection: indexPath.section) + headerCount + indexPath.item
    }

    func location(at position: Int) -> Location? {
        guard position >= 0 else { return nil }
        var rest = position
        for index in sections.indices {
            if rest < headerCount { return .header(section: index) }
            rest -= headerCount
            if rest < numberOfObjects(inSection: index) { return .object(IndexPath(item: rest, section: index)) }
            rest -= numberOfObjects(inSection: index)
        }
        return nil
    }

    /// What one position shows, as GTK's items carry it.
    enum Content: Equatable {
        case header(name: String)
        case object(key: Int64)
    }

    /// While a reload that keeps the held items is announced (`Steps.reloadKeepingHeldItems`):
    /// the list before it, still shown at the positions before `boundary`, which are not
    /// announced yet; `sections` are the new ones, shown from `boundary` on.
    private var reloading: (old: FlattenedSections, boundary: Int)?

    /// What `position` shows as GTK last heard: a header's name or an object's key; nil
    /// past the end.
    func content(at position: Int) -> Content? {
        if let reloading, position < reloading.boundary { return reloading.old.content(at: position) }
        switch location(at: position) {
        case .header(let section)?: return .header(name: sections[section].name)
        case .object(let indexPath)?: return .object(key: key(at: indexPath))
        case nil: return nil
        }
    }

    /// The row key of the object shown at `indexPath`.
    func key(at indexPath: IndexPath) -> Int64 {
        let section = sections[indexPath.section]
        var index = indexPath.item
        if !section.hidden.isEmpty {
            // The item-th index that is not hidden: skip the hidden indexes h[i] with h[i] - i <= item.
            let hidden = section.hidden
            var low = 0, high = hidden.count
            while low < high {
                let mid = (low + high) / 2
                if hidden[hidden.startIndex + mid] - mid <= indexPath.item { low = mid + 1 } else { high = mid }
            }
            index += low
        }
        return section.keys[index]
    }

    func recordItemMade() { itemsMade += 1 }

    // MARK: Applying changes

    /// Walks from the old sections to the new ones by the steps of `ChangeBatch.walk`, calling
    /// `emit(position, removed, added)` once each step is taken. Adjacent steps are announced
    /// together, and so are steps apart when `isHeld(range)` says that nobody holds an item
    /// in the positions between them (as the list was last announced): those rows are
    /// announced again with the steps, removed and added as they are.
    ///
    /// `finalKeys(s)` are the keys section `s` has once the batch is followed, when known
    /// (the controller's, which holds its new sections already): a section takes them,
    /// checked against the batch's rows, instead of a copy of its keys with the batch's rows
    /// put in or taken out.
    ///
    /// A batch that does not fit (one not made by this list's controller) is not followed
    /// step by step: what was announced stands, and the rest of the list is replaced by
    /// `reload()`'s sections in one emission. Returns why the batch did not fit, or nil.
    ///
    /// With `heldItems`, a reload keeps the items held where they are and gives them their
    /// new contents (see `Steps.reloadKeepingHeldItems`).
    @discardableResult
    func apply(_ batch: ChangeBatch, reload: () -> [Section], finalKeys: @escaping (Int) -> [Int64]? = { _ in nil },
               emit: @escaping (Int, Int, Int) -> Void, isHeld: @escaping (Range<Int>) -> Bool = { _ in true },
               heldItems: HeldItems? = nil) -> ChangeBatch.InvalidBatch? {
        // Renames change keys in place: the controller's keys are already renamed.
        let finalKeys = batch.renamedObjectIDs.isEmpty ? finalKeys : { _ in nil }
        var steps = Steps(list: self, emissions: Emissions(emit: emit, isHeld: isHeld), finalKeys: finalKeys, heldItems: heldItems)
        do {
            try batch.walk(&steps)
            steps.emissions.flush()
            settle(finalKeys: finalKeys)
            return nil
        } catch {
            // Each step checks before it changes anything: the list is what was recorded.
            steps.emissions.flush()
            let (removed, added) = replaceAll(by: reload())
            emit(0, removed, added)
            return error as? ChangeBatch.InvalidBatch ?? ChangeBatch.InvalidBatch("\(error)")
        }
    }

    /// Once a batch is followed, each section takes `finalKeys` when they fit (also one the
    /// batch did not touch, whose keys the controller may have fetched anew: the list keeps
    /// no second copy), else drops the rows still hidden (the removed ones of a section that
    /// gained none) from its keys.
    private func settle(finalKeys: (Int) -> [Int64]?) {
        for s in sections.indices {
            if let keys = finalKeys(s), keys.count == sections[s].count {
                sections[s].keys = keys
            } else if !sections[s].hidden.isEmpty {
                sections[s].keys = sections[s].shownKeys
            }
            sections[s].hidden = []
        }
    }

    /// The steps of a batch on the list: each changes the list (hiding rows until they are
    /// announced, and the removed ones until the batch is followed) and records its emission.
    private struct Steps: ChangeBatchSteps {
        unowned let list: FlattenedSections
        var emissions: Emissions
        let finalKeys: (Int) -> [Int64]?
        let heldItems: HeldItems?

        mutating func removeObjects(at indexes: [Int], fromSection section: Int) throws {
            guard list.sections.indices.contains(section), list.sections[section].hidden.isEmpty,
                  indexes.allSatisfy(list.sections[section].keys.indices.contains) else {
                throw ChangeBatch.InvalidBatch("objects removed at \(indexes) of section \(section) are not in the list")
            }
            for k in indexes.indices.reversed() {
                emissions.record(list.position(of: IndexPath(item: indexes[k], section: section)), removed: 1, added: 0)
                list.sections[section].hidden = indexes[k...]
                list.count -= 1
            }
        }

        mutating func removeSection(for change: SectionChange) throws -> Section {
            guard list.sections.indices.contains(change.index) else {
                throw ChangeBatch.InvalidBatch("section \(change.index) is not in the list")
            }
            guard change.type == .move || list.sections[change.index].count == 0 else {
                throw ChangeBatch.InvalidBatch("section \(change.index) is deleted with objects in it")
            }
            let section = list.sections[change.index]
            emissions.record(list.start(ofSection: change.index), removed: section.count + list.headerCount, added: 0)
            list.sections.remove(at: change.index)
            list.count -= section.count + list.headerCount
            return section
        }

        mutating func insertSection(_ moved: Section?, at index: Int, for change: SectionChange) throws {
            guard (0...list.sections.count).contains(index) else {
                throw ChangeBatch.InvalidBatch("section inserted at \(index), past the end of the list")
            }
            let section = Section(name: change.name, keys: moved?.keys ?? [], hidden: moved?.hidden ?? [])
            emissions.record(list.start(ofSection: index), removed: 0, added: section.count + list.headerCount)
            list.sections.insert(section, at: index)
            list.count += section.count + list.headerCount
        }

        /// Each section gets its new keys at once (the final ones when they fit the arrivals),
        /// the new rows hidden until announced.
        mutating func insertObjects(_ arrivals: [ObjectChange], intoSection section: Int) throws {
            let arrivals = arrivals.map { (index: $0.newIndexPath!.item, key: $0.objectID.rowKey) }
            let indexes = arrivals.map(\.index)
            guard list.sections.indices.contains(section),
                  indexes.allSatisfy({ (0..<(list.sections[section].count + indexes.count)).contains($0) }) else {
                throw ChangeBatch.InvalidBatch("objects inserted at \(indexes) of section \(section) do not fit")
            }
            let total = list.sections[section].count + arrivals.count
            list.sections[section].keys = finalKeys(section).flatMap { keys in
                keys.count == total && arrivals.allSatisfy { keys[$0.index] == $0.key } ? keys : nil
            } ?? list.sections[section].shownKeys.inserting(arrivals)
            list.sections[section].hidden = indexes[...]
            for k in indexes.indices {
                emissions.record(list.position(of: IndexPath(item: indexes[k], section: section)), removed: 0, added: 1)
                list.sections[section].hidden = indexes[(k + 1)...]
                list.count += 1
            }
        }

        /// Updated objects and renamed sections are replaced by themselves, so that GTK binds
        /// their rows again.
        mutating func update(objects: [ObjectChange], sections renamed: [SectionChange]) throws {
            for path in objects.compactMap(\.newIndexPath) where !list.sections.indices.contains(path.section)
                || !(0..<list.sections[path.section].count).contains(path.item) {
                throw ChangeBatch.InvalidBatch("an update names \(path), which is not in the list")
            }
            for index in renamed.compactMap(\.newIndex) where !list.sections.indices.contains(index) {
                throw ChangeBatch.InvalidBatch("a section renamed at \(index) is not in the list")
            }
            var replacements: [(position: Int, renamedSection: (index: Int, name: String)?)] =
                objects.compactMap { $0.newIndexPath.map { (list.position(of: $0), nil) } }
            for change in renamed {
                guard let index = change.newIndex else { continue }
                if list.showsHeaders {
                    replacements.append((list.start(ofSection: index), (index, change.name)))
                } else {
                    list.sections[index].name = change.name
                }
            }
            for replacement in replacements.sorted(by: { $0.position < $1.position }) {
                emissions.record(replacement.position, removed: 1, added: 1)
                if let (index, name) = replacement.renamedSection { list.sections[index].name = name }
            }
        }

        /// The whole list replaced: two emissions, every item removed, then the new ones
        /// added. Not one that does both: for each item it tracks (its anchor, the focused
        /// row) that such an emission removes, GTK 4.8's list view asks for every added item
        /// to look for it among them, and a million-row reload made a million items.
        mutating func reload(_ sections: ReloadedSections) {
            // The reload's row keys, shared with the controller (no object ID made).
            let new = sections.sections.map { Section(name: $0.name, keys: $0.keys) }
            if let heldItems {
                reloadKeepingHeldItems(new, heldItems)
                return
            }
            // Recorded as the list is before each change, as every step is.
            emissions.record(0, removed: list.count, added: 0)
            _ = list.replaceAll(by: [])
            emissions.flush()
            emissions.record(0, removed: 0, added: FlattenedSections.itemCount(of: new, showsHeaders: list.showsHeaders))
            _ = list.replaceAll(by: new)
        }

        /// The whole list replaced around the items GTK holds (the ~200 rows its list view
        /// keeps around the visible ones, its selection), which keep their positions: each
        /// run of them is announced replaced by the same items, given their new contents
        /// just before (`FrRow`'s properties notify). GTK 4.8 reuses a row widget when an
        /// emission removes its item and adds it again, so it keeps its ~200 row widgets
        /// (the factory binds them again) instead of destroying them all and making new ones
        /// through the factory (about 0.2 ms a row, and as much again to measure them). The
        /// runs of positions between them, where nobody holds an item, are announced
        /// replaced by as many.
        ///
        /// The list's end goes first, past the last held item: a removal and an addition where
        /// GTK holds nothing (or, when the new list is shorter, a removal of held items with
        /// nothing added) cost GTK nothing to follow. Then the rest, from the end to the
        /// start, one run of held items or one gap between them at a time; until a position
        /// is announced it shows what it showed (`reloading`), so that after every emission
        /// the list is what GTK last heard.
        private mutating func reloadKeepingHeldItems(_ new: [Section], _ held: HeldItems) {
            emissions.flush()
            let old = FlattenedSections(sections: list.sections, showsHeaders: list.showsHeaders)
            let oldCount = list.count
            let newCount = FlattenedSections.itemCount(of: new, showsHeaders: list.showsHeaders)
            let afterHeld = (held.positions().last ?? -1) + 1
            var boundary = min(afterHeld, newCount)
            list.reloading = (old, boundary)
            _ = list.replaceAll(by: new)
            if oldCount > boundary || newCount > boundary { emissions.emit(boundary, oldCount - boundary, newCount - boundary) }
            while boundary > 0 {
                // Held items made by GTK during an emission are in the runs that follow.
                let positions = held.positions().filter { $0 < boundary }
                guard let last = positions.last else {
                    list.reloading = (old, 0)
                    emissions.emit(0, boundary, boundary)
                    break
                }
                if last + 1 < boundary {
                    list.reloading = (old, last + 1)
                    emissions.emit(last + 1, boundary - last - 1, boundary - last - 1)
                    boundary = last + 1
                    continue
                }
                var first = positions.count - 1
                while first > 0 && positions[first - 1] == positions[first] - 1 { first -= 1 }
                boundary = positions[first]
                list.reloading = (old, boundary)
                held.reassign(boundary..<last + 1)
                held.announceReplaced(boundary..<last + 1)
            }
            list.reloading = nil
        }

        /// Objects saved for the first time take their permanent keys, and their rows are
        /// replaced by themselves, so that GTK drops the items that carry the temporary key.
        /// (Temporary keys are negative and unique across entities.)
        mutating func rename(_ renamed: [ObjectID: ObjectID]) {
            // Positions below are indexes into the keys: no row hidden.
            list.settle(finalKeys: { _ in nil })
            let permanentKeys = Dictionary(renamed.map { ($0.key.rowKey, $0.value.rowKey) }) { first, _ in first }
            for s in list.sections.indices {
                for i in list.sections[s].keys.indices where list.sections[s].keys[i] < 0 {
                    guard let key = permanentKeys[list.sections[s].keys[i]] else { continue }
                    emissions.record(list.position(of: IndexPath(item: i, section: s)), removed: 1, added: 1)
                    list.sections[s].keys[i] = key
                }
            }
        }
    }
}

private extension Array {
    /// The array without the elements at `sortedIndexes` (ascending), in one pass.
    func removing(sortedIndexes: [Int]) -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(count - sortedIndexes.count)
        var next = sortedIndexes.startIndex
        for (index, element) in enumerated() {
            if next < sortedIndexes.endIndex && sortedIndexes[next] == index { next += 1 } else { result.append(element) }
        }
        return result
    }

    /// The array with `arrivals` placed at their indexes in the result (ascending), in one pass.
    func inserting(_ arrivals: [(index: Int, key: Element)]) -> [Element] {
        var result: [Element] = []
        result.reserveCapacity(count + arrivals.count)
        var old = makeIterator()
        var next = arrivals.startIndex
        while result.count < count + arrivals.count {
            if next < arrivals.endIndex && arrivals[next].index == result.count {
                result.append(arrivals[next].key)
                next += 1
            } else {
                result.append(old.next()!)
            }
        }
        return result
    }
}
