import FetchedResults
import Foundation
import ObjectStore
import XCTest

/// What a list built on a controller relies on, one example at a time: the reference
/// articles' apps (World Cup, movies, failed banks, to-do lists) and the controller's options.
final class ControllerTests: XCTestCase {
    private typealias Team = WorldCup.Team

    private func worldCup() throws -> (PersistentStore, ObjectContext, FetchedResultsController<Team>, ChangeLog<Team>) {
        let (store, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = WorldCup.controller(context)
        let log = ChangeLog<Team>()
        controller.delegate = log
        try controller.performFetch()
        return (store, context, controller, log)
    }

    private func performFetchError<Result>(_ controller: FetchedResultsController<Result>, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            try controller.performFetch()
            XCTFail("performFetch succeeded", file: file, line: line)
            return ""
        } catch {
            XCTAssertNil(controller.sections, "a failed fetch leaves no sections", file: file, line: line)
            return String(describing: error)
        }
    }

    /// Every batch so far, applied in turn to `start`, gives the controller's sections, which
    /// are those of a fresh fetch.
    private func assertBatchesLead<Result>(from start: [SectionSnapshot], to controller: FetchedResultsController<Result>, log: ChangeLog<Result>,
                                           fresh: () -> FetchedResultsController<Result>, file: StaticString = #filePath, line: UInt = #line) throws {
        var state = start
        for batch in log.batches { state = try batch.applied(to: state) }
        XCTAssertEqual(state, controller.snapshot, "the batches do not lead to the controller's sections", file: file, line: line)
        XCTAssertEqual(controller.snapshot, try freshSnapshot(fresh), "the controller differs from a fresh fetch", file: file, line: line)
    }

    // MARK: performFetch errors

