import FetchedResults
import Foundation
import ObjectStore
import XCTest
@_exported import FetchedResultsTestSupport
@_exported import TestSupport


/// Runs the main queue until `condition` holds (merges of other contexts arrive there).
func drainMainQueue(until condition: () -> Bool = { false }, timeout: TimeInterval = 5) {
    let deadline = Date().addingTimeInterval(timeout)
    repeat {
        RunLoop.main.run(until: Date().addingTimeInterval(0.005))
    } while !condition() && Date() < deadline
}
