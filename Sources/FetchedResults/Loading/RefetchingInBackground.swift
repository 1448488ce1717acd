import Foundation
import ObjectStore

extension FetchedResultsController {
    /// A batch made by fetching the results again on a reader of the store: what it needs
    /// once the fetch ends.
    struct Refetching {
        /// The changes it shows.
        var changes: ObjectChanges
        /// The list the delegate knows, which the batch starts from.
        var oldLayout: [Section]
        /// The rows of the fetched entity that can have moved (nil: any row).
        var changedKeys: Set<Int64>?
        /// The objects among them that were updated.
        var updated: Set<ObjectID>
    }

    /// Fetches the results again on a reader of the store, off the context's queue, for many
    /// changes saved elsewhere on a long list (a joining desktop's page of 5,000 rows among
    /// 200,000; ``BatchPolicy/backgroundThreshold``). Until the batch comes, on a later turn
    /// (``finishRefetchingInBackground(_:)``), the list stays the one the delegate knows and
    /// changes that come are held. False when the fetch must read what only the context holds
    /// (unsaved changes, sections from their own entity), or the context does not follow the
    /// store (``ObjectContext/mergedHistoryToken``): the batch is then made at once.
    func refetchInBackground(_ changes: ObjectChanges, changedKeys: Set<Int64>?, updated: Set<ObjectID>) -> Bool {
        let context = managedObjectContext
        guard sectionFetchRequest == nil, !context.hasChanges, let merged = context.mergedHistoryToken,
              let query = try? context.rowKeysQuery(fetchRequest, sectionNameKeyPath: sectionNameKeyPath) else { return false }
        machine.batchStartedInBackground(.refetching(Refetching(changes: changes, oldLayout: layout, changedKeys: changedKeys, updated: updated)))
        counts.backgroundRefetches += 1
        // The context takes nothing in while the read runs: however long it takes (a million
        // rows, a page committed every quarter second), the context is not past its moment.
        context.holdStoreChanges()
        // The history it will take in, from where it is held to the moment the read finds, is
        // read on the reader too: a page of 5,000 rows took 10-20 ms of the window's turn.
        let store = context.store
        let controller = Unchecked(self)
        Task.detached(priority: .userInitiated) {
            let read = try? await query.runWithHistoryToken()
            // Named, not `Self`: the region checker cannot follow `Self` in the task.
            let fresh = Unchecked(read.map {
                (layout: FetchedResultsController<Result>.sections(of: $0.rows), token: $0.token,
                 history: store.readHistoryAhead(since: merged, through: $0.token))
            })
            controller.value.managedObjectContext.perform {
                controller.value.finishRefetchingInBackground(fresh.value)
                controller.value.managedObjectContext.releaseStoreChanges()
            }
        }
        return true
    }

    /// Shows results fetched in the background, on the context's queue, when they are the
    /// data the context holds. The context, which held the store's changes back meanwhile,
    /// first takes them in up to the moment the fetch read (a page committed since the batch
    /// started; its history read on the reader after the rows), so the changes held
    /// meanwhile are all in the fetched results, and one batch shows them with the batch's
    /// own; what was committed after comes on a later turn. When the context is past that
    /// moment, or made changes of its own meanwhile (saved or not), or the list changed under
    /// the fetch (a new request), the state machine says what follows
    /// (``ControllerStateMachine/BackgroundBatchOutcome``): fetched again with everything held, in
    /// the background up to three times in a row, then at once.
    func finishRefetchingInBackground(_ fresh: (layout: [Section], token: Int64, history: HistoryReadAhead?)?) {
        guard let (work, _, _) = machine.backgroundBatch, case .refetching(let refetching) = work else { return }
        let context = managedObjectContext
        // Edits not told yet are told first (held), as before any fetch: a batch made at
        // once below fetches them too.
        context.processPendingChanges()
        let outcome: Machine.BackgroundBatchOutcome
        if layout != refetching.oldLayout {
            outcome = .listReplaced
        } else if let fresh, !context.hasChanges, context.takeStoreChanges(through: fresh.token, readAhead: fresh.history),
                  // The context's own changes held meanwhile may have been saved after the read.
                  machine.backgroundBatch?.heldMerged == true {
            outcome = .foundWithHeld
        } else {
            backgroundRefetchMisses += 1
            outcome = .stale(againInBackground: fresh != nil && backgroundRefetchMisses < 3)
        }
        // Taken in while the machine holds changes: it holds these too. A held insert saved
        // since goes by its permanent ID, as the fetch read it.
        let held = (machine.backgroundBatch?.held ?? ObjectChanges()).namingSavedObjects(in: context)
        if case .foundWithHeld = outcome {
            if !held.isEmpty { counts.backgroundRefetchesWithHeldChanges += 1 }
        } else {
            counts.backgroundRefetchesNotShown += 1
        }
        for action in machine.batchFinishedInBackground(outcome, changes: refetching.changes) {
            guard case .showBackgroundBatch = action, let fresh else {
                run(action)
                continue
            }
            backgroundRefetchMisses = 0
            let (heldRows, _) = changedRows(held)
            let changedKeys = held.invalidatedAllObjects ? nil : refetching.changedKeys?.union(heldRows.keys)
            report(from: refetching.oldLayout, to: fresh.layout, updated: refetching.updated.union(updatedObjects(heldRows)),
                   changedKeys: changedKeys)
        }
    }
}
