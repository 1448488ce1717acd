import ArgumentParser

@main
struct FetchedResultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetched-results",
        abstract: "Core Data's fetched results pattern on SQLite, for Linux.",
        subcommands: [View.self, Demo.self, Dump.self, Apply.self, Watch.self, Import.self],
        defaultSubcommand: View.self)
}