    func testARequestWithoutSortDescriptorsIsRefusedWithTheFix() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = FetchedResultsController(fetchRequest: FetchRequest<Team>(), managedObjectContext: context)
        let message = performFetchError(controller)
        XCTAssertTrue(message.contains("no sort descriptors"), message)
        XCTAssertTrue(message.contains("FetchSortDescriptor(key:"), message)
    }

    func testTheFirstSortDescriptorMustSortBySectionKeyPath() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let request = FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "wins", ascending: false), FetchSortDescriptor(key: "qualifyingZone")])
        let message = performFetchError(WorldCup.controller(context, request: request))
        XCTAssertTrue(message.contains("put FetchSortDescriptor(key: \"qualifyingZone\") first"), message)
    }

    func testTheSectionSortCannotFoldCase() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let request = FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "qualifyingZone", options: [.caseInsensitive]), FetchSortDescriptor(key: "teamName")])
        let message = performFetchError(WorldCup.controller(context, request: request))
        XCTAssertTrue(message.contains("qualifyingZone"), message)
        XCTAssertTrue(message.contains("without case or diacritic options"), message)
    }

    func testAnUnknownKeyInThePredicateNamesTheKeysThereAre() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let message = performFetchError(WorldCup.controller(context, request: WorldCup.request(predicate: try FetchPredicate(format: "winz > 2"))))
        XCTAssertTrue(message.contains("'winz'"), message)
        XCTAssertTrue(message.contains("teamName, qualifyingZone, imageName, wins"), message)
    }

    func testAnUnknownSectionKeyPathIsRefused() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "zone")]), managedObjectContext: context, sectionNameKeyPath: "zone")
        let message = performFetchError(controller)
        XCTAssertTrue(message.contains("'zone'"), message)
        XCTAssertTrue(message.contains("qualifyingZone"), message)
    }

    // MARK: World Cup

    func testWorldCupSectionsAndIndexPaths() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = WorldCup.controller(context)
        XCTAssertNil(controller.sections)
        XCTAssertNil(controller.fetchedObjects)
        try controller.performFetch()

        let sections = try XCTUnwrap(controller.sections)
        XCTAssertEqual(sections.map(\.name), ["Africa", "Asia", "Europe", "South America"])
        XCTAssertEqual(sections.map(\.numberOfObjects), [3, 2, 4, 2])
        XCTAssertEqual(controller.numberOfObjects, 11)
        XCTAssertEqual(controller.rows("teamName"), [
            "Africa: Nigeria, Ghana, Algeria", "Asia: Japan, Australia",
            "Europe: Spain, Germany, England, France", "South America: Brazil, Argentina",
        ])
        XCTAssertEqual(controller.fetchedObjects?.map(\.teamName), [
            "Nigeria", "Ghana", "Algeria", "Japan", "Australia", "Spain", "Germany", "England", "France", "Brazil", "Argentina",
        ])
        let germany = controller.object(at: IndexPath(item: 1, section: 2))
        XCTAssertEqual(germany.teamName, "Germany")
        XCTAssertEqual(germany.wins, 2)
        XCTAssertTrue(germany === (try WorldCup.team("Germany", in: context)), "one object per row")
        for (s, section) in sections.enumerated() {
            for (i, team) in section.objects.enumerated() {
                XCTAssertEqual(controller.indexPath(for: team), IndexPath(item: i, section: s))
                XCTAssertEqual(controller.objectID(at: IndexPath(item: i, section: s)), team.objectID)
            }
        }
        let asia = WorldCup.controller(context, request: WorldCup.request(predicate: try FetchPredicate(format: "qualifyingZone == 'Asia'")))
        try asia.performFetch()
        XCTAssertNil(asia.indexPath(for: germany), "not in the results")
        XCTAssertEqual(asia.sections?.map(\.name), ["Asia"])
    }

    func testTappingATeamMovesItOnlyWhenItOvertakesTheOneAbove() throws {
        let (_, context, controller, log) = try worldCup()
        let start = controller.snapshot
        let france = controller.object(at: IndexPath(item: 3, section: 2))
        XCTAssertEqual(france.teamName, "France")

        // 1 win: level with England (1), after it by name: same place.
        france.wins += 1
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object update 2.3->2.3", "did"])
        XCTAssertEqual(log.batches.last?.objectChanges.map(\.objectID), [france.objectID])
        XCTAssertEqual(controller.indexPath(for: france), IndexPath(item: 3, section: 2))

        // 2 wins: level with Germany (2), before it by name: past England and Germany.
        log.calls = []
        france.wins += 1
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object move 2.3->2.1", "did"])
        XCTAssertEqual(log.batches.last?.objectChanges.map(\.objectID), [france.objectID])
        XCTAssertEqual(controller.rows("teamName")[2], "Europe: Spain, France, Germany, England")
        XCTAssertEqual(controller.indexPath(for: france), IndexPath(item: 1, section: 2))

        // 3 wins: level with Spain (3), before it by name.
        log.calls = []
        france.wins += 1
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object move 2.1->2.0", "did"])
        XCTAssertEqual(controller.object(at: IndexPath(item: 0, section: 2)), france)
        try assertBatchesLead(from: start, to: controller, log: log) { WorldCup.controller(context) }
    }

    func testATeamInANewZoneInsertsItsSection() throws {
        let (_, context, controller, log) = try worldCup()
        let start = controller.snapshot
        let fiji = try WorldCup.insert("Fiji", "Oceania", into: context)
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section insert 3 Oceania", "object insert nil->3.0", "did"])
        XCTAssertEqual(controller.sections?.map(\.name), ["Africa", "Asia", "Europe", "Oceania", "South America"])
        XCTAssertEqual(controller.indexPath(for: fiji), IndexPath(item: 0, section: 3), "found by its saved ID")
        XCTAssertEqual(controller.object(at: IndexPath(item: 0, section: 3)), fiji)
        try assertBatchesLead(from: start, to: controller, log: log) { WorldCup.controller(context) }
    }

    func testDeletingTheLastTeamOfAZoneDeletesItsSection() throws {
        let (_, context, controller, log) = try worldCup()
        let start = controller.snapshot
        try context.delete(WorldCup.team("Australia", in: context))
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object delete 1.1->nil", "did"])

        log.calls = []
        try context.delete(WorldCup.team("Japan", in: context))
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section delete 1 Asia", "object delete 1.0->nil", "did"])
        XCTAssertEqual(controller.sections?.map(\.name), ["Africa", "Europe", "South America"])
        try assertBatchesLead(from: start, to: controller, log: log) { WorldCup.controller(context) }
    }

    func testATeamChangingZoneMovesAcrossSections() throws {
        let (_, context, controller, log) = try worldCup()
        let start = controller.snapshot
        let japan = try WorldCup.team("Japan", in: context)
        japan.qualifyingZone = "Europe"
        try context.save()
        // Japan (1 win) sorts after England (1) by name, before France (0).
        XCTAssertEqual(log.calls, ["will", "object move 1.0->2.3", "did"])
        XCTAssertEqual(controller.rows("teamName")[1...2], ["Asia: Australia", "Europe: Spain, Germany, England, Japan, France"])
        try assertBatchesLead(from: start, to: controller, log: log) { WorldCup.controller(context) }
    }

    func testUnsavedChangesAreShownAndARollbackTakesThemBack() throws {
        let (_, context, controller, log) = try worldCup()
        let start = controller.snapshot
        let fiji = try WorldCup.insert("Fiji", "Oceania", into: context)
        try WorldCup.team("France", in: context).wins = 9
        context.processPendingChanges()
        XCTAssertEqual(controller.indexPath(for: fiji), IndexPath(item: 0, section: 3))
        XCTAssertEqual(controller.rows("teamName")[2], "Europe: France, Spain, Germany, England")

        log.calls = []
        context.rollback()
        XCTAssertEqual(controller.snapshot, start)
        // Every change of the batch reaches the per-object calls too: a table view that
        // follows them must remove Fiji's row, or its row count is wrong.
        XCTAssertEqual(log.calls.filter { $0.hasPrefix("object") }.count, log.batches.last?.objectChanges.count)
        XCTAssertEqual(log.calls.sorted(), ["did", "object delete 3.0->nil", "object move 2.0->2.3", "section delete 3 Oceania", "will"])
        try assertBatchesLead(from: start, to: controller, log: log) { WorldCup.controller(context) }
    }

    // MARK: Movies

    func testLentMoviesMoveBetweenSharedAndNotShared() throws {
        let context = try Movies.open(in: temporaryFolder(self), lent: ["Amélie"], notLent: ["Alien", "Brazil", "Casablanca"])
        let controller = Movies.controller(context)
        let log = ChangeLog<Movies.Movie>()
        controller.delegate = log
        try controller.performFetch()
        let start = controller.snapshot
        XCTAssertEqual(controller.sections?.map(\.name), ["1", "0"])
        XCTAssertEqual(controller.sections?.map { Movies.title(forSectionName: $0.name) }, ["Lent", "Not lent"])
        XCTAssertEqual(controller.rows("title"), ["1: Amélie", "0: Alien, Brazil, Casablanca"])

        // Lending Casablanca moves it to Shared, after Amélie.
        try Movies.movie("Casablanca", in: context).lent = true
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object move 1.2->0.1", "did"])
        XCTAssertEqual(controller.rows("title"), ["1: Amélie, Casablanca", "0: Alien, Brazil"])

        // Both come back: Shared disappears in the same batch.
        log.calls = []
        let (amelie, casablanca) = (try Movies.movie("Amélie", in: context), try Movies.movie("Casablanca", in: context))
        amelie.lent = false
        casablanca.lent = false
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section delete 0 1", "object move 0.0->0.1", "object move 0.1->0.3", "did"])
        XCTAssertEqual(controller.rows("title"), ["0: Alien, Amélie, Brazil, Casablanca"])

        // Lending Brazil brings Shared back, first.
        log.calls = []
        try Movies.movie("Brazil", in: context).lent = true
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section insert 0 1", "object move 0.2->0.0", "did"])
        XCTAssertEqual(controller.rows("title"), ["1: Brazil", "0: Alien, Amélie, Casablanca"])
        try assertBatchesLead(from: start, to: controller, log: log) { Movies.controller(context) }
    }

    // MARK: Failed banks

    func testBanksSortByTheirDetailsCloseDate() throws {
        let (_, context) = try FailedBanks.open(in: temporaryFolder(self), count: 50)
        let make = { FetchedResultsController(fetchRequest: FailedBanks.request(), managedObjectContext: context) }
        let controller = make()
        let log = ChangeLog<ManagedObject>()
        controller.delegate = log
        try controller.performFetch()
        let start = controller.snapshot
        XCTAssertEqual(controller.sections?.map(\.name), [""])
        XCTAssertEqual((0..<3).map { FailedBanks.name(controller.object(at: IndexPath(item: $0, section: 0))) }, ["Bank 49", "Bank 48", "Bank 47"])

        // Bank 10 (closed 10 days after the first) gets the newest close date: to the top.
        let bank10 = controller.object(at: IndexPath(item: 39, section: 0))
        XCTAssertEqual(FailedBanks.name(bank10), "Bank 10")
        let details10 = try XCTUnwrap(bank10.relatedObjects(forKey: "details").first as? ManagedObject)
        try details10.setValue(FailedBanks.firstClose.addingTimeInterval(100 * 86_400), forKey: "closeDate")
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object move 0.39->0.0", "did"])
        XCTAssertEqual(log.batches.last?.objectChanges.map(\.objectID), [bank10.objectID], "the bank moves, not its details")

        // Bank 20 closes half a day later: still between banks 21 and 19.
        log.calls = []
        let bank20 = controller.object(at: IndexPath(item: 30, section: 0))
        XCTAssertEqual(FailedBanks.name(bank20), "Bank 20")
        let details20 = try XCTUnwrap(bank20.relatedObjects(forKey: "details").first as? ManagedObject)
        try details20.setValue(FailedBanks.firstClose.addingTimeInterval(20.5 * 86_400), forKey: "closeDate")
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object update 0.30->0.30", "did"])
        try assertBatchesLead(from: start, to: controller, log: log, fresh: make)
    }

    func testBanksLoadTwentyAtATime() throws {
        let log = SQLLog()
        let (store, _) = try FailedBanks.open(in: temporaryFolder(self), count: 50, sqlLog: log)
        let context = ObjectContext(store: store)   // nothing registered yet
        let controller = FetchedResultsController(fetchRequest: FailedBanks.request(), managedObjectContext: context)
        log.reset()
        try controller.performFetch()
        XCTAssertEqual(controller.numberOfObjects, 50)
        XCTAssertEqual(log.orderedReads(of: "FailedBankInfo").count, 1, "one query for the IDs")
        XCTAssertTrue(context.registeredObjects.isEmpty, "no object is made by the fetch")

        log.reset()
        let first = (0..<20).map { FailedBanks.name(controller.object(at: IndexPath(item: $0, section: 0))) }
        XCTAssertEqual(first, (30..<50).reversed().map { "Bank \($0)" })
        let bankReads = { log.statements.filter { $0.contains("FROM \"FailedBankInfo\"") } }
        XCTAssertEqual(bankReads().count, 1, "the first 20 load in one query: \(bankReads())")
        XCTAssertTrue(try context.object(with: controller.objectID(at: IndexPath(item: 20, section: 0))).isFault, "the 21st is not loaded yet")

        let next = (20..<25).map { FailedBanks.name(controller.object(at: IndexPath(item: $0, section: 0))) }
        XCTAssertEqual(next, (25..<30).reversed().map { "Bank \($0)" })
        XCTAssertEqual(bankReads().count, 2, "the next 20 in one more query")
    }

    // MARK: Limit and offset

    private func ranking(_ context: ObjectContext, limit: Int, offset: Int = 0) -> () -> FetchedResultsController<Team> {
        {
            var request = FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "wins", ascending: false), FetchSortDescriptor(key: "teamName")])
            request.fetchLimit = limit
            request.fetchOffset = offset
            return FetchedResultsController(fetchRequest: request, managedObjectContext: context)
        }
    }

    func testATopFiveStaysFiveLong() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let make = ranking(context, limit: 5)
        let controller = make()
        let log = ChangeLog<Team>()
        controller.delegate = log
        try controller.performFetch()
        let start = controller.snapshot
        XCTAssertEqual(controller.fetchedObjects?.map(\.teamName), ["Brazil", "Spain", "Germany", "Nigeria", "Argentina"])

        // Spain goes: England (1 win, next by name) comes up from below.
        try context.delete(WorldCup.team("Spain", in: context))
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object delete 0.1->nil", "object insert nil->0.4", "did"])
        XCTAssertEqual(controller.fetchedObjects?.map(\.teamName), ["Brazil", "Germany", "Nigeria", "Argentina", "England"])

        // Ghana climbs to 3 wins: in at second place, England drops out.
        log.calls = []
        try WorldCup.team("Ghana", in: context).wins = 3
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object delete 0.4->nil", "object insert nil->0.1", "did"])
        XCTAssertEqual(controller.fetchedObjects?.map(\.teamName), ["Brazil", "Ghana", "Germany", "Nigeria", "Argentina"])

        // A new team with no wins stays out; one with 9 comes in first.
        log.calls = []
        try WorldCup.insert("Fiji", "Oceania", into: context)
        try context.save()
        XCTAssertEqual(log.calls, [], "nothing to show")
        try WorldCup.insert("Qatar", "Asia", wins: 9, into: context)
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object delete 0.4->nil", "object insert nil->0.0", "did"])
        XCTAssertEqual(controller.fetchedObjects?.map(\.teamName), ["Qatar", "Brazil", "Ghana", "Germany", "Nigeria"])
        try assertBatchesLead(from: start, to: controller, log: log, fresh: make)
    }

    func testAnOffsetWindowFollowsChangesAboveIt() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let make = ranking(context, limit: 3, offset: 2)
        let controller = make()
        let log = ChangeLog<Team>()
        controller.delegate = log
        try controller.performFetch()
        let start = controller.snapshot
        XCTAssertEqual(controller.fetchedObjects?.map(\.teamName), ["Germany", "Nigeria", "Argentina"])

        // Japan jumps to first place, above the window: every row shifts down by one.
        try WorldCup.team("Japan", in: context).wins = 5
        try context.save()
        XCTAssertEqual(controller.fetchedObjects?.map(\.teamName), ["Spain", "Germany", "Nigeria"])
        XCTAssertEqual(log.calls, ["will", "object delete 0.2->nil", "object insert nil->0.0", "did"])
        try assertBatchesLead(from: start, to: controller, log: log, fresh: make)
    }

    // MARK: A new request

    func testANewPredicateArrivesAsOneBatch() throws {
        let (_, context, controller, log) = try worldCup()
        let start = controller.snapshot
        let strong = WorldCup.request(predicate: try FetchPredicate(format: "wins >= 2"))
        try controller.setFetchRequest(strong)
        XCTAssertEqual(log.batches.count, 1)
        XCTAssertEqual(log.calls.first, "will")
        XCTAssertEqual(log.calls.last, "did")
        XCTAssertEqual(try log.batches[0].applied(to: start), controller.snapshot)
        XCTAssertEqual(controller.rows("teamName"), ["Africa: Nigeria", "Europe: Spain, Germany", "South America: Brazil"])
        XCTAssertEqual(controller.fetchRequest, strong)
        XCTAssertEqual(controller.snapshot, try freshSnapshot { WorldCup.controller(context, request: strong) })

        // And back: the same rows as at the start, again in one batch.
        let before = controller.snapshot
        try controller.setFetchRequest(WorldCup.request())
        XCTAssertEqual(log.batches.count, 2)
        XCTAssertEqual(try log.batches[1].applied(to: before), start)
        XCTAssertEqual(controller.snapshot, start)
    }

    func testANewRequestIsCheckedLikeTheFirst() throws {
        let (_, _, controller, log) = try worldCup()
        let start = controller.snapshot
        XCTAssertThrowsError(try controller.setFetchRequest(FetchRequest<Team>(sortDescriptors: [FetchSortDescriptor(key: "teamName")]))) { error in
            XCTAssertTrue("\(error)".contains("put FetchSortDescriptor(key: \"qualifyingZone\") first"), "\(error)")
        }
        XCTAssertEqual(controller.snapshot, start, "a refused request changes nothing")
        XCTAssertEqual(controller.fetchRequest, WorldCup.request())
        XCTAssertTrue(log.batches.isEmpty)
    }

    // MARK: Delegate

    func testWithoutADelegateTheResultsStayAsFetched() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = WorldCup.controller(context)
        try controller.performFetch()
        let fetched = controller.snapshot
        try context.delete(WorldCup.team("Brazil", in: context))
        try WorldCup.team("France", in: context).wins = 9
        try context.save()
        XCTAssertEqual(controller.snapshot, fetched, "no delegate: no change tracking")

        try controller.performFetch()
        XCTAssertEqual(controller.rows("teamName")[2...], ["Europe: France, Spain, Germany, England", "South America: Argentina"])

        // A delegate set now is told of the next change.
        let log = ChangeLog<Team>()
        controller.delegate = log
        let start = controller.snapshot
        try WorldCup.team("England", in: context).wins = 10
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object move 2.3->2.0", "did"])
        try assertBatchesLead(from: start, to: controller, log: log) { WorldCup.controller(context) }

        // Removing it stops tracking again.
        controller.delegate = nil
        let tracked = controller.snapshot
        try WorldCup.team("Spain", in: context).wins = 20
        try context.save()
        XCTAssertEqual(controller.snapshot, tracked)
        XCTAssertEqual(log.batches.count, 1)
    }

    // MARK: Snapshot and difference reporting

    /// Batches only: no per-change calls, and no object loaded for them, so a merged chunk of
    /// new rows leaves the context holding none of them until they are asked for.
    func testBatchReportingLoadsNoObjectForTheChanges() throws {
        let (store, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = ranking(context, limit: 0)()
        let log = ChangeLog<Team>()
        controller.changeReporting = .batches
        controller.delegate = log
        try controller.performFetch()
        let before = controller.snapshot
        let registered = context.registeredObjects.count

        let importer = ObjectContext(store: store)
        for i in 0..<300 { try WorldCup.insert("Team \(i)", "Oceania", wins: i % 7, into: importer) }
        try importer.save()
        drainMainQueue { controller.numberOfObjects == before.flatMap(\.objectIDs).count + 300 }

        XCTAssertEqual(log.batches.count, 1)
        XCTAssertEqual(log.batches[0].objectChanges.filter { $0.type == .insert }.count, 300)
        XCTAssertEqual(try log.batches[0].applied(to: before), controller.snapshot)
        XCTAssertTrue(log.calls.isEmpty, "no will/did/per-change calls: \(log.calls.prefix(3))")
        XCTAssertEqual(context.registeredObjects.count, registered, "no object made for the inserted rows")
        XCTAssertEqual(controller.object(at: IndexPath(item: 0, section: 0)).objectID, controller.snapshot[0].objectIDs[0])
    }

    func testSnapshotAndDifferenceReportingMatchTheResults() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let make = ranking(context, limit: 0)
        let bySnapshot = make(), byDifference = make()
        let snapshotLog = ChangeLog<Team>(), differenceLog = ChangeLog<Team>()
        bySnapshot.changeReporting = .snapshot
        byDifference.changeReporting = .difference
        bySnapshot.delegate = snapshotLog
        byDifference.delegate = differenceLog
        try bySnapshot.performFetch()
        try byDifference.performFetch()
        var shown = byDifference.snapshot.flatMap(\.objectIDs)

        let france = try WorldCup.team("France", in: context)
        let (spain, algeria, brazil) = (try WorldCup.team("Spain", in: context), try WorldCup.team("Algeria", in: context),
                                        try WorldCup.team("Brazil", in: context))
        let edits: [() throws -> Void] = [
            { france.qualifyingZone = "Oceania" },            // not a sort key: in place
            { france.wins = 5 },                              // to the top
            { try context.delete(spain) },
            { algeria.wins = 2; brazil.wins = 0 },            // one up, one down, in one batch
        ]
        for (n, edit) in edits.enumerated() {
            try edit()
            try context.save()
            XCTAssertEqual(snapshotLog.snapshots.count, n + 1)
            XCTAssertEqual(differenceLog.differences.count, n + 1)
            XCTAssertTrue(snapshotLog.batches.isEmpty && snapshotLog.calls.isEmpty, "a snapshot only")
            let snapshot = try XCTUnwrap(snapshotLog.snapshots.last)
            XCTAssertEqual(snapshot.sections, bySnapshot.snapshot, "edit \(n)")
            XCTAssertEqual(snapshot.sections, try freshSnapshot(make), "edit \(n)")
            shown = try XCTUnwrap(shown.applying(try XCTUnwrap(differenceLog.differences.last)), "edit \(n)")
            XCTAssertEqual(shown, snapshot.sections.flatMap(\.objectIDs), "edit \(n)")
        }
        XCTAssertEqual(snapshotLog.snapshots[0].reloadedObjectIDs, [france.objectID], "changed in place: reload its row")
        XCTAssertTrue(differenceLog.differences[0].isEmpty, "nothing moved")
        XCTAssertEqual(differenceLog.differences[1].count, 2, "one move: a removal and an insertion")
        XCTAssertEqual(differenceLog.differences[1].inferringMoves().count, 2)
    }

    func testAnInsertedRowOfASnapshotCanBeShownAfterTheSave() throws {
        let (_, context) = try WorldCup.open(in: temporaryFolder(self))
        let controller = ranking(context, limit: 0)()
        let log = ChangeLog<Team>()
        controller.changeReporting = .snapshot
        controller.delegate = log
        try controller.performFetch()
        try WorldCup.insert("Qatar", "Asia", wins: 9, into: context)
        try context.save()
        // A list showing snapshots makes its rows from the IDs it was given.
        let shownID = try XCTUnwrap(log.snapshots.last?.sections.first?.objectIDs.first)
        XCTAssertEqual((try? context.existingObject(with: shownID) as? Team)?.teamName, "Qatar",
                       "the snapshot's \(shownID) no longer names the saved object")
        XCTAssertEqual(controller.snapshot, log.snapshots.last?.sections, "the IDs shown are the controller's")
    }

    func testDifferenceReportingOfASectionedListIsRefusedOrFlat() throws {
        try inChildProcess(self) {
            let (_, context) = try WorldCup.open(in: temporaryFolder(self))
            let controller = WorldCup.controller(context)
            let log = ChangeLog<Team>()
            controller.changeReporting = .difference
            controller.delegate = log
            do {
                try controller.performFetch()
            } catch {
                // Refusing the combination is fine, with a message that says what to use.
                return XCTAssertTrue("\(error)".contains("snapshot"), "\(error)")
            }
            var shown = controller.snapshot.flatMap(\.objectIDs)
            // The first team of two zones: both at item 0 of their section.
            let (nigeria, japan) = (try WorldCup.team("Nigeria", in: context), try WorldCup.team("Japan", in: context))
            try context.delete(nigeria)
            try context.delete(japan)
            try context.save()
            let difference = try XCTUnwrap(log.differences.last)
            shown = try XCTUnwrap(shown.applying(difference))
            XCTAssertEqual(shown, controller.snapshot.flatMap(\.objectIDs), "offsets in the flattened list")
        }
    }

    // MARK: Section index

    func testSectionIndexTitlesAreFirstLettersUnlessTheDelegateSays() throws {
        let (_, context, controller, log) = try worldCup()
        XCTAssertEqual(controller.sections?.map(\.indexTitle), ["A", "A", "E", "S"])
        XCTAssertEqual(controller.sectionIndexTitles, ["A", "E", "S"])
        XCTAssertEqual(controller.section(forSectionIndexTitle: "A", at: 0), 0)
        XCTAssertEqual(controller.section(forSectionIndexTitle: "E", at: 1), 2)
        XCTAssertEqual(controller.section(forSectionIndexTitle: "S", at: 2), 3)

        log.indexTitles = ["Africa": "AF", "Asia": "AS"]
        XCTAssertEqual(controller.sectionIndexTitles, ["AF", "AS", "E", "S"])
        XCTAssertEqual(controller.sections?.map(\.indexTitle), ["AF", "AS", "E", "S"])
        XCTAssertEqual(controller.section(forSectionIndexTitle: "AS", at: 1), 1)
        XCTAssertEqual(controller.sectionIndexTitle(forSectionName: "Oceania"), "O")

        // Names are capitalized; a lowercase zone sorts after the others (byte order).
        log.indexTitles = [:]
        try WorldCup.insert("Tahiti", "oceania", into: context)
        try context.save()
        XCTAssertEqual(controller.sections?.map(\.name).last, "oceania")
        XCTAssertEqual(controller.sectionIndexTitles, ["A", "E", "S", "O"])
        XCTAssertEqual(controller.section(forSectionIndexTitle: "O", at: 3), 4)
    }

    func testSectionIndexTitlesAreDistinct() throws {
        let (_, context, controller, _) = try worldCup()
        try WorldCup.insert("Tunisia", "africa (north)", into: context)   // after "South America" in byte order
        try context.save()
        XCTAssertEqual(controller.sections?.map(\.name), ["Africa", "Asia", "Europe", "South America", "africa (north)"])
        XCTAssertEqual(controller.sectionIndexTitles, ["A", "E", "S"], "one per distinct title, as documented")
        XCTAssertEqual(controller.section(forSectionIndexTitle: "A", at: 0), 0)
    }

    func testMovieSectionTitlesComeFromTheDelegate() throws {
        let context = try Movies.open(in: temporaryFolder(self), lent: ["Amélie"], notLent: ["Alien"])
        let controller = Movies.controller(context)
        try controller.performFetch()
        XCTAssertEqual(controller.sectionIndexTitles, ["1", "0"])
        let log = ChangeLog<Movies.Movie>()
        log.indexTitles = ["1": "S", "0": "N"]
        controller.delegate = log
        XCTAssertEqual(controller.sectionIndexTitles, ["S", "N"])
        XCTAssertEqual(controller.section(forSectionIndexTitle: "N", at: 1), 1)
        XCTAssertEqual(controller.section(forSectionIndexTitle: "Z", at: 7), 1, "an unknown title: clamped to the sections there are")
    }

    // MARK: Sections from their own entity (to-do lists)

    func testEveryListIsASectionEvenEmpty() throws {
        let context = try Todo.open(in: temporaryFolder(self))
        let controller = Todo.controller(context)
        try controller.performFetch()
        let sections = try XCTUnwrap(controller.sections)
        XCTAssertEqual(sections.map(\.name), ["Groceries", "Home", "Someday", "Work"])
        XCTAssertEqual(sections.map(\.numberOfObjects), [2, 1, 0, 1])
        XCTAssertEqual(controller.rows("name"), ["Groceries: Eggs, Milk", "Home: Bulb", "Someday: ", "Work: Report"])
        XCTAssertEqual(sections[2].sectionObject?.objectID, try Todo.list("Someday", in: context).objectID)
        XCTAssertEqual(sections.map { $0.sectionObject?.attributeValue(forKey: "title") ?? .null }, ["Groceries", "Home", "Someday", "Work"].map { Value.string($0) })
        XCTAssertEqual(controller.snapshot.map(\.sectionObjectID), try ["Groceries", "Home", "Someday", "Work"].map { try Todo.list($0, in: context).objectID })
    }

    func testRenamingAListUpdatesOrMovesItsSection() throws {
        let context = try Todo.open(in: temporaryFolder(self))
        let controller = Todo.controller(context)
        let log = ChangeLog<ManagedObject>()
        controller.delegate = log
        try controller.performFetch()
        let start = controller.snapshot

        // Home -> House: still second.
        try Todo.list("Home", in: context).setValue("House", forKey: "title")
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section update 1->1 House", "did"], "the section is renamed; its rows did not change")
        XCTAssertEqual(controller.sections?.map(\.name), ["Groceries", "House", "Someday", "Work"])

        // Work -> Errands: first now, with its row.
        log.calls = []
        try Todo.list("Work", in: context).setValue("Errands", forKey: "title")
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section move 3->0 Errands", "did"], "the section moves; its rows did not change")
        XCTAssertEqual(controller.rows("name"), ["Errands: Report", "Groceries: Eggs, Milk", "House: Bulb", "Someday: "])
        XCTAssertEqual(controller.sections?[0].sectionObject?.attributeValue(forKey: "title"), .string("Errands"))
        try assertBatchesLead(from: start, to: controller, log: log) { Todo.controller(context) }
    }

    func testAddingAndDeletingListsInsertsAndDeletesSections() throws {
        let context = try Todo.open(in: temporaryFolder(self))
        let controller = Todo.controller(context)
        let log = ChangeLog<ManagedObject>()
        controller.delegate = log
        try controller.performFetch()
        let start = controller.snapshot

        let chores = try Todo.insertList("Chores", into: context)
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section insert 0 Chores", "did"])
        XCTAssertEqual(controller.sections?.first?.sectionObject, chores)
        XCTAssertEqual(controller.snapshot.first?.sectionObjectID, chores.objectID, "the saved list's ID")

        log.calls = []
        try Todo.insertItem("Dishes", in: chores, into: context)
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object insert nil->0.0", "did"])

        // Deleting a list takes its items with it.
        log.calls = []
        try context.delete(Todo.list("Work", in: context))
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section delete 4 Work", "object delete 4.0->nil", "did"])

        log.calls = []
        try context.delete(chores)
        try context.save()
        XCTAssertEqual(log.calls, ["will", "section delete 0 Chores", "object delete 0.0->nil", "did"])
        XCTAssertEqual(controller.rows("name"), ["Groceries: Eggs, Milk", "Home: Bulb", "Someday: "])
        try assertBatchesLead(from: start, to: controller, log: log) { Todo.controller(context) }
    }

    func testAnItemMovedToAnotherListMovesAcrossSections() throws {
        let context = try Todo.open(in: temporaryFolder(self))
        let controller = Todo.controller(context)
        let log = ChangeLog<ManagedObject>()
        controller.delegate = log
        try controller.performFetch()
        try Todo.item("Milk", in: context).setValue(Todo.list("Someday", in: context), forKey: "list")
        try context.save()
        XCTAssertEqual(log.calls, ["will", "object move 0.1->2.0", "did"])
        XCTAssertEqual(controller.rows("name"), ["Groceries: Eggs", "Home: Bulb", "Someday: Milk", "Work: Report"])
    }

    // MARK: Saves of another context

    func testABackgroundSaveReachesTheMainContextController() throws {
        let (store, context, controller, log) = try worldCup()
        let start = controller.snapshot
        let france = try WorldCup.team("France", in: context)
        let franceID = france.objectID
        let background = ObjectContext(store: store, queue: DispatchQueue(label: "ControllerTests.background"))
        let failure = SQLLog()   // the background block's errors, if any
        background.perform {
            do {
                let team = try background.existingObject(with: franceID) as! WorldCup.Team
                team.wins = 5
                try WorldCup.insert("Fiji", "Oceania", wins: 1, into: background)
                try background.save()
            } catch {
                failure.append("\(error)")
            }
        }
        drainMainQueue(until: { !log.batches.isEmpty || !failure.statements.isEmpty })
        XCTAssertEqual(failure.statements, [])
        XCTAssertEqual(log.batches.count, 1)
        XCTAssertTrue(log.deliveredOnMainThread.allSatisfy { $0 } && !log.deliveredOnMainThread.isEmpty, "delivered on the main queue")
        XCTAssertEqual(log.calls.sorted(), ["did", "object insert nil->3.0", "object move 2.3->2.0", "section insert 3 Oceania", "will"])
        XCTAssertEqual(france.wins, 5, "the main context's object has the saved value")
        XCTAssertEqual(controller.object(at: IndexPath(item: 0, section: 2)), france)
        XCTAssertEqual(controller.rows("teamName")[3], "Oceania: Fiji")
        try assertBatchesLead(from: start, to: controller, log: log) { WorldCup.controller(context) }
    }
}
