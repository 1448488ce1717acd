import FetchedResults
import Foundation
import ObjectStore
@_exported import ObjectStoreTestSupport
import XCTest

// The small data sets of the reference articles, built in code so that each test states the
// rows it depends on.

/// The World Cup app (the model and rows are `ObjectStoreTestSupport`'s): its controller.
extension WorldCup {
    /// The article's request: by zone, most wins first, then by name.
    static func request(predicate: FetchPredicate? = nil) -> FetchRequest<Team> {
        FetchRequest<Team>(predicate: predicate, sortDescriptors: [
            FetchSortDescriptor(key: "qualifyingZone"), FetchSortDescriptor(key: "wins", ascending: false), FetchSortDescriptor(key: "teamName"),
        ])
    }

    /// A controller of the World Cup store in `folder`, fetched, following its store, with
    /// a recorder of its batches; and its sections before any change.
    static func followed(in folder: URL) throws -> (store: PersistentStore, controller: FetchedResultsController<Team>, recorder: BatchRecorder<Team>,
                                                    before: [SectionSnapshot], following: ObservationToken) {
        let (store, context) = try open(in: folder)
        let controller = controller(context)
        let recorder = BatchRecorder<Team>()
        controller.delegate = recorder
        try controller.performFetch()
        return (store, controller, recorder, controller.snapshot, try context.followStore(interval: .seconds(3600)))
    }

    /// Checks that `recorder`'s batches lead from `before` to `controller`'s sections, and
    /// that those equal a fresh fetch of `store`.
    static func assertBatchesLeadToAFreshFetch(_ recorder: BatchRecorder<Team>, from before: [SectionSnapshot], controller: FetchedResultsController<Team>,
                                               store: PersistentStore, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var state = before
        for batch in recorder.batches { state = try batch.applied(to: state) }
        XCTAssertEqual(state, controller.snapshot, "the batches lead to the controller's sections", file: file, line: line)
        let fresh = Self.controller(ObjectContext(store: store))
        try fresh.performFetch()
        XCTAssertEqual(controller.snapshot, fresh.snapshot, "the list equals a fresh fetch after: \(what)", file: file, line: line)
    }

    static func controller(_ context: ObjectContext, request: FetchRequest<Team> = request(), cacheName: String? = nil) -> FetchedResultsController<Team> {
        FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "qualifyingZone", cacheName: cacheName)
    }

    static func team(_ name: String, in context: ObjectContext) throws -> Team {
        try XCTUnwrap(context.fetch(FetchRequest<Team>(predicate: FetchPredicate(format: "teamName == %@", name))).first)
    }
}

/// The movie list: sections by the Bool `lent`, "1" (Lent) before "0" (Not lent).
enum Movies {
    final class Movie: ManagedObject {
        @Attribute var title: String
        @Attribute var lent: Bool
    }

    static func model() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "Movie",
                attributes: [
                    AttributeDescription(name: "title", type: .string, minLength: 1),
                    AttributeDescription(name: "lent", type: .bool, defaultValue: .bool(false)),
                ],
                objectClass: Movie.self)
        ])
    }

    static func open(in folder: URL, lent: [String], notLent: [String]) throws -> ObjectContext {
        let store = try PersistentStore(url: folder.appendingPathComponent("movies.sqlite"), model: model())
        let context = ObjectContext(store: store)
        for (titles, isLent) in [(lent, true), (notLent, false)] {
            for title in titles {
                let movie = try context.insert(Movie.self)
                movie.title = title
                movie.lent = isLent
            }
        }
        try context.save()
        return context
    }

    static func controller(_ context: ObjectContext) -> FetchedResultsController<Movie> {
        var request = FetchRequest<Movie>(sortDescriptors: [FetchSortDescriptor(key: "lent", ascending: false), FetchSortDescriptor(key: "title")])
        request.fetchBatchSize = 20
        return FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "lent")
    }

    /// What the movie list shows as a section header.
    static func title(forSectionName name: String) -> String { name == "1" ? "Lent" : "Not lent" }

    static func movie(_ title: String, in context: ObjectContext) throws -> Movie {
        try XCTUnwrap(context.fetch(FetchRequest<Movie>(predicate: FetchPredicate(format: "title == %@", title))).first)
    }
}

