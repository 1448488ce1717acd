import Foundation
import ObjectStore

extension FetchedResultsController {
    /// Starts `placing`'s searches on a reader of the store; the list stays as it was (the
    /// one the delegate knows) until ``finishPlacingInBackground(at:)`` takes the result on the
    /// context's queue.
    func placeInBackground(_ placing: Placing, search: InsertionSearch) {
        layout = placing.placement.oldLayout
        machine.batchStartedInBackground(.placing(placing))
        counts.backgroundPlacements += 1
        let controller = Unchecked(self)
        Task.detached(priority: .userInitiated) {
            let found = (try? await search.run()) ?? nil
            controller.value.managedObjectContext.perform {
                controller.value.finishPlacingInBackground(at: found?.positions, probed: found?.probed ?? [])
            }
        }
    }

    /// Shows a placement whose searches ran in the background (nil `positions`: a probed row
    /// was gone), then places the changes that came meanwhile (the state machine says which
    /// batches follow, ``ControllerStateMachine/BackgroundBatchOutcome``). When the list changed
    /// under it (a new request, a fetch), its changes are placed on the new list instead;
    /// when a change that came meanwhile touched a row the searches read (`probed`: they may
    /// have read its new values at its old place), both are placed again together.
    func finishPlacingInBackground(at positions: [[Int]]?, probed: Set<Int64>) {
        guard let (work, held, _) = machine.backgroundBatch, case .placing(let placing) = work else { return }
        let outcome: Machine.BackgroundBatchOutcome
        var placed: (items: [Int64: Int], gaps: [Int64: Int])?
        let touched = held.updated.keys.lazy.map { $0 } + held.deleted
        if layout != placing.placement.oldLayout {
            outcome = .listReplaced
        } else if touched.contains(where: { $0.entityName == entityName && probed.contains($0.rowKey) }) {
            outcome = .stale(againInBackground: true)
        } else if let merged = merge(placing, at: positions) {
            placed = merged
            outcome = .found
        } else {
            // A probed row was gone, or changed under the searches: every change placed again
            // at once, from the current values (a held change may have edited a member).
            outcome = .stale(againInBackground: false)
        }
        for action in machine.batchFinishedInBackground(outcome, changes: placing.changes) {
            if case .showBackgroundBatch = action, let placed {
                finish(placing.placement, placed: placed)
            } else {
                run(action)
            }
        }
    }

    /// The members merged into the prepared list at the `positions` the searches found; nil,
    /// the list as it was, when a probed row was gone or the places are out of order.
    private func merge(_ placing: Placing, at positions: [[Int]]?) -> (items: [Int64: Int], gaps: [Int64: Int])? {
        guard let positions else { return nil }
        layout = placing.prepared
        if let placed = mergeTogether(placing.placement.members, names: placing.sectionNames, at: positions) { return placed }
        layout = placing.placement.oldLayout
        return nil
    }
}

/// Step 4 for many members saved elsewhere (an import's chunk) on a long list: the searches
/// of ``PlacingTogether`` on a reader of the store, off the context's queue; the list takes
/// them on a later turn (``FetchedResultsController/finishPlacingInBackground(at:probed:)``).
struct PlacingInBackground: PlacementWay {
    func place<Result>(_ placement: FetchedResultsController<Result>.Placement, in controller: FetchedResultsController<Result>,
                       context: ObjectContext, changes: ObjectChanges?) -> PlacementResult {
        guard let changes else { return PlacingTogether().place(placement, in: controller, context: context, changes: nil) }
        guard let (names, search) = controller.prepareTogether(placement.members, firstMembers: placement.firstMembers,
                                                                sorts: controller.fetchRequest.sortDescriptors, context: context) else { return .needsOneByOne }
        controller.placeInBackground(.init(changes: changes, placement: placement, prepared: controller.layout, sectionNames: names), search: search)
        return .continuesInBackground
    }
}
