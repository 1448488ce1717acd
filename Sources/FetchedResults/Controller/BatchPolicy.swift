/// The thresholds that choose how a controller makes a batch, in one value, each with its reason.
///
/// A controller makes a batch of the context's changes in one of these ways
/// (``route(for:)`` picks; `Docs/DataFlow.md` lists the files):
/// - **fetch again**, only the sections the changed objects left or entered when it can, and
///   name the changes it knows of (`KnownChangesDifference.swift`) or take the difference;
///   for many changes saved elsewhere on a long list, all of it on a reader of the store,
///   off the context's queue (`Loading/RefetchingInBackground.swift`);
/// - **place the changed objects in memory**: one by one (a search each), together (their
///   searches in step), or together with the searches on a reader of the store, off the
///   context's queue (``placement(memberCount:mayRunInBackground:)``).
///
/// Every way ends in the same classification, so each gives the same batch: the thresholds
/// only decide what is fastest. Tests lower them so that small stores take every way.
package struct BatchPolicy: Sendable, Equatable {
    /// Up to how many changed objects that belong to the results are placed by a search of
    /// their own (a person's edits). More are placed together when the sort keys are the
    /// objects' own attributes: one query a step of their searches for all of them, and each
    /// section's keys merged in one pass rather than moved for each insertion. Beyond a few
    /// dozen objects that costs a fraction of their searches one by one (an import's chunk
    /// of 200 new rows among a million: a quarter).
    package var placedOneByOne = 16

    /// How many changed objects are placed in memory before fetching again is cheaper; nil:
    /// from the list's length (``placementLimit(objectCount:sortsAcrossRelationships:)``).
    package var placementLimit: Int?

    /// How long a list must be for the batch of many changed objects saved elsewhere (an
    /// import's chunk, a joining desktop's page) to be made off the context's queue: their
    /// searches, or the fetch again, read the store on one of its readers, and the list takes
    /// the batch on a later turn. Below it, either takes less than a frame.
    package var backgroundThreshold = 50_000

    /// How many changed objects saved elsewhere are fetched again off the context's queue
    /// whatever the list's length (a joining desktop's first pages, a page pulled from
    /// desktops writing fast): finding the sections they left or entered reads each of them
    /// on the queue, about 6 µs an object, and the fetch reads the list besides. A page of
    /// 5,000 took 100 ms or more on a list of 5,000–50,000 rows; with 2,000 here, pulled
    /// pages of about 1,000 updates on a list of 40,000 stalled a follower's main loop up to
    /// 430 ms on a busy machine (86 ms with 500: `--only firehose`, Docs/Performance.md).
    package var backgroundRefetchChanges = 500

    /// How long a list must be for a new request to be fetched in two halves at once
    /// (`SplitRowKeysQuery`), on two cores.
    package var splitFetchThreshold = 50_000

    /// How many rows make a list long enough for a new request to reload it
    /// (``ChangeBatch/reloadedSections``) rather than name a move or an insert for nearly
    /// every object (see ``FetchedResultsController/reloadThreshold``).
    package var reloadThreshold = 20_000

    package init() {}

    /// What a batch is made from: the changes, the list and the request.
    package struct ChangeSummary: Equatable, Sendable {
        /// How many objects of the fetched entity the changes may have moved.
        package var changedObjects: Int
        /// How many objects the list holds.
        package var listCount: Int
        /// Any object may have changed (another process's `DELETE`, a gap in the history).
        package var invalidatedAllObjects = false
        /// The request has a fetch limit or offset: a change moves objects across its edge.
        package var limited = false
        /// Sections come from their own entity.
        package var sectionsFromEntity = false
        /// A sort key crosses a relationship: each placement needs a search of its own.
        package var sortsAcrossRelationships = false
        /// The changes were saved elsewhere (merged): they may be placed off the queue.
        package var merged = false
    }

    /// The way a batch is made.
    package enum Route: Equatable, Sendable {
        /// Fetch the results again. `onlyTouchedSections`: the sections the changed objects
        /// left or entered may be fetched on their own (when sections are named by a text
        /// attribute sorted first). `inBackground`: all of them, on a reader of the store,
        /// when the context holds the store's data as it was saved (no unsaved changes); when
        /// it does not, the batch is made at once, with `onlyTouchedSections` as it says.
        case refetch(onlyTouchedSections: Bool, inBackground: Bool)
        /// Place the changed objects in memory; `inBackgroundIfMany`: their searches may run
        /// off the context's queue.
        case place(inBackgroundIfMany: Bool)
    }

    /// How the changed objects are placed in memory.
    package enum Placement: Equatable, Sendable {
        case oneByOne, together, togetherInBackground
    }

    /// The way to make a batch of `summary`'s changes. A limit, an offset, sections from
    /// their own entity and changes to any object need a fetch; so do more changed objects
    /// than ``placementLimit(objectCount:sortsAcrossRelationships:)``. Changes saved
    /// elsewhere on a list of ``backgroundThreshold`` rows or more are placed or fetched off
    /// the context's queue, and so are ``backgroundRefetchChanges`` of them or more on any
    /// list (sections from their own entity excepted: they are fetched as objects, on it).
    package func route(for summary: ChangeSummary) -> Route {
        let mustFetch = summary.limited || summary.sectionsFromEntity || summary.invalidatedAllObjects
        let limit = placementLimit ?? Self.placementLimit(objectCount: summary.listCount,
                                                         sortsAcrossRelationships: summary.sortsAcrossRelationships)
        let inBackground = summary.merged && summary.listCount >= backgroundThreshold
        if mustFetch || summary.changedObjects > limit {
            let fetchInBackground = summary.merged && !summary.sectionsFromEntity
                && (inBackground || summary.changedObjects >= backgroundRefetchChanges)
            return .refetch(onlyTouchedSections: !mustFetch, inBackground: fetchInBackground)
        }
        return .place(inBackgroundIfMany: inBackground)
    }

    /// How `memberCount` changed objects that belong to the results are placed.
    package func placement(memberCount: Int, mayRunInBackground: Bool) -> Placement {
        guard memberCount > placedOneByOne else { return .oneByOne }
        return mayRunInBackground ? .togetherInBackground : .together
    }

    /// How many changed objects are placed in memory before fetching again is cheaper.
    ///
    /// One by one (sorts across a relationship), a placement is a binary search reading about
    /// log2(n) rows, each about 55 µs (0.36 ms among 100 objects, 1 ms among 100,000), where
    /// fetching the row keys again reads about 4 rows a µs (25 ms for 100,000) and the batch
    /// of the refetch names the same moves: so up to n / (220 log2 n) objects (27 among
    /// 100,000, 227 among a million), and always a few (a person's edits, with unsaved
    /// changes a fetch would have to write into a rolled-back transaction).
    ///
    /// Together (the sort keys are the objects' own attributes), about 60 µs an object
    /// against 0.18 µs a row for a refetch: up to n / 330, 3,000 among a million.
    package static func placementLimit(objectCount n: Int, sortsAcrossRelationships: Bool) -> Int {
        let log2n = Double(Int.bitWidth - max(n, 2).leadingZeroBitCount)
        let oneByOne = max(8, Int(Double(n) / (220 * log2n)))
        return sortsAcrossRelationships ? oneByOne : max(oneByOne, n / 330)
    }
}
