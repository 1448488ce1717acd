import FetchedResults
import Foundation
import ObjectStore
import Synchronization

/// Measurements made in a child process of their own, on the benchmark's store file.
///
/// Memory: in the parent, heap freed by earlier phases would be reused and hide the growth.
/// The SQL log: it needs a second `PersistentStore` on the file, and opening one reads the
/// file's header through a descriptor of its own and closes it, which drops every POSIX lock
/// this process holds on the file; the next process to close its connections then takes the
/// database for unused and deletes the WAL under the open store ("database disk image is
/// malformed").
enum ChildProbe {
    static let flag = "--child-probe"

    enum Subject: String {
        /// Memory growth across `performFetch()` of the benchmark's controller.
        case controllerMemory = "controller-memory"
        /// Memory growth across the floor query.
        case floorMemory = "floor-memory"
        /// The SQL of the controller's fetch query.
        case controllerSQL = "controller-sql"
        /// Memory growth across reading every object in order after `performFetch()` (a
        /// scroll through the whole list), and the slowest single `object(at:)`.
        case scrollMemory = "scroll-memory"
    }

    struct Scroll {
        /// Resident set size after the scroll minus after the fetch.
        var retained: Int
        /// The slowest `object(at:)` and read of its name, in seconds.
        var slowestAccess: Double
    }

    static func scroll(storePath: String) throws -> Scroll {
        let numbers = try run(.scrollMemory, storePath: storePath).split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        guard numbers.count == 2 else { throw OptionsError("the scroll-memory probe printed no figures") }
        return Scroll(retained: Int(numbers[0]), slowestAccess: numbers[1])
    }

    struct Growth {
        /// Resident set size after the fetch (its result still alive) minus before.
        var retained: Int
        /// Peak resident set size during the fetch minus before.
        var peak: Int
    }

    static func memory(_ subject: Subject, storePath: String) throws -> Growth {
        let numbers = try run(subject, storePath: storePath).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard numbers.count == 2 else { throw OptionsError("the \(subject.rawValue) probe printed no figures") }
        return Growth(retained: numbers[0], peak: numbers[1])
    }

    static func controllerSQL(storePath: String) throws -> String {
        try run(.controllerSQL, storePath: storePath).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs this executable again on `subject` and returns what it prints.
    private static func run(_ subject: Subject, storePath: String) throws -> String {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [flag, subject.rawValue, storePath]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OptionsError("the \(subject.rawValue) probe failed (status \(process.terminationStatus))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The child's side.
    static func main(arguments: [String]) throws {
        guard arguments.count == 2, let subject = Subject(rawValue: arguments[0]) else {
            throw OptionsError("usage: \(flag) controller-memory|floor-memory|controller-sql STORE")
        }
        let log = Mutex<[String]>([])
        let record: @Sendable (String) -> Void = { sql in log.withLock { $0.append(sql) } }
        let store = try PersistentStore(url: URL(fileURLWithPath: arguments[1]), model: WorldCupStore.model,
                                        sqlLog: subject == .controllerSQL ? record : nil)
        let context = ObjectContext(store: store)
        // Open the reader connection first: its setup is not the fetch's.
        _ = try context.count(for: WorldCupStore.request)
        log.withLock { $0 = [] }
        let before = Measure.residentBytes()
        Measure.resetPeakResident()
        var result: Any?
        switch subject {
        case .controllerMemory, .controllerSQL:
            let controller = FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: context,
                                                      sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
            try controller.performFetch()
            result = controller
        case .floorMemory:
            result = try WorldCupStore.floorIDs(store)
        case .scrollMemory:
            let controller = FetchedResultsController(fetchRequest: WorldCupStore.request, managedObjectContext: context,
                                                      sectionNameKeyPath: WorldCupStore.sectionNameKeyPath)
            try controller.performFetch()
            let fetched = Measure.residentBytes()
            var slowest = 0.0, names = 0
            for (s, section) in (controller.sections ?? []).enumerated() {
                for item in 0..<section.numberOfObjects {
                    let start = DispatchTime.now().uptimeNanoseconds
                    names += try controller.object(at: IndexPath(item: item, section: s)).value(forKey: "teamName") == nil ? 0 : 1
                    slowest = max(slowest, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                }
            }
            guard names == controller.numberOfObjects else { throw OptionsError("the scroll read \(names) names") }
            print(Measure.residentBytes() - fetched, slowest)
            return
        }
        let after = Measure.residentBytes()
        let peak = Measure.peakResidentBytes()
        if subject == .controllerSQL {
            let statements = log.withLock { $0 }
            guard let sql = statements.last(where: { $0.contains("ORDER BY") && !$0.contains("COUNT(") }) else {
                throw OptionsError("the controller issued no ORDER BY query; statements: \(statements)")
            }
            print(sql)
        } else {
            print(after - before, max(peak, after) - before)
        }
        withExtendedLifetime(result) {}
    }
}
