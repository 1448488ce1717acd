import ArgumentParser
import Foundation
import Datasets
import ObjectStore

/// Shows the World Cup dataset as the viewer will: teams grouped by qualifying zone, most
/// wins first. `--tap NAME` adds a win to a team and saves, as a tap on its row will.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the World Cup teams by qualifying zone; optionally add a win to a team.")

    @Option(help: "The store file (created and seeded from the dataset when missing). Default: a fresh temporary store.")
    var store: String?

    @Option(help: "Add a win to the team with this name and save, before printing.")
    var tap: [String] = []

    func run() throws {
        let dataset = try Dataset.load(named: "worldcup")
        let url = store.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("fetched-results-demo-\(getpid()).sqlite")
        defer {
            if store == nil {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
            }
        }
        let context = ObjectContext(store: try dataset.openStore(at: url))

        for name in tap {
            let request = FetchRequest<ManagedObject>(entityName: "Team", predicate: try FetchPredicate(format: "teamName ==[c] %@", name))
            guard let team = try context.fetch(request).first else {
                throw ArgumentParser.ValidationError("No team named \"\(name)\"; run without --tap to see the teams.")
            }
            try team.setValue((try team.value(forKey: "wins") as? Int ?? 0) + 1, forKey: "wins")
            try context.save()
        }

        let request = FetchRequest<ManagedObject>(entityName: "Team", sortDescriptors: [
            FetchSortDescriptor(key: "qualifyingZone"), FetchSortDescriptor(key: "wins", ascending: false), FetchSortDescriptor(key: "teamName"),
        ])
        var zone: String?
        for team in try context.fetch(request) {
            let teamZone = try team.value(forKey: "qualifyingZone") as? String ?? ""
            if teamZone != zone {
                print(zone == nil ? teamZone : "\n\(teamZone)")
                zone = teamZone
            }
            let name = try team.value(forKey: "teamName") as? String ?? ""
            print("  \(name.padding(toLength: 24, withPad: " ", startingAt: 0)) Wins: \(try team.value(forKey: "wins") as? Int ?? 0)")
        }
    }
}
