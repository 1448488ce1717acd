@testable import FetchedResults
import ObjectStore
import TestSupport
import XCTest

/// The controller's state machine on its own, with no store and no queue: generated
/// sequences of the events a controller feeds it, checked against what a list depends on.
final class ControllerStateMachineTests: XCTestCase {
    typealias Machine = ControllerStateMachine<Int, ObjectChanges>

    /// A change of one object, told by its row key.
    private func change(_ key: Int64) -> ObjectChanges {
        ObjectChanges(inserted: [ObjectID(entityName: "Team", rowKey: key)])
    }

    private func keys(_ changes: ObjectChanges) -> [Int64] { changes.inserted.map(\.rowKey) }

    /// Every change is made into a batch exactly once, or seen by a fetch that read the store
    /// after it; none while the first fetch or a placement is in flight; every completion
    /// told once; a failed fetch places nothing; at most the last action of a list starts a
    /// placement in the background.
    func testGeneratedEventSequencesLoseAndRepeatNothing() {
        let seed = SeededGenerator.seed()
        print("ControllerStateMachineTests seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        for run in 0..<300 {
            var driver = Driver()
            for _ in 0..<Int.random(in: 1...60, using: &rng) { driver.step(&rng) }
            driver.drain()
            let label = "seed \(seed), run \(run)"
            XCTAssertEqual(driver.failures, [], label)
            for key in driver.told {
                XCTAssertEqual(driver.made[key, default: 0] + driver.seenByFetch[key, default: 0], 1,
                               "\(label): change \(key) made \(driver.made[key, default: 0])×, seen by a fetch \(driver.seenByFetch[key, default: 0])×")
            }
            XCTAssertEqual(driver.completed.sorted(), Array(0..<driver.completionsStarted), "\(label): every completion told once")
        }
    }

    /// Drives a machine as the controller does, and records what its actions did.
    private struct Driver {
        var machine = Machine()
        var nextKey: Int64 = 1
        var completionsStarted = 0
        var told: [Int64] = []
        var made: [Int64: Int] = [:]
        var seenByFetch: [Int64: Int] = [:]
        var completed: [Int] = []
        var failures: [String] = []
        /// A fetch replaced the list while a placement ran.
        var listReplaced = false
        /// What is held by the machine, as the test knows it.
        var heldKeys: Set<Int64> = []

        mutating func step(_ rng: inout SeededGenerator) {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0 where !machine.hasFetched || machine.isLoading:
                machine.loadingStarted(completionsStarted)
                completionsStarted += 1
            case 1:
                let wasLoading = machine.isLoading
                if machine.isMakingBatch { listReplaced = true }
                let action = machine.fetchedAtOnce()
                if wasLoading { for key in heldKeys { seenByFetch[key, default: 0] += 1 }; heldKeys = [] }
                run([action], &rng)
            case 2:
                let failed = Bool.random(using: &rng)
                let wasLoading = machine.isLoading, held = heldKeys
                let action = machine.fetchedInBackground(error: failed ? CocoaError(.fileReadUnknown) : nil)
                if wasLoading {
                    if failed, case .finishLoading(let placing, _, _) = action, placing != nil {
                        failures.append("a failed fetch placed held changes")
                    }
                    // A failed fetch shows no results: its held changes go with it (the
                    // controller tells whoever waited of the error).
                    if failed { for key in held { seenByFetch[key, default: 0] += 1 } }
                    heldKeys = []
                }
                run([action], &rng)
            case 3 where machine.isMakingBatch:
                let outcome: Machine.BackgroundBatchOutcome = listReplaced ? .listReplaced
                    : [.found, .foundWithHeld, .stale(againInBackground: true), .stale(againInBackground: false)]
                        .randomElement(using: &rng)!
                let (work, held, _) = machine.backgroundBatch!
                listReplaced = false
                heldKeys = []
                let actions = machine.batchFinishedInBackground(outcome, changes: work)
                switch outcome {
                case .found:
                    guard case .showBackgroundBatch = actions.first else { return failures.append("a found placement not shown first") }
                    for key in work.inserted.map(\.rowKey) { made[key, default: 0] += 1 }
                case .foundWithHeld:
                    // A fetch that read the held changes too shows them in its one batch.
                    guard actions.count == 1, case .showBackgroundBatch = actions[0] else {
                        return failures.append("a fetch that read the held changes too did more than show")
                    }
                    for key in (work.inserted.union(held.inserted)).map(\.rowKey) { made[key, default: 0] += 1 }
                default:
                    break
                }
                run(actions, &rng)
            default:
                let key = nextKey
                nextKey += 1
                told.append(key)
                let holding = machine.isLoading || machine.isMakingBatch
                let action = machine.contextChanged(ObjectChanges(inserted: [ObjectID(entityName: "Team", rowKey: key)]), merged: Bool.random(using: &rng))
                if holding {
                    if case .none = action {} else { failures.append("change \(key) not held while work is in flight") }
                    heldKeys.insert(key)
                } else if !machine.hasFetched {
                    seenByFetch[key, default: 0] += 1   // the first fetch reads it
                }
                run([action], &rng)
            }
        }

