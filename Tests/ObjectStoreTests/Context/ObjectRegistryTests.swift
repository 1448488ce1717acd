import Foundation
@testable import ObjectStore
import XCTest

/// The context keeps one object per row while anyone holds it, keeps every changed object,
/// and lets go of unchanged objects nobody holds: touching every row of a long list leaves
/// memory flat.
final class ObjectRegistryTests: XCTestCase {
    private static let rows = 20_000

    private func store() throws -> PersistentStore {
        let store = try Fixtures.store(Fixtures.worldCupModel(), self)
        try store.database.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < \(Self.rows))
                INSERT INTO "Team" (teamName, qualifyingZone, wins) SELECT printf('Team %05d', i), 'Europe', 0 FROM n
                """)
        }
        return store
    }

    func testTouchingEveryObjectOnceKeepsOnlyTheRecentOnesAlive() throws {
        let context = ObjectContext(store: try store())
        var request = FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "teamName")])
        request.fetchBatchSize = 20
        let teams = try context.fetch(request)
        var names = 0
        for i in 0..<teams.count { names += teams[i].teamName.isEmpty ? 0 : 1 }   // a scroll to the end
        XCTAssertEqual(names, Self.rows)
        let alive = context.registeredObjects.count
        XCTAssertLessThanOrEqual(alive, ObjectRegistry.recentCapacity + 64, "unchanged objects nobody holds are released")
        XCTAssertLessThanOrEqual(context.registry.entryCount, 4 * ObjectRegistry.recentCapacity + 64, "their entries are swept")
    }

    func testAnObjectSomeoneHoldsStaysTheOneObjectOfItsRow() throws {
        let context = ObjectContext(store: try store())
        let teams = try context.fetch(FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "teamName")]))
        let held = teams[0]
        let id = held.objectID
        for i in 1..<teams.count { _ = teams[i].teamName }   // many more objects than the recent ones
        XCTAssertTrue(try context.object(with: id) === held, "one object per row while it is held")
        XCTAssertTrue(try context.fetch(FetchRequest<Team>(predicate: try FetchPredicate(format: "teamName == %@", held.teamName)))[0] === held)
    }

    func testAChangedObjectIsKeptWithItsChangesWhenNobodyHoldsIt() throws {
        let context = ObjectContext(store: try store())
        let teams = try context.fetch(FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "teamName")]))
        let id = teams[5].objectID
        teams[5].wins = 42
        for i in 6..<teams.count { _ = teams[i].teamName }
        let again = try context.existingObject(with: id) as! Team
        XCTAssertEqual(again.wins, 42, "the unsaved change is still there")
        XCTAssertTrue(context.hasChanges)
        try context.save()
        let other = ObjectContext(store: context.store)
        XCTAssertEqual((try other.existingObject(with: id) as! Team).wins, 42)
    }

    func testTemporaryIDsNameTheirSavedObjectsForTheLastTenThousandSavesOnly() throws {
        var map = RecentIDMap(capacity: 3)
        let ids = (1...5).map { (ObjectID(entityName: "Team", rowKey: -Int64($0)), ObjectID(entityName: "Team", rowKey: Int64($0))) }
        for (temporary, permanent) in ids { map[temporary] = permanent }
        XCTAssertEqual(map.count, 3, "bounded")
        XCTAssertNil(map[ids[0].0])
        XCTAssertNil(map[ids[1].0])
        XCTAssertEqual(map[ids[4].0], ids[4].1)
        XCTAssertEqual(map[ids[2].0], ids[2].1)

        // Through a context: a temporary ID still names its object after the save.
        let context = ObjectContext(store: try store())
        let team = try context.insert(Team.self)
        team.teamName = "New"
        team.qualifyingZone = "Oceania"
        let temporary = team.objectID
        try context.save()
        XCTAssertTrue(try context.object(with: temporary) === team)
        XCTAssertEqual(context.permanentIDs.capacity, 10_000)
    }
}