/// Failed banks: the list sorts by a date of the related details object.
enum FailedBanks {
    static func model() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "FailedBankInfo",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [RelationshipDescription(name: "details", destinationEntity: "FailedBankDetails", inverseName: "info", deleteRule: .cascade)]),
            EntityDescription(
                name: "FailedBankDetails",
                attributes: [AttributeDescription(name: "closeDate", type: .date)],
                relationships: [RelationshipDescription(name: "info", destinationEntity: "FailedBankInfo", inverseName: "details")]),
        ])
    }

    static let firstClose = Date(timeIntervalSince1970: 1_262_304_000)   // 2010-01-01

    /// `count` banks "Bank 0"..., bank i closed i days after ``firstClose``; the newest first.
    static func open(in folder: URL, count: Int, sqlLog: SQLLog? = nil) throws -> (PersistentStore, ObjectContext) {
        let store = try PersistentStore(url: folder.appendingPathComponent("banks.sqlite"), model: model(),
                                        sqlLog: sqlLog?.handler)
        let context = ObjectContext(store: store)
        for i in 0..<count {
            let bank = try context.insert(entityName: "FailedBankInfo")
            try bank.setValue("Bank \(i)", forKey: "name")
            let details = try context.insert(entityName: "FailedBankDetails")
            try details.setValue(firstClose.addingTimeInterval(Double(i) * 86_400), forKey: "closeDate")
            try bank.setValue(details, forKey: "details")
        }
        try context.save()
        return (store, context)
    }

    static func request(batchSize: Int = 20) -> FetchRequest<ManagedObject> {
        var request = FetchRequest<ManagedObject>(entityName: "FailedBankInfo", sortDescriptors: [FetchSortDescriptor(key: "details.closeDate", ascending: false)])
        request.fetchBatchSize = batchSize
        return request
    }

    static func name(_ bank: ManagedObject) -> String {
        if case .string(let name) = bank.attributeValue(forKey: "name") { return name }
        return "?"
    }
}

/// The to-do app: items in lists; every list is a section, empty or not.
enum Todo {
    static func model() throws -> Model {
        try Model(entities: [
            EntityDescription(
                name: "List",
                attributes: [AttributeDescription(name: "title", type: .string, minLength: 1)],
                relationships: [RelationshipDescription(name: "items", destinationEntity: "Item", inverseName: "list", isToMany: true, deleteRule: .cascade)]),
            EntityDescription(
                name: "Item",
                attributes: [AttributeDescription(name: "name", type: .string, minLength: 1)],
                relationships: [RelationshipDescription(name: "list", destinationEntity: "List", inverseName: "items", isOptional: false)]),
        ])
    }

    /// Lists Groceries (Eggs, Milk), Home (Bulb), Someday (empty), Work (Report).
    static func open(in folder: URL) throws -> ObjectContext {
        let store = try PersistentStore(url: folder.appendingPathComponent("todo.sqlite"), model: model())
        let context = ObjectContext(store: store)
        for (title, items) in [("Groceries", ["Milk", "Eggs"]), ("Home", ["Bulb"]), ("Someday", []), ("Work", ["Report"])] {
            let list = try insertList(title, into: context)
            for name in items { try insertItem(name, in: list, into: context) }
        }
        try context.save()
        return context
    }

    @discardableResult
    static func insertList(_ title: String, into context: ObjectContext) throws -> ManagedObject {
        let list = try context.insert(entityName: "List")
        try list.setValue(title, forKey: "title")
        return list
    }

    @discardableResult
    static func insertItem(_ name: String, in list: ManagedObject, into context: ObjectContext) throws -> ManagedObject {
        let item = try context.insert(entityName: "Item")
        try item.setValue(name, forKey: "name")
        try item.setValue(list, forKey: "list")
        return item
    }

    static func controller(_ context: ObjectContext) -> FetchedResultsController<ManagedObject> {
        FetchedResultsController(
            fetchRequest: FetchRequest<ManagedObject>(entityName: "Item", sortDescriptors: [FetchSortDescriptor(key: "name")]),
            sectionFetchRequest: FetchRequest<ManagedObject>(entityName: "List", sortDescriptors: [FetchSortDescriptor(key: "title")]),
            sectionRelationshipKeyPath: "list", sectionNameKey: "title", managedObjectContext: context)
    }

