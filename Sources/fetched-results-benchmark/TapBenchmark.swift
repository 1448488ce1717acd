import FetchedResults
import Foundation
import ObjectStore

/// One tap of the viewer: `wins += 1` on a row and `save()`, until the list knows what to
/// redraw. The controller against what a GRDB app does today: refetch every ID and diff.
struct TapBenchmark {
    let store: PersistentStore
    let taps: Int
    let baselineTaps: Int
    let seed: UInt64

    struct ControllerFigures {
        /// From before the change to the delegate's change batch.
        var toBatch: [Double] = []
        /// From before the change to the end of save() (the SQLite write included).
        var toSaved: [Double] = []
        /// Batches that moved the row, and that updated it in place.
        var moves = 0, updates = 0
        /// `indexPath(for:)` of the tapped row right after its batch (a selection following it).
        var lookupAfterTap: [Double] = []
        /// `indexPath(for:)` of objects near the end of the list, the list unchanged.
        var lookupNearEnd: [Double] = []
    }

    struct BaselineFigures {
        /// From before the change to the diff.
        var total: [Double] = []
        var refetch: [Double] = []
        var diff: [Double] = []
    }

    /// Records the time and content of each change batch.
    final class BatchProbe: FetchedResultsControllerDelegate {
        typealias Result = ManagedObject
        var deliveredAt: ContinuousClock.Instant?
        var batch: ChangeBatch?

        func controller(_ controller: FetchedResultsController<ManagedObject>, didChangeContentWith batch: ChangeBatch) {
            deliveredAt = .now
            self.batch = batch
        }
    }

    func controller() throws -> ControllerFigures {
        let context = ObjectContext(store: store)
        let controller = FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: context,
                                                  sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
        let probe = BatchProbe()
        controller.delegate = probe
        try controller.performFetch()
        var random = SplitMix64(seed: seed)
        var figures = ControllerFigures()
        let warmUp = 5
        for tap in 0..<(warmUp + taps) {
            // The tapped row is on screen: it and its batch are loaded before the tap.
            let team = controller.object(at: randomIndexPath(in: controller, random: &random))
            guard case .integer(let wins) = team.attributeValue(forKey: "wins") else {
                throw OptionsError("\(team.objectID) has no wins")
            }
            probe.deliveredAt = nil
            let start = ContinuousClock.now
            try team.setValue(wins + 1, forKey: "wins")
            try context.save()
            let saved = ContinuousClock.now
            guard let delivered = probe.deliveredAt, let batch = probe.batch else {
                throw OptionsError("save() of \(team.objectID) delivered no change batch")
            }
            let lookupStart = ContinuousClock.now
            let found = controller.indexPath(for: team)
            let lookupEnd = ContinuousClock.now
            guard let found, controller.objectID(at: found) == team.objectID else {
                throw OptionsError("indexPath(for:) of \(team.objectID) is \(String(describing: found)), not where the list has it")
            }
            guard tap >= warmUp else { continue }
            figures.lookupAfterTap.append((lookupEnd - lookupStart).seconds)
            figures.toBatch.append((delivered - start).seconds)
            figures.toSaved.append((saved - start).seconds)
            if batch.objectChanges.contains(where: { $0.type == .move }) { figures.moves += 1 } else { figures.updates += 1 }
        }
        // Objects near the end of the list, asked for in a random order.
        let last = controller.sections!.count - 1
        let lastCount = controller.sections![last].numberOfObjects
        for _ in 0..<1_000 {
            let path = IndexPath(item: lastCount - 1 - Int(random.next() % UInt64(min(lastCount, 10_000))), section: last)
            let id = controller.objectID(at: path)
            let lookupStart = ContinuousClock.now
            let found = controller.indexPath(forObjectID: id)
            figures.lookupNearEnd.append((ContinuousClock.now - lookupStart).seconds)
            guard found == path else { throw OptionsError("indexPath(forObjectID:) of \(id) is \(String(describing: found)), not \(path)") }
        }
        // The controller followed every tap: its order is a fresh fetch's.
        guard controller.allRowKeys == (try WorldCupStore.floorIDs(store)) else { throw OptionsError("after the taps the controller's order differs from a fresh fetch") }
        return figures
    }

    /// The same tap without a controller: save, refetch every ID, `difference(from:)`.
    func baseline() throws -> BaselineFigures {
        let context = ObjectContext(store: store)
        var ids = try WorldCupStore.floorIDs(store)
        var random = SplitMix64(seed: seed &+ 1)
        var figures = BaselineFigures()
        for tap in 0..<(1 + baselineTaps) {
            let key = ids[Int(random.next() % UInt64(ids.count))]
            let team = try context.existingObject(with: ObjectID(entityName: "Team", rowKey: key))
            guard case .integer(let wins) = team.attributeValue(forKey: "wins") else {
                throw OptionsError("\(team.objectID) has no wins")
            }
            let start = ContinuousClock.now
            try team.setValue(wins + 1, forKey: "wins")
            try context.save()
            let saved = ContinuousClock.now
            let fresh = try WorldCupStore.floorIDs(store)
            let fetched = ContinuousClock.now
            let difference = fresh.difference(from: ids)
            let end = ContinuousClock.now
            guard difference.count <= 2 else { throw OptionsError("one tap changed \(difference.count) positions") }
            ids = fresh
            guard tap >= 1 else { continue }   // the first one is a warm-up
            figures.total.append((end - start).seconds)
            figures.refetch.append((fetched - saved).seconds)
            figures.diff.append((end - fetched).seconds)
        }
        return figures
    }

    private func randomIndexPath(in controller: FetchedResultsController<ManagedObject>, random: inout SplitMix64) -> IndexPath {
        var position = Int(random.next() % UInt64(controller.numberOfObjects))
        for (s, section) in controller.sections!.enumerated() {
            if position < section.numberOfObjects { return IndexPath(item: position, section: s) }
            position -= section.numberOfObjects
        }
        preconditionFailure("position past the end")
    }
}
