import Foundation
@testable import ObjectStore
import XCTest

/// What a context keeps while it runs for a long time stays bounded, however many edits and
/// saves it goes through.
final class LongRunTests: XCTestCase {
    /// `apply` edits and saves on the main thread and never returns to the main queue, so a
    /// block queued there never runs: each edit used to queue one more (about 180 bytes an
    /// edit-and-save cycle, 40 → 47 MB over 40,000 cycles).
    func testEditsAndSavesOnABusyQueueQueueAtMostOneProcessingBlock() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let queue = DispatchQueue(label: "busy")
        let context = ObjectContext(store: store, queue: queue)
        let saves = 1_000
        var mostQueued = 0
        try queue.sync {
            // Inside one block of the context's queue: nothing queued meanwhile can run.
            let names = try Fixtures.insertTeams(into: context).prefix(4).map(\.teamName)
            for cycle in 1...saves {
                // As `apply` does: a fetch (which processes pending changes), an edit, a save.
                let request = FetchRequest<Team>(predicate: try FetchPredicate(format: "teamName == %@", names[cycle % 4]))
                try context.fetch(request)[0].wins = cycle
                try context.save()
                mostQueued = max(mostQueued, context.queuedProcessingBlocks)
            }
        }
        XCTAssertLessThanOrEqual(mostQueued, 1, "blocks queued and not run during \(saves) saves")
        XCTAssertEqual(queue.sync { context.queuedProcessingBlocks }, 0, "the queued block ran once the queue was free")
        let other = ObjectContext(store: store)
        let wins = try other.fetch(FetchRequest<Team>(predicate: try FetchPredicate(format: "wins > 0"))).map(\.wins).sorted()
        XCTAssertEqual(wins, [saves - 3, saves - 2, saves - 1, saves], "every save was written")
    }
}
