import Foundation
import ObjectStore
import XCTest

final class FetchTests: XCTestCase {
    private let worldCupOrder = [
        FetchSortDescriptor(key: "qualifyingZone"), FetchSortDescriptor(key: "wins", ascending: false), FetchSortDescriptor(key: "teamName"),
    ]

    func testFetchSortsAndFilters() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        let teams = try Fixtures.insertTeams(into: context)
        teams.first { $0.teamName == "Ghana" }!.wins = 2
        try context.save()
        let request = FetchRequest<Team>(predicate: try FetchPredicate(format: "qualifyingZone == %@", "Africa"), sortDescriptors: worldCupOrder)
        XCTAssertEqual(try context.fetch(request).map(\.teamName), ["Ghana", "Algeria", "Cameroon", "Nigeria"])
        XCTAssertEqual(try context.count(for: request), 4)
    }

    func testPendingChangesCountLikeSavedOnes() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        let teams = try Fixtures.insertTeams(into: context)
        let request = FetchRequest<Team>(predicate: try FetchPredicate(format: "qualifyingZone == 'Africa'"), sortDescriptors: worldCupOrder)
        let nigeria = teams.first { $0.teamName == "Nigeria" }!
        nigeria.wins = 3
        try context.delete(teams.first { $0.teamName == "Algeria" }!)
        let egypt = try context.insert(Team.self)
        egypt.teamName = "Egypt"; egypt.qualifyingZone = "Africa"; egypt.wins = 1
        teams.first { $0.teamName == "Japan" }!.qualifyingZone = "Africa"
        XCTAssertEqual(try context.fetch(request).map(\.teamName), ["Nigeria", "Egypt", "Cameroon", "Ghana", "Japan"])
        XCTAssertTrue(try context.fetch(request)[1] === egypt, "inserted objects are fetched as themselves")
        var limited = request
        limited.fetchLimit = 2
        limited.fetchOffset = 1
        XCTAssertEqual(try context.fetch(limited).map(\.teamName), ["Egypt", "Cameroon"])
        XCTAssertEqual(try context.count(for: limited), 2)
        var savedOnly = request
        savedOnly.includesPendingChanges = false
        XCTAssertEqual(try context.fetch(savedOnly).map(\.teamName), ["Algeria", "Cameroon", "Ghana", "Nigeria"])
        XCTAssertEqual(nigeria.wins, 3, "fetching keeps unsaved values")
        XCTAssertTrue(context.hasChanges)
    }

    func testSortAcrossAToOneRelationship() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.banksModel(), self))
        for (name, days) in [("Old Bank", 100.0), ("New Bank", 900.0), ("Mid Bank", 500.0)] {
            let bank = try context.insert(FailedBankInfo.self)
            bank.name = name; bank.city = "Austin"; bank.state = "TX"
            let details = try context.insert(FailedBankDetails.self)
            details.closeDate = Date(timeIntervalSince1970: days * 86400)
            bank.details = details
        }
        try context.save()
        let request = FetchRequest<FailedBankInfo>(sortDescriptors: [FetchSortDescriptor(key: "details.closeDate", ascending: false)])
        XCTAssertEqual(try context.fetch(request).map(\.name), ["New Bank", "Mid Bank", "Old Bank"])
        // An unsaved change to the related object reorders the banks.
        try context.fetch(request).last!.details!.closeDate = Date(timeIntervalSince1970: 1000 * 86400)
        XCTAssertEqual(try context.fetch(request).map(\.name), ["Old Bank", "New Bank", "Mid Bank"])
        let recent = FetchRequest<FailedBankInfo>(predicate: try FetchPredicate(format: "details.closeDate > %@", Date(timeIntervalSince1970: 600 * 86400)))
        XCTAssertEqual(Set(try context.fetch(recent).map(\.name)), ["Old Bank", "New Bank"])
    }

    func testBatchSizeLoadsIDsOnceThenValuesInBatches() throws {
        let log = SQLLog()
        let store = try Fixtures.store(Fixtures.banksModel(), self, sqlLog: log.handler)
        let context = ObjectContext(store: store)
        for i in 0..<100 {
            let bank = try context.insert(FailedBankInfo.self)
            bank.name = "Bank \(i)"; bank.city = "City"; bank.state = "ST"
        }
        try context.save()

        let reader = ObjectContext(store: store)
        var request = FetchRequest<FailedBankInfo>(sortDescriptors: [FetchSortDescriptor(key: "name")])
        request.fetchBatchSize = 20
        log.reset()
        func selects() -> [String] { log.statements.filter { $0.contains("FROM \"FailedBankInfo\"") } }
        let banks = try reader.fetch(request)
        XCTAssertEqual(banks.count, 100)
        XCTAssertEqual(selects().count, 1, "one query for all IDs: \(selects())")
        XCTAssertFalse(selects()[0].contains("\"name\", "), "the ID query reads no values: \(selects()[0])")
        XCTAssertEqual(banks[0].name, "Bank 0")
        XCTAssertEqual(selects().count, 2)
        _ = banks[0..<20].map(\.city)
        XCTAssertEqual(selects().count, 2, "the first 20 come with one query")
        XCTAssertEqual(banks[20].name, "Bank 27")
        XCTAssertEqual(selects().count, 3)
        XCTAssertTrue(selects().last!.contains("IN ("), selects().last!)
    }

    func testBadRequestsAreErrorsNotCrashes() throws {
        let context = ObjectContext(store: try Fixtures.store(Fixtures.worldCupModel(), self))
        try Fixtures.insertTeams(into: context)
        XCTAssertThrowsError(try context.fetch(FetchRequest<Team>(predicate: FetchPredicate(format: "losses > 2")))) { error in
            XCTAssertTrue("\(error)".contains("losses"), "\(error)")
        }
        XCTAssertThrowsError(try context.fetch(FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "rank")])))
        XCTAssertThrowsError(try context.fetch(FetchRequest<ManagedObject>(entityName: "Player"))) { error in
            XCTAssertTrue("\(error)".contains("no such entity"), "\(error)")
        }
        XCTAssertThrowsError(try context.fetch(FetchRequest<FailedBankInfo>(entityName: "Team"))) { error in
            XCTAssertTrue("\(error)".contains("FetchRequest<Team>"), "\(error)")
        }
    }
}
