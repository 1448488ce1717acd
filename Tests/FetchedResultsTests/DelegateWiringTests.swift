import FetchedResults
import Foundation
import ObjectStore
import Synchronization
import XCTest

/// A delegate cannot be wired wrong: the reporting mode follows what it conforms to, Core
/// Data's own signatures are called, a mode the delegate does not implement is reported, and
/// a change the controller cannot follow reaches the delegate as an error.
final class DelegateWiringTests: XCTestCase {
    typealias Team = WorldCup.Team

    final class Warnings: Sendable {
        let messages = Mutex<[String]>([])
        var all: [String] { messages.withLock { $0 } }
    }

    /// Collects what FetchedResultsDiagnostics says during the test.
    private func collectWarnings() -> Warnings {
        let warnings = Warnings()
        let previous = FetchedResultsDiagnostics.warningHandler
        FetchedResultsDiagnostics.warningHandler = { message in warnings.messages.withLock { $0.append(message) } }
        addTeardownBlock { FetchedResultsDiagnostics.warningHandler = previous }
        return warnings
    }

    private func worldCup(sections: Bool = true, request: FetchRequest<Team> = WorldCup.request()) throws -> (ObjectContext, FetchedResultsController<Team>) {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = sections ? WorldCup.controller(context, request: request)
            : FetchedResultsController(fetchRequest: request, managedObjectContext: context)
        return (context, controller)
    }

    final class SnapshotsOnly: FetchedResultsSnapshotDelegate {
        typealias Result = Team
        var snapshots: [FetchedSnapshot] = []
        func controller(_ controller: FetchedResultsController<Team>, didChangeContentWith snapshot: FetchedSnapshot) { snapshots.append(snapshot) }
    }

    final class DifferencesOnly: FetchedResultsDifferenceDelegate {
        typealias Result = Team
        var differences: [CollectionDifference<ObjectID>] = []
        func controller(_ controller: FetchedResultsController<Team>, didChangeContentWith difference: CollectionDifference<ObjectID>) {
            differences.append(difference)
        }
    }

    /// Written as for Core Data's NSFetchedResultsControllerDelegate, types renamed.
    final class CoreDataStyle: FetchedResultsControllerDelegate {
        var calls: [String] = []
        func controllerWillChangeContent(_ controller: FetchedResultsController<Team>) { calls.append("will") }
        func controller(_ controller: FetchedResultsController<Team>, didChange sectionInfo: SectionInfo<Team>,
                        atSectionIndex sectionIndex: Int, for type: ChangeType) {
            calls.append("section \(type) \(sectionIndex) \(sectionInfo.name) (\(sectionInfo.numberOfObjects))")
        }
        func controller(_ controller: FetchedResultsController<Team>, didChange anObject: Any, at indexPath: IndexPath?,
                        for type: ChangeType, newIndexPath: IndexPath?) {
            calls.append("object \(type) \((anObject as! Team).teamName) \(indexPath.map { "\($0)" } ?? "-") \(newIndexPath.map { "\($0)" } ?? "-")")
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController<Team>) { calls.append("did") }
    }

    final class Failures: FetchedResultsControllerDelegate {
        var errors: [String] = []
        func controller(_ controller: FetchedResultsController<Team>, didFailWith error: any Error) { errors.append("\(error)") }
    }

    final class Plain: FetchedResultsControllerDelegate {
        typealias Result = Team
    }

    func testASnapshotDelegateGetsSnapshotsWithoutSettingAMode() throws {
        let (context, controller) = try worldCup()
        let delegate = SnapshotsOnly()
        controller.delegate = delegate
        try controller.performFetch()
        XCTAssertEqual(controller.changeReporting, .snapshot)
        try WorldCup.team("Ghana", in: context).wins = 5
        try context.save()
        XCTAssertEqual(delegate.snapshots.count, 1)
        XCTAssertEqual(delegate.snapshots.first?.sections, controller.snapshot)
    }

    func testADifferenceDelegateGetsDifferencesWithoutSettingAMode() throws {
        let (context, controller) = try worldCup(sections: false)
        let delegate = DifferencesOnly()
        controller.delegate = delegate
        try controller.performFetch()
        XCTAssertEqual(controller.changeReporting, .difference)
        let before = controller.snapshot.flatMap(\.objectIDs)
        try WorldCup.insert("Atlantis", "Africa", wins: 9, into: context)
        try context.save()
        XCTAssertEqual(delegate.differences.count, 1)
        XCTAssertEqual(before.applying(delegate.differences[0]), controller.snapshot.flatMap(\.objectIDs))
    }

    /// A window class, main-actor isolated as GTK code is, conforming with Swift 6.2's
    /// isolated conformance: it compiles, and the controller of a main-queue context calls it.
    @MainActor final class MainActorWindow: @MainActor FetchedResultsControllerDelegate {
        var rows: [SectionSnapshot] = []
        func controller(_ controller: FetchedResultsController<Team>, didChangeContentWith batch: ChangeBatch) {
            MainActor.assertIsolated()
            rows = try! batch.applied(to: rows)
        }
    }

