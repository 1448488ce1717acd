import Foundation
import ObjectStore
import XCTest

/// A file that imports Foundation and ObjectStore uses both libraries' types by their plain
/// names: ours are `FetchPredicate`, `FetchPredicateError` and `FetchSortDescriptor`, so
/// `Predicate`, `PredicateError` and `SortDescriptor` stay Foundation's. (This file compiling
/// is most of the test.)
final class FoundationNamesTests: XCTestCase {
    func testOursAndFoundationsTypesLiveSideBySide() throws {
        let ours = try FetchPredicate(format: "wins > %d", 3)
        let order = FetchSortDescriptor(key: "wins", ascending: false)
        let request = FetchRequest<ManagedObject>(entityName: "Team", predicate: ours, sortDescriptors: [order])
        XCTAssertEqual(request.predicate?.predicateFormat, "wins > 3")

        let foundations = Predicate<Int> { _ in PredicateExpressions.Value(true) }
        XCTAssertTrue(try foundations.evaluate(5))
        let byLength = SortDescriptor(\String.count)
        XCTAssertEqual(["ccc", "a", "bb"].sorted(using: byLength), ["a", "bb", "ccc"])

        XCTAssertThrowsError(try FetchPredicate(format: "wins >")) { error in
            XCTAssertTrue(error is FetchPredicateError, "\(error)")
            XCTAssertFalse(error is PredicateError, "Foundation's")
        }
    }
}