    static func list(_ title: String, in context: ObjectContext) throws -> ManagedObject {
        try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "List", predicate: FetchPredicate(format: "title == %@", title))).first)
    }

    static func item(_ name: String, in context: ObjectContext) throws -> ManagedObject {
        try XCTUnwrap(context.fetch(FetchRequest<ManagedObject>(entityName: "Item", predicate: FetchPredicate(format: "name == %@", name))).first)
    }
}

/// Records everything a controller tells its delegate, with index paths.
final class ChangeLog<Result: ManagedObject>: FetchedResultsSnapshotDelegate, FetchedResultsDifferenceDelegate {
    var calls: [String] = []
    var batches: [ChangeBatch] = []
    var snapshots: [FetchedSnapshot] = []
    var differences: [CollectionDifference<ObjectID>] = []
    /// Index titles by section name; nil names use the controller's default.
    var indexTitles: [String: String] = [:]
    /// For each delivery, whether it came on the main thread.
    var deliveredOnMainThread: [Bool] = []
    private func delivered(by controller: FetchedResultsController<Result>) {
        deliveredOnMainThread.append(Thread.isMainThread)
    }

    func controllerWillChangeContent(_ controller: FetchedResultsController<Result>) { calls.append("will") }
    func controller(_ controller: FetchedResultsController<Result>, didChange section: SectionChange) {
        calls.append("section \(section.type) \(section.index)" + (section.newIndex.map { "->\($0)" } ?? "") + " \(section.name)")
    }
    func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                    for type: ChangeType, newIndexPath: IndexPath?) {
        calls.append("object \(type) \(Self.text(indexPath))->\(Self.text(newIndexPath))")
    }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Result>) { calls.append("did") }
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith batch: ChangeBatch) {
        batches.append(batch)
        delivered(by: controller)
    }
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith snapshot: FetchedSnapshot) {
        snapshots.append(snapshot)
        delivered(by: controller)
    }
    func controller(_ controller: FetchedResultsController<Result>, didChangeContentWith difference: CollectionDifference<ObjectID>) {
        differences.append(difference)
        delivered(by: controller)
    }
    func controller(_ controller: FetchedResultsController<Result>, sectionIndexTitleForSectionName sectionName: String) -> String? {
        indexTitles[sectionName]
    }

    static func text(_ path: IndexPath?) -> String { path.map { "\($0.section).\($0.item)" } ?? "nil" }
}

extension FetchedResultsController {
    /// The section names in order, each with the values of `key` of its objects.
    func rows(_ key: String) -> [String] {
        (sections ?? []).map { section in
            section.name + ": " + section.objects.map { object -> String in
                if case .string(let value) = object.attributeValue(forKey: key) { return value }
                return "\(object.attributeValue(forKey: key))"
            }.joined(separator: ", ")
        }
    }
}

/// Runs `body` in a child process that runs only this test, so that a crash (a trap in the
/// library) fails this one test instead of ending the whole run.
func inChildProcess(_ test: XCTestCase, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) throws {
    let key = "FETCHED_RESULTS_TESTS_CHILD"
    // "ClassName.testMethod" on Linux; the runner's filter is "Module.ClassName/testMethod".
    let parts = test.name.split(separator: ".").map(String.init)
    guard parts.count == 2 else { return XCTFail("unexpected test name \(test.name)", file: file, line: line) }
    if ProcessInfo.processInfo.environment[key] == test.name { return try body() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    process.arguments = ["FetchedResultsTests.\(parts[0])/\(parts[1])"]
    process.environment = ProcessInfo.processInfo.environment.merging([key: test.name, "SWIFT_BACKTRACE": "enable=no"]) { $1 }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let errors = text.split(separator: "\n").filter { $0.contains(": error:") || $0.contains("Fatal error") }.joined(separator: "\n")
    if process.terminationReason == .uncaughtSignal {
        XCTFail("crashed (signal \(process.terminationStatus)); run it with \(key)=\(test.name) to see where:\n\(errors)", file: file, line: line)
    } else if process.terminationStatus != 0 {
        XCTFail("failed:\n\(errors)", file: file, line: line)
    }
}
