import CGtk
import Dispatch
import Foundation
import GtkBinding
import XCTest

/// The Dispatch main queue runs inside the GLib main loop once GtkBinding attached its
/// source (a list model does that by itself). GLib only: no display needed.
final class MainQueueSourceTests: XCTestCase, @unchecked Sendable {
    private final class Flag: @unchecked Sendable { var isSet = false }

    /// Runs GLib's default main context until `condition` holds or `timeout` passes.
    @MainActor private func iterateMainContext(until condition: () -> Bool, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { return false }
            while g_main_context_iteration(nil, 0) != 0 {}
            usleep(5_000)
        }
        return true
    }

    func testWorkQueuedOnTheMainQueueRunsWhenTheGLibLoopIterates() { MainActor.assumeIsolated {
        MainQueueSource.attach()
        let flag = Flag()
        DispatchQueue.main.async { flag.isSet = true }
        XCTAssertFalse(flag.isSet)
        XCTAssertTrue(iterateMainContext(until: { flag.isSet }, timeout: 2), "only g_main_context_iteration ran")

        // Queued from another thread, it wakes the loop.
        let later = Flag()
        DispatchQueue.global().async { DispatchQueue.main.async { later.isSet = true } }
        XCTAssertTrue(iterateMainContext(until: { later.isSet }, timeout: 2))
    } }
}