        /// Carries out actions as the controller does: a merged batch may start a placement.
        mutating func run(_ actions: [Machine.Action], _ rng: inout SeededGenerator) {
            for (n, action) in actions.enumerated() {
                switch action {
                case .none, .showBackgroundBatch:
                    break
                case .makeBatch(let changes, let merged), .makeBatchOfHeld(let changes, let merged):
                    if merged && n < actions.count - 1 { failures.append("a merged batch before the end of a list of actions") }
                    if machine.isMakingBatch || machine.isLoading { failures.append("a batch made while work is in flight") }
                    if merged, Bool.random(using: &rng) {
                        machine.batchStartedInBackground(changes)
                    } else {
                        for key in changes.inserted.map(\.rowKey) { made[key, default: 0] += 1 }
                    }
                case .finishLoading(let held, let completions, _):
                    if let held {
                        for key in held.inserted.map(\.rowKey) { made[key, default: 0] += 1 }
                    }
                    completed += completions
                }
            }
        }

        /// Ends what is in flight: the placement (found), the first fetch (shown).
        mutating func drain() {
            var rng = SeededGenerator(seed: 1)
            while machine.isMakingBatch || machine.isLoading {
                if machine.isMakingBatch {
                    let work = machine.backgroundBatch!.work
                    let outcome: Machine.BackgroundBatchOutcome = listReplaced ? .listReplaced : .found
                    listReplaced = false
                    heldKeys = []
                    let actions = machine.batchFinishedInBackground(outcome, changes: work)
                    if case .found = outcome { for key in work.inserted.map(\.rowKey) { made[key, default: 0] += 1 } }
                    run(actions, &rng)
                } else {
                    heldKeys = []
                    run([machine.fetchedInBackground(error: nil)], &rng)
                }
            }
        }
    }

    func testChangesHeldWhileLoadingArePlacedOnTheResultsInABatchOfTheirOwn() {
        var machine = Machine()
        machine.loadingStarted(7)
        XCTAssertTrue(machine.isLoading)
        guard case .none = machine.contextChanged(change(1), merged: false) else { return XCTFail("held while loading") }
        guard case .none = machine.contextChanged(change(2), merged: true) else { return XCTFail("held while loading") }
        guard case .finishLoading(let held?, let completions, nil) = machine.fetchedInBackground(error: nil) else {
            return XCTFail("the held changes are placed once the results show")
        }
        XCTAssertEqual(Set(keys(held)), [1, 2])
        XCTAssertEqual(completions, [7])
        guard case .makeBatch(let next, merged: true) = machine.contextChanged(change(3), merged: true) else {
            return XCTFail("once the results show, a change is made into a batch at once")
        }
        XCTAssertEqual(keys(next), [3])
    }

    func testAFetchAtOnceSeesTheHeldChangesAndAFailedFetchPlacesNone() {
        var machine = Machine()
        machine.loadingStarted(1)
        _ = machine.contextChanged(change(1), merged: false)
        guard case .finishLoading(nil, [1], nil) = machine.fetchedAtOnce() else { return XCTFail("the fetch saw the held change") }
        var failing = Machine()
        failing.loadingStarted(2)
        _ = failing.contextChanged(change(1), merged: false)
        guard case .finishLoading(nil, [2], .some) = failing.fetchedInBackground(error: CocoaError(.fileReadUnknown)) else {
            return XCTFail("a failed fetch tells its error and places nothing")
        }
    }

    func testAPlacementInTheBackgroundHoldsLaterChangesAndSaysWhatFollowsEachOutcome() {
        func placing(held: [Int64], merged: Bool) -> Machine {
            var machine = Machine()
            _ = machine.fetchedAtOnce()
            machine.batchStartedInBackground(change(100))
            for key in held { _ = machine.contextChanged(change(key), merged: merged) }
            return machine
        }
        var found = placing(held: [1], merged: true)
        let shown = found.batchFinishedInBackground(.found, changes: change(100))
        guard shown.count == 2, case .showBackgroundBatch = shown[0], case .makeBatchOfHeld(let held, merged: true) = shown[1] else {
            return XCTFail("shown, then the held change: \(shown)")
        }
        XCTAssertEqual(keys(held), [1])
        XCTAssertFalse(found.isMakingBatch)

        var replaced = placing(held: [1], merged: false)
        let again = replaced.batchFinishedInBackground(.listReplaced, changes: change(100))
        guard again.count == 2, case .makeBatch(let own, merged: false) = again[0], case .makeBatchOfHeld(let later, merged: false) = again[1] else {
            return XCTFail("its own changes on the new list, then the held ones: \(again)")
        }
        XCTAssertEqual([keys(own), keys(later)], [[100], [1]])

        var stale = placing(held: [1, 2], merged: true)
        let once = stale.batchFinishedInBackground(.stale(againInBackground: true), changes: change(100))
        guard once.count == 1, case .makeBatchOfHeld(let all, merged: true) = once[0] else { return XCTFail("all again, together: \(once)") }
        XCTAssertEqual(Set(keys(all)), [1, 2, 100])
        var gone = placing(held: [], merged: true)
        guard case .makeBatchOfHeld(_, merged: false) = gone.batchFinishedInBackground(.stale(againInBackground: false), changes: change(100)).first else {
            return XCTFail("a row gone: placed again at once")
        }
        var readAll = placing(held: [1, 2], merged: true)
        let shownAll = readAll.batchFinishedInBackground(.foundWithHeld, changes: change(100))
        guard shownAll.count == 1, case .showBackgroundBatch = shownAll[0] else { return XCTFail("a fetch that read the held changes shows them all: \(shownAll)") }
        XCTAssertFalse(readAll.isMakingBatch)
        guard case .makeBatch(let next, merged: false) = readAll.contextChanged(change(3), merged: false) else {
            return XCTFail("nothing held any more: the next change is made into a batch at once")
        }
        XCTAssertEqual(keys(next), [3])
    }
}