    func testAMainActorDelegateConformsAndIsCalledOnTheMainActor() throws {
        let folder = try temporaryFolder(self)
        try MainActor.assumeIsolated { try Self.showWindow(storeIn: folder) }
    }

    /// What a GTK app's main-actor code does: a context, a controller, a window as delegate.
    @MainActor private static func showWindow(storeIn folder: URL) throws {
        let (_, context) = try WorldCup.open(in: folder)
        let controller = WorldCup.controller(context, request: WorldCup.request())
        let window = MainActorWindow()
        controller.delegate = window
        try controller.performFetch()
        window.rows = controller.snapshot
        try WorldCup.insert("Atlantis", "Oceania", wins: 9, into: context)
        try context.save()
        XCTAssertEqual(window.rows, controller.snapshot)
        XCTAssertTrue(window.rows.contains { $0.name == "Oceania" }, "the batch reached the window")
    }

    func testCoreDataStyleCallbacksAreCalled() throws {
        let (context, controller) = try worldCup()
        let delegate = CoreDataStyle()
        controller.delegate = delegate
        try controller.performFetch()
        let japan = try WorldCup.team("Japan", in: context), australia = try WorldCup.team("Australia", in: context)
        try WorldCup.insert("Atlantis", "Oceania", wins: 1, into: context)   // a new section
        try context.delete(japan)
        try context.delete(australia)                                  // Asia goes
        try context.save()
        XCTAssertEqual(delegate.calls.first, "will")
        XCTAssertEqual(delegate.calls.last, "did")
        XCTAssertEqual(Set(delegate.calls.dropFirst().dropLast()), [
            "section delete 1 Asia (2)",             // as it was
            "section insert 2 Oceania (1)",          // Africa, Europe, Oceania, South America
            "object delete Japan [1, 0] -",
            "object delete Australia [1, 1] -",
            "object insert Atlantis - [2, 0]",
        ])
        XCTAssertEqual(delegate.calls.count, 7)
    }

    func testAModeTheDelegateDoesNotImplementIsReported() throws {
        let warnings = collectWarnings()
        let (_, controller) = try worldCup()
        let delegate = Plain()
        controller.delegate = delegate
        controller.changeReporting = .snapshot
        XCTAssertEqual(warnings.all.count, 1)
        XCTAssertTrue(warnings.all.first?.contains("Plain is no FetchedResultsSnapshotDelegate") == true, "\(warnings.all)")
        controller.changeReporting = .batches
        XCTAssertEqual(warnings.all.count, 1, "a mode it implements says nothing")
    }

    func testAChangeTheControllerCannotFollowReachesTheDelegate() throws {
        var request = WorldCup.request()
        request.fetchLimit = 5   // every change is followed by fetching again
        let (context, controller) = try worldCup(request: request)
        let delegate = Failures()
        controller.delegate = delegate
        try controller.performFetch()
        let shown = controller.snapshot
        // Another program takes the table away.
        try sqlite3(context.store.url!, "ALTER TABLE Team RENAME TO Gone")
        try WorldCup.insert("Atlantis", "Africa", wins: 9, into: context)
        context.processPendingChanges()
        XCTAssertEqual(delegate.errors.count, 1)
        XCTAssertTrue(delegate.errors.first?.contains("no such table: Team") == true, "\(delegate.errors)")
        XCTAssertEqual(controller.snapshot, shown, "the last results stay")

        // Nobody listening: a warning, not silence.
        let warnings = collectWarnings()
        let plain = Plain()
        controller.delegate = plain
        try WorldCup.insert("Lemuria", "Africa", wins: 9, into: context)
        context.processPendingChanges()
        XCTAssertTrue(warnings.all.contains { $0.contains("could not follow a change") }, "\(warnings.all)")
    }

    func testChangeBatchesStreamEveryBatchWithoutADelegate() throws {
        let (context, controller) = try worldCup()
        try controller.performFetch()
        let before = controller.snapshot
        let batches = controller.changeBatches
        let followed = Mutex<[SectionSnapshot]?>(nil)
        let done = expectation(description: "two batches read")
        Task {
            var state = before
            var received = 0
            for await batch in batches {
                state = try batch.applied(to: state)
                received += 1
                if received == 2 { break }
            }
            followed.withLock { [state] in $0 = state }
            done.fulfill()
        }
        try WorldCup.team("Ghana", in: context).wins = 5
        try context.save()
        try WorldCup.insert("Atlantis", "Oceania", into: context)
        try context.save()
        wait(for: [done], timeout: 5)
        XCTAssertEqual(followed.withLock { $0 }, controller.snapshot, "a subscriber following the batches alone holds the controller's sections")
        XCTAssertTrue(controller.snapshot.contains { $0.name == "Oceania" })
    }
}
