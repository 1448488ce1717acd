import CGtk
import Dispatch
import Foundation
@testable import Viewer
import XCTest

final class MainQueueSourceTests: XCTestCase {
    private final class Flag: @unchecked Sendable { var isSet = false }

    func testWorkQueuedOnTheMainQueueRunsWhenTheGLibLoopIterates() {
        MainQueueSource.attach()
        let flag = Flag()
        DispatchQueue.main.async { flag.isSet = true }
        XCTAssertFalse(flag.isSet)
        XCTAssertTrue(iterateMainLoop(until: { flag.isSet }, timeout: 2), "only g_main_context_iteration ran")

        // Queued from another thread, it wakes the loop.
        let later = Flag()
        DispatchQueue.global().async { DispatchQueue.main.async { later.isSet = true } }
        XCTAssertTrue(iterateMainLoop(until: { later.isSet }, timeout: 2))
    }
}
