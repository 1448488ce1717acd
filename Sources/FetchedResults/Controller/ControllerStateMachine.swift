import ObjectStore

/// What a controller is doing, and what it must do next, decided without I/O or queues.
///
/// The controller feeds it events (the first fetch started or ended, the context changed, a
/// batch started or ended in the background) and carries out the actions it returns.
/// It keeps the one rule that makes batches valid while work is in flight: **a change that
/// comes while the first results are fetched, or while a batch is made in the background
/// (changed objects placed, or the results fetched again), is held, and made into a batch of
/// its own once that work shows**, in the order it came, and never lost (unless the fetch
/// read the store after it, and so shows it already). postgres-nio's
/// `ConnectionStateMachine` is the model.
///
/// `Completion` is what waits for the first results; `Work` is a batch's own data while it
/// is made in the background. Both are carried, never looked into.
struct ControllerStateMachine<Completion, Work> {
    enum State {
        /// Before the first fetch: no changes are tracked.
        case unfetched
        /// The first results are being fetched in the background: changes are held.
        case loading(held: ObjectChanges, completions: [Completion])
        /// The results show; each change is made into a batch at once.
        case showing
        /// A batch is being made in the background (`work`: changed objects placed, or the
        /// results fetched again): later changes are held. `heldMerged`: every held change was
        /// saved elsewhere (so its batch may be made in the background too).
        case makingBatch(work: Work, held: ObjectChanges, heldMerged: Bool)
    }

    /// What the controller must do.
    enum Action {
        /// Nothing (the change is held, or there is nothing to tell).
        case none
        /// Make a batch of `changes` now (`merged`: saved elsewhere); the policy picks the way
        /// (``BatchPolicy/route(for:)``).
        case makeBatch(ObjectChanges, merged: Bool)
        /// Make a batch of changes that were held: some may name objects saved since by the
        /// temporary IDs they had then.
        case makeBatchOfHeld(ObjectChanges, merged: Bool)
        /// Show the batch made in the background (its places were found, or its fetch read
        /// the store as the context holds it).
        case showBackgroundBatch
        /// Tell whoever waited for the first results (`error` nil: they show), after making a
        /// batch of what was held (when the fetch may not have seen it).
        case finishLoading(batchOfHeld: ObjectChanges?, completions: [Completion], error: (any Error)?)
    }

    /// How a batch made in the background ended, as the controller found it on the context's queue.
    enum BackgroundBatchOutcome {
        /// A placement's searches found every place: it can be shown, then the held changes
        /// follow.
        case found
        /// Its fetch read the store as the context holds it now, held changes included (each
        /// saved elsewhere, so taken in from the store up to the moment the fetch read): one
        /// batch shows them all, and nothing is held any more.
        case foundWithHeld
        /// The list changed under it (a new request, a fetch): its changes are made into a
        /// batch on the new list, then the held ones.
        case listReplaced
        /// A change held meanwhile touched a row its searches read, or a row was gone, or its
        /// fetch read the store at another moment than the context's: all its changes and
        /// the held ones are made into one batch again, from the current values: in the
        /// background again when `againInBackground` (a held change touched a searched row;
        /// the store moved on under a fetch) and every held change was saved elsewhere, else
        /// at once.
        case stale(againInBackground: Bool)
    }

    private(set) var state = State.unfetched

    var hasFetched: Bool {
        if case .unfetched = state { return false }
        return true
    }
    var isLoading: Bool {
        if case .loading = state { return true }
        return false
    }
    var isMakingBatch: Bool {
        if case .makingBatch = state { return true }
        return false
    }

    /// The first results are being fetched in the background; `completion` waits for them.
    mutating func loadingStarted(_ completion: Completion) {
        switch state {
        case .unfetched, .showing:
            state = .loading(held: ObjectChanges(), completions: [completion])
        case .loading(let held, let completions):
            state = .loading(held: held, completions: completions + [completion])
        case .makingBatch:
            preconditionFailure("a first fetch while a batch is made in the background: the results show already")
        }
    }

    /// The results were fetched on the context's queue (``FetchedResultsController/performFetch()``,
    /// a request set at once): they saw every change, held ones included.
    mutating func fetchedAtOnce() -> Action {
        switch state {
        case .unfetched, .showing:
            state = .showing
            return .none
        case .loading(_, let completions):
            state = .showing
            return .finishLoading(batchOfHeld: nil, completions: completions, error: nil)
        case .makingBatch:
            // The batch in the background shows later on the list it started from, or finds it replaced.
            return .none
        }
    }

    /// The results of a fetch in the background show (`error` nil) or could not be fetched:
    /// the changes held meanwhile are made into a batch on them, which the fetch may have
    /// read before they were saved.
    mutating func fetchedInBackground(error: (any Error)?) -> Action {
        guard case .loading(let held, let completions) = state else { return .none }
        state = .showing
        return .finishLoading(batchOfHeld: error == nil && !held.isEmpty ? held : nil, completions: completions, error: error)
    }

    /// The context's changes (`merged`: saved elsewhere).
    mutating func contextChanged(_ changes: ObjectChanges, merged: Bool) -> Action {
        switch state {
        case .unfetched:
            return .none
        case .loading(var held, let completions):
            held.formUnion(changes)
            state = .loading(held: held, completions: completions)
            return .none
        case .showing:
            return .makeBatch(changes, merged: merged)
        case .makingBatch(let work, var held, let heldMerged):
            held.formUnion(changes)
            state = .makingBatch(work: work, held: held, heldMerged: heldMerged && merged)
            return .none
        }
    }

    /// A batch started in the background (a placement or a fetch): changes are held until it ends.
    mutating func batchStartedInBackground(_ work: Work) {
        guard case .showing = state else { preconditionFailure("a batch starts in the background only while the results show") }
        state = .makingBatch(work: work, held: ObjectChanges(), heldMerged: true)
    }

    /// The batch in the background is being shown: its work, and what was held (for the
    /// controller to find its outcome). Nil when none runs.
    var backgroundBatch: (work: Work, held: ObjectChanges, heldMerged: Bool)? {
        guard case .makingBatch(let work, let held, let heldMerged) = state else { return nil }
        return (work, held, heldMerged)
    }

    /// The batch in the background ended with `outcome`, given its own `changes`.
    mutating func batchFinishedInBackground(_ outcome: BackgroundBatchOutcome, changes: ObjectChanges) -> [Action] {
        guard case .makingBatch(_, let held, let heldMerged) = state else { return [] }
        state = .showing
        let thenHeld: [Action] = held.isEmpty ? [] : [.makeBatchOfHeld(held, merged: heldMerged)]
        switch outcome {
        case .found:
            return [.showBackgroundBatch] + thenHeld
        case .foundWithHeld:
            return [.showBackgroundBatch]
        case .listReplaced:
            return [.makeBatch(changes, merged: false)] + thenHeld
        case .stale(let againInBackground):
            var all = changes
            all.formUnion(held)
            // A probed row changed, the store moved on: again, in the background if all may
            // be; a row gone: at once.
            return [.makeBatchOfHeld(all, merged: againInBackground && heldMerged)]
        }
    }
}
