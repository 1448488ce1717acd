import Foundation
import GRDB
import ObjectStore
import Sharing
import struct ObjectStore.FetchRequest

/// The desktop processes of the `firehose` and `desktops` parts, on their side: a new store
/// joins the database the plan names (through `$FETCHED_RESULTS_POSTGRES_URL`'s server), says
/// `ready`, and on `go` does what its ``DesktopPlan/Role`` says, reporting on standard output.
/// It exits when told `stop`, when its standard input closes (the benchmark is gone), or
/// after saying `failed …` when anything goes wrong.
enum DesktopChild {
    static let flag = "--desktop-child"

    /// The child's side: `--desktop-child PLAN-JSON`.
    static func main(arguments: [String]) {
        do {
            guard arguments.count == 1, let plan = try? JSONDecoder().decode(DesktopPlan.self, from: Data(arguments[0].utf8)) else {
                throw OptionsError("usage: \(flag) PLAN-JSON")
            }
            guard let url = ProcessInfo.processInfo.environment["FETCHED_RESULTS_POSTGRES_URL"] else {
                throw OptionsError("FETCHED_RESULTS_POSTGRES_URL is not set")
            }
            var configuration = try ServerConfiguration(url: url)
            configuration.database = plan.database
            var sharing = PostgresSharing(configuration)
            sharing.logger.logLevel = .warning
            let commands = Commands()
            let store = try PersistentStore(url: URL(fileURLWithPath: plan.store), model: WorldCupStore.model)
            let session = try store.share(through: sharing)
            try blocking { try await synchronized(session, within: 600) }
            switch plan.role {
            case .writer: try writer(plan, store: store, session: session, commands: commands)
            case .desktop: try desktop(plan, store: store, session: session, commands: commands)
            }
            _ = try commands.next("stop", within: 600)
            try? blocking { await session.stop() }
            exit(0)
        } catch {
            say("failed: \(error)")
            exit(1)
        }
    }

    /// One line on standard output, written at once (a pipe's stdout would be buffered).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// A firehose writer: saves of `plan.batch` of its own teams (every `plan.writers`-th by
    /// name), each stamped, for `plan.seconds`; then `saved` with its figures, and `pushed`
    /// once the server has them all.
    private static func writer(_ plan: DesktopPlan, store: PersistentStore, session: SharingSession, commands: Commands) throws {
        let context = ObjectContext(store: store, queue: DispatchQueue(label: "writer"))
        let own = try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Team", sortDescriptors: [FetchSortDescriptor(key: "teamName")]))
                .enumerated().filter { $0.offset % plan.writers == plan.index }.map(\.element)
        }
        guard !own.isEmpty else { throw OptionsError("writer \(plan.index) found no teams of its own") }
        say("ready \(own.count)")
        _ = try commands.next("go", within: 600)
        let started = Date()
        var saved = 0, saveSeconds = LatencyHistogram(), next = 0
        while Date().timeIntervalSince(started) < plan.seconds {
            if plan.rate > 0 {
                let due = Double(saved) / Double(plan.rate) - Date().timeIntervalSince(started)
                if due > 0 { usleep(UInt32(due * 1_000_000)) }
            }
            let took = try context.performAndWait {
                let stamp = Stamp.make(desktop: plan.index)
                for _ in 0..<plan.batch {
                    try own[next % own.count].setValue(stamp, forKey: Stamp.key)
                    next += 1
                }
                return try Measure.seconds { try context.save() }
            }
            saveSeconds.add(took)
            saved += plan.batch
        }
        let seconds = Date().timeIntervalSince(started)
        say("saved \(saved) \(seconds) \(saveSeconds.quantile(0.5)) \(saveSeconds.quantile(0.95))")
        try blocking { try await synchronized(session, within: 600) }
        say("pushed \(Date().timeIntervalSince1970)")
    }

    /// One of many desktops: a stamped save to its own team ("Desktop N") once a second, at
    /// its own offset within the second, while a controller times the others' changes; `pushed`
    /// with its count once the server has them, and on `report`, once its store has taken
    /// everything, `result` with what its controller saw.
    private static func desktop(_ plan: DesktopPlan, store: PersistentStore, session: SharingSession, commands: Commands) throws {
        let follower = try StampFollower(store: store, queue: DispatchQueue(label: "follower"), ownDesktop: plan.index)
        let context = ObjectContext(store: store, queue: DispatchQueue(label: "writer"))
        let team = try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "teamName == %@", "Desktop \(plan.index)"))).first
        }
        guard let team else { throw OptionsError("no team named Desktop \(plan.index)") }
        say("ready")
        guard let start = Double(try commands.next("go", within: 600)) else { throw OptionsError("go takes a start time") }
        var saves = 0
        let offset = Double(plan.index) / Double(plan.desktops)
        while plan.index < plan.writers && Double(saves) < plan.seconds {
            let due = start + Double(saves) + offset - Date().timeIntervalSince1970
            if due > 0 { usleep(UInt32(due * 1_000_000)) }
            try context.performAndWait {
                try team.setValue(Stamp.make(desktop: plan.index), forKey: Stamp.key)
                try context.save()
            }
            saves += 1
        }
        let end = start + plan.seconds - Date().timeIntervalSince1970
        if end > 0 { usleep(UInt32(end * 1_000_000)) }
        try blocking { try await synchronized(session, within: 300) }
        say("pushed \(saves)")
        _ = try commands.next("report", within: 600)
        try blocking { try await synchronized(session, within: 300) }
        try awaitEveryStamp(in: store, follower: follower, ownDesktop: plan.index)
        follower.stop()
        say("result " + String(decoding: try JSONEncoder().encode(follower.seen), as: UTF8.self))
    }

    /// Waits (up to 60 s) until the follower has seen the stamp every other desktop's team
    /// holds in `store`.
    private static func awaitEveryStamp(in store: PersistentStore, follower: StampFollower, ownDesktop: Int) throws {
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            let stamps = try store.database.read { db in
                try Row.fetchAll(db, sql: #"SELECT Z_PK, "imageName" FROM "Team" WHERE "teamName" LIKE 'Desktop %'"#)
            }
            let seen = follower.newestStamps
            let missing = stamps.filter { row in
                guard let text: String = row[1], let stamp = Stamp.parse(text), stamp.desktop != ownDesktop else { return false }
                return seen[row[0]] != stamp.micros
            }
            if missing.isEmpty { return }
            usleep(20_000)
        }
        throw OptionsError("desktop \(ownDesktop)'s controller did not show every other desktop's last change within 60 s")
    }
}

/// The commands a desktop process reads on its standard input, one a line. The process
/// exits when the input closes: the benchmark that started it is gone.
final class Commands: @unchecked Sendable {
    private let lines = LineQueue()

    init() {
        Thread { [lines] in
            while let line = readLine() { lines.append(line) }
            exit(3)
        }.start()
    }

    /// Waits up to `seconds` for the command `word`; returns the rest of its line.
    func next(_ word: String, within seconds: Double) throws -> String {
        guard case .found(let rest) = lines.next(word, within: seconds) else {
            throw OptionsError("no '\(word)' from the benchmark within \(Int(seconds)) s")
        }
        return rest
    }
}
