import ArgumentParser
import Datasets
import Foundation
import ObjectStore

/// `import`: a CSV or JSON lines file into an entity of a dataset's store, in chunks, with
/// progress on standard error; interrupted imports resume where they stopped.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import a CSV or JSON lines file into an entity of the dataset's store; run it again to resume.",
        discussion: """
            CSV files start with a header row naming the entity's attributes and to-one \
            relationships; JSON lines files hold one object a line, keyed the same way. A to-one \
            relationship takes the value of the destination's first string attribute (a todo \
            Item's list column holds a List's title). Each chunk of records is committed in one \
            transaction with a journal of how far the import got.

            A bad record stops the import after committing the records before it, with \
            FILE:LINE: field: message and exit status 1: fix the line and run the same command \
            to resume there. Ctrl-C (SIGINT) commits what was read and exits with status 130; \
            the same command resumes. A file imported completely is refused (it would add every \
            record again), as is one whose imported part changed: --restart reads it from the \
            top again, keeping the rows already imported. See Docs/Importing.md.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case csv, jsonl

        var importFormat: ImportFormat {
            switch self {
            case .csv: .csv
            case .jsonl: .jsonLines
            }
        }
    }

    @OptionGroup var options: DatasetOptions

    @Option(help: "The entity the records become objects of. Default: the entity the dataset's list shows.")
    var entity: String?

    @Option(help: "Records committed per transaction.")
    var chunkSize = 1000

    @Option(help: "The file's format: csv or jsonl. Default: from its extension (.csv; .jsonl, .ndjson, .json).")
    var format: Format?

    @Flag(help: "Read the file from the top again, although it was imported before (completely or in part); the rows already imported stay.")
    var restart = false

    @Argument(help: "The CSV or JSON lines file to import.")
    var file: String

    func validate() throws {
        guard chunkSize > 0 else { throw ArgumentParser.ValidationError("--chunk-size must be at least 1") }
    }

    func run() throws {
        let (dataset, store) = try options.open(toWrite: "import")
        let entityName = entity ?? dataset.view.fetchRequest.entity
        let reporter = ProgressReporter(name: URL(fileURLWithPath: file).lastPathComponent, isTerminal: isatty(STDERR_FILENO) == 1)
        do {
            let importer = try ObjectImporter(store: store, entityName: entityName, file: URL(fileURLWithPath: file),
                                              format: format?.importFormat, chunkSize: chunkSize, restart: restart)
            // Ctrl-C commits what was read and ends the run: the same command resumes there.
            signal(SIGINT, SIG_IGN)
            let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "import.signals"))
            interrupt.setEventHandler { importer.cancel() }
            interrupt.resume()
            defer { interrupt.cancel() }
            let started = Date()
            let result = try importer.run { reporter.report($0) }
            reporter.endLine()
            if result.outcome == .cancelled {
                printError("Interrupted after line \(grouped(result.nextLine - 1)): \(imported(result.totalRecordsImported)) (\(grouped(result.recordsImported)) in this run). Run the same command again to resume at line \(grouped(result.nextLine)).")
                throw ExitCode(130)
            }
            let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
            var summary = "Imported \(count(result.recordsImported, "record")) into \(entityName) from \(file) in \(seconds) s"
            if let line = result.resumedAtLine {
                summary += ", resuming at line \(grouped(line)) (\(count(result.totalRecordsImported, "record")) in all)"
            }
            print(summary + ".")
        } catch let error as ImportError {
            reporter.endLine()
            printError(describe(error))
            if error.kind == .badRecord || error.kind == .saveFailed, let last = reporter.last {
                let state = last.recordsImported == 0 ? "No record of \(file) is imported"
                    : "\(imported(last.recordsImported)), through line \(grouped(last.line))"
                printError("\(state); run the same command again to resume at line \(grouped(last.line + 1)).")
            }
            throw ExitCode(1)
        }
    }

    /// `12,345 records of FILE are imported`.
    private func imported(_ records: Int) -> String {
        "\(count(records, "record")) of \(file) \(records == 1 ? "is" : "are") imported"
    }

    /// `FILE:LINE: field: message`, with the file as it was given.
    private func describe(_ error: ImportError) -> String {
        "\(file):\(error.line.map { "\($0):" } ?? "") \(error.field.map { "\($0): " } ?? "")\(error.message)"
    }
}

/// Shows an import's progress on standard error: on a terminal, one line rewritten after
/// each chunk; otherwise a line every tenth of the file.
private final class ProgressReporter: @unchecked Sendable {
    // Called only on the thread that runs the import.
    private let name: String
    private let isTerminal: Bool
    private var shownTenths = -1
    private var lineOpen = false
    private(set) var last: ImportProgress?

    init(name: String, isTerminal: Bool) {
        self.name = name
        self.isTerminal = isTerminal
    }

    func report(_ progress: ImportProgress) {
        last = progress
        guard progress.recordsImported > 0 else { return }  // a first chunk that stopped at once
        let fraction = progress.fractionCompleted
        let estimatedLines = fraction > 0 ? Int((Double(progress.line) / fraction).rounded()) : progress.line
        let text = "Importing \(name): \(grouped(progress.line)) of ~\(grouped(estimatedLines)) lines (\(Int(fraction * 100))%), \(count(progress.recordsImported, "record"))"
        if isTerminal {
            FileHandle.standardError.write(Data("\r\(text)\u{1B}[K".utf8))
            lineOpen = true
        } else {
            let tenths = Int(fraction * 10)
            guard tenths > shownTenths else { return }
            shownTenths = tenths
            FileHandle.standardError.write(Data("\(text)\n".utf8))
        }
    }

    /// Ends the rewritten line, so that what follows starts on a line of its own.
    func endLine() {
        if lineOpen { FileHandle.standardError.write(Data("\n".utf8)) }
        lineOpen = false
    }
}

private func printError(_ text: String) {
    FileHandle.standardError.write(Data("\(text)\n".utf8))
}

/// `12,345`.
private func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return (number < 0 ? "-" : "") + result
}

/// `1 record`, `12,345 records`.
private func count(_ number: Int, _ noun: String) -> String {
    "\(grouped(number)) \(noun)\(number == 1 ? "" : "s")"
}
