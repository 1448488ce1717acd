import Foundation
@testable import ObjectStore
import XCTest

/// A context knows whether it is used on its queue (what its debug-build checks ask), and
/// performAndWait on the context's own queue runs at once instead of waiting for itself.
final class ContextQueueTests: XCTestCase {
    func testAContextKnowsWhetherItRunsOnItsQueue() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let main = ObjectContext(store: store)
        XCTAssertTrue(main.isOnQueue, "a main-queue context on the main thread")
        let queue = DispatchQueue(label: "background")
        let background = ObjectContext(store: store, queue: queue)
        XCTAssertFalse(background.isOnQueue, "a private-queue context on the main thread")
        XCTAssertTrue(background.performAndWait { background.isOnQueue })
        let elsewhere = expectation(description: "asked on another thread")
        DispatchQueue.global().async {
            XCTAssertFalse(main.isOnQueue, "a main-queue context on another thread")
            XCTAssertFalse(background.isOnQueue, "a private-queue context on another queue")
            elsewhere.fulfill()
        }
        wait(for: [elsewhere], timeout: 10)
        // A queue that targets the context's queue is on it, as Dispatch sees it.
        XCTAssertTrue(DispatchQueue(label: "inner", target: queue).sync { background.isOnQueue })
        // Two contexts on one queue share its mark.
        let second = ObjectContext(store: store, queue: queue)
        XCTAssertTrue(queue.sync { second.isOnQueue && background.isOnQueue })
    }

    func testPerformAndWaitOnTheContextsOwnQueueRunsAtOnce() throws {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        let background = ObjectContext(store: store, queue: DispatchQueue(label: "background"))
        let finished = expectation(description: "nested performAndWait returns")
        DispatchQueue.global().async {
            let count = background.performAndWait {
                // Already on the queue: a queue.sync here would wait for itself forever.
                background.performAndWait { (try? background.count(for: FetchRequest<Team>())) ?? -1 }
            }
            XCTAssertEqual(count, 0)
            finished.fulfill()
        }
        wait(for: [finished], timeout: 10)
    }
}