/// The policy's choice of way, from the changes, the list and the request.
final class BatchPolicyTests: XCTestCase {
    func testTheRouteFollowsTheRequestAndTheSizeOfTheChange() {
        let policy = BatchPolicy()
        typealias Summary = BatchPolicy.ChangeSummary
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 1, listCount: 100)), .place(inBackgroundIfMany: false))
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 1, listCount: 100, limited: true)), .refetch(onlyTouchedSections: false, inBackground: false))
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 1, listCount: 100, sectionsFromEntity: true)), .refetch(onlyTouchedSections: false, inBackground: false))
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 0, listCount: 100, invalidatedAllObjects: true)), .refetch(onlyTouchedSections: false, inBackground: false))
        // Among a million: 3,000 placed together, 227 one by one across a relationship.
        XCTAssertEqual(BatchPolicy.placementLimit(objectCount: 1_000_000, sortsAcrossRelationships: false), 3_030)
        XCTAssertEqual(BatchPolicy.placementLimit(objectCount: 1_000_000, sortsAcrossRelationships: true), 227)
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 3_000, listCount: 1_000_000, merged: true)), .place(inBackgroundIfMany: true))
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 3_000, listCount: 1_000_000, sortsAcrossRelationships: true)),
                       .refetch(onlyTouchedSections: true, inBackground: false))
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 100, listCount: 40_000, merged: true)), .place(inBackgroundIfMany: false),
                       "a list shorter than the background threshold is placed on the queue")
        XCTAssertEqual(policy.placement(memberCount: 16, mayRunInBackground: true), .oneByOne)
        XCTAssertEqual(policy.placement(memberCount: 17, mayRunInBackground: false), .together)
        XCTAssertEqual(policy.placement(memberCount: 17, mayRunInBackground: true), .togetherInBackground)
        var tests = policy
        tests.placementLimit = 0
        XCTAssertEqual(tests.route(for: Summary(changedObjects: 1, listCount: 100)), .refetch(onlyTouchedSections: true, inBackground: false))
        // A joining desktop's page of 5,000 rows on a long list: fetched again off the queue,
        // all of it; only when that cannot be (unsaved changes) are the touched sections
        // fetched at once, as before.
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 5_000, listCount: 200_000, merged: true)),
                       .refetch(onlyTouchedSections: true, inBackground: true))
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 0, listCount: 200_000, invalidatedAllObjects: true, merged: true)),
                       .refetch(onlyTouchedSections: false, inBackground: true))
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 5_000, listCount: 200_000, sectionsFromEntity: true, merged: true)),
                       .refetch(onlyTouchedSections: false, inBackground: false), "sections from their own entity are fetched on the queue")
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 5_000, listCount: 200_000)), .refetch(onlyTouchedSections: true, inBackground: false),
                       "the context's own changes are fetched at once")
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 5_000, listCount: 5_000, merged: true)),
                       .refetch(onlyTouchedSections: true, inBackground: true), "a joining desktop's first page: in the background")
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 1_000, listCount: 40_000, merged: true)),
                       .refetch(onlyTouchedSections: true, inBackground: true), "a page pulled from desktops writing fast: in the background")
        XCTAssertEqual(policy.route(for: Summary(changedObjects: 499, listCount: 5_000, merged: true)),
                       .refetch(onlyTouchedSections: true, inBackground: false), "fewer are fetched at once")
    }
}
