import ArgumentParser

@main
struct FetchedResultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetched-results",
        abstract: "Core Data's fetched results pattern on SQLite, for Linux.",
        version: version,
        subcommands: [View.self, Demo.self, Dump.self, Apply.self, Watch.self, Import.self],
        defaultSubcommand: View.self)

    /// The release, as meson.build's `project(version:)` says (a test keeps them equal).
    static let version = "0.1.0"
}
